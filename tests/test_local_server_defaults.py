"""An api_base on this machine gets defaults that fit a local server, named in the summary.

A local server on a CPU answers one call at a time, slowly: the hosted API's defaults
(60 s, 8 in flight, 4 retries) would queue calls into timeouts. Set options still win.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import test_models_e2e
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from hypothesis import given
from hypothesis import strategies as st
from test_models_e2e import _answer, _config

import pytest_toolselect
from conftest import FIND, Project, case
from pytest_toolselect.providers import ProviderSettings
from pytest_toolselect.providers.preflight import is_loopback, key_vars

# the fixture of that module, used here by name
models = test_models_e2e.models

LINE = ("toolselect: api_base is on this machine, so a local server's defaults apply: "
        "{} (set --toolselect-timeout, -concurrency or -retries to change them)")


def test_a_loopback_api_base_takes_one_call_at_a_time(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "openai/gpt-test")
    models.cases([case(*FIND)])

    def slow(body: dict) -> Reply:
        # holds the reply until a second call is in flight (never, one at a time)
        fake_api.wait_in_flight(2, timeout=1.0)
        return _answer(body)

    fake_api.handler = slow
    result = models.pytester.runpytest("--toolselect-reps=3")
    result.assert_outcomes(passed=1)
    assert len(fake_api.requests) == 3 and fake_api.max_in_flight == 1
    line = LINE.format("timeout 600 s, concurrency 1, retries 1")
    # in the header and in the summary
    assert result.stdout.str().count(line) == 2, result.stdout.str()


def test_an_option_set_keeps_its_value(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "openai/gpt-test", timeout=30)
    models.cases([case(*FIND)])
    fake_api.queue(Reply(status=529, error="Overloaded"), Reply(status=529, error="Overloaded"))
    fake_api.default = _answer({"messages": [FIND[1]]})
    result = models.pytester.runpytest("--toolselect-concurrency=4", "--toolselect-retries=2")
    result.assert_outcomes(passed=1)  # two retries, as set: one would have failed
    assert len(fake_api.requests) == 3
    assert "api_base is on this machine" not in result.stdout.str()


_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)


def _cased(name: str, flips: list[bool]) -> str:
    """`name` with some letters upper-cased (a host name is case-blind)."""
    flips = flips + [False] * len(name)
    return "".join(c.upper() if flip else c for c, flip in zip(name, flips, strict=False))


#: hosts on this machine: loopback IPv4 and IPv6 literals (an IPv4 one mapped into IPv6 too),
#: localhost and any name under it (RFC 6761), in any case, with or without the root's dot
LOOPBACK_HOSTS = st.one_of(
    st.ip_addresses(v=4, network="127.0.0.0/8").map(str),
    st.just("[::1]"),
    st.ip_addresses(v=4, network="127.0.0.0/8").map(lambda a: f"[::ffff:{a}]"),
    st.builds(lambda labels, flips, dot: _cased(".".join([*labels, "localhost"]), flips) + dot,
              st.lists(_LABEL, max_size=3), st.lists(st.booleans(), max_size=30),
              st.sampled_from(["", "."])),
)
#: every other host: any other IP literal, and names that are not localhost nor under it
OTHER_HOSTS = st.one_of(
    st.ip_addresses(v=4).filter(lambda a: not a.is_loopback).map(str),
    st.ip_addresses(v=6).filter(lambda a: not a.is_loopback and not (
        a.ipv4_mapped is not None and a.ipv4_mapped.is_loopback)).map(lambda a: f"[{a}]"),
    st.lists(_LABEL, min_size=1, max_size=4).map(".".join).filter(
        lambda n: n != "localhost" and not n.endswith(".localhost")),
    st.builds(lambda label, tail: f"localhost{label}.{tail}", st.sampled_from(["", "x", "-1"]),
              _LABEL),
)


def _url(host: str, port: int | None, path: str, scheme: str | None) -> str:
    where = f"{host}:{port}" if port else host
    return f"{scheme}://{where}{path}" if scheme else f"{where}{path}"


@given(host=LOOPBACK_HOSTS, other=OTHER_HOSTS, port=st.none() | st.integers(1, 65535),
       path=st.sampled_from(["", "/v1", "/openai/v1"]),
       scheme=st.sampled_from([None, "http", "https"]))
def test_loopback_hosts_are_told_from_others(host: str, other: str, port: int | None, path: str,
                                             scheme: str | None) -> None:
    assert is_loopback(_url(host, port, path, scheme))
    assert not is_loopback(_url(other, port, path, scheme))


@given(host=st.one_of(LOOPBACK_HOSTS, OTHER_HOSTS), port=st.none() | st.integers(1, 65535))
def test_the_key_check_and_the_local_defaults_read_one_rule(host: str, port: int | None) -> None:
    # the local defaults apply exactly where no key is demanded (http://llm.localhost:8080
    # once took the defaults and was still asked for a key)
    url = _url(host, port, "/v1", "http")
    no_key = key_vars("openai/m", ProviderSettings(api_base=url)) == ()
    assert no_key == is_loopback(url)
    assert key_vars("openai/m", ProviderSettings(api_base="http://llm.localhost:8080")) == ()


def test_one_is_loopback_in_the_package() -> None:
    defined = [path for path in Path(pytest_toolselect.__file__).parent.rglob("*.py")
               if any(isinstance(node, ast.FunctionDef) and node.name.strip("_") == "is_loopback"
                      for node in ast.walk(ast.parse(path.read_text())))]
    assert [p.name for p in defined] == ["preflight.py"]


@pytest.mark.parametrize("value", [None, "", "not a url", "http://", "http://[bad"])
def test_no_url_is_no_loopback(value: str | None) -> None:
    assert not is_loopback(value)
