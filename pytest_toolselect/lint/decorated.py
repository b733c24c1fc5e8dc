"""Decorated cases read from test files without running them, for `toolselect lint`.

The command does not collect with pytest (it would import and run the team's test
modules), so it reads each test file's syntax: a function under ``@case(...)`` (imported
from pytest_toolselect, under any name) or ``@pytest.mark.toolselect_case(...)`` is a case,
and the tools its ``expect_tool`` and ``forbid_tools`` name count as tested. A value that is
not written out (a variable, a call) names no tool; a file that does not parse is passed over
(pytest will say what is wrong with it). ``pytest --toolselect-lint`` sees the collected cases
themselves.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_toolselect.positions.bounded import read_bounded
from pytest_toolselect.positions.sourced import MAX_BYTES

MARK = "toolselect_case"
PACKAGE = "pytest_toolselect"


@dataclass(frozen=True)
class DecoratedCase:
    """What the linter needs of a decorated case: where it is and the tools it names."""

    file: Path
    function: str
    expect_tool: tuple[str, ...] | None
    forbid_tools: tuple[str, ...]
    servers: tuple[str, ...] | None
    #: the items pytest makes of it: one per parameter set of its parametrize marks
    items: int = 1

    @property
    def named(self) -> tuple[str, ...]:
        return (*(self.expect_tool or ()), *self.forbid_tools)


def is_test_file(path: Path) -> bool:
    """pytest's default ``python_files``: test_*.py and *_test.py."""
    return path.suffix == ".py" and (path.name.startswith("test_") or path.stem.endswith("_test"))


def decorated_cases(path: Path) -> list[DecoratedCase]:
    """The decorated cases of one test file, in source order (none when it does not parse)."""
    try:
        tree = ast.parse(read_bounded(path, MAX_BYTES), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return []
    names, modules = _bindings(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and _is_case(deco.func, names, modules):
                fields = {k.arg: k.value for k in deco.keywords if k.arg is not None}
                out.append(DecoratedCase(
                    path, node.name,
                    _names(fields["expect_tool"]) if "expect_tool" in fields else None,
                    (_names(fields["forbid_tools"]) or ()) if "forbid_tools" in fields else (),
                    _names(fields["servers"]) if "servers" in fields else None,
                    _parameter_sets(node)))
                break
    return sorted(out, key=lambda c: c.function)


def _parameter_sets(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many items pytest makes of a function: the product of its parametrize marks'
    value counts, where they are written out (a computed list counts as one)."""
    n = 1
    for deco in node.decorator_list:
        if not (isinstance(deco, ast.Call) and isinstance(deco.func, ast.Attribute)
                and deco.func.attr == "parametrize"):
            continue
        values = deco.args[1] if len(deco.args) > 1 else next(
            (k.value for k in deco.keywords if k.arg == "argvalues"), None)
        if isinstance(values, (ast.List, ast.Tuple, ast.Set)):
            n *= len(values.elts) or 1  # no parameter set: pytest still makes one (skipped) item
    return n


def _bindings(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound to pytest_toolselect's ``case``, and names bound to the package itself."""
    names: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == PACKAGE:
            names.update(a.asname or a.name for a in node.names if a.name == "case")
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name == PACKAGE)
    return names, modules


def _is_case(func: ast.expr, names: set[str], modules: set[str]) -> bool:
    if isinstance(func, ast.Name):
        return func.id in names
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "case" and isinstance(func.value, ast.Name):
        return func.value.id in modules  # pytest_toolselect.case(...)
    # pytest.mark.toolselect_case(...)
    return (func.attr == MARK and isinstance(func.value, ast.Attribute)
            and func.value.attr == "mark")


def _names(node: ast.expr) -> tuple[str, ...] | None:
    """A written-out list of tool names; None for null or anything computed."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


def find_decorated(files: Iterable[Path]) -> list[DecoratedCase]:
    """The decorated cases of the test files among files."""
    return [case for path in files if is_test_file(path) for case in decorated_cases(path)]
