"""The one table of provider routes: every reader of a route (the provider factory, the key
check at the start, the SDK preload, the summary's model line) reads `routes.ROUTES`, so a
row added is a route served, its key demanded, its SDK preloaded and its name said."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.exchange.json_value import JSONDict
from pytest_toolselect.exchange.turns import Turn, TurnRequest
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.providers import ProviderSettings, get_provider, preload
from pytest_toolselect.providers import routes as routes_module
from pytest_toolselect.providers.preflight import check_key, key_vars
from pytest_toolselect.providers.routes import ROUTES, Route, route_of
from pytest_toolselect.run.wiring import Wiring


class EchoProvider:
    """A provider a test row's factory makes: it records what it was made with."""

    def __init__(self, model: str, settings: ProviderSettings) -> None:
        self.model = model
        self.settings = settings

    def subject(self) -> JSONDict:
        return {"provider": "echo", "model": self.model}

    async def first_turn(self, request: TurnRequest) -> Turn:
        return Turn(calls=(), text="", stop_reason="end_turn")


ECHO = Route("echo", "the echo route", ("echo", "echo2"), {"echo": ("ECHO_KEY",)}, "echo_sdk",
             f"{__name__}:EchoProvider")


@pytest.fixture
def with_echo(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The table with one row added before the catch-all; the SDK preloads it begins."""
    monkeypatch.setattr(routes_module, "ROUTES", (*ROUTES[:-1], ECHO, ROUTES[-1]))
    begun: list[str] = []
    monkeypatch.setattr(preload, "begin", lambda module: begun.append(module) or True)
    return begun


def test_a_row_added_is_served_keyed_preloaded_and_named(with_echo: list[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    settings = ProviderSettings(max_tokens=7)
    made = get_provider("echo/m1", settings)
    assert isinstance(made, EchoProvider) and made.model == "echo/m1" and made.settings is settings
    assert isinstance(get_provider("echo2/m", settings), EchoProvider)
    assert key_vars("echo/m1", ProviderSettings()) == ("ECHO_KEY",)
    assert key_vars("echo2/m", ProviderSettings()) == ()
    monkeypatch.delenv("ECHO_KEY", raising=False)
    with pytest.raises(ToolselectError, match="ECHO_KEY is not set"):
        check_key("echo/m1", ProviderSettings())
    assert preload.preload("echo/m1") and with_echo == ["echo_sdk"]
    wiring = Wiring(SimpleNamespace(model=SimpleNamespace(value="echo/m1")))  # type: ignore[arg-type]
    wiring.__dict__["custom_provider"] = None
    assert wiring.route_name() == "the echo route"
    # a prefix no row names still takes the last row
    assert route_of("nobody/m").name == "litellm"


def test_each_route_reads_its_own_row(with_echo: list[str]) -> None:
    for row in ROUTES:
        for prefix in row.prefixes:
            model = f"{prefix}/m" if row.name != "local" else "local/bm25"
            assert route_of(model) == row
            assert key_vars(model, ProviderSettings()) == row.key_vars.get(prefix, ())
            with_echo.clear()
            assert preload.preload(model) == (row.sdk is not None)
            assert with_echo == ([row.sdk] if row.sdk else [])
            assert type(get_provider(model, ProviderSettings())).__name__ == row.factory.split(":")[1] \
                or row.name == "local"


@given(prefix=st.text(st.characters(blacklist_characters="/"), max_size=12),
       rest=st.text(max_size=12))
def test_every_model_string_takes_exactly_one_row(prefix: str, rest: str) -> None:
    model = f"{prefix}/{rest}"
    rows = [r for r in ROUTES if prefix in r.prefixes]
    assert len(rows) <= 1
    assert route_of(model) == (rows[0] if rows else ROUTES[-1])


def test_no_prefix_is_named_by_two_rows() -> None:
    named = [p for r in ROUTES for p in r.prefixes]
    assert len(named) == len(set(named))
    assert not ROUTES[-1].prefixes, "the catch-all row names no prefix"
    assert len({r.name for r in ROUTES}) == len(ROUTES)


def test_a_harness_row_says_what_to_install_and_whether_it_sorts_the_tools(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_toolselect.providers.harness import check_installed
    from pytest_toolselect.providers.routes import Harness
    from pytest_toolselect.run.probe_items import harness_name

    row = Route("toy", "a toy harness", ("toy",), {}, None, f"{__name__}:EchoProvider",
                Harness("no_such_toy_sdk_module", "toy", sorts_tools=True))
    monkeypatch.setattr(routes_module, "ROUTES", (row, *ROUTES))
    with pytest.raises(ToolselectError, match="the toy harness is not installed") as raised:
        check_installed(route_of("toy/m"), "toy/m")
    assert raised.value.fix == "pip install 'pytest-toolselect[toy]'"
    assert harness_name("toy/m") == "toy"
    for taken in ROUTES:
        expected = taken.name if taken.harness is not None and taken.harness.sorts_tools else None
        assert harness_name(f"{(taken.prefixes or ('other',))[0]}/m") == expected
