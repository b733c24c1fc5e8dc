"""docs/architecture.md's "Where to change what" stays true: every object it names exists in
the module it names, and everything registered (each route, report format, check, lint rule,
command, option, gate rule and refused mark) is where the table says, read from the registry
the table's row names."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import pytest_toolselect

PACKAGE = Path(pytest_toolselect.__file__).parent
ROOT = PACKAGE.parent
DOCS = ROOT / "docs"
#: "`NAME` (`part/module.py`)": an object and the module that defines it
NAMED = re.compile(r"`(\w+)` \(`((?:\w+/)+\w+\.py)`\)")
#: a module of the package the table names
MODULE = re.compile(r"`((?:\w+/)+\w+\.py)`")
#: a page of the docs the table names
PAGE = re.compile(r"`(docs/[\w-]+\.md)`")
#: what the table tells how to add, one row each
KINDS = ("a check", "a provider route", "a report format", "a refusal of a pytest mechanism",
         "a lint rule", "a CLI command", "an option", "a gate rule")


def table(text: str | None = None) -> dict[str, tuple[str, str]]:
    """The section's rows: what to add -> (the one place, then)."""
    if text is None:
        text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Where to change what", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| ") and len(cells) == 3 and cells[0] not in ("to add",):
            rows[cells[0]] = (cells[1], cells[2])
    return rows


def module_at(path: str) -> ModuleType:
    dotted = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return importlib.import_module(f"pytest_toolselect.{dotted}")


def missing(rows: dict[str, tuple[str, str]]) -> list[str]:
    """Each module, page or object the rows name that is not there."""
    gone = []
    for kind, cells in rows.items():
        text = " ".join(cells)
        for path in MODULE.findall(text):
            if not (PACKAGE / path).is_file():
                gone.append(f"{kind}: no module {path}")
        for page in PAGE.findall(text):
            if not (ROOT / page).is_file():
                gone.append(f"{kind}: no page {page}")
        for name, path in NAMED.findall(text):
            if (PACKAGE / path).is_file() and not hasattr(module_at(path), name):
                gone.append(f"{kind}: {path} defines no {name}")
    return gone


def registry(kind: str) -> Any:
    """The object the row's "one place" names first: the registry itself."""
    name, path = NAMED.findall(table()[kind][0])[0]
    return getattr(module_at(path), name)


def then(kind: str) -> str:
    return table()[kind][1]


def page(kind: str) -> str:
    pages = PAGE.findall(" ".join(table()[kind]))
    assert pages, f"{kind}: the row names no page"
    return (ROOT / pages[0]).read_text(encoding="utf-8")


def test_the_table_has_a_row_for_each_kind_and_names_what_exists() -> None:
    rows = table()
    assert tuple(rows) == KINDS
    assert missing(rows) == []


def test_a_name_the_code_lacks_is_named_with_its_row() -> None:
    rows = {"a thing": ("`NOPE` (`providers/routes.py`)", "`gone/away.py`; `docs/nothing.md`")}
    assert missing(rows) == ["a thing: no module gone/away.py", "a thing: no page docs/nothing.md",
                             "a thing: providers/routes.py defines no NOPE"]


def test_every_check_has_its_function_its_place_in_score_and_its_row() -> None:
    checks = module_at(MODULE.findall(then("a check"))[0])
    source = inspect.getsource(checks.score)
    for name in registry("a check"):
        assert callable(getattr(checks, f"check_{name}", None)), name
        assert f'checks["{name}"]' in source, name
        assert f"| `{name}` |" in page("a check"), name


def test_every_provider_route_has_its_factory_and_its_row() -> None:
    for row in registry("a provider route"):
        module, _, attribute = row.factory.partition(":")
        assert callable(getattr(importlib.import_module(module), attribute)), row.name
        assert module.startswith("pytest_toolselect.providers."), row.name
        for prefix in row.prefixes:
            assert f"`{prefix}/" in page("a provider route"), prefix


def test_every_report_format_has_its_writer_its_option_and_its_field() -> None:
    from pytest_toolselect.inputs.option_table import BY_NAME
    from pytest_toolselect.run.settings import Options

    fields = {f.name for f in dataclasses.fields(Options)}
    for row in registry("a report format"):
        module, _, function = row.writer.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), row.name
        assert BY_NAME[row.name].kind == "path" and row.name in fields, row.name
        assert f"--toolselect-{row.name}" in page("a report format"), row.name


def test_every_refused_mark_is_in_the_refused_row_of_the_mechanisms_table() -> None:
    refused = [line for line in page("a refusal of a pytest mechanism").splitlines()
               if line.startswith("|") and "refused at the start" in line]
    marks = NAMED.findall(table()["a refusal of a pytest mechanism"][0])
    assert ("OUTCOME_MARKS", "plugin/ownership.py") in marks
    for mark in module_at("plugin/ownership.py").OUTCOME_MARKS:
        assert any(f"`{mark}`" in line or f"mark.{mark}`" in line for line in refused), mark


def test_every_lint_rule_is_found_in_a_module_the_row_names_and_has_its_row() -> None:
    modules = [PACKAGE / path for path in MODULE.findall(then("a lint rule"))]
    for name in registry("a lint rule"):
        assert any(f'"{name}"' in m.read_text(encoding="utf-8") for m in modules), name
        assert f"`{name}`" in page("a lint rule"), name


def test_every_command_has_its_example_and_its_page() -> None:
    build = registry("a CLI command")
    epilog = module_at("cli/__init__.py").EPILOG
    commands = next(a for a in build()._actions if isinstance(a, argparse._SubParsersAction))
    docs = "".join(p.read_text(encoding="utf-8") for p in DOCS.glob("*.md"))
    assert list(commands.choices)
    for name in commands.choices:
        assert f"toolselect {name}" in epilog and f"toolselect {name}" in docs, name


def test_every_option_has_its_field() -> None:
    from pytest_toolselect.run.settings import Options

    assert [o.name for o in registry("an option")] == [f.name for f in dataclasses.fields(Options)]


def test_every_gate_rule_is_defined_and_documented() -> None:
    rules = module_at(MODULE.findall(then("a gate rule"))[0])
    assert tuple(registry("a gate rule")) == tuple(rules.RULES)
    for name in registry("a gate rule"):
        assert f"`{name}`" in page("a gate rule"), name


@pytest.mark.parametrize("kind", KINDS)
def test_each_row_names_its_registry_first(kind: str) -> None:
    assert NAMED.findall(table()[kind][0]), f"{kind}: the one place names no object"
