"""One loader of case files, and it always checks for contradictions: a case file whose case
contradicts itself is refused by every entry point that reads case files (the plugin's
collection, ``toolselect lint``, the lint's loader, the benchmarks), and no public function
reads one without the check."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pytest_toolselect
from pytest_toolselect.inputs import cases
from pytest_toolselect.messages.errors import ToolselectError

HEAD = "schema_version: toolselect_cases.v1\ncases:\n"
#: decoys[0] is the value expect_args[0] requires: the case can never pass
CONTRADICTION = HEAD + """\
  - id: officers
    question: Officers of company 04138203
    why: x
    expect_tool: [list_officers]
    expect_args:
      - {path: company_number, equals: "04138203"}
    decoys: ["4138203"]
"""
TOOLS = [{"name": "list_officers", "description": "The officers of a company.",
          "inputSchema": {"type": "object", "properties": {"company_number": {"type": "string"}}}}]
ROOT = Path(pytest_toolselect.__file__).parent.parent


def test_the_inputs_readers_cannot_skip_the_check() -> None:
    """inputs.cases has no loader of its own; its readers take the check with no default."""
    import inspect

    assert not hasattr(cases, "load_case_file") and not hasattr(cases, "parse_case")
    for reader in (cases.read_case_file, cases.read_case):
        check = inspect.signature(reader).parameters["check"]
        assert check.kind is inspect.Parameter.KEYWORD_ONLY, reader
        assert check.default is inspect.Parameter.empty, reader
    with pytest.raises(TypeError, match="check"):
        cases.read_case({"id": "a", "question": "q", "why": "w", "expect_tool": ["t"]})  # type: ignore[call-arg]


def test_only_the_checking_loader_calls_the_readers() -> None:
    """Whoever reads a case file goes through scoring.contradictions (an ast scan of the
    package and benchmarks: the readers that take the check are named nowhere else)."""
    offenders = []
    for path in [*(ROOT / "pytest_toolselect").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        if names & {"read_case_file", "read_case"} and path.name not in ("contradictions.py", "cases.py"):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_the_public_loaders_refuse_it(tmp_path: Path) -> None:
    from pytest_toolselect.inputs.config import load_config
    from pytest_toolselect.lint.run import load_cases
    from pytest_toolselect.scoring.contradictions import load_case_file

    path = tmp_path / "c.toolselect.yaml"
    path.write_text(CONTRADICTION, encoding="utf-8")
    (tmp_path / "toolselect.yaml").write_text("model: m\n", encoding="utf-8")
    for load in (lambda: load_case_file(path), lambda: load_cases([path], load_config(tmp_path))):
        with pytest.raises(ToolselectError, match="can never pass") as info:
            load()
        assert info.value.file == str(path)


def test_collection_refuses_it(project: Any) -> None:
    project.config({"registry": {"tools_file": project.tools_file("registry", TOOLS)}})
    (project.path / "c.toolselect.yaml").write_text(CONTRADICTION, encoding="utf-8")
    result = project.pytester.runpytest("-rA")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*c.toolselect.yaml:*officers*can never pass*"])


def test_toolselect_lint_refuses_it(project: Any) -> None:
    project.config({"registry": {"tools_file": project.tools_file("registry", TOOLS)}})
    (project.path / "c.toolselect.yaml").write_text(CONTRADICTION, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "pytest_toolselect.cli", "lint"], cwd=project.path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode != 0, out.stdout
    assert "can never pass" in out.stdout + out.stderr and "c.toolselect.yaml" in out.stdout + out.stderr
