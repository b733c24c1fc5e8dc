"""Replies that cannot be read as a tool choice are errors, never a score, never a baseline entry.

Through the real SDKs (anthropic, openai, and litellm's route) against the fake API: a
call with no usable tool name (null, missing, empty, not a string, holding a control or
format character, with whitespace around it), no function object, arguments that are not
a JSON object, a content filter's or a refusal's stop reason. The rule is a property over
generated names and shapes; the reproduction (a broken reply recorded with
--toolselect-update-baseline hid the next real regression as "still failing") runs end to end.
"""

from __future__ import annotations

import asyncio
import json
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest
from fakeapi import FakeAPI, Reply
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_models_e2e import _answer, _config, models  # noqa: F401  (a fixture)
from test_provider_faults import litellm_warmed  # noqa: F401  (a fixture)

from conftest import FIND, OFFICERS, Project, case
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.providers import ProviderError, ProviderSettings, Turn, TurnRequest
from pytest_toolselect.providers.anthropic_api import AnthropicProvider
from pytest_toolselect.providers.litellm_api import LiteLLMProvider
from pytest_toolselect.providers.openai_api import OpenAIProvider

# litellm warns of the odd shapes its own pydantic types are handed: nothing to act on here
pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")

TOOLS = (Tool("find_company", "Search the register by company name.",
              {"type": "object", "properties": {"name": {"type": "string"}}}),)
#: route -> (provider class, model, api_base suffix)
ROUTES = {"anthropic": (AnthropicProvider, "anthropic/claude-test", ""),
          "openai": (OpenAIProvider, "openai/gpt-test", "/v1"),
          "litellm": (LiteLLMProvider, "openai/gpt-test", "/v1")}
#: what no tool name ever holds, anywhere in it
NEVER = ("Cc", "Cf", "Cs", "Zl", "Zp")
#: whitespace, which no tool name starts or ends with
SPACES = st.one_of(st.characters(categories=["Zs"]), st.sampled_from(" \t\n\r\x0b\x0c\x1c\x85"))


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    # module-scoped: hypothesis runs many examples in one test
    fake = FakeAPI().start()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-000")


def ask(route: str, api: FakeAPI, reply: Reply) -> Turn:
    cls, model, suffix = ROUTES[route]
    api.queue(reply)
    provider = cls(model, ProviderSettings(api_base=api.url + suffix, retries=0))
    return asyncio.run(provider.first_turn(TurnRequest("Find Acme", TOOLS)))


def unreadable(route: str, api: FakeAPI, reply: Reply) -> str:
    """The error the reply is, as its message (it must be one)."""
    with pytest.raises(ProviderError) as info:
        turn = ask(route, api, reply)
        pytest.fail(f"scored as a choice: {turn.calls}")
    return str(info.value)


# --- the rule, over generated names -------------------------------------------------------------
def _plain(c: str) -> bool:
    return unicodedata.category(c) not in NEVER and not c.isspace() and unicodedata.category(c) != "Zs"


PLAIN = st.text(st.characters(codec="utf-8").filter(_plain), min_size=1, max_size=12)
#: a name that holds a character no name holds, anywhere
WITH_ODD = st.tuples(st.text(max_size=6), st.characters(categories=list(NEVER)),
                     st.text(max_size=6)).map("".join)
#: a plain name with whitespace before or after it (or both)
PADDED = st.one_of(st.tuples(SPACES, PLAIN).map("".join), st.tuples(PLAIN, SPACES).map("".join),
                   st.tuples(SPACES, PLAIN, SPACES).map("".join))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from(sorted(ROUTES)), name=st.one_of(WITH_ODD, PADDED, st.just("")))
