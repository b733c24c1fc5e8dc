"""Cases that can never pass because two of their own keys contradict each other.

Checked at load, with the case and both places named: a decoy that an ``expect_args``
matcher requires, or a decoy that is the question's only identifier while the case
expects an identifier parameter that must be grounded. A parameter that is an identifier
by its schema alone is known once the servers give their tools (``check_with_tools``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_toolselect.inputs.cases import (
    Case,
    CaseFile,
    Decoy,
    IdentifierSettings,
    read_case,
    read_case_file,
)
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.scoring.identifiers import (
    Identifier,
    declared_in,
    decoy_grounding,
    decoy_matched,
    guards,
    identifier_param,
    identifiers_in_value,
    normal_form,
)

if TYPE_CHECKING:
    from pytest_toolselect.exchange.tool import Tool
    from pytest_toolselect.positions.sourced import PathT, Sourced


def _required(matcher: dict[str, Any]) -> list[Any]:
    """The values a matcher accepts, when it accepts only listed values (an optional one
    also accepts the argument left out)."""
    if matcher.get("optional") is True:
        return []
    if "equals" in matcher:
        return [matcher["equals"]]
    if "equals_text" in matcher:
        return [matcher["equals_text"]]
    if "one_of" in matcher:
        return list(matcher["one_of"])
    return []


def _as_ident(path: str, value: Any, declared: bool) -> Identifier | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    return Identifier(0, "", path, str(value), declared)


@dataclass(frozen=True)
class _Required:
    """decoys[i] is every value expect_args[j] accepts."""

    i: int
    j: int
    decoy: Decoy
    path: str
    op: str
    values: list[Any]

    def message(self, case: Case) -> str:
        shown = self.values if self.op == "one_of" else self.values[0]
        return (f"case {case.id!r}: decoys[{self.i}] {self.decoy.value!r} is the value "
                f"expect_args[{self.j}] requires ({self.path} {self.op} {shown!r}), so the case "
                "can never pass")


def _required_decoys(case: Case, declared: Callable[[str], bool]) -> Iterator[_Required]:
    """Each decoy that an expect_args matcher requires, where ``declared(path)`` says whether
    the matcher's parameter is an identifier parameter (the decoys guard only those)."""
    decoys = [Decoy.of(d) for d in case.decoys]
    settings = case.identifiers
    for j, matcher in enumerate(case.expect_args):
        mpath = matcher.get("path")
        if not isinstance(mpath, str) or mpath == "any":
            continue
        is_declared = declared(mpath)
        values = _required(matcher)
        for i, decoy in enumerate(decoys):
            grounding = decoy_grounding([decoy.value], settings)
            hits = [v for v in values
                    if (ident := _as_ident(mpath, v, is_declared)) is not None
                    and guards(decoy.params, ident) and decoy_matched(ident, grounding)]
            # one_of: a contradiction only when every accepted value is the decoy
            if values and len(hits) == len(values):
                op = next(k for k in ("equals", "equals_text", "one_of") if k in matcher)
                yield _Required(i, j, decoy, mpath, op, values)


def check_contradictions(case: Case, src: Sourced, path: PathT) -> None:
    """Raise ToolselectError when the case contradicts itself (see the module doc)."""
    decoys = [Decoy.of(d) for d in case.decoys]
    if not decoys:
        return
    settings = case.identifiers
    for required in _required_decoys(case, lambda p: identifier_param(p, None, settings)):
        raise src.error(
            (*path, "decoys", required.i), required.message(case),
            f"remove the decoy, or change expect_args[{required.j}] (line "
            f"{src.line_of((*path, 'expect_args', required.j))}) to the value that is right",
        )
    if not case.grounds_params or case.context:
        # a given result may hold the identifier the question lacks
        return
    expected = [j for j, m in enumerate(case.expect_args)
                if isinstance(m.get("path"), str) and "absent" not in m
                and m.get("optional") is not True  # left out is a way to pass
                and identifier_param(m["path"], None, settings)]
    found = {normal_form(text): text
             for text, _, _ in identifiers_in_value(case.question, "free")}
    if not expected or len(found) != 1:
        return
    (only,) = found.values()
    for i, decoy in enumerate(decoys):
        ident = Identifier(0, "", case.expect_args[expected[0]]["path"], only, True)
        if guards(decoy.params, ident) and decoy_matched(ident, decoy_grounding([decoy.value],
                                                                                settings)):
            raise src.error(
                (*path, "decoys", i),
                f"case {case.id!r}: decoys[{i}] {decoy.value!r} is the only identifier in the "
                f"question ({only!r}), and expect_args[{expected[0]}] expects an identifier "
                f"parameter that must be grounded in the question, so the case can never pass",
                "remove the decoy, add the right identifier to the question, or set "
                "forbid_ungrounded: false if an identifier from elsewhere is right",
            )


def check_with_tools(case: Case, tools: Sequence[Tool]) -> None:
    """The contradiction only the offered tools can show: a decoy that expect_args requires
    under a parameter that is an identifier by its schema alone (a ``pattern``, ``format:
    uuid``) in every expected tool that has it. Raises ToolselectError naming both places."""
    if not case.decoys or not case.expect_tool:
        return
    settings = case.identifiers
    expected = [t for t in tools if t.name in case.expect_tool]

    def declared(path: str) -> bool:
        found = [d for t in expected if (d := declared_in(path, t.input_schema, settings)) is not None]
        return bool(found) and all(found)

    for found in _required_decoys(case, declared):
        raise ToolselectError(
            found.message(case) + f" (its schema makes {found.path} an identifier parameter)",
            file=case.source or None, line=case.line,
            fix=f"remove the decoy, or change expect_args[{found.j}] to the value that is right",
        )


def load_case_file(path: Path, config_identifiers: IdentifierSettings | None = None) -> CaseFile:
    """Read, validate and build one case file, refusing a case that contradicts itself: the
    one public loader of case files (plugin, cli, lint and benchmarks all read through it)."""
    return read_case_file(path, config_identifiers, check=check_contradictions)


def parse_case(data: Mapping[str, Any], **options: Any) -> Case:
    """One case mapping as a validated Case, with the contradiction check."""
    return read_case(data, check=check_contradictions, **options)
