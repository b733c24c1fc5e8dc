"""The public surface: what the docs tell users to import comes from ``pytest_toolselect``
and is in its ``__all__``; the provider hook is typed by the ``Provider`` protocol; the
run a decorated test reads cannot be changed by the test."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest_toolselect
from conftest import FIND, Project

ROOT = Path(__file__).parent.parent
IMPORT = re.compile(r"^\s*from (pytest_toolselect[\w.]*) import ([\w, ()]+)$", re.M)


def doc_imports() -> list[tuple[str, str, str]]:
    """(page, module, name) for every import a code block of README or docs/ shows."""
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            for module, names in IMPORT.findall(block):
                found += [(page.name, module, n.strip()) for n in names.strip("()").split(",") if n.strip()]
    return found


def test_the_docs_import_public_names_only() -> None:
    imports = doc_imports()
    assert {"Turn", "ToolCall", "case", "score_case"} <= {n for _, _, n in imports}
    for page, module, name in imports:
        assert module == "pytest_toolselect", f"{page} imports {name} from {module}"
        assert name in pytest_toolselect.__all__, f"{page}: {name} is not in __all__"
        assert getattr(pytest_toolselect, name) is not None


def test_everything_in_all_is_importable() -> None:
    for name in pytest_toolselect.__all__:
        assert getattr(pytest_toolselect, name) is not None, name
    assert sorted(pytest_toolselect.__all__) == pytest_toolselect.__all__


def test_the_provider_hook_is_typed_by_the_protocol() -> None:
    from pytest_toolselect.plugin import hookspecs

    hints = typing.get_type_hints(hookspecs.pytest_toolselect_provider,
                                  {"Provider": pytest_toolselect.Provider, "pytest": __import__("pytest")})
    assert hints["return"] == typing.Optional[pytest_toolselect.Provider]  # noqa: UP045
    assert typing.get_type_hints(pytest_toolselect.Provider.first_turn)["return"] is pytest_toolselect.Turn


def test_a_decorated_test_cannot_change_the_run_it_reads(project: Project) -> None:
    project.config()
    project.pytester.makepyfile(test_cases=f'''
import dataclasses
import pytest
from pytest_toolselect import CaseRun, case

@case(question="{FIND[1]}", expect_tool=["lookup_vat"], why="the model calls find_company")
def test_tamper(toolselect_result):
    assert isinstance(toolselect_result, CaseRun)
    with pytest.raises(dataclasses.FrozenInstanceError):
        toolselect_result.scores = ()
    with pytest.raises(AttributeError):
        toolselect_result.turns.append(toolselect_result.turns[0])
    with pytest.raises(AttributeError):
        toolselect_result.scores.clear()
''')
    result = project.pytester.runpytest("-rA")
    # the attempts raised (the body got past them) and the verdict is the model's: failing
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*expected: lookup_vat*"])
    result.stdout.no_fnmatch_line("*DID NOT RAISE*")
