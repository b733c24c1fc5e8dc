"""Real providers end to end: pytest runs that ask the real SDKs, pointed at the fake API.

The SDKs are imported once here, before pytester snapshots sys.modules: its in-process
runs may not import them afresh (a second numpy/pydantic import fails).
"""

from __future__ import annotations

import json
import os
from typing import Any

# litellm fetches its price map from the network at import unless told not to
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import anthropic  # noqa: F401
import litellm  # noqa: F401
import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401

from conftest import FIND, NESTED_XDIST, OFFICERS, OUT_OF_SCOPE, Project, case

KEY = "sk-ant-" + "api03-e2e-secret-" + "0" * 16  # built: no key-shaped literal
OPENAI_KEY = "sk-proj-e2e-secret-1111111111111111111111"
#: $1 per million input tokens, $2 per million output: 1000 in + 100 out = $0.0012
PRICES = {"input_per_mtok": 1.0, "output_per_mtok": 2.0}
CALL_COST = 0.0012


def _answer(body: dict[str, Any]) -> Reply:
    """A model that answers from the question: the same right choices every time."""
    question = json.dumps(body["messages"])
    if "directors" in question:
        return Reply(tool_calls=[("list_officers", {"company_number": "01234567"})],
                     input_tokens=1000, output_tokens=100)
    if "Acme" in question:
        return Reply(tool_calls=[("find_company", {"name": "Acme Widgets"})],
                     input_tokens=1000, output_tokens=100)
    return Reply(text="I can't help with the weather.", input_tokens=1000, output_tokens=100)


@pytest.fixture
def models(project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    fake_api.handler = _answer
    return project


def _config(project: Project, fake_api: FakeAPI, model: str, **extra: Any) -> None:
    base = fake_api.url if model.startswith("anthropic/") else fake_api.url + "/v1"
    extra.setdefault("prices", {model: PRICES})
    project.config(model=model, api_base=base, retry_backoff=0, **extra)


@pytest.mark.parametrize("model", ["anthropic/claude-test", "openai/gpt-test"])
def test_the_gate_works_through_a_real_sdk(models: Project, fake_api: FakeAPI, model: str) -> None:
    _config(models, fake_api, model, system="Answer with tools.")
    models.cases([case(*FIND), case(*OFFICERS, forbid_ungrounded=True), case(*OUT_OF_SCOPE)])
    result = models.pytester.runpytest("--toolselect-baseline=base.json",
                                       "--toolselect-max-tokens=321")
    result.assert_outcomes(passed=3)
    via = "anthropic SDK" if model.startswith("anthropic/") else "openai SDK"
    result.stdout.fnmatch_lines([f"toolselect: model {model} (from toolselect.yaml), reps 1, via {via}",
                                 f"*cost: ${3 * CALL_COST:.4f}*",
                                 f"*{model}: ${3 * CALL_COST:.4f} over 3 calls, 3000 in / 300 out*"])
    assert len(fake_api.requests) == 3
    body = fake_api.requests[0].body
    assert [t.get("name") or t["function"]["name"] for t in body["tools"]] == [
        "find_company", "list_officers", "lookup_vat"]
    assert body["max_tokens"] == 321 and "temperature" not in body
    assert body["tool_choice"] in ({"type": "auto"}, "auto")
    system = body.get("system") or body["messages"][0]["content"]
    assert "Answer with tools." in json.dumps(system)
    assert models.read_baseline()["subject"]["model"] == model


def test_parallel_calls_are_all_seen_by_no_forbidden_tools(models: Project,
                                                          fake_api: FakeAPI) -> None:
    _config(models, fake_api, "openai/gpt-test")
    fake_api.handler = lambda body: Reply(tool_calls=[("find_company", {"name": "Acme"}),
                                                      ("list_officers", {"company_number": "1"})])
    models.cases([case(*FIND, forbid_tools=["list_officers"])])
    result = models.pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*called:   find_company(name='Acme'); list_officers(*",
                                 "*no_forbidden_tools: *list_officers (call 2)*"])


@pytest.mark.parametrize("model", ["anthropic/claude-test", "openai/gpt-test"])
def test_a_call_that_keeps_failing_is_an_error_and_the_run_goes_on(
        models: Project, fake_api: FakeAPI, model: str) -> None:
    _config(models, fake_api, model)
    models.cases([case(*FIND), case(*OFFICERS)])
    models.baseline({"registry.toolselect.yaml::find": {"status": "held"},
                     "registry.toolselect.yaml::officers": {"status": "failing"}},
                    subject=None)
    models.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-update-baseline")
    before = models.read_baseline()["cases"]["registry.toolselect.yaml::officers"]

    fake_api.requests.clear()
    def overloaded(body: dict[str, Any]) -> Reply:
        if "directors" in json.dumps(body["messages"]):
            return Reply(status=529, error="Overloaded")
        return _answer(body)
    fake_api.handler = overloaded
    result = models.pytester.runpytest("--toolselect-baseline=base.json",
                                       "--toolselect-update-baseline", "--toolselect-retries=2")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of toolselect case officers*",
                                 "*Overloaded*3 attempts*"])
    # one try and two retries for the failing case, one call for the other
    assert len(fake_api.requests) == 4
    assert models.read_baseline()["cases"]["registry.toolselect.yaml::officers"] == before


