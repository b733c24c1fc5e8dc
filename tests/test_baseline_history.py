"""The baseline remembers: the last K runs per case, merged on update, reset when the case changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import FIND, PLANNED, Project, case
from pytest_toolselect.gate.baseline import Baseline, build, load, merged_history, write
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.records.run_records import CaseRecord

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SUBJECT = {"provider": "local", "model": "local/bm25", "settings": {}, "system_hash": None}
THE_SUBJECT = Subject.from_json(SUBJECT)
A, B = "cases.toolselect.yaml::a", "cases.toolselect.yaml::b"


def rec(nodeid: str, passes: int | None, reps: int = 3, *, case_fp: str = "sha256:case",
        tools_fp: str = "sha256:tools") -> CaseRecord:
    if passes is None:  # errored or not run: not scored
        return CaseRecord.read({"nodeid": nodeid, "status": None, "passes": 0, "reps": 0})
    status = "held" if passes == reps else "failing" if passes == 0 else "flaky"
    return CaseRecord.read({
        "nodeid": nodeid, "status": status, "passes": passes, "reps": reps, "first_tool": "t",
        "failing_checks": [] if passes == reps else ["tool_choice"],
        "case_fingerprint": case_fp, "tools_fingerprint": tools_fp})


def as_baseline(doc: dict[str, Any]) -> Baseline:
    return Baseline.from_json(Path("base.json"), doc)


def runs(*rounds: list[CaseRecord], keep: int = 5) -> dict[str, Any]:
    """The document after recording the first round and updating with each later one."""
    old = None
    doc: dict[str, Any] = {}
    for records in rounds:
        doc = build(THE_SUBJECT, records, old, history=keep).to_json()
        old = as_baseline(doc)
    return doc


def test_a_first_recording_holds_this_run_only() -> None:
    doc = runs([rec(A, 2), rec(B, 3)])
    assert doc["cases"][A]["history"] == [[2, 3]]
    assert doc["cases"][B]["history"] == [[3, 3]]
    assert (doc["cases"][A]["passes"], doc["cases"][A]["reps"], doc["cases"][A]["status"]) == (
        2, 3, "flaky")


def test_updates_keep_the_last_k_runs_newest_last() -> None:
    rounds = [[rec(A, p)] for p in (3, 2, 3, 1, 3, 0, 3)]
    doc = runs(*rounds, keep=5)
    assert doc["cases"][A]["history"] == [[3, 3], [1, 3], [3, 3], [0, 3], [3, 3]]
    # the latest run is also the entry's own status, passes and reps
    assert (doc["cases"][A]["status"], doc["cases"][A]["passes"]) == ("held", 3)
    assert runs(*rounds, keep=2)["cases"][A]["history"] == [[0, 3], [3, 3]]
    assert runs(*rounds, keep=1)["cases"][A]["history"] == [[3, 3]]


def test_counts_of_runs_at_different_reps_are_kept_as_run() -> None:
    doc = runs([rec(A, 1, reps=1)], [rec(A, 4, reps=5)], [rec(A, 15, reps=15)])
    assert doc["cases"][A]["history"] == [[1, 1], [4, 5], [15, 15]]


def test_a_changed_case_restarts_its_history() -> None:
    doc = runs([rec(A, 3), rec(B, 3)], [rec(A, 2), rec(B, 2)],
               [rec(A, 3, case_fp="sha256:edited"), rec(B, 3)])
    assert doc["cases"][A]["history"] == [[3, 3]]
    assert doc["cases"][A]["case_fingerprint"] == "sha256:edited"
    # the other case is untouched by A's change
    assert doc["cases"][B]["history"] == [[3, 3], [2, 3], [3, 3]]


def test_changed_tools_restart_the_history() -> None:
    doc = runs([rec(A, 3)], [rec(A, 1)], [rec(A, 3, tools_fp="sha256:reworded")])
    assert doc["cases"][A]["history"] == [[3, 3]]


def test_errored_and_unrun_cases_keep_their_history() -> None:
    doc = runs([rec(A, 3), rec(B, 2)], [rec(A, 1), rec(B, 3)], [rec(A, None)])
    assert doc["cases"][A]["history"] == [[3, 3], [1, 3]]
    assert doc["cases"][B]["history"] == [[2, 3], [3, 3]]


def test_gone_cases_are_dropped_with_their_history() -> None:
    first = build(THE_SUBJECT, [rec(A, 3), rec(B, 3)], None).to_json()
    doc = build(THE_SUBJECT, [rec(A, 3)], as_baseline(first), gone=[B]).to_json()
    assert list(doc["cases"]) == [A]


def test_an_entry_from_before_the_history_counts_as_one_run() -> None:
    old = {A: {"status": "held", "passes": 3, "reps": 3, "case_fingerprint": "sha256:case",
               "tools_fingerprint": "sha256:tools"},
           # a hand-written entry without fingerprints: nothing says it changed
           B: {"status": "flaky", "passes": 1, "reps": 2}}
    doc = build(THE_SUBJECT, [rec(A, 2), rec(B, 3)],
                Baseline.from_json(Path("b.json"), {"subject": SUBJECT, "cases": old})).to_json()
    assert doc["cases"][A]["history"] == [[3, 3], [2, 3]]
    assert doc["cases"][B]["history"] == [[1, 2], [3, 3]]


def test_merged_history_refuses_keeping_nothing() -> None:
    with pytest.raises(ValueError, match="at least one"):
        merged_history(None, rec(A, 3), keep=0)


# -- the file ------------------------------------------------------------------------------------


def test_history_round_trips_through_the_file(tmp_path: Path) -> None:
    path = tmp_path / "base.json"
    write(path, as_baseline(runs([rec(A, 3)], [rec(A, 2)])))
    loaded = load(path)
    assert loaded is not None and loaded.cases[A].history == ((3, 3), (2, 3))


def test_an_old_file_without_history_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "base.json"
    path.write_text(json.dumps({"schema_version": "toolselect_baseline.v1", "subject": SUBJECT,
                                "cases": {A: {"status": "held", "passes": 1, "reps": 1}}}))
    loaded = load(path)
    assert loaded is not None and loaded.cases[A].history is None
    assert loaded.cases[A].runs == [(1, 1)] and "history" not in loaded.cases[A].to_json()


@pytest.mark.parametrize(("history", "message"), [
    ([], "should be non-empty"),
    ([[3]], "is too short"),
    ([[1, 0]], "less than the minimum of 1"),
    ([[4, 3]], "4 passes out of 3 reps"),
])
def test_a_malformed_history_is_refused(tmp_path: Path, history: list[Any], message: str) -> None:
    path = tmp_path / "base.json"
    path.write_text(json.dumps({"schema_version": "toolselect_baseline.v1", "subject": SUBJECT,
                                "cases": {A: {"status": "held", "passes": 3, "reps": 3,
                                              "history": history}}}))
    with pytest.raises(ToolselectError, match=message) as info:
        load(path)
    assert "history" in str(info.value)


# -- end to end ----------------------------------------------------------------------------------

# a model that follows a plan file: for each question, the tool it calls on each rep

RIGHT, WRONG_TOOL = "find_company", "list_officers"


def plan(project: Project, *tools: str) -> None:
    (project.path / "plan.json").write_text(json.dumps({FIND[1]: list(tools)}))


def test_updating_on_main_merges_the_history_end_to_end(project: Project) -> None:
    project.config(model="script/planned")
    project.pytester.makeconftest(PLANNED)
    project.cases([case(*FIND)])
    # fixed reps: the stored counts are this run's three (adaptive reps would ask the 2/3 again)
    args = ("--toolselect-baseline=base.json", "--toolselect-reps=3", "--toolselect-adaptive=off")
    plan(project, RIGHT, RIGHT, RIGHT)
    project.pytester.runpytest(*args).assert_outcomes(passed=1)
    nodeid = "registry.toolselect.yaml::find"
    assert project.read_baseline()["cases"][nodeid]["history"] == [[3, 3]]
    plan(project, RIGHT, WRONG_TOOL, RIGHT)
    project.pytester.runpytest(*args, "--toolselect-update-baseline").assert_outcomes(
        passed=1, warnings=1)
    plan(project, RIGHT, RIGHT, RIGHT)
    project.pytester.runpytest(*args, "--toolselect-update-baseline").assert_outcomes(passed=1)
    assert project.read_baseline()["cases"][nodeid]["history"] == [[3, 3], [2, 3], [3, 3]]
    # comparing leaves the file alone
    project.pytester.runpytest(*args)
    assert project.read_baseline()["cases"][nodeid]["history"] == [[3, 3], [2, 3], [3, 3]]
    # K from the flag keeps only the last runs
    project.pytester.runpytest(*args, "--toolselect-update-baseline", "--toolselect-history=2")
    assert project.read_baseline()["cases"][nodeid]["history"] == [[3, 3], [3, 3]]


def test_history_from_the_config_file(project: Project) -> None:
    project.config(model="script/planned", history=1)
    project.pytester.makeconftest(PLANNED)
    project.cases([case(*FIND)])
    plan(project, RIGHT)
    project.pytester.runpytest("--toolselect-baseline=base.json")
    project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-update-baseline")
    assert project.read_baseline()["cases"]["registry.toolselect.yaml::find"]["history"] == [[1, 1]]


def test_a_history_of_zero_runs_is_a_usage_error(project: Project) -> None:
    project.config()
    project.cases([case(*FIND)])
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-history=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolselect-history*'0' must be 1 or more*"])
    # refused at the start, not after every case has been asked
    assert "passed" not in result.stdout.str()
