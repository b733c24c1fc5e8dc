"""Attribution end to end: a real SDK asks a fake model that reads the tools' descriptions.

Each scenario records a baseline, then changes the tools, the model, or both, and checks
what every report says caused the red: the edit of a named tool (and not a harmless one),
drift (the model moved: the baseline's own tools fail now too), or shadowing by a new tool.
"""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

import anthropic  # noqa: F401  (imported before pytester snapshots sys.modules)
import jsonschema
import pytest
from fakeapi import FakeAPI, WordModel, fake_api_fixture  # noqa: F401

from conftest import Project, case
from pytest_toolselect.positions.sourcemap import load_schema

KEY = "sk-ant-" + "api03-attr-secret-" + "0" * 16
PRICES = {"input_per_mtok": 1.0, "output_per_mtok": 2.0}
OFFICERS_TOOL = {"name": "list_officers", "description": "List the officers and directors of a company.",
                 "inputSchema": {"type": "object"}}
COMPANY_TOOL = {"name": "get_company",
                "description": "Look up a company in the register by its name and return its number.",
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}
INVOICES_TOOL = {"name": "list_invoices",
                 "description": "List the invoices a company has sent or received.",
                 "inputSchema": {"type": "object"}}
#: list_officers first: a tie between it and another tool goes its way
TOOLS = [OFFICERS_TOOL, COMPANY_TOOL, INVOICES_TOOL]
CASES = [case("company", "Look up the company register entry for Acme", ["get_company"]),
         case("invoices", "List the invoices sent by Acme", ["list_invoices"]),
         case("directors", "Who are the directors of Acme", ["list_officers"])]
IDS = {c["id"]: f"registry.toolselect.yaml::{c['id']}" for c in CASES}
#: a model update: it no longer weighs these words, and "company" then ties with list_officers
DEAF = {"look", "up", "register"}
ARGS = ("--toolselect-baseline=base.json", "--toolselect-reps=3", "--toolselect-max-extra-reps=6",
        "--toolselect-attribution=on")  # the suite's projects turn it off (conftest.py)
REPORTS = ("--toolselect-json=out.json", "--toolselect-markdown=comment.md",
           "--toolselect-html=report.html")


