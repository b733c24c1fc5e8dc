"""No JSON-shaped record crosses a part boundary: what one part hands another is typed.

Every public function or method that another part of the package calls (or that the top
package offers users) is read with `ast`; a parameter or return annotated as an untyped
mapping (`dict[str, Any]`, `Mapping[str, Any]`, `MutableMapping[str, object]`, bare `dict`
or `Mapping`) is named with its file and line. Two kinds of value are JSON by nature and
pass: a file's or a worker's JSON at the edge that turns it into typed values (functions
named `to_json`, `from_json`, `read`, `load*`, `dump*`, `parse*`), and what is arbitrary
JSON by nature (a JSON Schema, a tool call's arguments, a request body), which is named
with the alias `exchange.json_value.JSONObject` so the exemption is explicit and greppable.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st
from test_architecture import ROOT, _from, _part, sources
from test_records import case_records

from pytest_toolselect.gate.evidence import section
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.records.tool_changes import ToolChange
from pytest_toolselect.report.notes import notes, tool_changes
from pytest_toolselect.report.results import case_entry
from pytest_toolselect.report.terminal import describe

#: function names that are the JSON edge: they turn a file's or a worker's JSON into typed
#: values, or a typed value into JSON
EDGE_NAMES = ("to_json", "from_json", "to_dict", "read")
EDGE_PREFIXES = ("load", "dump", "parse", "read")
UNTYPED = ("dict", "Dict", "Mapping", "MutableMapping")

@dataclass(frozen=True)
class Offender:
    module: str
    name: str
    param: str
    annotation: str
    line: int

    def __str__(self) -> str:
        path = self.module.replace(".", "/")
        path += "/__init__.py" if (ROOT.parent / path).is_dir() else ".py"
        return f"{path}:{self.line} {self.name} {self.param}: {self.annotation}"


def untyped(annotation: ast.expr) -> bool:
    """Whether an annotation holds an untyped mapping anywhere (`list[dict[str, Any]]` too)."""
    for node in ast.walk(annotation):
        if isinstance(node, ast.Subscript) and _name(node.value) in UNTYPED:
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if len(args) == 2 and _name(args[1]) in ("Any", "object"):
                return True
    return _bare(annotation)


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ""


def _bare(node: ast.expr) -> bool:
    """A mapping named without its key and value types (`dict`, `Mapping`)."""
    if isinstance(node, ast.Subscript):
        return _bare(node.slice)
    if _name(node) in UNTYPED:
        return True
    return any(_bare(c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr))


def _defs(tree: ast.Module) -> Iterator[tuple[str, str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every public top-level function and public method of a public class: (the name another
    module imports, the qualified name, the def)."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            yield node.name, node.name, node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                method = isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                if method and not item.name.startswith("_"):
                    yield node.name, f"{node.name}.{item.name}", item


def used_across(mods: Mapping[str, str]) -> set[tuple[str, str]]:
    """(module, name) of every name a module of another part imports or reads off a module,
    a package's re-export followed to the module that defines it."""
    used: set[tuple[str, str]] = set()
    reexports: dict[tuple[str, str], tuple[str, str]] = {}
    for mod, src in mods.items():
        tree = ast.parse(src)
        modules: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                origin = _from(mod, node, mods)
                for a in node.names:
                    if f"{origin}.{a.name}" in mods:
                        modules[a.asname or a.name] = f"{origin}.{a.name}"
                    else:
                        reexports[(mod, a.asname or a.name)] = (origin, a.name)
                        if _part(origin) != _part(mod):
                            used.add((origin, a.name))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in mods:
                        modules[a.asname or a.name] = a.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                target = modules.get(node.value.id)
                if target and _part(target) != _part(mod):
                    used.add((target, node.attr))
    frontier = list(used)
    while frontier:
        origin = reexports.get(frontier.pop())
        if origin and origin not in used:
            used.add(origin)
            frontier.append(origin)
    return used


def _annotations(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, ast.expr]]:
    """(parameter name or "return", annotation) of each annotated part of a signature."""
    a = node.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
    anns = [(p.arg, p.annotation) for p in params if p.annotation is not None]
    if node.returns is not None:
        anns.append(("return", node.returns))
    return anns