def test_a_name_with_an_odd_character_or_whitespace_around_is_an_error_naming_it(
        api: FakeAPI, route: str, name: str) -> None:
    message = unreadable(route, api, Reply(tool_calls=[(name, {"name": "Acme"})]))
    if not name:
        assert message.endswith("tool call 1 has an empty tool name")
    elif route != "litellm" or "tool call 1" in message:
        # the name, as repr shows it (every odd character escaped)
        assert repr(name) in message, message
    # and nothing odd reaches the message unescaped
    assert not [c for c in message if unicodedata.category(c) in NEVER], message


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from(sorted(ROUTES)), name=PLAIN)
def test_any_other_name_is_the_models_choice_scored_as_sent(api: FakeAPI, route: str, name: str) -> None:
    turn = ask(route, api, Reply(tool_calls=[(name, {"name": "Acme"})]))
    assert [c.name for c in turn.calls] == [name]


# --- the rule, over generated shapes ------------------------------------------------------------
NOT_AN_OBJECT = st.one_of(
    st.lists(st.integers(), max_size=3).map(json.dumps), st.integers().map(json.dumps),
    st.text(max_size=8).map(json.dumps), st.just("null"), st.just("true"),
    st.text(min_size=1, max_size=8).filter(lambda t: t.strip() and not t.strip().startswith("{")),
    st.just('{"name": "Acme"'))
BAD_NAME: Any = st.one_of(st.none(), st.just(""), st.integers(), st.lists(st.integers(), max_size=2),
                          st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _shapes(route: str) -> st.SearchStrategy[Reply]:
    """Replies with no usable tool call, in the wire's own shapes, after a good call or not."""
    good = st.sampled_from([[], [("find_company", {"name": "Acme"})]])
    bad_name = st.builds(lambda g, n: Reply(tool_calls=[*g, (n, {})]), good, BAD_NAME)
    bad_args = st.builds(lambda g, a: Reply(tool_calls=[*g, ("find_company", a)]), good, NOT_AN_OBJECT)
    if route == "anthropic":
        nameless = st.just(Reply(raw_calls=[{"type": "tool_use", "id": "t", "input": {}}]))
        return st.one_of(bad_name, bad_args, nameless)
    no_function = st.sampled_from([
        {"id": "x", "type": "function"}, {"id": "x", "type": "function", "function": None},
        {"id": "x", "type": "function", "function": "find_company"},
        {"id": "x", "type": "function", "function": {"arguments": "{}"}}])
    return st.one_of(bad_name, bad_args, st.builds(lambda g, c: Reply(tool_calls=g, raw_calls=[c]),
                                                   good, no_function))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), route=st.sampled_from(sorted(ROUTES)))
def test_a_reply_with_no_usable_call_is_an_error_whatever_its_shape(api: FakeAPI, route: str,
                                                                    data: st.DataObject) -> None:
    reply = data.draw(_shapes(route))
    message = unreadable(route, api, reply)
    if route != "litellm":
        # the native routes read every shape themselves and name the call at fault
        assert "the reply cannot be read as a tool choice: tool call " in message, message
    # litellm refuses some shapes itself before we see them: an error all the same


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_the_faults_are_named(api: FakeAPI, route: str) -> None:
    model = ROUTES[route][1]
    said = unreadable(route, api, Reply(tool_calls=[("find_company", {}), (None, {})]))
    assert said == (f"{model}: the reply cannot be read as a tool choice: "
                    "tool call 2 has no tool name (null or missing)")
    said = unreadable(route, api, Reply(tool_calls=[(" find_company\u200b", "[1]")]))
    assert said.endswith(r"tool call 1 has the tool name ' find_company\u200b', which holds the "
                         "Cf character U+200B; tool call 1 sent arguments that are not a JSON "
                         "object: '[1]'")


REFUSED = """the model refused: "I can't help with that.\""""


