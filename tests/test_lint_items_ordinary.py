"""Lint items are ordinary pytest items: --lf reruns the ones that failed, JUnit gives them a
classname, and an update run that accepts their findings says so and exits 0."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from lint_data import DISTINCT, TWIN, tool

from conftest import Project

#: a near-duplicate of DISTINCT's send_email, on a third server
EMAIL_TWIN = tool("email_send", "Send an email message to a recipient, with a subject line and a "
                  "text body.", to="Recipient address, e.g. 'bo@example.com'.", body="The text.")


@pytest.fixture
def three_failing(project: Project) -> Project:
    """Three servers whose lint items all fail against a baseline that holds no lint."""
    project.config({name: {"tools_file": project.tools_file(name, tools)}
                    for name, tools in (("alpha", DISTINCT), ("beta", [TWIN]), ("gamma", [EMAIL_TWIN]))})
    project.cases([{"id": "w", "question": "Will it rain in Lyon tomorrow?",
                    "expect_tool": ["get_weather"], "why": "weather"}])
    recorded = project.pytester.runpytest("--toolselect-baseline=base.json")
    assert recorded.ret == 0 and "lint" not in project.read_baseline()
    return project


def test_lf_reruns_the_three_lint_items_that_failed(three_failing: Project) -> None:
    pytester = three_failing.pytester
    first = pytester.runpytest("--toolselect-lint", "--toolselect-baseline=base.json")
    first.assert_outcomes(failed=3, xfailed=1)
    again = pytester.runpytest("--toolselect-lint", "--toolselect-baseline=base.json", "--lf")
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 3 failures"])
    again.assert_outcomes(failed=3)  # the case is not run again
    assert "deselected" in again.stdout.str()


def test_junit_gives_each_lint_item_a_classname(three_failing: Project) -> None:
    pytester = three_failing.pytester
    pytester.runpytest("--toolselect-lint", "--toolselect-baseline=base.json", "--junitxml=out.xml")
    cases = ET.parse(pytester.path / "out.xml").getroot().iter("testcase")
    lint = {c.get("name"): c.get("classname") for c in cases if "toolselect-lint" in (c.get("name") or "")}
    assert sorted(lint) == [f"toolselect-lint[{s}]" for s in ("alpha", "beta", "gamma")]
    assert set(lint.values()) == {"toolselect.yaml"}  # the file the servers are named in


def test_an_update_run_accepts_the_findings_says_so_and_exits_0(three_failing: Project) -> None:
    pytester = three_failing.pytester
    update = pytester.runpytest("-k", "lint", "--toolselect-lint", "--toolselect-baseline=base.json",
                                "--toolselect-update-baseline", "-rx")
    assert update.ret == 0, update.stdout.str()
    update.assert_outcomes(xfailed=3, deselected=1)
    update.stdout.fnmatch_lines(["beta: 1 error, *; 0 new, 1 accepted",
                                 "XFAIL *toolselect-lint[[]beta[]] - *, 1 new accepted into the baseline"])
    assert sorted(three_failing.read_baseline()["lint"]) == ["alpha", "beta", "gamma"]
    compared = pytester.runpytest("--toolselect-lint", "--toolselect-baseline=base.json")
    assert compared.ret == 0
    compared.assert_outcomes(xfailed=4)