def offenders(mods: Mapping[str, str]) -> list[Offender]:
    """Every untyped mapping in a signature that crosses a part boundary."""
    used = used_across(mods)
    out = []
    for mod, src in mods.items():
        for imported, qualname, node in _defs(ast.parse(src)):
            crosses = _part(mod) == "" or (mod, imported) in used
            edge = node.name in EDGE_NAMES or node.name.startswith(EDGE_PREFIXES)
            if not crosses or edge:
                continue
            anns = _annotations(node)
            out.extend(Offender(mod, qualname, name, ast.unparse(ann), node.lineno)
                       for name, ann in anns
                       if untyped(ann))
    return out


def test_no_untyped_record_crosses_a_part_boundary() -> None:
    found = offenders(sources())
    assert not found, "untyped mappings between parts:\n" + "\n".join(map(str, found))


INNER = {
    "pytest_toolselect.report.a": (
        "from typing import Any\n"
        "from collections.abc import Mapping\n"
        "from .b import helper\n"
        "def render(doc: Mapping[str, Any]) -> str: ...\n"
        "def rows(x: int) -> list[dict[str, Any]]: ...\n"
        "def fine(x: JSONObject) -> dict[str, int]: ...\n"
        "def to_json() -> dict[str, Any]: ...\n"
        "def load_doc(d: dict) -> None: ...\n"
        "def _private(d: dict) -> None: ...\n"
        "class Card:\n"
        "    def html(self, cells: 'Mapping') -> str: ...\n"
    ),
    "pytest_toolselect.report.b": "def helper(d: dict[str, object]) -> None: ...\n",
    "pytest_toolselect.report": "from .a import Card\n",
    "pytest_toolselect.cli.main": (
        "from ..report.a import render, rows, fine, to_json, load_doc, _private\n"
        "from ..report import Card\n"
    ),
}


def test_an_untyped_mapping_between_parts_is_named_with_its_place() -> None:
    found = {(o.module, o.name, o.param) for o in offenders(INNER)}
    # within one part a helper may take JSON; the edges, aliases and private names pass
    assert found == {
        ("pytest_toolselect.report.a", "render", "doc"),
        ("pytest_toolselect.report.a", "rows", "return"),
        ("pytest_toolselect.report.a", "Card.html", "cells"),
    }
    line = next(str(o) for o in offenders(INNER) if o.name == "render")
    assert line == "pytest_toolselect/report/a.py:4 render doc: Mapping[str, Any]"


# -- a record is the same record wherever it was read from --------------------------------------

SETTINGS = {"reps": 3, "rule": "legacy", "history": 1, "fail_on_flaky": True,
            "fail_on_still_failing": False, "fail_on_suite_drop": False, "update_baseline": False}


word = st.text(max_size=8)
calls = st.lists(st.lists(st.fixed_dictionaries(
    {"name": word, "arguments": st.dictionaries(word, st.none() | st.integers() | word, max_size=2)}),
    max_size=2), max_size=3)
tools_diff = st.none() | st.lists(st.builds(
    ToolChange, word, st.sampled_from(["added", "removed", "changed"]), st.none() | word),
    max_size=2)


@st.composite
def run_records(draw: st.DrawFn) -> CaseRecord:
    """A record as a run makes it: a scored one's calls and tool changes in their real shapes."""
    rec = draw(case_records)
    if rec.status is None:
        return rec
    return dataclasses.replace(rec, calls=draw(calls), tools_diff=draw(tools_diff))


@given(run_records())
def test_a_record_from_a_workers_json_renders_as_the_live_one(rec: CaseRecord) -> None:
    # what rides on the test report to the controller, as text, is rebuilt with from_json
    back = CaseRecord.from_json(json.loads(json.dumps(rec.to_json())))
    assert back == rec
    assert describe(back, verbose=True) == describe(rec, verbose=True)
    assert notes(back) == notes(rec) and section(back) == section(rec)


@given(st.lists(run_records(), max_size=4))
def test_a_saved_documents_case_reads_back_to_what_the_terminal_showed(
        recs: list[CaseRecord]) -> None:
    # the markdown and HTML pages and merge read a saved document's cases with CaseRecord.read:
    # the sections, notes and tool changes they show are the terminal's for the live records
    saved = [json.loads(json.dumps(case_entry(r, None, SETTINGS))) for r in recs]
    read = [CaseRecord.read(case) for case in saved]
    assert [section(r) for r in read] == [section(r) for r in recs]
    assert [notes(r) for r in read] == [notes(r) for r in recs]
    assert tool_changes(read) == tool_changes(recs)