@pytest.mark.parametrize(("route", "reply", "said"), [
    ("openai", Reply(stop_reason="content_filter"),
     "a content filter stopped the reply (stop reason 'content_filter')"),
    ("litellm", Reply(stop_reason="content_filter"),
     "a content filter stopped the reply (stop reason 'content_filter')"),
    ("anthropic", Reply(text="I can't help with that.", stop_reason="refusal"),
     "the model refused to answer (stop reason 'refusal')"),
    ("openai", Reply(refusal="I can't help with that."), REFUSED),
    ("litellm", Reply(refusal="I can't help with that."), REFUSED),
])
def test_a_filtered_or_refused_reply_is_named_as_such(api: FakeAPI, route: str, reply: Reply,
                                                     said: str) -> None:
    assert unreadable(route, api, reply).endswith(f"cannot be read as a tool choice: {said}")


# --- end to end: the reproduction -------------------------------------------------------------------
FIND_ID = "registry.toolselect.yaml::find"
OFFICERS_ID = "registry.toolselect.yaml::officers"
#: a reply with no usable tool name, in each wire's shape
NAMELESS = {"anthropic/claude-test": Reply(raw_calls=[{"type": "tool_use", "id": "t", "input": {}}]),
            "openai/gpt-test": Reply(raw_calls=[{"id": "x", "type": "function",
                                                 "function": {"name": None, "arguments": "{}"}}])}


def _officers_get(fake_api: FakeAPI, reply: Reply) -> None:
    fake_api.handler = lambda body: reply if "directors" in json.dumps(body["messages"]) else _answer(body)


@pytest.mark.usefixtures("litellm_warmed")
@pytest.mark.parametrize("model", sorted(NAMELESS))
def test_an_unreadable_reply_recorded_never_hides_the_next_regression(
        models: Project, fake_api: FakeAPI, model: str) -> None:  # noqa: F811
    _config(models, fake_api, model)
    models.cases([case(*FIND), case(*OFFICERS)])
    models.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-update-baseline")
    held = models.read_baseline()["cases"][OFFICERS_ID]
    assert held["status"] == "held"

    # a broken reply, recorded: the item's error, naming the fault; the entry is kept
    _officers_get(fake_api, NAMELESS[model])
    result = models.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-update-baseline")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([f"*{model}: the reply cannot be read as a tool choice: "
                                 "tool call 1 has no tool name (null or missing)*"])
    assert models.read_baseline()["cases"][OFFICERS_ID] == held

    # the next run's real regression is one, and blocks
    _officers_get(fake_api, Reply(tool_calls=[("find_company", {"name": "Acme"})]))
    result = models.pytester.runpytest("--toolselect-baseline=base.json")
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "still failing" not in result.stdout.str()


HOOK = """
from pytest_toolselect.providers import Turn
from pytest_toolselect.exchange.tool import ToolCall

class Odd:
    model = "script/odd"

    def subject(self):
        return {"provider": "script", "model": self.model}

    async def first_turn(self, request):
        return Turn(calls=(CALL,))

def pytest_toolselect_provider(model, config):
    return Odd()
"""
#: a hook's call -> what its error says
HOOK_CALLS = {
    'ToolCall("find_company\\u2028")':
        r"tool call 1 has the tool name 'find_company\u2028', which holds the Zl character U+2028",
    """ToolCall("find_company", {}, raw_arguments='{"name": "Acme"')""":
        """tool call 1 ('find_company') sent arguments that are not a JSON object: '{"name": "Acme"'""",
}


@pytest.mark.parametrize("call", sorted(HOOK_CALLS))
def test_a_hooks_provider_is_held_to_the_same_rule(project: Project, call: str) -> None:
    project.pytester.makeconftest(HOOK.replace("CALL", call))
    project.config(model="script/odd")
    project.cases([case(*FIND)])
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    result.assert_outcomes(errors=1)
    said = f"script/odd: the reply cannot be read as a tool choice: {HOOK_CALLS[call]}"
    assert said in result.stdout.str()
    # nothing recorded: no baseline was written for the case that errored
    assert not (project.path / "base.json").exists() or FIND_ID not in project.read_baseline()["cases"]
