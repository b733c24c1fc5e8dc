"""Adaptive reps end to end: a scripted model, a stored history, and the extra calls a run makes."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from conftest import FIND, NESTED_XDIST, OFFICERS, PLANNED, Project, case
from pytest_toolselect.positions.sourcemap import load_schema

RIGHT, WRONG = "find_company", "list_officers"
FIND_ID, OFFICERS_ID = "registry.toolselect.yaml::find", "registry.toolselect.yaml::officers"
SUBJECT = {"provider": "script", "model": "script/planned", "system_hash": None}
#: a model that also logs every call it answers (question, rep) and may sleep first
LOGGING = PLANNED.replace(
    "        plan = json.loads(Path(\"plan.json\").read_text())[request.question]\n"
    "        step = plan[request.rep % len(plan)]\n"
    "        if not isinstance(step, dict):\n"
    "            step = {\"tool\": step}\n",
    "        plan = json.loads(Path(\"plan.json\").read_text())[request.question]\n"
    "        step = plan[request.rep % len(plan)]\n"
    "        if not isinstance(step, dict):\n"
    "            step = {\"tool\": step}\n"
    "        with open(\"calls.log\", \"a\") as log:\n"
    "            log.write(json.dumps([request.question, request.rep]) + \"\\n\")\n"
    "        if step.get(\"sleep\"):\n"
    "            import asyncio\n"
    "            await asyncio.sleep(step[\"sleep\"])\n")
assert LOGGING != PLANNED


def setup(project: Project, plans: dict[str, list[Any]], history: dict[str, list[list[int]]] | None,
          *, cases: tuple[tuple[str, str, list[str]], ...] = (FIND,)) -> None:
    project.config(model="script/planned")
    project.pytester.makeconftest(LOGGING)
    project.cases([case(*c) for c in cases])
    (project.path / "plan.json").write_text(json.dumps(plans))
    if history is not None:
        entries = {}
        for nodeid, runs in history.items():
            passes, reps = runs[-1]
            entries[nodeid] = {"status": "held" if passes == reps else "flaky", "passes": passes,
                               "reps": reps, "history": runs}
        project.baseline(entries, subject=SUBJECT)


def run(project: Project, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=3",
                                        "--toolselect-json=out.json", *args)
    doc = json.loads((project.path / "out.json").read_text())
    jsonschema.Draft202012Validator(load_schema("tool_selection.v1")).validate(doc)
    return result, doc


def calls(project: Project, question: str) -> int:
    lines = (project.path / "calls.log").read_text().splitlines()
    return sum(1 for line in lines if json.loads(line)[0] == question)


def by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["nodeid"]: c for c in doc["cases"]}


HELD_5 = [[3, 3]] * 5
#: a case that failed one rep in 15 on main: 0/3 now is not yet a regression at the first look
ONE_MISS = [[3, 3]] * 4 + [[2, 3]]


def test_a_clean_case_that_fails_once_is_asked_again_and_settles(project: Project) -> None:
    setup(project, {FIND[1]: [RIGHT, WRONG] + [RIGHT] * 40}, {FIND_ID: HELD_5})
    result, doc = run(project)
    entry = by_id(doc)[FIND_ID]
    assert entry["verdict"] in ("flaky", "held")
    assert entry["escalation"] == {"extra_reps": entry["reps"] - 3, "stopped": None,
                                   "recording": False}
    assert 3 < entry["reps"] <= 33
    assert calls(project, FIND[1]) == entry["reps"]
    result.assert_outcomes(passed=1, warnings=1 if entry["verdict"] == "flaky" else 0)
    esc = doc["summary"]["escalations"]
    assert esc == {"cases": 1, "calls": entry["reps"] - 3, "stopped": 0,
                   "verdicts": {entry["verdict"]: 1}}
    result.stdout.fnmatch_lines([f"adaptive reps: 1 case(s) asked again, {entry['reps'] - 3} "
                                 f"extra call(s); settled as 1 {entry['verdict']} (to settle a "
                                 "verdict the reps left open; at most --toolselect-max-extra-reps "
                                 "a case, none with --toolselect-adaptive off)"])


def test_a_broken_case_is_asked_again_and_settles_as_a_regression_within_the_cap(
        project: Project) -> None:
    setup(project, {FIND[1]: [WRONG]}, {FIND_ID: ONE_MISS})
    result, doc = run(project, "--toolselect-max-extra-reps=6")
    entry = by_id(doc)[FIND_ID]
    assert entry["verdict"] == "regression"
    assert (entry["passes"], entry["reps"]) == (0, 9)
    assert entry["escalation"]["extra_reps"] == 6
    assert calls(project, FIND[1]) == 9
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["adaptive reps: 1 case(s) asked again, 6 extra call(s); "
                                 "settled as 1 regression (*--toolselect-max-extra-reps*)"])


def test_a_case_that_always_holds_is_never_asked_again(project: Project) -> None:
    setup(project, {FIND[1]: [RIGHT], OFFICERS[1]: ["find_company"]},
          {FIND_ID: HELD_5, OFFICERS_ID: HELD_5}, cases=(FIND, OFFICERS))
    result, doc = run(project)
    assert "escalation" not in by_id(doc)[FIND_ID]
    assert calls(project, FIND[1]) == 3
    # a clean break of a case that held all 15 stored reps blocks at once, unasked
    assert by_id(doc)[OFFICERS_ID]["verdict"] == "regression"
    assert "escalation" not in by_id(doc)[OFFICERS_ID]
    assert "escalations" not in doc["summary"]
    assert "adaptive reps" not in result.stdout.str()


def test_adaptive_off_keeps_fixed_reps(project: Project) -> None:
    setup(project, {FIND[1]: [WRONG]}, {FIND_ID: ONE_MISS})
    _, doc = run(project, "--toolselect-adaptive=off")
    entry = by_id(doc)[FIND_ID]
    assert (entry["reps"], "escalation" in entry) == (3, False)
    assert entry["verdict"] == "regression"  # fisher-0.005 on 14/15 then 0/3: p = 4/816
    assert calls(project, FIND[1]) == 3


def test_the_cost_cap_stops_the_asking(project: Project) -> None:
    setup(project, {FIND[1]: [{"tool": WRONG, "cost": 0.01}]}, {FIND_ID: ONE_MISS})
    result, doc = run(project, "--toolselect-max-cost-usd=0.03")
    entry = by_id(doc)[FIND_ID]
    assert entry["escalation"] == {"extra_reps": 0, "stopped": "cost cap", "recording": False}
    assert calls(project, FIND[1]) == 3
    # judged on the reps it has, as if that look were the last: the rule's full alpha
    assert entry["verdict"] == "regression"
    assert doc["summary"]["escalations"]["stopped"] == 1
    result.stdout.fnmatch_lines(["adaptive reps: *; 1 stopped early*"])


def test_x_stops_the_asking(project: Project) -> None:
    # the first case breaks cleanly (fails at once); the second would be asked 30 more times
    setup(project, {OFFICERS[1]: ["find_company"], FIND[1]: [{"tool": WRONG, "sleep": 0.3}]},
          {OFFICERS_ID: HELD_5, FIND_ID: ONE_MISS}, cases=(OFFICERS, FIND))
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=3",
                                        "--toolselect-concurrency=1", "-x")
    result.assert_outcomes(failed=1)
    # unstopped, 3 + 30 calls of 0.3 s; the few made before the stop are all it gets
    assert calls(project, FIND[1]) <= 12


def test_a_first_recording_asks_again_where_reps_disagree(project: Project) -> None:
    setup(project, {FIND[1]: [RIGHT, WRONG] + [RIGHT] * 40, OFFICERS[1]: ["list_officers"]}, None,
          cases=(FIND, OFFICERS))
    result, doc = run(project, "--toolselect-max-extra-reps=6")
    stored = project.read_baseline()["cases"]
    assert stored[FIND_ID]["history"] == [[8, 9]]
    assert stored[OFFICERS_ID]["history"] == [[3, 3]]
    assert by_id(doc)[FIND_ID]["escalation"] == {"extra_reps": 6, "stopped": None,
                                                 "recording": True}
    assert calls(project, OFFICERS[1]) == 3
    result.stdout.fnmatch_lines(["adaptive reps: 1 case(s) asked again, 6 extra call(s)*"])


def test_a_bad_adaptive_value_is_a_usage_error(project: Project) -> None:
    setup(project, {FIND[1]: [RIGHT]}, None)
    result = project.pytester.runpytest("--toolselect-baseline=base.json",
                                        "--toolselect-adaptive=sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolselect-adaptive*'sometimes' must be on or off*"])


@NESTED_XDIST
def test_workers_ask_again_and_the_controller_reports_it(project: Project) -> None:
    setup(project, {FIND[1]: [WRONG], OFFICERS[1]: ["list_officers"]},
          {FIND_ID: ONE_MISS, OFFICERS_ID: HELD_5}, cases=(FIND, OFFICERS))
    result, doc = run(project, "--toolselect-max-extra-reps=6", "-n", "2")
    result.assert_outcomes(failed=1, passed=1)
    assert by_id(doc)[FIND_ID]["escalation"]["extra_reps"] == 6
    assert doc["summary"]["escalations"] == {"cases": 1, "calls": 6, "stopped": 0,
                                             "verdicts": {"regression": 1}}


def test_the_pr_comment_and_the_html_say_which_cases_were_asked_again(project: Project) -> None:
    setup(project, {FIND[1]: [WRONG]}, {FIND_ID: ONE_MISS})
    result, _ = run(project, "--toolselect-max-extra-reps=6", "--toolselect-markdown=pr.md",
                    "--toolselect-html=report.html")
    result.assert_outcomes(failed=1)
    summary = "adaptive reps: 1 case(s) asked again, 6 extra call(s); settled as 1 regression"
    comment = (project.path / "pr.md").read_text()
    html = (project.path / "report.html").read_text()
    assert summary in comment and summary in html
    # the case's own block says how many more times it was asked, in every report
    assert "- note: adaptive reps: asked 6 more times" in comment
    assert "adaptive reps: asked 6 more times" in html
    result.stdout.fnmatch_lines(["*adaptive reps: asked 6 more times*"])


def test_a_renamed_case_is_asked_again_against_the_entry_it_was_renamed_from(
        project: Project) -> None:
    setup(project, {FIND[1]: [RIGHT]}, None)
    run(project)  # recorded: the entry holds the case's content fingerprint
    base = json.loads((project.path / "base.json").read_text())
    passes, reps = ONE_MISS[-1]
    base["cases"][FIND_ID].update(status="flaky", passes=passes, reps=reps, history=ONE_MISS)
    (project.path / "base.json").write_text(json.dumps(base))
    # the same case under a new id, and now the model gets it wrong
    project.cases([case("find-renamed", FIND[1], FIND[2])])
    (project.path / "plan.json").write_text(json.dumps({FIND[1]: [WRONG]}))
    result, doc = run(project, "--toolselect-max-extra-reps=6")
    entry = by_id(doc)["registry.toolselect.yaml::find-renamed"]
    assert entry["renamed_from"] == FIND_ID
    assert entry["verdict"] == "regression"
    assert (entry["passes"], entry["reps"]) == (0, 9)
    assert entry["escalation"]["extra_reps"] == 6
    result.assert_outcomes(failed=1)
