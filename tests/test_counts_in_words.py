"""Counts read as words everywhere ("1 case", never "1 cases"), and `toolselect lint` counts
the cases pytest collects (a parametrized decorated test is one case per parameter set)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import FIND, Project, case

#: a count of one with a plural noun
ONE_PLURAL = re.compile(r"(?<![\d.,/])1 (cases|calls|items|errors|servers|tools|reps|regressions)\b")

DECORATED = '''
import pytest
from pytest_toolselect import case

@pytest.mark.parametrize("question", ["Find Acme Widgets", "Find Tesco", "Find Royal Mail"])
@case(expect_tool=["find_company"], servers=["registry"], why="a name: search")
def test_names(question, toolselect_result):
    pass

@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("m", ["a", "b"])
@case(question="Who are the officers of 01234567?", expect_tool=["list_officers"],
      servers=["registry"], why="a number: its officers")
def test_grid(n, m, toolselect_result):
    pass
'''


def test_one_case_reads_as_one_case_in_every_report(project: Project) -> None:
    project.config()
    project.cases([case(*FIND)])
    project.pytester.runpytest("--toolselect-baseline=base.json")
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-lint",
                                        "--toolselect-html=r.html", "--toolselect-markdown=c.md")
    out = result.stdout.str()
    assert "Newcombe 95%, 1 case)" in out, out
    for name, text in (("terminal", out), ("markdown", (project.path / "c.md").read_text()),
                       ("html", (project.path / "r.html").read_text())):
        assert not ONE_PLURAL.search(text), (name, ONE_PLURAL.search(text))
    lint = subprocess.run([sys.executable, "-m", "pytest_toolselect.cli", "lint"], cwd=project.path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert "1 server, 1 case:" in lint.stdout, lint.stdout + lint.stderr


def test_lint_counts_a_parametrized_test_as_pytest_does(project: Project) -> None:
    project.config()
    project.cases([case(*FIND)])
    # a name no module of this suite has: an in-process run shares its sys.modules
    Path(project.path / "test_counted_cases.py").write_text(DECORATED)
    collected = project.pytester.runpytest("--collect-only", "-q")
    items = [line for line in collected.stdout.lines if "::" in line]
    assert len(items) == 1 + 3 + 4, collected.stdout.str()
    lint = subprocess.run([sys.executable, "-m", "pytest_toolselect.cli", "lint"], cwd=project.path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert f"1 server, {len(items)} cases:" in lint.stdout, lint.stdout + lint.stderr
