"""A reply cut at max_tokens before any tool call is inconclusive for its rep alone.

Counted, billed and shown, never scored: the case is judged on its conclusive reps and is
an error only when none is; the preference probe leaves such a call out by the same rule.
Through the real openai and anthropic SDKs against the fake API.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
import test_models_e2e
import test_probe_e2e
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from test_models_e2e import CALL_COST, _answer, _config
from test_probe_e2e import _first_listed, _groups

from conftest import FIND, OFFICERS, Project, case
from pytest_toolselect.positions.sourcemap import load_schema

#: what a slow, small model says when max_tokens ends it mid-thought
MUSING = "Let me think about which register to search first, since the question"

# the fixtures of those modules, used here by name
models = test_models_e2e.models
probe = test_probe_e2e.probe


def _cut(body: dict[str, Any]) -> Reply:
    return Reply(text=MUSING, stop_reason="max_tokens", input_tokens=1000, output_tokens=100)


def _cut_first(n: int, then: Callable[[dict[str, Any]], Reply]) -> Callable[[dict[str, Any]], Reply]:
    """The first `n` calls that arrive are cut; the others answer with `then`."""
    count = itertools.count()
    lock = threading.Lock()

    def handler(body: dict[str, Any]) -> Reply:
        with lock:
            k = next(count)
        return _cut(body) if k < n else then(body)

    return handler


@pytest.mark.parametrize("model", ["openai/gpt-test", "anthropic/claude-test"])
def test_one_cut_rep_leaves_the_case_judged_on_the_other(models: Project, fake_api: FakeAPI,
                                                         model: str) -> None:
    _config(models, fake_api, model)
    models.cases([case(*FIND)])
    fake_api.handler = _cut_first(1, _answer)
    result = models.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=2",
                                       "--toolselect-json=out.json")
    result.assert_outcomes(passed=1)
    assert len(fake_api.requests) == 2
    result.stdout.fnmatch_lines([
        f"*{model}: ${2 * CALL_COST:.4f} over 2 calls, 2000 in / 200 out, "
        "1 inconclusive (cut at max_tokens before any tool call)*"])
    doc = json.loads((models.path / "out.json").read_text())
    jsonschema.validate(doc, load_schema("tool_selection.v1"))
    (entry,) = doc["cases"]
    assert (entry["passes"], entry["reps"], entry["inconclusive"]) == (1, 1, 1)
    assert entry["status"] == "held" and entry["error"] is None
    assert entry["costs"] == [pytest.approx(CALL_COST)] * 2
    # the baseline records the conclusive rep only
    stored = models.read_baseline()["cases"]["registry.toolselect.yaml::find"]
    assert (stored["passes"], stored["reps"]) == (1, 1)


def test_a_cut_rep_beside_a_failing_one_is_shown_on_the_failure(models: Project,
                                                                fake_api: FakeAPI) -> None:
    _config(models, fake_api, "openai/gpt-test")
    models.cases([case(*OFFICERS)])
    fake_api.handler = _cut_first(1, lambda body: Reply(tool_calls=[("find_company", {"name": "x"})]))
    result = models.pytester.runpytest("--toolselect-reps=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*passes:   0/2 reps*",
        "*cut:      1 of 3 reps inconclusive (cut at max_tokens before any tool call*"])


def test_every_rep_cut_is_an_error_with_its_calls_billed(models: Project,
                                                         fake_api: FakeAPI) -> None:
    _config(models, fake_api, "openai/gpt-test")
    models.cases([case(*FIND)])
    models.baseline({"registry.toolselect.yaml::find": {"status": "held"}}, subject=None)
    models.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-update-baseline")
    before = models.read_baseline()
    fake_api.requests.clear()
    fake_api.handler = _cut
    result = models.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=2",
                                       "--toolselect-update-baseline", "--toolselect-json=out.json")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "*all 2 replies were cut at max_tokens=1024 before any tool call: inconclusive*",
        f"*cost: ${2 * CALL_COST:.4f}*",
        f"*openai/gpt-test: ${2 * CALL_COST:.4f} over 2 calls*"])
    assert len(fake_api.requests) == 2
    assert models.read_baseline() == before  # nothing to judge: the entry is kept
    doc = json.loads((models.path / "out.json").read_text())
    jsonschema.validate(doc, load_schema("tool_selection.v1"))
    assert doc["cost"]["total_usd"] == pytest.approx(2 * CALL_COST)
    assert doc["cases"][0]["verdict"] == "error"


def test_the_probe_leaves_a_cut_call_out_by_the_same_rule(probe: Project,
                                                          fake_api: FakeAPI) -> None:
    _groups(probe, ["G01"])
    fake_api.handler = _cut_first(3, _first_listed)
    result = probe.pytester.runpytest("--toolselect-json=pref.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*left out of the summary: 3 inconclusive (cut at max_tokens "
                                 "before any tool call; billed)*"])
    doc = json.loads((probe.path / "pref.json").read_text())["preference"]
    jsonschema.validate(doc, load_schema("tool_preference.v1"))
    cut = [r for r in doc["results"] if r["inconclusive"]]
    assert len(cut) == 3 and len(doc["results"]) == len(fake_api.requests)
    assert all(r["outcome"] is None and r["error"] is None and r["cost_usd"] for r in cut)
    summary = doc["summary"]
    assert (summary["n_inconclusive"], summary["n_errors"]) == (3, 0)
    assert summary["n_scored"] == len(fake_api.requests) - 3


def test_a_group_with_every_call_cut_is_an_error_that_says_so(probe: Project,
                                                              fake_api: FakeAPI) -> None:
    _groups(probe, ["C01"])
    fake_api.handler = _cut
    result = probe.pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no call of group C01 was scored: all 12 replies were cut at "
                                 "max_tokens before any tool call (inconclusive) (raise max_tokens)*"])
