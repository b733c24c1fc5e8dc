"""Every mistake of a case and of a case file is said at once, each with its line and fix."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import Project

THREE_KEYS = """\
schema_version: toolselect_cases.v1
servers: [registry]
cases:
  - id: one
    question: Find the company called Acme Widgets
    expect_tools: [find_company]
    forbid_tool: [list_officers]
    alow_no_tool: false
    why: three misspelt keys
  - id: two
    question: Find the company called Acme Widgets
    expect_tool: [find_company]
    forbid_tools: [find_company]
    category: skip
    expect_args: [{path: name, matches: "(("}]
    why: three mistakes a schema cannot see
"""

WANTED = [
    ":6: at cases[0].expect_tools: unknown key 'expect_tools'; did you mean 'expect_tool'? "
    "(rename it to expect_tool)",
    ":7: at cases[0].forbid_tool: unknown key 'forbid_tool'; did you mean 'forbid_tools'? "
    "(rename it to forbid_tools)",
    ":8: at cases[0].alow_no_tool: unknown key 'alow_no_tool'; did you mean 'allow_no_tool'? "
    "(rename it to allow_no_tool)",
    ":13: at cases[1].forbid_tools: tool 'find_company' is both expected",
    ":14: at cases[1].category: category 'skip' is the name of a pytest mark",
    ":15: at cases[1].expect_args[0].matches: matches '((' is not a valid regular expression",
]


def _in_order(out: str, wanted: list[str]) -> None:
    at = [out.find(w) for w in wanted]
    assert all(i >= 0 for i in at) and at == sorted(at), out


def test_pytest_reports_every_mistake_of_every_case_at_once(project: Project) -> None:
    project.config()
    (project.path / "bad.toolselect.yaml").write_text(THREE_KEYS)
    result = project.pytester.runpytest()
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error
    assert "bad.toolselect.yaml: 6 mistakes, in file order:" in out
    _in_order(out, WANTED)
    assert out.count("unknown key 'expect_tools'") == 1


def test_toolselect_lint_reports_them_all_too(project: Project) -> None:
    project.config()
    (project.path / "bad.toolselect.yaml").write_text(THREE_KEYS)
    done = subprocess.run([sys.executable, "-m", "pytest_toolselect.cli", "lint"], cwd=project.path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    _in_order(done.stdout + done.stderr, WANTED)


def test_every_mistake_against_the_offered_tools_is_said_at_once(project: Project) -> None:
    project.config()
    (project.path / "bad.toolselect.yaml").write_text("""\
schema_version: toolselect_cases.v1
servers: [registry]
cases:
  - id: offered
    question: Find the company called Acme Widgets
    expect_tool: [find_compny]
    forbid_tools: [list_oficers]
    why: two names no server offers
""")
    result = project.pytester.runpytest()
    out = result.stdout.str()
    assert "expect_tool names 'find_compny'" in out and "did you mean 'find_company'?" in out
    assert "forbid_tools names 'list_oficers'" in out and "rename it to list_officers" in out
