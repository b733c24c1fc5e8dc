"""Decorated tests and preference groups are governed by the config nearest to their file,
as case files are: two suites in one run each take their servers from their own config.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIND, REGISTRY_TOOLS, Project, case, dump

NO_FIND = [t for t in REGISTRY_TOOLS if t["name"] != "find_company"]

DECORATED = f'''
from pytest_toolselect import case

@case(question={FIND[1]!r}, expect_tool=["find_company"], why="search by name")
def test_find(toolselect_result):
    assert toolselect_result.passes == len(toolselect_result.scores)
'''

GROUPS = {
    "schema_version": "tool_preference_groups.v1",
    "groups": [{
        "id": "G01", "domain": "registry", "query": FIND[1],
        "twins": {"A": {"server": "registry", "tool": "find_company"},
                  "B": {"server": "registry", "tool": "list_officers"}},
    }],
}


def two_suites(project: Project) -> tuple[Path, Path]:
    """alpha/ offers no find_company (a case file); beta/ offers the registry (a decorated
    test and a groups file). Neither is at the rootdir."""
    folders = []
    for name, tools, server in (("alpha", NO_FIND, "alpha"), ("beta", REGISTRY_TOOLS, "registry")):
        folder = project.path / name
        folder.mkdir()
        (folder / f"{server}.tools.json").write_text(json.dumps({"tools": tools}))
        (folder / "toolselect.yaml").write_text(dump({"servers": {server: {
            "tools_file": f"{server}.tools.json"}}}))
        folders.append(folder)
    alpha, beta = folders
    (alpha / "vat.toolselect.yaml").write_text(dump({
        "schema_version": "toolselect_cases.v1",
        "cases": [case("vat", "Check a VAT registration number and the business registered under it",
                     ["lookup_vat"])]}))
    (beta / "test_registry.py").write_text(DECORATED)
    return alpha, beta


@pytest.mark.parametrize("order", [("alpha", "beta"), ("beta", "alpha")])
def test_a_decorated_test_takes_the_servers_of_its_own_suite(project: Project,
                                                            order: tuple[str, str]) -> None:
    two_suites(project)
    result = project.pytester.runpytest(*order, "--toolselect-baseline=base.json", "-rA")
    # the first path's config is the run's main one; beta's test still sees beta's registry
    result.assert_outcomes(passed=2)
    keys = set(json.loads((project.path / "base.json").read_text())["cases"])
    assert keys == {"vat.toolselect.yaml::vat", "test_registry.py::test_find"}


def test_a_groups_file_takes_the_servers_of_its_own_suite(project: Project) -> None:
    _, beta = two_suites(project)
    (beta / "test_registry.py").unlink()
    (beta / "registry.groups.json").write_text(json.dumps(GROUPS))
    result = project.pytester.runpytest("alpha", "beta", "--toolselect-reps=1", "-rA")
    out = result.stdout.str()
    assert "unknown server" not in out, out
    result.assert_outcomes(passed=2)
