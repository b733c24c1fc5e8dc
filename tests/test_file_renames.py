"""A renamed or moved case file is a rename: its cases are followed by their content.

Renaming the only case file changed every key, and the overlap guard took the baseline for
another suite's (exit 4). Its cases are now found by their content, so the gate works
across the rename (a regression in the renamed file blocks); when the content changed
too, the message says a case file was renamed or moved, and what to do.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import FIND, NESTED_XDIST, OFFICERS, OUT_OF_SCOPE, PLANNED, Project, case

CASES = [case(*FIND), case(*OFFICERS), case(*OUT_OF_SCOPE)]
RIGHT = {FIND[1]: "find_company", OFFICERS[1]: "list_officers", OUT_OF_SCOPE[1]: None}
ARGS = ("--toolselect-baseline=base.json", "--toolselect-json=out.json")


def planned(project: Project, answers: dict[str, str | None]) -> None:
    project.config(model="script/planned")
    project.pytester.makeconftest(PLANNED)
    (project.path / "plan.json").write_text(json.dumps({q: [t] for q, t in answers.items()}))


def recorded(project: Project) -> dict[str, Any]:
    planned(project, RIGHT)
    project.cases(CASES)
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    assert result.ret == 0, result.stdout.str()
    return project.read_baseline()["cases"]


def rename(project: Project, new: str) -> None:
    (project.path / "registry.toolselect.yaml").rename(project.path / new)


def results(project: Project) -> dict[str, Any]:
    return json.loads((project.path / "out.json").read_text())


@pytest.mark.parametrize("workers", [[], pytest.param(["-n", "2"], marks=NESTED_XDIST)])
def test_a_regression_in_the_renamed_only_case_file_blocks(project: Project,
                                                           workers: list[str]) -> None:
    recorded(project)
    rename(project, "companies.toolselect.yaml")
    planned(project, {**RIGHT, FIND[1]: "lookup_vat"})  # and the model breaks one case
    result = project.pytester.runpytest_subprocess(*ARGS, *workers)
    out = result.stdout.str() + result.stderr.str()
    assert "another suite" not in out and "too few to gate on" not in out, out
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "regressions (held on the baseline, fail now: these block): 1" in out, out
    doc = results(project)
    assert {c["key"]: c["renamed_from"] for c in doc["cases"]} == {
        f"companies.toolselect.yaml::{c['id']}": f"registry.toolselect.yaml::{c['id']}"
        for c in CASES}
    assert doc["baseline"]["gone"] == []


def test_update_baseline_moves_the_entries_to_the_renamed_file(project: Project) -> None:
    before = recorded(project)
    rename(project, "companies.toolselect.yaml")
    result = project.pytester.runpytest("--toolselect-baseline=base.json",
                                        "--toolselect-update-baseline")
    assert result.ret == 0, result.stdout.str()
    after = project.read_baseline()["cases"]
    assert set(after) == {f"companies.toolselect.yaml::{c['id']}" for c in CASES}
    old = before["registry.toolselect.yaml::find"]
    assert after["companies.toolselect.yaml::find"]["history"] == [*old["history"], [1, 1]]


def test_a_renamed_file_whose_cases_changed_too_is_said_to_be_one(project: Project) -> None:
    recorded(project)
    rename(project, "companies.toolselect.yaml")
    # the same pull request rewords every question: nothing can be followed by content
    reworded = [case(c["id"], c["question"] + " Thanks.", c.get("expect_tool")) for c in CASES]
    project.cases(reworded, name="companies")
    planned(project, {c["question"]: RIGHT[c["question"][:-len(" Thanks.")]] for c in reworded})
    result = project.pytester.runpytest(*ARGS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert ("The baseline's case files registry.toolselect.yaml no longer exist and this "
            "run's companies.toolselect.yaml have no entries: a case file renamed or moved") in err
    assert "another suite" not in err
    assert err.count("too few to gate on") == 1
