"""Provider faults end to end: pytest runs through the real SDKs against a fake API that misbehaves.

Each fault runs for both wire formats (anthropic/* through the Anthropic SDK, an
openai/* model through litellm). A fault that leaves nothing to score (refused,
reset mid-body, a reply that never ends) is the item's pytest *error*, naming the
model and the cause, and the run goes on and keeps the case's baseline entry. A
reply that is odd but whole (a tool that was not offered, no content, huge
arguments) is scored like any other.

Faults covered elsewhere (statuses, retry-after, a dropped connection before any
reply, error bodies in a 200, non-JSON bodies, a slow first byte) are in
test_providers.py and test_models_e2e.py.
"""

from __future__ import annotations

import asyncio
import json
import time
import warnings
from typing import Any

import litellm
import pytest
from fakeapi import (  # noqa: F401  (the fake_api and refused_url fixtures)
    FakeAPI,
    Reply,
    anthropic_body,
    fake_api_fixture,
    openai_body,
    refused_url_fixture,
)
from test_models_e2e import _answer, _config, models  # noqa: F401  (a fixture)

from conftest import FIND, OFFICERS, OUT_OF_SCOPE, Project, case
from pytest_toolselect.exchange.clip import MAX_DEPTH, MAX_ITEMS, MAX_TEXT, MORE, clip_call, clip_value
from pytest_toolselect.exchange.tool import ToolCall
from pytest_toolselect.providers.wire import NameMap, parse_arguments

# the end-to-end tests' `models`: the keys set, and a fake API that answers right
pytestmark = pytest.mark.usefixtures("models", "litellm_warmed")


@pytest.fixture(scope="module")
def litellm_warmed() -> None:
    """One litellm call in this process first: its first call imports some 60 more modules
    (~1 s), which would count against the first short deadline of a run. (pytester's
    in-process runs drop the modules a run imported, so it must happen out here.)"""
    api = FakeAPI().start()
    try:
        with warnings.catch_warnings():
            # what it imports warns about its own pydantic types: nothing a test here can act on
            warnings.simplefilter("ignore")
            asyncio.run(litellm.acompletion(model="openai/gpt-4o-mini", api_base=api.url + "/v1",
                                            api_key="sk-" + "x" * 20, max_retries=0,
                                            messages=[{"role": "user", "content": "hi"}]))
    finally:
        api.stop()


MODELS = ["anthropic/claude-test", "openai/gpt-4o-mini"]
FIND_ID = "registry.toolselect.yaml::find"
OFFICERS_ID = "registry.toolselect.yaml::officers"


def _subject(model: str) -> dict[str, Any]:
    """The subject a run of `model` with the default settings compares against."""
    provider = "anthropic" if model.startswith("anthropic/") else "litellm"
    return {"provider": provider, "model": model,
            "settings": {"max_tokens": 1024, "temperature": None}, "system_hash": None}


def _asks_officers(body: Any) -> bool:
    return "directors" in json.dumps(body["messages"])


def _faulty(fault: Reply) -> Any:
    """The officers question gets `fault`; every other question a right answer."""
    return lambda body: fault if _asks_officers(body) else _answer(body)


def _setup(project: Project, fake_api: FakeAPI, model: str, **options: Any) -> None:
    _config(project, fake_api, model, **options)
    project.cases([case(*FIND), case(*OFFICERS)])
    project.baseline({FIND_ID: {"status": "held"}, OFFICERS_ID: {"status": "held"}},
                     subject=_subject(model))


def _assert_error_kept(project: Project, result: pytest.RunResult, before: dict[str, Any],
                       errored: list[str]) -> None:
    """The errored cases kept their baseline entries; the rest were written anew."""
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    after = project.read_baseline()["cases"]
    for nodeid, entry in before.items():
        if nodeid in errored:
            assert after[nodeid] == entry
        else:
            # scored this run: its entry now carries this run's fingerprints and history
            assert after[nodeid] != entry and after[nodeid]["history"] == [[1, 1], [1, 1]]


# --- 1. connection refused -----------------------------------------------------------------------
@pytest.mark.parametrize("model", MODELS)
def test_connection_refused_is_an_error_per_item_naming_model_and_cause(
        project: Project, fake_api: FakeAPI, refused_url: str, model: str) -> None:
    _setup(project, fake_api, model, retries=0)
    before = project.read_baseline()["cases"]
    api_base = refused_url + ("/v1" if model.startswith("openai/") else "")
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-update-baseline",
                                        f"--toolselect-api-base={api_base}")
    # every item ran and ended as an error: none passed, none failed, the run did not crash
    result.assert_outcomes(errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"*{model}: connection error: ConnectionRefusedError: *"
                                 "(gave up after 1 attempt) (check api_base*"] * 2, consecutive=False)
    assert fake_api.requests == []
    _assert_error_kept(project, result, before, [FIND_ID, OFFICERS_ID])


