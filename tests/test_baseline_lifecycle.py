"""The baseline cannot be bypassed or emptied by how pytest is run.

Keys do not move with the folder pytest starts in; the config is found from the case
files; a baseline that matches too little of the run is refused; a run that scored
nothing records nothing; filtering never drops an entry; CI never records by accident;
a write that fails loses nothing else; two writers both land.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import FIND, NESTED_XDIST, OFFICERS, WRONG, Project, case, dump

SUITE = "suite"
CASES = [case(*FIND), case(*OFFICERS), case(*WRONG)]


def suite(project: Project, name: str = SUITE) -> Path:
    """A suite in a subfolder: its own toolselect.yaml (relative tools_file), one case file."""
    folder = project.path / name
    folder.mkdir()
    (folder / "registry.tools.json").write_text(
        (project.path / project.tools_file()).read_text())
    (folder / "toolselect.yaml").write_text(dump({"servers": {"registry": {
        "tools_file": "registry.tools.json"}}}))
    (folder / "registry.toolselect.yaml").write_text(dump({
        "schema_version": "toolselect_cases.v1", "cases": CASES}))
    return folder


def run(project: Project, cwd: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    monkeypatch.chdir(cwd)
    return project.pytester.runpytest("-p", "no:randomly", *args)


def results(path: Path) -> dict[str, str]:
    return {c["case_id"]: c["verdict"] for c in json.loads(path.read_text())["cases"]}


# -- keys ----------------------------------------------------------------------------------


def test_one_suite_from_three_folders_gives_the_same_keys_and_verdicts(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = suite(project)
    root = project.path
    first = run(project, folder, monkeypatch, "--toolselect-baseline=base.json")
    first.assert_outcomes(passed=2, xfailed=1)  # WRONG: a new case failing is not blocking
    keys = set(json.loads((folder / "base.json").read_text())["cases"])
    assert keys == {"registry.toolselect.yaml::find", "registry.toolselect.yaml::officers",
                    "registry.toolselect.yaml::wrong"}
    outside = root / "elsewhere"
    outside.mkdir()
    ways = {
        # from the repository root: node ids start with suite/
        "root": (root, ["suite", "--toolselect-baseline=suite/b-root.json"], "b-root.json"),
        # from the suite's folder with the parent as rootdir
        "rootdir": (folder, ["--rootdir", str(root), ".", "--toolselect-baseline",
                             "b-rootdir.json"], "b-rootdir.json"),
        # the baseline outside the suite: pytest counts the path and moves the rootdir
        "outside": (folder, ["--toolselect-baseline", "../elsewhere/b-outside.json"], None),
        # the config named explicitly, from the root
        "config": (root, ["suite", "--toolselect-config", "suite/toolselect.yaml",
                          "--toolselect-baseline", "suite/b-config.json"], "b-config.json"),
    }
    for name, (cwd, args, copy) in ways.items():
        target = folder / copy if copy else outside / "b-outside.json"
        shutil.copy(folder / "base.json", target)
        report = root / f"{name}.json"
        result = run(project, cwd, monkeypatch, *args, "--toolselect-update-baseline",
                     f"--toolselect-json={report}")
        out = result.stdout.str()
        assert result.ret == 0, (name, out)
        assert results(report) == {"find": "held", "officers": "held",
                                   "wrong": "still_failing"}, (name, out)
        assert "no longer a case" not in out and " new" not in out, (name, out)
        assert set(json.loads(target.read_text())["cases"]) == keys, name


def test_a_regression_under_another_folders_config_still_blocks(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = suite(project)
    assert run(project, folder, monkeypatch, "--toolselect-baseline=base.json").ret == 0
    # a copy whose tool descriptions no longer tell find_company apart
    reg = project.path / "reg"
    shutil.copytree(folder, reg)
    tools = json.loads((reg / "registry.tools.json").read_text())
    for tool in tools["tools"]:
        tool["description"] = "A registry tool."
    (reg / "registry.tools.json").write_text(json.dumps(tools))
    result = run(project, project.path, monkeypatch, "reg", "--toolselect-config",
                 "reg/toolselect.yaml", "--toolselect-baseline", "suite/base.json")
    out = result.stdout.str()
    assert result.ret == 1, out
    assert "regression" in out and "new failing" not in out, out
    assert "no longer a case" not in out, out


def test_a_baseline_keyed_by_node_ids_still_matches_and_is_rewritten_with_keys(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = suite(project)
    run(project, folder, monkeypatch, "--toolselect-baseline=base.json")
    doc = json.loads((folder / "base.json").read_text())
    # as an older version wrote it from the parent folder: node ids relative to that rootdir
    doc["cases"] = {f"suite/{k}": v for k, v in doc["cases"].items()}
    (folder / "base.json").write_text(json.dumps(doc))
    result = run(project, folder, monkeypatch, "--toolselect-baseline=base.json")
    out = result.stdout.str()
    assert result.ret == 0, out
    assert "2 held, 1 still failing" in out and "no longer a case" not in out, out
    run(project, folder, monkeypatch, "--toolselect-baseline=base.json",
        "--toolselect-update-baseline")
    assert set(json.loads((folder / "base.json").read_text())["cases"]) == {
        f"registry.toolselect.yaml::{c['id']}" for c in CASES}


# -- config discovery ------------------------------------------------------------------------


def test_the_config_is_found_beside_the_case_files_and_unknown_servers_say_where_it_looked(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = suite(project)
    result = run(project, project.path, monkeypatch, "suite")
    result.assert_outcomes(passed=2, failed=1)  # WRONG fails, nothing errors
    (folder / "other.toolselect.yaml").write_text(dump({
        "schema_version": "toolselect_cases.v1", "servers": ["companies"],
        "cases": [case(*FIND)]}))
    out = run(project, project.path, monkeypatch, "suite/other.toolselect.yaml").stdout.str()
    assert "unknown server 'companies'" in out, out
    assert f"servers defined in {folder / 'toolselect.yaml'}: registry" in out, out
    for looked in (project.path / "toolselect.yaml", project.path / "pyproject.toml",
                   folder / "toolselect.yaml"):
        assert str(looked) in out, (looked, out)


def test_a_folder_with_both_configs_says_which_one_is_used(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.config()
    project.cases([case(*FIND)])
    (project.path / "pyproject.toml").write_text('[tool.toolselect]\nmodel = "local/bm25"\n')
    out = run(project, project.path, monkeypatch, "--toolselect-reps=1").stdout.str()
    assert (f"config {project.path / 'toolselect.yaml'} is used; the [tool.toolselect] "
            f"table in {project.path / 'pyproject.toml'} is not read") in out, out


# -- the overlap guard -------------------------------------------------------------------------


def recorded(project: Project, *extra: str) -> dict[str, Any]:
    """The project's three cases recorded to base.json; the baseline."""
    project.config()
    project.cases(CASES)
    project.pytester.runpytest("--toolselect-baseline=base.json", *extra)
    return project.read_baseline()


