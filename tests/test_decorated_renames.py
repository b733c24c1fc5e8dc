"""Renames of decorated cases: a parametrized @case is followed across a reworded question.

A parametrized test with no `ids` takes its parameter id from the question, so rewording
the question renames the case (and changes its content). The reworded case is compared
with the entry of the parameter set it replaced, so a reword and a break in one pull
request block; when the pairing is ambiguous, the old entries are reported gone, and the
overlap guard counts them as cases that did not run.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import NESTED_XDIST, PLANNED, Project

ACME = "Find the company called Acme Widgets in the company register"
ACME_REWORDED = "Look up the company Acme Widgets in the register"
INITECH = "Search the register for a company named Initech"
INITECH_REWORDED = "Find Initech in the company register"
GLOBEX = "Which company in the register is called Globex?"
HOOLI = "Search the company register for Hooli"

TEST_FILE = '''
import pytest
from pytest_toolselect import case

@pytest.mark.parametrize("question", {questions!r})
@case(servers=["registry"], expect_tool=["find_company"],
      why="given a name and no number, the only right first move is to search")
def test_lookup(question, toolselect_result):
    pass
'''
ARGS = ("--toolselect-baseline=base.json", "--toolselect-json=out.json")


def suite(project: Project, questions: list[str], wrong: tuple[str, ...] = ()) -> None:
    """The decorated case over `questions`; the model answers right except for `wrong`."""
    project.config(model="script/planned")
    project.pytester.makeconftest(PLANNED)
    project.pytester.makepyfile(test_cases=TEST_FILE.format(questions=questions))
    plan = {q: ["list_officers" if q in wrong else "find_company"] for q in questions}
    (project.path / "plan.json").write_text(json.dumps(plan))


def key(question: str) -> str:
    return f"test_cases.py::test_lookup[{question}]"


def results(project: Project) -> dict[str, Any]:
    doc = json.loads((project.path / "out.json").read_text())
    return {c["key"]: c for c in doc["cases"]} | {"gone": doc["baseline"]["gone"]}


def recorded(project: Project, questions: list[str]) -> dict[str, Any]:
    suite(project, questions)
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    assert result.ret == 0, result.stdout.str()
    assert set(project.read_baseline()["cases"]) == {key(q) for q in questions}
    return project.read_baseline()["cases"]


@pytest.mark.parametrize("workers", [[], pytest.param(["-n", "2"], marks=NESTED_XDIST)])
def test_a_reworded_question_that_regresses_blocks(project: Project, workers: list[str]) -> None:
    recorded(project, [ACME, INITECH])
    # the pull request rewords one question, and the model now gets it wrong
    suite(project, [ACME_REWORDED, INITECH], wrong=(ACME_REWORDED,))
    result = project.pytester.runpytest_subprocess(*ARGS, *workers)
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    result.assert_outcomes(passed=1, failed=1)
    assert "regressions (held on the baseline, fail now: these block): 1" in out, out
    assert "new failing" not in out
    assert f"renamed from {key(ACME)}" in out, out
    found = results(project)
    assert found[key(ACME_REWORDED)]["renamed_from"] == key(ACME)
    assert found["gone"] == []


def test_update_baseline_moves_the_entry_to_the_reworded_key(project: Project) -> None:
    before = recorded(project, [ACME, INITECH])
    suite(project, [ACME_REWORDED, INITECH])
    result = project.pytester.runpytest("--toolselect-baseline=base.json",
                                        "--toolselect-update-baseline")
    assert result.ret == 0, result.stdout.str()
    after = project.read_baseline()["cases"]
    assert set(after) == {key(ACME_REWORDED), key(INITECH)}
    assert after[key(INITECH)] == before[key(INITECH)] | {"history": [[1, 1], [1, 1]]}
    # a changed case starts its history afresh, as a case file's reworded case does
    assert after[key(ACME_REWORDED)]["history"] == [[1, 1]]


def test_an_ambiguous_reword_reports_the_old_entries_gone(project: Project) -> None:
    recorded(project, [ACME, INITECH, GLOBEX, HOOLI])
    # two reworded at once: which new one replaced which old one cannot be told
    suite(project, [ACME_REWORDED, INITECH_REWORDED, GLOBEX, HOOLI], wrong=(ACME_REWORDED,))
    result = project.pytester.runpytest(*ARGS)
    out = result.stdout.str()
    assert "in the baseline, no longer a case: 2" in out, out
    found = results(project)
    assert found["gone"] == sorted([key(ACME), key(INITECH)])
    assert found[key(ACME_REWORDED)]["renamed_from"] is None


def test_gone_reworded_entries_count_against_the_overlap_guard(project: Project) -> None:
    recorded(project, [ACME, INITECH, GLOBEX])
    # every question reworded at once: nothing of the baseline runs
    suite(project, [ACME_REWORDED, INITECH_REWORDED, "Find Globex in the company register"])
    result = project.pytester.runpytest(*ARGS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert "match 0 of the baseline's 3 entries" in err, err
    # the real cause, not another suite's baseline
    assert "another suite" not in err, err
    assert ("3 entries of test_cases.py::test_lookup are gone and it has 3 new parameter "
            "sets: questions reworded") in err, err


def test_selecting_one_parameter_set_leaves_the_others_in_the_baseline(project: Project) -> None:
    recorded(project, [ACME, INITECH])
    suite(project, [ACME, INITECH])
    result = project.pytester.runpytest(*ARGS, key(ACME))
    result.assert_outcomes(passed=1)
    assert results(project)["gone"] == []
    assert set(project.read_baseline()["cases"]) == {key(ACME), key(INITECH)}
