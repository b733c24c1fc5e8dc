"""Below the load boundary the plugin and the run import the package's own modules at module
level: an import left inside a function there names its reason (docs/architecture.md)."""

from __future__ import annotations

import ast
from pathlib import Path

from test_architecture import ROOT

PKG = "pytest_toolselect"
#: modules on the entry path: every pytest run loads them, so what they need waits
ENTRY = {"plugin/__init__.py", "run/settings.py"}
#: parts imported where they are used: the reports where one is made (not with the run's
#: parts, run/imports.py), the lint's only for a run that lints (tests/test_import_cost.py)
WHERE_USED = (f"{PKG}.report", f"{PKG}.lint", f"{PKG}.plugin.lint_items")
#: looked up when called: tests/test_baseline_value.py replaces it to count the reads
LOOKED_UP = {(f"{PKG}.gate.baseline", "load")}


def _target(root: Path, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = [PKG, *path.relative_to(root).parent.parts]
    parts = parts[:len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def lazy_imports(root: Path = ROOT) -> list[tuple[str, int, str]]:
    """(file, line, module) of each import of the package's own modules inside a function
    of plugin/ or run/ that names no reason to be there."""
    found = []
    for part in ("plugin", "run"):
        for path in sorted((root / part).glob("*.py")):
            rel = str(path.relative_to(root))
            if rel in ENTRY:
                continue
            for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(fn):
                    if isinstance(node, ast.Import):
                        found += [(rel, node.lineno, a.name) for a in node.names
                                  if a.name.split(".")[0] == PKG]
                    elif isinstance(node, ast.ImportFrom):
                        target = _target(root, path, node)
                        if target.split(".")[0] != PKG or target.startswith(WHERE_USED):
                            continue
                        if any((target, a.name) in LOOKED_UP for a in node.names):
                            continue
                        found.append((rel, node.lineno, target))
    return found


def test_the_plugin_and_the_run_import_the_package_at_module_level() -> None:
    assert lazy_imports() == []


def test_an_import_inside_a_function_is_found(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "plugin").mkdir()
    (tmp_path / "run" / "x.py").write_text(
        "def f():\n    from .y import z\n    from pytest_toolselect.report.terminal import lines\n"
        "    import json\n")
    (tmp_path / "plugin" / "__init__.py").write_text("def g():\n    from .machinery import start\n")
    assert [(f, line) for f, line, _ in lazy_imports(tmp_path)] == [("run/x.py", 2)]
