"""What a baseline's history counts and what a report says of it: cached replays, restarted
histories, renamed cases, the config's system prompt and the labels of marginal drops."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import FIND, OFFICERS, OUT_OF_SCOPE, PLANNED, Project, case
from pytest_toolselect.positions.sourcemap import load_schema
from pytest_toolselect.records.run_records import CaseRecord

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

RIGHT, WRONG_TOOL = "find_company", "lookup_vat"
ARGS = ("--toolselect-baseline=base.json", "--toolselect-reps=3")
FIND_ID = "registry.toolselect.yaml::find"


def plan(project: Project, steps: dict[str, list[Any]]) -> None:
    (project.path / "plan.json").write_text(json.dumps(steps))


def planned(project: Project, **options: Any) -> None:
    project.config(model="script/planned", **options)
    project.pytester.makeconftest(PLANNED)


# -- the config's system prompt is gated per case, not part of the subject ----------------------


def test_an_edited_system_prompt_is_gated_not_refused(project: Project) -> None:
    planned(project, system="You answer questions about companies.")
    project.cases([case(*FIND), case(*OFFICERS)])
    plan(project, {FIND[1]: [RIGHT], OFFICERS[1]: ["list_officers"]})
    project.pytester.runpytest(*ARGS).assert_outcomes(passed=2)
    # the pull request rewrites the system prompt, and the model now picks the wrong tool
    planned(project, system="You answer questions about VAT numbers first.")
    plan(project, {FIND[1]: [WRONG_TOOL], OFFICERS[1]: ["list_officers"]})
    result = project.pytester.runpytest(*ARGS)
    assert result.ret == 1, result.stdout.str()
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "regressions (held on the baseline, fail now: these block): 1" in out
    assert "the tools offered or the system prompt changed" in out
    assert "system prompt" in out


def test_a_baseline_with_a_system_hash_in_its_subject_still_loads(project: Project) -> None:
    planned(project)
    project.cases([case(*FIND)])
    plan(project, {FIND[1]: [RIGHT]})
    project.baseline({FIND_ID: {"status": "held"}},
                     subject={"provider": "script", "model": "script/planned",
                              "system_hash": "sha256:0123456789abcdef"})
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=1)
    assert "baseline: compared with" in result.stdout.str()


# -- history counts real evidence ---------------------------------------------------------------


def test_answers_replayed_from_the_cache_add_no_history_run(project: Project) -> None:
    planned(project)
    project.cases([case(*FIND)])
    plan(project, {FIND[1]: [RIGHT]})
    cached = (*ARGS, "--toolselect-cache=answers.db")
    project.pytester.runpytest(*cached).assert_outcomes(passed=1)
    assert project.read_baseline()["cases"][FIND_ID]["history"] == [[3, 3]]
    for _ in range(3):
        result = project.pytester.runpytest(*cached, "--toolselect-update-baseline")
        result.assert_outcomes(passed=1)
    # one real ask is one run, however often it is replayed
    assert project.read_baseline()["cases"][FIND_ID]["history"] == [[3, 3]]
    result.stdout.fnmatch_lines(["history: 1 case answered from the response cache added no run*"])
    # asked for real again, the run counts
    project.pytester.runpytest(*ARGS, "--toolselect-update-baseline").assert_outcomes(passed=1)
    assert project.read_baseline()["cases"][FIND_ID]["history"] == [[3, 3], [3, 3]]


def test_an_update_says_how_many_histories_restarted_and_why(project: Project) -> None:
    planned(project)
    project.cases([case(*FIND), case(*OFFICERS)])
    plan(project, {FIND[1]: [RIGHT, RIGHT, WRONG_TOOL], OFFICERS[1]: ["list_officers"]})
    # fixed reps: this is about restarts, not the extra reps a disagreeing first recording buys
    project.pytester.runpytest(*ARGS, "--toolselect-adaptive=off")
    project.pytester.runpytest(*ARGS, "--toolselect-update-baseline", "--toolselect-adaptive=off")
    assert project.read_baseline()["cases"][FIND_ID]["history"] == [[2, 3], [2, 3]]
    # a tool is added to the server: every case is offered something else
    tools = json.loads((project.path / "registry.tools.json").read_text())
    tools["tools"].append({"name": "file_accounts", "description": "File a company's accounts.",
                           "inputSchema": {"type": "object"}})
    (project.path / "registry.tools.json").write_text(json.dumps(tools))
    result = project.pytester.runpytest(*ARGS, "--toolselect-update-baseline")
    result.stdout.fnmatch_lines(["history: restarted for 2 cases (2 because the tools offered or "
                                 "the system prompt changed)*"])
    assert project.read_baseline()["cases"][FIND_ID]["history"] == [[2, 3]]
    # a compare run rewrites nothing, so it says nothing of histories
    assert "history:" not in project.pytester.runpytest(*ARGS).stdout.str()


# -- renames ----------------------------------------------------------------------------------


def test_a_renamed_case_is_compared_with_its_old_entry(project: Project) -> None:
    planned(project)
    project.cases([case(*FIND), case(*OFFICERS)])
    plan(project, {FIND[1]: [RIGHT], OFFICERS[1]: ["list_officers"]})
    project.pytester.runpytest(*ARGS).assert_outcomes(passed=2)
    # one pull request renames the case and breaks it
    project.cases([case("find_acme", FIND[1], FIND[2]), case(*OFFICERS)])
    plan(project, {FIND[1]: [WRONG_TOOL], OFFICERS[1]: ["list_officers"]})
    result = project.pytester.runpytest(*ARGS)
    assert result.ret == 1, result.stdout.str()
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "renamed from registry.toolselect.yaml::find (compared with its baseline entry)" in out
    assert "no longer a case" not in out
    # accepted on main, the update moves the entry (and its history) to the new key
    plan(project, {FIND[1]: [RIGHT], OFFICERS[1]: ["list_officers"]})
    project.pytester.runpytest(*ARGS, "--toolselect-update-baseline").assert_outcomes(passed=2)
    cases = project.read_baseline()["cases"]
    assert FIND_ID not in cases
    assert cases["registry.toolselect.yaml::find_acme"]["history"] == [[3, 3], [3, 3]]


def test_two_gone_entries_with_the_same_content_are_no_rename(project: Project) -> None:
    planned(project)
    # two cases that stay keep the run's overlap with the baseline above the guard's half
    kept = [case(*OFFICERS), case(*OUT_OF_SCOPE)]
    project.cases([case(*FIND), *kept])
    plan(project, {FIND[1]: [RIGHT], OFFICERS[1]: ["list_officers"], OUT_OF_SCOPE[1]: [None]})
    project.pytester.runpytest(*ARGS)
    cases = project.read_baseline()["cases"]
    entry = cases[FIND_ID]
    project.baseline({**cases, "registry.toolselect.yaml::twin": entry},
                     subject={"provider": "script", "model": "script/planned"})
    project.cases([case("find_acme", FIND[1], FIND[2]), *kept])
    result = project.pytester.runpytest(*ARGS)
    assert "renamed from" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*1 new*"])


# -- honest labels ------------------------------------------------------------------------------


def test_a_marginal_drop_is_not_called_still_failing(project: Project) -> None:
    planned(project)
    project.cases([case(*FIND)])
    plan(project, {FIND[1]: [WRONG_TOOL]})
    project.baseline({FIND_ID: {"status": "flaky", "passes": 2, "reps": 3, "history": [[2, 3]]}},
                     subject={"provider": "script", "model": "script/planned"})
    result = project.pytester.runpytest(*ARGS)
    assert result.ret == 0, result.stdout.str()  # the rule wants more evidence than 2/3 vs 0/3
    out = result.stdout.str()
    assert "failed on the baseline too" not in out
    result.stdout.fnmatch_lines(["dropped, not significant (held on the baseline at times*: 1",
                                 "*dropped, not significant: held 2/3 on the baseline*"])


def test_a_case_that_never_held_is_still_failing(project: Project) -> None:
    planned(project)
    project.cases([case(*FIND)])
    plan(project, {FIND[1]: [WRONG_TOOL]})
    project.baseline({FIND_ID: {"status": "failing", "passes": 0, "reps": 3, "history": [[0, 3]]}},
                     subject={"provider": "script", "model": "script/planned"})
    result = project.pytester.runpytest(*ARGS)
    result.stdout.fnmatch_lines(["still failing (failed on the baseline too): 1"])
    assert "dropped" not in result.stdout.str()


def test_an_update_titles_regressions_as_accepted(project: Project) -> None:
    planned(project)
    project.cases([case(*FIND)])
    plan(project, {FIND[1]: [RIGHT]})
    project.pytester.runpytest(*ARGS)
    plan(project, {FIND[1]: [WRONG_TOOL]})
    # compared, the regression blocks and says so
    assert "fail now: these block): 1" in project.pytester.runpytest(*ARGS).stdout.str()
    result = project.pytester.runpytest(*ARGS, "--toolselect-update-baseline",
                                        "--toolselect-markdown=comment.md")
    assert result.ret == 0
    assert "these block" not in result.stdout.str()
    assert "### Regressions accepted (1): held on the baseline, fail now; the update records them" in (
        project.path / "comment.md").read_text()
    result.stdout.fnmatch_lines(["regressions accepted (held on the baseline, fail now; "
                                 "--toolselect-update-baseline records the new behaviour): 1"])


# -- what changed in the tools ------------------------------------------------------------------


def _edit_tools(project: Project) -> None:
    tools = json.loads((project.path / "registry.tools.json").read_text())
    by_name = {t["name"]: t for t in tools["tools"]}
    by_name["find_company"]["description"] = (
        "Look up a VAT number or the company register by company name; returns matching "
        "companies with their company numbers.")
    tools["tools"] = [t for t in tools["tools"] if t["name"] != "list_officers"]
    tools["tools"].append({"name": "file_accounts", "description": "File a company's accounts.",
                           "inputSchema": {"type": "object"}})
    (project.path / "registry.tools.json").write_text(json.dumps(tools))


def test_a_regression_names_the_tools_that_changed(project: Project) -> None:
    planned(project, system="Answer about companies.")
    project.cases([case(*FIND)])
    plan(project, {FIND[1]: [RIGHT]})
    project.pytester.runpytest(*ARGS).assert_outcomes(passed=1)
    stored = project.read_baseline()
    toolset = stored["toolsets"][stored["cases"][FIND_ID]["tools_fingerprint"]]
    assert sorted(toolset) == ["(system prompt)", "find_company", "list_officers", "lookup_vat"]
    assert set(stored["descriptions"]) == set(toolset.values())
    planned(project, system="Answer about companies and VAT.")
    _edit_tools(project)  # after the config, which writes the tools file afresh
    plan(project, {FIND[1]: [WRONG_TOOL]})
    result = project.pytester.runpytest(*ARGS, "--toolselect-json=out.json",
                                        "--toolselect-markdown=comment.md",
                                        "--toolselect-html=report.html")
    assert result.ret == 1
    out = result.stdout.str()
    note = out.index("note:     since the baseline, the tools offered or the system prompt changed")
    # the note names each change and points to the tools section, which shows each diff once
    assert out[note:].splitlines()[1] == (
        "            changed (system prompt), added file_accounts, changed find_company, removed "
        "list_officers (see 'tools changed since the baseline')")
    section = out.index("tools changed since the baseline: 4")
    assert out[section:].splitlines()[1:5] == [
        "  changed (system prompt): Answer about [-companies.-] {+companies and VAT.+}   (1 case)",
        "  added file_accounts   (1 case)",
        "  changed find_company: [-Search-] {+Look up a VAT number or+} the company "
        "register …   (1 case)",
        "  removed list_officers   (1 case)",
    ]
    doc = json.loads((project.path / "out.json").read_text())
    jsonschema.Draft202012Validator(load_schema("tool_selection.v1")).validate(doc)
    changes = doc["cases"][0]["tools_diff"]
    assert [(c["tool"], c["change"]) for c in changes] == [
        ("(system prompt)", "changed"), ("file_accounts", "added"), ("find_company", "changed"),
        ("list_officers", "removed")]
    comment = (project.path / "comment.md").read_text()
    assert "- added file_accounts (1 case)" in comment
    assert "removed list_officers" in comment
    assert "removed list_officers" in (project.path / "report.html").read_text()


def test_an_old_baseline_without_toolsets_gives_the_plain_note(project: Project) -> None:
    planned(project)
    project.cases([case(*FIND)])
    plan(project, {FIND[1]: [WRONG_TOOL]})
    project.baseline({FIND_ID: {"status": "held", "tools_fingerprint": "sha256:0000000000000000"}},
                     subject={"provider": "script", "model": "script/planned"})
    result = project.pytester.runpytest(*ARGS)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*note:     since the baseline, the tools offered or the system "
                                 "prompt changed", "*"])
    assert "added " not in result.stdout.str()


# -- what a run is evidence of (pure) -----------------------------------------------------------


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=8))
def test_only_reps_really_asked_count(reps: list[tuple[bool, bool]]) -> None:
    from pytest_toolselect.gate.evidence import fresh_run

    record = {"passes": sum(p for p, _ in reps), "reps": len(reps),
              "cached": [c for _, c in reps],
              "checks": [[{"name": "tool_choice", "passed": p, "detail": ""}] for p, _ in reps]}
    fresh = [p for p, cached in reps if not cached]
    assert fresh_run(CaseRecord.read(record)) == ((sum(fresh), len(fresh)) if fresh else None)


def test_a_record_without_cache_flags_is_one_whole_run() -> None:
    from pytest_toolselect.gate.evidence import fresh_run

    assert fresh_run(CaseRecord.read({"passes": 2, "reps": 3})) == (2, 3)


def test_the_history_lines_count_each_case_once_and_truly() -> None:
    from pytest_toolselect.gate.evidence import history_lines

    def rec(cached: bool, **flags: bool) -> CaseRecord:
        return CaseRecord.read({"status": "held", "passes": 1, "reps": 1, "cached": [cached],
                                "checks": [[{"name": "tool_choice", "passed": True, "detail": ""}]],
                                **flags})

    assert history_lines([rec(False, in_baseline=True)]) == []
    # a replayed new case is recorded from its replay: nothing to say
    assert history_lines([rec(True, in_baseline=False)]) == []
    # a replayed case whose tools changed restarted (from its replay), it did not keep its runs
    lines = history_lines([rec(True, in_baseline=True, tools_changed=True),
                           rec(False, in_baseline=True, case_changed=True),
                           rec(True, in_baseline=True)])
    assert lines[0].startswith("history: restarted for 2 cases (1 because the tools offered or "
                               "the system prompt changed; 1 because the case itself changed)")
    assert lines[1].startswith("history: 1 case answered from the response cache added no run")