@pytest.fixture
def model(project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> WordModel:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    words = WordModel()
    fake_api.handler = words
    project.config(model="anthropic/claude-test", api_base=fake_api.url, retry_backoff=0,
                   prices={"anthropic/claude-test": PRICES})
    tools(project, TOOLS)
    project.cases(CASES)
    project.pytester.runpytest(*ARGS).assert_outcomes(passed=3)
    assert project.read_baseline()["tools"]  # recorded with its tools
    return words


def tools(project: Project, listed: list[dict[str, Any]]) -> None:
    (project.path / "registry.tools.json").write_text(json.dumps({"tools": listed}))


def reworded(tool: dict[str, Any], description: str) -> dict[str, Any]:
    return {**tool, "description": description}


class Run:
    """A gated run and what each report said."""

    def __init__(self, project: Project, words: WordModel, *extra: str) -> None:
        before = words.asked
        self.result = project.pytester.runpytest(*ARGS, *REPORTS, *extra)
        self.calls = words.asked - before
        self.terminal = self.result.stdout.str()
        self.doc = json.loads((project.path / "out.json").read_text())
        jsonschema.Draft202012Validator(load_schema("tool_selection.v1")).validate(self.doc)
        # as a reader sees it: markdown's escapes of punctuation taken out
        self.markdown = re.sub(r"\\(.)", r"\1", (project.path / "comment.md").read_text())
        html = (project.path / "report.html").read_text()
        self.html = unescape(re.sub(r"<[^>]+>", " ", html))
        self.cases = {c["nodeid"]: c for c in self.doc["cases"]}

    def case(self, name: str) -> dict[str, Any]:
        return self.cases[IDS[name]]

    def attribution_calls(self) -> int:
        return sum((c.get("attribution") or {}).get("calls", 0) for c in self.doc["cases"])

    def every_report(self) -> list[str]:
        return [self.terminal, self.markdown, self.html, json.dumps(self.doc)]

    def summary(self) -> list[str]:
        """The toolselect summary's lines, from its first."""
        lines = self.terminal.splitlines()
        start = next(i for i, line in enumerate(lines) if "toolselect" in line and "===" in line)
        return [line for line in lines[start + 1:] if line.strip()]


CAUSE_A = "caused by the change to get_company's description"


def test_a_two_tools_reworded_the_one_that_breaks_a_held_case_is_named(
        project: Project, model: WordModel) -> None:
    tools(project, [OFFICERS_TOOL,
                    reworded(COMPANY_TOOL, "Fetch a business record: name in, number out."),
                    reworded(INVOICES_TOOL, "List the invoices sent or received by a firm, newest first.")])
    run = Run(project, model)
    assert run.result.ret == 1
    broken = run.case("company")
    assert broken["verdict"] == "regression"
    found = broken["attribution"]
    assert found["outcome"] == "regression" and found["search"] == "one at a time"
    assert [(c["tool"], c["part"]) for c in found["causes"]] == [("get_company", "description")]
    assert found["baseline_tools"] == [15, 15] and found["head"] == [0, 15]
    for report in run.every_report():
        assert CAUSE_A in report
        # the harmless rewording is a change the tools note lists, never a cause
        assert "list_invoices's description" not in report
    # the word diff of the cause is shown with it
    assert "[-Look up a company" in run.terminal or "[-Look" in run.terminal
    assert run.case("invoices")["verdict"] == "held" and "attribution" not in run.case("invoices")
    # the paired check (15 + 15) and one variant per changed tool (2 x 9)
    assert run.attribution_calls() == found["calls"] == 48
    print(f"attribution (a): {run.attribution_calls()} calls")


def test_b_the_model_moved_and_the_tools_did_not_drift(project: Project, model: WordModel) -> None:
    model.deaf = set(DEAF)
    run = Run(project, model)
    assert run.result.ret == 0, run.terminal
    drifted = run.case("company")
    assert drifted["verdict"] == "drift" and drifted["outcome"] == "xfailed"
    assert drifted["attribution"]["same_tools"] is True
    line = "drift: fails with the baseline's tools too (0/15 now, 3/3 recorded)"
    for report in run.every_report():
        assert line in report
    # drift is the first thing the summary says, with what to do
    assert run.summary()[0].startswith("drift: 1 case fails with the baseline's own tools too")
    assert "re-record main" in run.summary()[0]
    assert "**drift: 1 case fails" in run.markdown
    assert not run.doc["verdict"]["blocking"]
    # identical requests: one arm of 15 reps
    assert run.attribution_calls() == 15
    print(f"attribution (b): {run.attribution_calls()} calls")
    again = Run(project, model, "--toolselect-fail-on-drift")
    assert again.result.ret == 1
    assert again.doc["verdict"]["reasons"] == ["1 drift (--toolselect-fail-on-drift)"]


def test_attribution_is_on_by_default(project: Project, model: WordModel,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")  # not the suite's "off"
    model.deaf = set(DEAF)
    result = project.pytester.runpytest(*(a for a in ARGS if "attribution" not in a))
    assert result.ret == 0
    assert result.stdout.str().count("drift: fails with the baseline's tools too") == 1


def test_c_drift_and_an_edit_at_once(project: Project, model: WordModel) -> None:
    model.deaf = set(DEAF)
    tools(project, [OFFICERS_TOOL, COMPANY_TOOL,
                    reworded(INVOICES_TOOL, "Show the bills a firm has issued.")])
    run = Run(project, model)
    assert run.result.ret == 1
    assert run.case("company")["verdict"] == "drift"
    broken = run.case("invoices")
    assert broken["verdict"] == "regression"
    assert [(c["tool"], c["part"]) for c in broken["attribution"]["causes"]] == [
        ("list_invoices", "description")]
    for report in run.every_report():
        assert "caused by the change to list_invoices's description" in report
        assert "drift: fails with the baseline's tools too (0/15 now, 3/3 recorded)" in report
    assert run.summary()[0].startswith("drift: 1 case fails")
    assert run.doc["verdict"]["blocking_cases"] == [IDS["invoices"]]
    # two paired checks of 15 + 15; one changed tool needs no variant
    assert run.attribution_calls() == 60
    print(f"attribution (c): {run.attribution_calls()} calls")


def test_d_a_new_tool_that_takes_a_case_is_shadowing(project: Project, model: WordModel) -> None:
    newcomer = {"name": "search_companies", "description": "Look up a company register entry by name.",
                "inputSchema": {"type": "object"}}
    tools(project, [*TOOLS, newcomer])
    run = Run(project, model)
    assert run.result.ret == 1
    found = run.case("company")["attribution"]
    assert found["causes"] == [{"tool": "search_companies", "part": "added", "shadowing": True,
                                "evidence": [15, 15]}]
    for report in run.every_report():
        assert "shadowed by the new tool search_companies" in report
    assert run.attribution_calls() == 30
    print(f"attribution (d): {run.attribution_calls()} calls")


def test_attribution_off_and_the_cap(project: Project, model: WordModel) -> None:
    model.deaf = set(DEAF)
    off = Run(project, model, "--toolselect-attribution=off")
    # nothing asked again: the gate's verdict stands, as before attribution
    assert off.result.ret == 1 and off.attribution_calls() == 0
    assert off.case("company")["verdict"] == "regression" and "attribution" not in off.case("company")
    capped = Run(project, model, "--toolselect-attribution-max-calls=4")
    found = capped.case("company")["attribution"]
    # the cap bounds the reps (4 of one arm): too few to call drift, so the regression stands
    assert found["calls"] == 4 and capped.attribution_calls() == 4
    assert capped.case("company")["verdict"] in ("regression", "drift")
    none = Run(project, model, "--toolselect-attribution-max-calls=0")
    assert none.case("company")["verdict"] == "regression"
    assert none.case("company")["attribution"]["calls"] == 0
    assert "not attributed" in none.terminal


def test_a_bad_cap_is_a_usage_error(project: Project, model: WordModel) -> None:
    result = project.pytester.runpytest(*ARGS, "--toolselect-attribution-max-calls=lots")
    assert result.ret == 4
    assert "attribution-max-calls" in result.stdout.str() + result.stderr.str()


def test_the_response_cache_replays_the_attribution(project: Project, model: WordModel) -> None:
    model.deaf = set(DEAF)
    first = Run(project, model, "--toolselect-cache=answers.sqlite")
    assert first.case("company")["verdict"] == "drift" and first.calls > 0
    # a CI job with no key replays every call, the attribution's too: nothing is asked
    again = Run(project, model, "--toolselect-cache=answers.sqlite", "--toolselect-cache-mode=replay")
    assert again.calls == 0 and again.result.ret == 0
    assert again.case("company")["attribution"]["summary"] == first.case("company")["attribution"]["summary"]


def test_shards_attribute_their_own_cases_and_merge(project: Project, model: WordModel) -> None:
    model.deaf = set(DEAF)
    for k in (1, 2):
        result = project.pytester.runpytest(*ARGS, f"--toolselect-shard={k}/2",
                                            f"--toolselect-json=shard{k}.json")
        assert result.ret in (0, 1)
    from pytest_toolselect import cli

    status = cli.main(["merge", *(str(project.path / f"shard{k}.json") for k in (1, 2)),
                       "--json", str(project.path / "merged.json")])
    assert status == 0
    doc = json.loads((project.path / "merged.json").read_text())
    company = {c["nodeid"]: c for c in doc["cases"]}[IDS["company"]]
    assert company["verdict"] == "drift" and company["attribution"]["outcome"] == "drift"
    assert doc["verdict"]["exit_status"] == 0
    assert doc["cost"]["attribution"]["calls"] == company["attribution"]["calls"] == 15