# --- 2. connection reset mid-body -----------------------------------------------------------------
@pytest.mark.parametrize("model", MODELS)
def test_a_reply_cut_by_a_reset_mid_body_is_retried_then_an_error(
        project: Project, fake_api: FakeAPI, model: str) -> None:
    _setup(project, fake_api, model, retries=1)
    before = project.read_baseline()["cases"]
    # the headers and 40 bytes of a whole reply, then an RST
    fake_api.handler = _faulty(Reply(tool_calls=[("list_officers", {"company_number": "01234567"})],
                                     cut=40))
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-update-baseline")
    result.assert_outcomes(passed=1, errors=1)
    # the SDKs see the RST, or the body fall short of its Content-Length (by how much depends on
    # whether the 40 bytes left the kernel before the RST): either way, said
    result.stdout.re_match_lines([
        r".*ERROR at setup of toolselect case officers.*",
        rf"{model}: connection error: (ConnectionResetError: .*reset by peer|"
        r"ContentLengthError: .*\(received \d+ of \d+ bytes\)).* \(gave up after 2 attempts\)"])
    # a connection error is retried: two attempts for the cut case, one for the other
    assert len(fake_api.requests) == 3
    _assert_error_kept(project, result, before, [OFFICERS_ID])


# --- 3. a reply that never ends -------------------------------------------------------------------
# a byte a second: the SDKs' per-read timeouts never fire, and the whole body would take minutes
NEVER_ENDS = {"trickle": Reply(text="I will look that up.", trickle=1.0), "stall": Reply(stall=True)}
#: how long the client may take to hang up: only a hang fails it (this trickle takes over 3 minutes)
HANG_UP = 120.0


@pytest.mark.parametrize("mode", sorted(NEVER_ENDS))
@pytest.mark.parametrize("model", MODELS)
def test_a_reply_that_never_ends_is_cut_at_the_timeout(
        project: Project, fake_api: FakeAPI, model: str, mode: str) -> None:
    # The SDKs' own timeouts are per read (here 8 s), and a trickle resets them with every
    # byte: only the plugin's deadline on the whole exchange ends a trickling attempt. 3 s
    # leaves the other case's call room on a loaded machine (0.5 s did not, at times)
    _setup(project, fake_api, model, retries=0, timeout=3)
    before = project.read_baseline()["cases"]
    fake_api.handler = _faulty(NEVER_ENDS[mode])
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-update-baseline")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR at setup of toolselect case officers*",
        f"{model}: no complete reply within 3 s (timeout) (gave up after 1 attempt)"])
    [attempt] = [r for r in fake_api.requests if _asks_officers(r.body)]
    # the server learns of the hang-up at its next write (a trickle's next byte, a stall's
    # next poll): that can come just after the run returns, or later on a loaded machine
    waited = time.monotonic() + HANG_UP
    while attempt.ended is None and time.monotonic() < waited:
        time.sleep(0.02)
    # the message above says the plugin's deadline fired (an SDK timeout reads otherwise); here
    # the client also hung up, long before a trickle ends, so no connection is left open
    assert attempt.ended is not None and attempt.ended - attempt.at < HANG_UP
    _assert_error_kept(project, result, before, [OFFICERS_ID])


# --- 4. a tool that was not offered ---------------------------------------------------------------
@pytest.mark.parametrize("model", MODELS)
def test_a_call_to_a_tool_not_offered_is_scored(project: Project, fake_api: FakeAPI, model: str) -> None:
    _config(project, fake_api, model)
    fake_api.handler = _faulty(Reply(tool_calls=[("delete_company", {"company_number": "01234567"})]))
    project.cases([case(*FIND), case(*OFFICERS, forbid_ungrounded=True)])
    result = project.pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*called:   delete_company(company_number='01234567')",
        "*failing:  tool_choice: first call is delete_company (not one of the tools offered); "
        "expected one of: list_officers"])
    # its arguments were scored too, with no schema to go by: the number is in the question
    assert "no_identifier_invented" not in result.stdout.str()
    # the name is the model's own: it was not among the tools sent
    assert "delete_company" not in json.dumps([r.body for r in fake_api.requests])


# --- 5. an empty reply ----------------------------------------------------------------------------
@pytest.mark.parametrize("model", MODELS)
def test_an_empty_reply_is_scored_as_calling_nothing(project: Project, fake_api: FakeAPI,
                                                     model: str) -> None:
    _config(project, fake_api, model)
    fake_api.handler = lambda body: Reply()
    project.cases([case(*FIND), case(*OUT_OF_SCOPE)])
    result = project.pytester.runpytest()
    # the case that expects no call holds; the one that expects a call fails, scored
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*called:   (nothing)",
                                 "*failing:  tool_choice: no tool was called; expected one of: find_company"])
    # what the fake sent: Anthropic's `content: []`, OpenAI's message with no content and no calls
    sent = anthropic_body(Reply(), {}) if model.startswith("anthropic/") else openai_body(Reply(), {})
    if model.startswith("anthropic/"):
        assert sent["content"] == []
    else:
        assert sent["choices"][0]["message"] == {"role": "assistant", "content": None}