def test_cost_cap_skips_the_rest_and_exits_2(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "anthropic/claude-test")
    models.cases([case(f"c{n}", FIND[1], FIND[2]) for n in range(4)])
    result = models.pytester.runpytest("--toolselect-max-cost-usd=0.002", "-rs",
                                       "--toolselect-concurrency=1")
    # the first call leaves $0.0012 spent, under the cap, so the second starts and crosses it
    result.assert_outcomes(passed=2, skipped=2)
    assert result.ret == 2
    assert len(fake_api.requests) == 2
    result.stdout.fnmatch_lines(["*not run (cost cap; baseline entries kept): 2*",
                                 "*cost cap reached: priced calls spent $0.0024 of $0.002*",
                                 "*cost: $0.0024 of a $0.002 cap*",
                                 "SKIPPED [[]1[]] registry.toolselect.yaml:*: cost cap reached*"])


def test_calls_wait_for_reservations_and_none_starts_past_the_cap(models: Project,
                                                                   fake_api: FakeAPI) -> None:
    _config(models, fake_api, "anthropic/claude-test")
    fake_api.handler = lambda body: Reply(tool_calls=[("find_company", {"name": "Acme"})],
                                          input_tokens=1000, output_tokens=100, delay=0.3)
    models.cases([case(f"c{n}", FIND[1], FIND[2]) for n in range(8)])
    result = models.pytester.runpytest("--toolselect-max-cost-usd=0.001",
                                       "--toolselect-concurrency=4")
    # the first call reserves its highest price (1024 output tokens alone: $0.002), more than
    # the cap: the others wait for it, and once it has cost $0.0012 none may start
    result.assert_outcomes(passed=1, skipped=7)
    assert result.ret == 2
    assert len(fake_api.requests) == 1 and fake_api.max_in_flight == 1
    result.stdout.fnmatch_lines(["*cost: $0.0012 of a $0.001 cap*"])


def test_an_unpriced_call_makes_the_cap_blind(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "anthropic/claude-unpriced-test", prices={})
    models.cases([case(f"c{n}", FIND[1], FIND[2]) for n in range(3)])
    result = models.pytester.runpytest("--toolselect-max-cost-usd=100", "-rs",
                                       "--toolselect-concurrency=1")
    result.assert_outcomes(passed=1, skipped=2)
    assert result.ret == 2
    assert len(fake_api.requests) == 1
    result.stdout.fnmatch_lines(["*cost cap $100 is blind: a call to anthropic/claude-unpriced-test "
                                 "came back with no price*",
                                 "*1 call with no known price, not in the total*"])


def test_a_zero_price_does_not_move_the_cap(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "anthropic/claude-test",
            prices={"anthropic/claude-test": {"input_per_mtok": 0, "output_per_mtok": 0}})
    models.cases([case(f"c{n}", FIND[1], FIND[2]) for n in range(3)])
    result = models.pytester.runpytest("--toolselect-max-cost-usd=0.000001")
    result.assert_outcomes(passed=3)
    assert result.ret == 0


def test_no_key_reaches_any_output(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "anthropic/claude-test")
    def leaky(body: dict[str, Any]) -> Reply:
        if "directors" in json.dumps(body["messages"]):
            # real APIs quote the key back in some error messages
            return Reply(status=401, error=f"invalid x-api-key: {KEY}")
        return _answer(body)
    fake_api.handler = leaky
    models.cases([case(*FIND), case(*OFFICERS)])
    result = models.pytester.runpytest("--toolselect-baseline=base.json", "-vv",
                                       "--junitxml=junit.xml")
    result.assert_outcomes(passed=1, errors=1)
    outputs = result.stdout.str() + result.stderr.str()
    for path in models.path.rglob("*"):
        if path.is_file():
            outputs += path.read_text(errors="replace")
    assert "invalid x-api-key" in outputs
    assert KEY not in outputs and OPENAI_KEY not in outputs
    # the requests did carry it: the test would see a leak
    assert KEY in json.dumps(fake_api.requests[0].headers), fake_api.requests[0].headers


def test_prompt_caching_is_reported_with_what_it_saved(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "anthropic/claude-test",
            prices={"anthropic/claude-test": {**PRICES, "cache_read_per_mtok": 0.1}})
    fake_api.handler = lambda body: Reply(tool_calls=[("find_company", {"name": "Acme"})],
                                          input_tokens=1000, output_tokens=100,
                                          cache_read_tokens=5000)
    models.cases([case(*FIND)])
    result = models.pytester.runpytest()
    result.assert_outcomes(passed=1)
    # 1000 x $1 + 100 x $2 + 5000 x $0.1 per million; the reads would have cost $0.005 as input
    result.stdout.fnmatch_lines(["*cost: $0.0017*",
                                 "*cache read 5000 / written 0 (reads saved $0.0045)*"])
    assert "cache_control" in json.dumps(fake_api.requests[0].body["tools"][-1])

    fake_api.requests.clear()
    models.pytester.runpytest("--toolselect-no-prompt-caching")
    assert "cache_control" not in json.dumps(fake_api.requests[0].body)


