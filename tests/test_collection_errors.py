"""A malformed case file fails collection with the file, the place, the key and the fix."""

from __future__ import annotations

import pytest

from conftest import FIND, Project, case


def _collect(project: Project, text: str) -> pytest.RunResult:
    project.config()
    (project.path / "bad.toolselect.yaml").write_text(text)
    return project.pytester.runpytest()


HEAD = "schema_version: toolselect_cases.v1\ncases:\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (HEAD + "  - id: a\n    question: [unclosed\n", "*bad.toolselect.yaml*"),
        (HEAD + "  - id: a\n    question: q\n    why: w\n    expect_tools: [x]\n",
         "*bad.toolselect.yaml:6*expect_tools*did you mean*expect_tool*"),
        (HEAD + "  - id: a\n    question: q\n", "*bad.toolselect.yaml*why*"),
        (HEAD + "  - {id: a, question: q, why: w}\n  - {id: a, question: q, why: w}\n",
         "*bad.toolselect.yaml*duplicate*a*"),
        (HEAD + "  - id: a\n    question: q\n    why: w\n    expect_tool: find_company\n",
         "*bad.toolselect.yaml:6*expect_tool*list*"),
    ],
    ids=["bad-yaml", "unknown-key", "missing-why", "duplicate-id", "wrong-type"],
)
def test_malformed_case_file(project: Project, text: str, expected: str) -> None:
    result = _collect(project, text)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*ERROR collecting bad.toolselect.yaml*", expected])
    # one clear message, no traceback from inside the plugin
    assert "Traceback" not in result.stdout.str()
    assert "pytest_toolselect/" not in result.stdout.str()


def test_other_files_still_collect_with_continue_on_collection_errors(project: Project) -> None:
    project.config()
    project.cases([case(*FIND)])
    (project.path / "bad.toolselect.yaml").write_text("schema_version: nope\n")
    result = project.pytester.runpytest("--continue-on-collection-errors")
    result.assert_outcomes(passed=1, errors=1)


def test_no_toolselect_files_no_summary(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_x():\n    assert True\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "toolselect: model" not in out and "= toolselect =" not in out