def foreign(base: dict[str, Any]) -> dict[str, Any]:
    """Another suite's baseline for the same subject: other case files, other cases."""
    return {f"other/{k}-billing": {**v, "case_fingerprint": f"sha256:{n:016x}"}
            for n, (k, v) in enumerate(base["cases"].items())}


def test_a_baseline_that_matches_too_little_is_a_usage_error(project: Project) -> None:
    base = recorded(project)
    other = foreign(base)
    (project.path / "other.json").write_text(json.dumps({**base, "cases": other}))
    result = project.pytester.runpytest("--toolselect-baseline=other.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "match 0 of the baseline's 3 entries" in err, err
    assert "other/registry.toolselect.yaml::find-billing" in err and "registry.toolselect.yaml::find" in err
    assert "likely another suite's baseline" in err
    assert err.count("too few to gate on") == 1  # said once, at the start
    # re-recording on purpose is allowed
    result = project.pytester.runpytest("--toolselect-baseline=other.json",
                                        "--toolselect-update-baseline")
    assert result.ret == 0, result.stdout.str()


@NESTED_XDIST
def test_under_xdist_a_foreign_baseline_is_a_usage_error_too(project: Project) -> None:
    base = recorded(project)
    other = foreign(base)
    (project.path / "other.json").write_text(json.dumps({**base, "cases": other}))
    result = project.pytester.runpytest_subprocess("--toolselect-baseline=other.json", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    assert "match 0 of the baseline's 3 entries" in result.stdout.str()


@pytest.mark.parametrize("workers", [[], pytest.param(["-n", "2"], marks=NESTED_XDIST)])
def test_renaming_every_case_of_a_file_is_not_taken_for_a_foreign_baseline(
        project: Project, workers: list[str]) -> None:
    recorded(project)
    project.cases([case(f"{c['id']}-renamed", c["question"], c.get("expect_tool"))
                   for c in CASES])
    result = project.pytester.runpytest_subprocess("--toolselect-baseline=base.json",
                                                   "--toolselect-json=out.json", *workers)
    out = result.stdout.str() + result.stderr.str()
    assert "too few to gate on" not in out, out
    assert result.ret == 0, out  # WRONG still fails as it did: still failing, not blocking
    doc = json.loads((project.path / "out.json").read_text())
    assert {c["case_id"]: c["renamed_from"] for c in doc["cases"]} == {
        f"{c['id']}-renamed": f"registry.toolselect.yaml::{c['id']}" for c in CASES}


@pytest.mark.parametrize("select", [["-k", "find"], ["registry.toolselect.yaml::find"],
                                    ["--deselect", "registry.toolselect.yaml::find"]])
def test_filtering_the_run_is_not_taken_for_a_foreign_baseline(project: Project,
                                                              select: list[str]) -> None:
    recorded(project)
    (project.path / "more.toolselect.yaml").write_text(dump({
        "schema_version": "toolselect_cases.v1", "cases": [case("more", FIND[1], FIND[2])]}))
    result = project.pytester.runpytest("--toolselect-baseline=base.json", *select)
    assert result.ret in (0, 1), result.stdout.str() + result.stderr.str()
    assert "too few to gate on" not in result.stderr.str()


# -- never record nothing ----------------------------------------------------------------------


def test_a_run_that_scored_nothing_records_nothing(project: Project) -> None:
    project.config(servers={"registry": {"tools_file": "missing.tools.json"}})
    project.cases(CASES)
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    out = result.stdout.str()
    assert not (project.path / "base.json").exists(), out
    assert "no case was scored: the baseline was not written" in out, out
    # once the server answers, the next run records (nothing empty was left to compare with)
    project.config()
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    assert set(project.read_baseline()["cases"]) == {
        f"registry.toolselect.yaml::{c['id']}" for c in CASES}, result.stdout.str()


def test_an_empty_baseline_counts_as_absent(project: Project) -> None:
    project.config()
    project.cases(CASES)
    project.baseline({})
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    assert "baseline: recorded to" in result.stdout.str(), result.stdout.str()
    assert len(project.read_baseline()["cases"]) == 3


def test_an_all_error_update_after_a_subject_change_keeps_the_good_baseline(
        project: Project) -> None:
    base = recorded(project)
    before = (project.path / "base.json").read_bytes()
    project.config(servers={"registry": {"tools_file": "missing.tools.json"}},
                   bm25_threshold=2.0)
    result = project.pytester.runpytest("--toolselect-baseline=base.json",
                                        "--toolselect-update-baseline")
    assert (project.path / "base.json").read_bytes() == before, result.stdout.str()
    assert len(base["cases"]) == 3


def test_a_first_recording_cut_short_says_what_it_lacks(project: Project) -> None:
    project.config({"registry": {"tools_file": project.tools_file()},
                    "down": {"command": "toolselect-no-such-server-command"}})
    # the second case errors (a server that does not start) and -x stops the run there
    project.cases([case(*FIND), case("down", OFFICERS[1], OFFICERS[2], servers=["down"]),
                   case(*OFFICERS), case(*WRONG)], servers=["registry"])
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "-x", "-p",
                                        "no:randomly")
    out = result.stdout.str()
    assert list(project.read_baseline()["cases"]) == ["registry.toolselect.yaml::find"], out
    assert ("recorded 1 case; left out, with no entry yet: 2 items not run (the run stopped "
            "early, or deselected); 1 errored. A plain run compares and writes nothing: to "
            "record them, run every case with `pytest --toolselect-baseline=") in out, out


# -- "removed" means removed from the file -------------------------------------------------------

PLAN_OK = {FIND[1]: ["find_company"], OFFICERS[1]: ["list_officers"],
           WRONG[1]: ["list_officers"]}


def planned(project: Project, plan: dict[str, list[str]]) -> None:
    (project.path / "plan.json").write_text(json.dumps(plan))


@pytest.mark.parametrize("select", [
    ["--lf"], ["--ff", "-x"], ["--sw"], ["--maxfail=1"], ["-k", "find"], ["-m", "nothing"],
    ["--deselect", "registry.toolselect.yaml::officers"], ["registry.toolselect.yaml::find"],
])
def test_an_update_under_a_filter_keeps_every_case_that_still_exists(
        project: Project, select: list[str]) -> None:
    from conftest import PLANNED

    project.pytester.makeconftest(PLANNED)
    project.config(model="script/planned")
    project.cases(CASES)
    planned(project, PLAN_OK)
    args = ("-p", "no:randomly", "--toolselect-baseline=base.json")
    project.pytester.runpytest(*args)
    assert len(project.read_baseline()["cases"]) == 3
    # find regresses; the cache now knows it as the last failure
    planned(project, {**PLAN_OK, FIND[1]: ["lookup_vat"]})
    assert project.pytester.runpytest(*args).ret == 1
    result = project.pytester.runpytest(*args, *select, "--toolselect-update-baseline")
    doc = project.read_baseline()
    assert len(doc["cases"]) == 3, (select, result.stdout.str())
    if select == ["-m", "nothing"]:
        return  # nothing ran, so nothing is written
    # a case really removed from its file is dropped, even by a filtered run
    project.cases([case(*FIND), case(*WRONG)])
    project.pytester.runpytest(*args, *select, "--toolselect-update-baseline")
    assert set(project.read_baseline()["cases"]) == {"registry.toolselect.yaml::find",
                                                     "registry.toolselect.yaml::wrong"}, select


def test_a_decorated_test_is_kept_until_its_function_is_gone(project: Project) -> None:
    project.config()
    test_file = project.path / "test_cases.py"
    test_file.write_text(DECORATED.format(extra=DECORATED_EXTRA))
    args = ("-p", "no:randomly", "--toolselect-baseline=base.json")
    project.pytester.runpytest(*args)
    assert set(project.read_baseline()["cases"]) == {"test_cases.py::test_find",
                                                     "test_cases.py::test_officers"}
    project.pytester.runpytest(*args, "-k", "find", "--toolselect-update-baseline")
    assert len(project.read_baseline()["cases"]) == 2
    test_file.write_text(DECORATED.format(extra=""))
    project.pytester.runpytest(*args, "-k", "find", "--toolselect-update-baseline")
    assert set(project.read_baseline()["cases"]) == {"test_cases.py::test_find"}


DECORATED = f'''
from pytest_toolselect import case


@case(question={FIND[1]!r}, expect_tool=["find_company"], why="finds")
def test_find(toolselect_result):
    pass
{{extra}}'''
DECORATED_EXTRA = f'''

@case(question={OFFICERS[1]!r}, expect_tool=["list_officers"], why="officers")
def test_officers(toolselect_result):
    pass
'''


# -- CI ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("ci", ["true", "1", "yes"])
def test_in_ci_a_missing_baseline_is_a_usage_error(project: Project,
                                                   monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    project.config()
    project.cases(CASES)
    monkeypatch.setenv("CI", ci)
    result = project.pytester.runpytest("--toolselect-baseline=baselnie.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"{project.path / 'baselnie.json'}: no baseline at this path, and CI is set" in \
        result.stderr.str()
    assert not (project.path / "baselnie.json").exists()
    # the recipe on main records it on purpose
    result = project.pytester.runpytest("--toolselect-baseline=baselnie.json",
                                        "--toolselect-update-baseline")
    assert result.ret == 0 and (project.path / "baselnie.json").exists(), result.stdout.str()


def test_outside_ci_a_missing_baseline_is_recorded(project: Project,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    project.config()
    project.cases(CASES)
    monkeypatch.setenv("CI", "false")
    project.pytester.runpytest("--toolselect-baseline=base.json")
    assert (project.path / "base.json").exists()


# -- write failures ----------------------------------------------------------------------------


def test_an_unwritable_baseline_is_one_line_and_every_report_is_still_written(
        project: Project) -> None:
    project.config()
    project.cases(CASES)
    (project.path / "blocker").write_text("a file where the baseline's folder should be")
    result = project.pytester.runpytest(
        "--toolselect-baseline=blocker/base.json", "--toolselect-json=r.json",
        "--toolselect-markdown=r.md", "--toolselect-html=r.html")
    out = result.stdout.str()
    assert result.ret not in (0, pytest.ExitCode.INTERNAL_ERROR), out
    assert "Traceback" not in out + result.stderr.str(), out
    lines = [line for line in out.splitlines() if "cannot write the baseline" in line]
    assert len(lines) == 1 and str(project.path / "blocker" / "base.json") in lines[0], out
    assert "Not a directory" in lines[0] or "File exists" in lines[0], lines
    assert "3 cases:" in out, out  # the summary
    for name in ("r.json", "r.md", "r.html"):
        assert (project.path / name).stat().st_size > 0, name


def run_with_mode(project: Project, path: Path, mode: int, *args: str) -> Any:
    """A run while path has mode; its mode is given back afterwards (for tmp cleanup)."""
    before = path.stat().st_mode
    path.chmod(mode)
    try:
        return project.pytester.runpytest(*args)
    finally:
        path.chmod(before)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_is_one_line(project: Project) -> None:
    project.config()
    project.cases(CASES)
    folder = project.path / "ro"
    folder.mkdir()
    result = run_with_mode(project, folder, 0o555, "--toolselect-baseline=ro/base.json")
    out = result.stdout.str()
    assert result.ret != 0 and "Traceback" not in out, out
    assert f"cannot write the baseline {folder / 'base.json'}: Permission denied" in out, out


def test_a_read_only_baseline_is_not_replaced(project: Project) -> None:
    recorded(project)
    path = project.path / "base.json"
    before = path.read_bytes()
    path.chmod(0o444)
    result = project.pytester.runpytest("--toolselect-baseline=base.json",
                                        "--toolselect-update-baseline", "--toolselect-reps=2")
    out = result.stdout.str()
    assert path.read_bytes() == before, out
    assert result.ret != 0 and "the file is read-only" in out, out


def test_an_unreadable_baseline_says_permissions_not_corruption(project: Project) -> None:
    recorded(project)
    path = project.path / "base.json"
    result = run_with_mode(project, path, 0o000, "--toolselect-baseline=base.json")
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, err
    assert "cannot be read: permission denied" in err and "corrupted" not in err, err
