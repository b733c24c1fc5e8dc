"""One spelling per rule: a count's noun is made by one pluraliser, a file kind's suffixes are
one tuple. A second hand-made copy is how two parts came to disagree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import pytest_toolselect
from pytest_toolselect.messages.plural import plural
from pytest_toolselect.report.words import counted

PACKAGE = Path(pytest_toolselect.__file__).parent
#: a plural made by hand: "{n} case{'s' if n != 1 else ''}"
HAND_MADE = re.compile(r"""['"]s['"] if |else ['"]s['"]""")


def _sources() -> list[tuple[Path, str]]:
    return [(path, path.read_text()) for path in sorted(PACKAGE.rglob("*.py"))]


def test_no_plural_is_made_by_hand() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{n}" for path, text in _sources()
             for n, line in enumerate(text.splitlines(), 1) if HAND_MADE.search(line)]
    assert found == [], f"use messages.plural.plural: {found}"


def test_one_pluraliser_is_defined() -> None:
    defined = [f"{path.relative_to(PACKAGE)}:{node.name}" for path, text in _sources()
               for node in ast.walk(ast.parse(text))
               if isinstance(node, ast.FunctionDef) and "plural" in node.name.lower()]
    assert defined == ["messages/plural.py:plural"]


def test_each_file_kinds_suffixes_are_one_tuple() -> None:
    defined = [f"{path.relative_to(PACKAGE)}:{target.id}" for path, text in _sources()
               for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Assign)
               for target in node.targets
               if isinstance(target, ast.Name) and ("SUFFIX" in target.id or "PATTERNS" in target.id)
               and isinstance(node.value, ast.Tuple)
               and any(isinstance(e, ast.Constant) and str(e.value).endswith((".yaml", ".json"))
                       for e in node.value.elts)]
    assert sorted(defined) == ["inputs/__init__.py:CASE_SUFFIXES", "inputs/__init__.py:GROUPS_SUFFIXES"]


@given(n=st.integers(0, 10**6), word=st.sampled_from(["case", "regression", "error", "rep", "call",
                                                      "held", "new", "still_failing"]))
def test_a_verdict_count_is_the_pluraliser_s(n: int, word: str) -> None:
    # nouns take their plural, the verdict adjectives ("2 held") stay as they are
    spaced = word.replace("_", " ")
    many = spaced + "s" if spaced in ("case", "regression", "error", "rep", "call") else spaced
    assert counted(n, word) == plural(n, spaced, many)
