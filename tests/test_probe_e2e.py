"""The preference probe as pytest items, end to end through the real Anthropic SDK.

Scripted policies of known bias run against the fake API; the probe must recover
their effects. Groups come from the shipped example file, trimmed to a few groups.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anthropic  # noqa: F401  (imported before pytester snapshots sys.modules)
import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401

from conftest import Project

EXAMPLE = Path(__file__).parent.parent / "examples" / "preference.groups.json"
KEY = "sk-ant-" + "api03-probe-secret-" + "0" * 12  # built: no key-shaped literal


def _groups(project: Project, ids: list[str]) -> dict[str, Any]:
    doc = json.loads(EXAMPLE.read_text())
    doc["groups"] = [g for g in doc["groups"] if g["id"] in ids]
    (project.path / "probe.groups.json").write_text(json.dumps(doc))
    return doc


def _first_listed(body: dict[str, Any]) -> Reply:
    return Reply(tool_calls=[(body["tools"][0]["name"], {})], input_tokens=100, output_tokens=10)


def _assertive_else_first(body: dict[str, Any]) -> Reply:
    for tool in body["tools"]:
        if "IMPORTANT" in tool.get("description", ""):
            return Reply(tool_calls=[(tool["name"], {})])
    return _first_listed(body)


def _both_twins(body: dict[str, Any]) -> Reply:
    tools = body["tools"]
    return Reply(tool_calls=[(tools[0]["name"], {}), (tools[-1]["name"], {})])


@pytest.fixture
def probe(project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    project.config({}, model="anthropic/claude-test", api_base=fake_api.url, retry_backoff=0,
                   prices={"anthropic/claude-test": {"input_per_mtok": 1, "output_per_mtok": 2}})
    return project


def test_position_bias_of_a_first_listed_policy(probe: Project, fake_api: FakeAPI) -> None:
    _groups(probe, ["G01", "G02", "G03", "C01"])
    fake_api.handler = _first_listed
    result = probe.pytester.runpytest("--toolselect-reps=2", "--toolselect-json=pref.json")
    # controls over-call under this policy, but with no baseline nothing can regress
    result.assert_outcomes(passed=4)
    # 3 pair groups x (2 + 4 x 5 factors) + 1 control x (2 + 2 x 5), times 2 reps
    assert len(fake_api.requests) == 2 * (3 * 22 + 12)
    result.stdout.fnmatch_lines([
        "*first-listed twin share (baseline): +1.00 [[]+1.00, +1.00[]] (groups=3)*",
        "*assertive     +0.00*", "*long_desc     +0.00*",
        "*controls, any tool called: assertive 1.0, baseline 1.0*",
    ])
    results = json.loads((probe.path / "pref.json").read_text())
    # the probe's own document sits in the results, whole
    assert results["schema_version"] == "tool_selection.v1" and results["cases"] == []
    doc = results["preference"]
    assert doc["summary"]["first_twin_share_baseline"]["mean"] == pytest.approx(1.0)
    assert len(doc["results"]) == len(fake_api.requests)
    assert KEY not in (probe.path / "pref.json").read_text()

    import jsonschema

    from pytest_toolselect.positions.sourcemap import load_schema

    jsonschema.validate(doc, load_schema("tool_preference.v1"))
    jsonschema.validate(results, load_schema("tool_selection.v1"))


def test_assertive_cue_policy_moves_the_share_by_half(probe: Project, fake_api: FakeAPI) -> None:
    _groups(probe, ["G01", "G02", "G03", "G04"])
    fake_api.handler = _assertive_else_first
    result = probe.pytester.runpytest()
    result.assert_outcomes(passed=4)
    # treated first: 1 vs 1 at that position; treated last: 1 vs 0. Mean +0.5
    result.stdout.fnmatch_lines(["*assertive     +0.50*(groups=4)*", "*social_proof  +0.00*"])


def test_both_twins_count_half_each(probe: Project, fake_api: FakeAPI) -> None:
    _groups(probe, ["G01", "G02"])
    fake_api.handler = _both_twins
    result = probe.pytester.runpytest()
    result.stdout.fnmatch_lines(["*first-listed twin share (baseline): +0.50*",
                                 "*pair items: both twins 1.0*"])


def test_a_control_that_starts_over_calling_is_a_regression(probe: Project,
                                                          fake_api: FakeAPI) -> None:
    _groups(probe, ["G01", "C01"])
    fake_api.handler = lambda body: Reply(text="No tool needed.")
    first = probe.pytester.runpytest("--toolselect-baseline=base.json")
    first.assert_outcomes(passed=2)
    groups = json.loads((probe.path / "base.json").read_text())["groups"]
    assert groups["probe.groups.json::C01"]["over_call_share"] == 0

    fake_api.handler = _first_listed
    second = probe.pytester.runpytest("--toolselect-baseline=base.json")
    second.assert_outcomes(passed=1, failed=1)
    second.stdout.fnmatch_lines(["*control group C01: a tool was called in 100% of its calls "
                                 "(baseline 0%)*"])


def test_dry_run_counts_and_calls_nothing(probe: Project, fake_api: FakeAPI) -> None:
    _groups(probe, ["G01", "G08", "C01"])
    result = probe.pytester.runpytest("--toolselect-dry-run", "--toolselect-reps=3")
    assert result.ret == 0
    assert fake_api.requests == []
    # G08 leaves out one twin's fields, so one factor is skipped for that twin
    result.stdout.fnmatch_lines(["*2 pair groups and 1 control, 3 reps*",
                                 "*G01*22 cells*66 calls*", "*G08*20 cells*60 calls*",
                                 "*C01*12 cells*36 calls*", "*an estimate*"])


def test_the_cap_leaves_the_last_group_partial(probe: Project, fake_api: FakeAPI) -> None:
    _groups(probe, ["G01", "G02", "G03"])
    fake_api.handler = lambda body: Reply(tool_calls=[(body["tools"][0]["name"], {})],
                                          input_tokens=1000, output_tokens=0)
    # $0.001 a call: the cap stops new calls after 30 of 66
    result = probe.pytester.runpytest("--toolselect-max-cost-usd=0.03",
                                      "--toolselect-concurrency=1")
    assert result.ret == 2
    assert len(fake_api.requests) == 30
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["*partial*"])


def test_groups_referencing_a_real_servers_tools(probe: Project, fake_api: FakeAPI) -> None:
    tools = [{"name": "find_company", "description": "Search companies by name."},
             {"name": "company_lookup", "description": "Look a company up by name."},
             {"name": "get_weather", "description": "The weather in a city."}]
    probe.config({"registry": {"tools_file": probe.tools_file("registry", tools)}},
                 model="anthropic/claude-test", api_base=fake_api.url, retry_backoff=0)
    doc = {"schema_version": "tool_preference_groups.v1", "groups": [{
        "id": "R01", "query": "Find the company Acme Widgets.",
        "twins": {"A": {"server": "registry", "tool": "find_company", "vendor_name": "acme_find"},
                  "B": {"server": "registry", "tool": "company_lookup"}},
        "distractors": [{"server": "registry", "tool": "get_weather"}]}]}
    (probe.path / "real.groups.json").write_text(json.dumps(doc))
    fake_api.handler = _first_listed
    result = probe.pytester.runpytest()
    result.assert_outcomes(passed=1)
    sent = {t["name"] for r in fake_api.requests for t in r.body["tools"]}
    assert sent == {"find_company", "company_lookup", "get_weather", "acme_find"}


def test_a_file_that_is_not_a_groups_file_is_left_alone(probe: Project) -> None:
    shutil.copy(EXAMPLE, probe.path / "unrelated.groups.json")
    (probe.path / "unrelated.groups.json").write_text('{"groups": {"admins": ["ann"]}}')
    result = probe.pytester.runpytest()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
