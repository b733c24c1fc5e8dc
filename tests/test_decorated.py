"""Python test functions as cases: @case with parametrize, and the toolselect_result fixture."""

from __future__ import annotations

from conftest import FIND, OFFICERS, Project

TEST_FILE = f'''
import pytest
from pytest_toolselect import case

@pytest.mark.parametrize("question", [
    "Find the company called Acme Widgets in the company register",
    "Search the register for a company named Initech",
    "Who are the directors and officers of company 01234567?",
], ids=["acme", "initech", "officers"])
@case(servers=["registry"], expect_tool=["find_company"], category="search", intent="by_name",
      why="Given a name and no number, the only correct first move is to search.")
def test_name_lookup(question, toolselect_result):
    assert toolselect_result.turns, "the model was asked"

@case(question="{OFFICERS[1]}", expect_tool=["list_officers"], why="officers by number")
def test_officers(toolselect_result):
    assert toolselect_result.first_tool == "list_officers"

@case(question="{FIND[1]}", expect_tool=["find_company"], why="extra assertions can fail")
def test_extra_assertion(toolselect_result):
    assert toolselect_result.first_tool == "lookup_vat"
'''


def test_parametrize_gives_one_case_per_question(project: Project) -> None:
    project.config()
    project.pytester.makepyfile(test_cases=TEST_FILE)
    result = project.pytester.runpytest("-v")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines([
        "*test_name_lookup?acme? PASSED*",
        "*test_name_lookup?initech? PASSED*",
        "*test_name_lookup?officers? FAILED*",
        "*test_officers PASSED*",
        "*test_extra_assertion FAILED*",
    ])
    # the case failure explains itself; the user's own assertion shows as usual
    result.stdout.fnmatch_lines(["*expected: find_company*", "*called:   list_officers()*",
                                 "*assert 'find_company' == 'lookup_vat'*"])


def test_decorated_cases_select_by_category_and_join_intents(project: Project) -> None:
    project.config()
    project.pytester.makepyfile(test_cases=TEST_FILE)
    result = project.pytester.runpytest("-k", "search")
    result.assert_outcomes(passed=2, failed=1, deselected=2)
    result.stdout.fnmatch_lines(["*by_name: find_company x2, list_officers x1*"])


def test_decorated_cases_enter_the_baseline(project: Project) -> None:
    project.config()
    project.pytester.makepyfile(test_cases=TEST_FILE)
    project.pytester.runpytest("--toolselect-baseline=base.json")
    cases = project.read_baseline()["cases"]
    assert cases["test_cases.py::test_name_lookup[officers]"]["status"] == "failing"
    assert cases["test_cases.py::test_officers"]["status"] == "held"


def test_question_given_twice_is_an_error(project: Project) -> None:
    project.config()
    project.pytester.makepyfile(test_twice='''
import pytest
from pytest_toolselect import case

@pytest.mark.parametrize("question", ["a"])
@case(question="b", expect_tool=[], why="w")
def test_twice(question):
    pass
''')
    result = project.pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the question is given twice*"])