def test_the_response_cache_answers_unchanged_requests(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "anthropic/claude-test")
    models.cases([case(*FIND), case(*OFFICERS)])
    first = models.pytester.runpytest("--toolselect-cache=calls.sqlite", "--toolselect-reps=2")
    first.assert_outcomes(passed=2)
    first.stdout.fnmatch_lines(["*response cache: 0 hits, 4 misses, hits saved $0.0000*"])
    # reps are independent samples: each rep is its own request
    assert len(fake_api.requests) == 4

    second = models.pytester.runpytest("--toolselect-cache=calls.sqlite", "--toolselect-reps=2")
    second.assert_outcomes(passed=2)
    second.stdout.fnmatch_lines([f"*response cache: 4 hits, 0 misses, hits saved ${4 * CALL_COST:.4f}*"])
    assert len(fake_api.requests) == 4

    # one tool's description changes: only what offers it is asked again (here: both cases)
    tools = json.loads((models.path / "registry.tools.json").read_text())
    tools["tools"][2]["description"] += " Also EU VAT numbers."
    (models.path / "registry.tools.json").write_text(json.dumps(tools))
    models.cases([case(*FIND), case(*OFFICERS)], name="registry")
    third = models.pytester.runpytest("--toolselect-cache=calls.sqlite", "--toolselect-reps=2")
    third.stdout.fnmatch_lines(["*response cache: 0 hits, 4 misses*"])

    # replay: a CI job with no key re-runs what was recorded; a miss is an error
    fake_api.requests.clear()
    replay = models.pytester.runpytest("--toolselect-cache=calls.sqlite",
                                       "--toolselect-cache-mode=replay", "--toolselect-reps=3")
    replay.assert_outcomes(errors=2)
    # reps 1 and 2 of each case were recorded, rep 3 misses: the misses are counted, though
    # their items are errors with nothing scored
    replay.stdout.fnmatch_lines(["*no cached response for this request*in replay mode*",
                                 f"*response cache: 4 hits, 2 misses, hits saved ${4 * CALL_COST:.4f}*"])
    assert fake_api.requests == []
    assert KEY.encode() not in (models.path / "calls.sqlite").read_bytes()


@pytest.mark.parametrize("model", ["anthropic/claude-test", "openai/gpt-test"])
def test_answers_recorded_against_one_server_are_not_replayed_for_another(
        models: Project, fake_api: FakeAPI, model: str) -> None:
    models.cases([case(*FIND), case(*OFFICERS)])
    _config(models, fake_api, model)
    models.pytester.runpytest("--toolselect-cache=calls.sqlite").assert_outcomes(passed=2)
    other = FakeAPI().start()
    try:
        # another local server, serving another model under the same name
        other.handler = lambda body: Reply(text="I would not call any tool.")
        _config(models, other, model)
        result = models.pytester.runpytest("--toolselect-cache=calls.sqlite")
        result.stdout.fnmatch_lines(["*response cache: 0 hits, 2 misses*"])
        result.assert_outcomes(failed=2)
        assert len(other.requests) == 2
        # each server's answers stay in the file: back on the first, both are hits
        _config(models, fake_api, model)
        again = models.pytester.runpytest("--toolselect-cache=calls.sqlite")
        again.stdout.fnmatch_lines(["*response cache: 2 hits, 0 misses*"])
        assert len(fake_api.requests) == 2
    finally:
        other.stop()


@NESTED_XDIST
def test_replay_misses_are_counted_under_xdist(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "openai/gpt-test")
    models.cases([case(*FIND), case(*OFFICERS)])
    models.pytester.runpytest("--toolselect-cache=calls.sqlite").assert_outcomes(passed=2)
    models.cases([case(*FIND), case(*OFFICERS), case(*OUT_OF_SCOPE)])
    fake_api.requests.clear()
    replay = models.pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider",
                                                  "--toolselect-cache=calls.sqlite",
                                                  "--toolselect-cache-mode=replay")
    replay.assert_outcomes(passed=2, errors=1)
    # each worker's lookups reach the controller's summary
    replay.stdout.fnmatch_lines([f"*response cache: 2 hits, 1 misses, hits saved ${2 * CALL_COST:.4f}*"])
    assert fake_api.requests == []


def test_a_misspelled_cache_mode_fails_loudly(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "anthropic/claude-test")
    models.cases([case(*FIND)])
    result = models.pytester.runpytest("--toolselect-cache=c.sqlite",
                                       "--toolselect-cache-mode=read_write")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown cache mode 'read_write' (did you mean 'read-write'?*"])
