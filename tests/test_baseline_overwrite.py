"""A baseline write never goes over another subject's baseline: the file on disk is compared
with what the run read at its start, and another model's or settings' baseline recorded at
the same path meanwhile is refused (exit 4, both subjects named) and left as it is; an
explicit update still writes."""

from __future__ import annotations

import json

import pytest

from conftest import FIND, OFFICERS, PLANNED, Project, case

#: another job records the same baseline path while this run is under way
INTRUDER = '''

import shutil

def pytest_runtest_call(item):
    if Path("intruder.json").exists():
        shutil.copy("intruder.json", "base.json")
'''
OTHER = {"provider": "script", "model": "script/other"}
OWN = {"provider": "script", "model": "script/planned"}


def _scripted_project(project: Project) -> None:
    project.pytester.makeconftest(PLANNED + INTRUDER)
    project.config(model="script/planned")
    project.cases([case(*FIND), case(*OFFICERS)])
    (project.path / "plan.json").write_text(json.dumps({FIND[1]: ["find_company"],
                                                        OFFICERS[1]: ["list_officers"]}))


@pytest.mark.parametrize(("at_start", "args"), [
    (None, ()),
    (OWN, ("--toolselect-update-baseline",)),
    (OTHER | {"model": "script/third"}, ("--toolselect-update-baseline",)),
], ids=["first-recording", "update-own", "update-replacing-another"])
def test_another_subjects_baseline_written_during_the_run_is_never_overwritten(
        project: Project, at_start: dict[str, str] | None, args: tuple[str, ...]) -> None:
    _scripted_project(project)
    if at_start is not None:
        project.baseline({"registry.toolselect.yaml::find": {"status": "held"}}, subject=at_start)
    intruder = project.baseline({"registry.toolselect.yaml::find": {"status": "failing"}},
                                name="intruder.json", subject=OTHER)
    theirs = intruder.read_bytes()
    result = project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=base.json",
                                        "--toolselect-json=out.json", *args)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    # the other job's file as it wrote it, and both subjects named, once
    assert (project.path / "base.json").read_bytes() == theirs
    assert out.count("another subject's baseline") == 1, out
    assert "model='script/other'" in out and "model='script/planned'" in out, out
    assert "baseline: recorded" not in out


@pytest.mark.parametrize("at_start", [OWN, OTHER], ids=["own", "another-replaced-on-purpose"])
def test_an_explicit_update_still_writes(project: Project, at_start: dict[str, str]) -> None:
    _scripted_project(project)
    project.baseline({"registry.toolselect.yaml::find": {"status": "failing"}}, subject=at_start)
    result = project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=base.json",
                                        "--toolselect-update-baseline")
    assert result.ret == 0, result.stdout.str()
    written = project.read_baseline()
    assert written["subject"]["model"] == "script/planned"
    assert written["cases"]["registry.toolselect.yaml::find"]["status"] == "held"