# --- 6. huge arguments ----------------------------------------------------------------------------
HUGE = {
    # what a broken proxy might send (a real model stops at max_tokens long before)
    "5MB-string": {"name": "Acme Widgets " * 400_000},
    "10000-keys": {"name": "Acme Widgets", **{f"k{i}": f"{i:08d}" for i in range(10_000)}},
}
#: the one line that says how the huge arguments failed their checks
HUGE_FAILING = {
    "5MB-string": '*failing:  arguments: find_company (call 1): name: expected to equal "Acme Widgets", '
                   'got "Acme Widgets Acme Widgets *Widgets...',
    "10000-keys": '*failing:  no_identifier_invented: identifier not in the question: '
                   'find_company (call 1) k0 contains "00000000"; *; and 9,990 more',
}
HUGE_CALLED = {
    "5MB-string": "*called:   find_company(name='Acme Widgets * (+5,199,800 chars)')",
    "10000-keys": "*called:   find_company(name='Acme Widgets', k0='00000000', *, "
                   "k18='00000018', …='+9,981 more keys')",
}


@pytest.mark.parametrize("shape", sorted(HUGE))
@pytest.mark.parametrize("model", MODELS)
def test_huge_arguments_are_scored_and_kept_bounded(project: Project, fake_api: FakeAPI, model: str,
                                                    shape: str) -> None:
    _config(project, fake_api, model)
    args = HUGE[shape]
    fake_api.handler = lambda body: Reply(tool_calls=[("find_company", args)])
    project.cases([case(*FIND, expect_args=[{"path": "name", "equals": "Acme Widgets"}],
                        forbid_ungrounded=True)])
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--junitxml=junit.xml",
                                        "--toolselect-json=results.json")
    # scored: a new case that fails its checks (recorded to a new baseline); the counts
    # shown ("+5,199,800 chars", "9,990 more") say the whole arguments were read
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines([HUGE_CALLED[shape], HUGE_FAILING[shape]])
    # what is shown and stored is bounded (it was 5 MB to 27 MB of terminal output before)
    out = result.stdout.str()
    assert len(out) < 20_000 and max(len(line) for line in out.splitlines()) < 1_000
    for name in ("base.json", "junit.xml", "results.json"):
        assert (project.path / name).stat().st_size < 20_000, name
    assert project.read_baseline()["cases"][FIND_ID]["failing_checks"] == (
        ["arguments"] if shape == "5MB-string"
        else ["no_identifier_invented", "no_undeclared_arguments"])
    if shape == "10000-keys":  # 10,000 made-up parameters, named 5 and counted
        result.stdout.fnmatch_lines(["*failing:  no_undeclared_arguments: find_company (call 1) "
                                     "passes what its tool does not declare: $.k0, $.k1, $.k2, "
                                     "$.k3, $.k4, and 9,995 more (its parameters: name)"])


# --- the pieces, directly -----------------------------------------------------------------------
def test_clip_value_bounds_strings_objects_lists_and_depth() -> None:
    small = {"name": "Acme", "n": 3, "tags": ["a", "b"], "deep": {"x": None, "ok": True}}
    assert clip_value(small) == small
    big = {"s": "x" * 1000, "list": list(range(50)), **{f"k{i}": i for i in range(100)}}
    out = clip_value(big)
    assert out["s"] == "x" * MAX_TEXT + "… (+800 chars)"
    assert out["list"] == [*range(MAX_ITEMS), "… +30 more items"]
    assert len(out) == MAX_ITEMS + 1 and out[MORE] == "+82 more keys"
    nested: Any = "leaf"
    for _ in range(MAX_DEPTH + 5):
        nested = [nested]
    inner = clip_value(nested)
    for _ in range(MAX_DEPTH):
        inner = inner[0]
    assert inner == f"… (list nested deeper than {MAX_DEPTH} levels)"
    assert len(json.dumps(clip_value(HUGE["5MB-string"]))) < 300


def test_arguments_nested_past_the_json_depth_limit_are_kept_raw() -> None:
    # a RecursionError from json, not a ValueError: kept raw, scored as "not a JSON object"
    raw = "[" * 100_000 + "]" * 100_000
    assert parse_arguments(raw) == ({}, raw)
    call = ToolCall(NameMap(["find_company"]).real("x" * 10_000), {}, raw_arguments=raw)
    shown = clip_call(call)
    assert len(shown.name) < 300 and shown.raw_arguments is not None and len(shown.raw_arguments) < 300
