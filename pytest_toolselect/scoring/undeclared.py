"""``no_undeclared_arguments``: a call passes no parameter its tool does not declare.

JSON Schema leaves an object open unless it says otherwise, and most servers' schemas
never say (``additionalProperties`` is rarely written), so ``valid_arguments`` accepts a
made-up parameter. A made-up parameter means the model misread the tool: the server
ignores it or refuses it. This check reads a schema that declares ``properties`` as the
list of what may be passed, unless the schema itself says more may be (an explicit
``additionalProperties``, ``patternProperties``, ``unevaluatedProperties``, or a
condition that declares more: then it is JSON Schema's to judge, in ``valid_arguments``).
Pure: nothing but the standard library.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pytest_toolselect.exchange.clip import clip_text
from pytest_toolselect.exchange.schema_paths import MAX_DEPTH, alternatives
from pytest_toolselect.exchange.tool import Tool, ToolCall

from .argschema import json_path

#: keywords by which a schema says for itself which other keys an object may hold
OPENING_KEYS = frozenset({"additionalProperties", "patternProperties", "unevaluatedProperties",
                          "if", "then", "else", "dependentSchemas", "dependencies"})
#: undeclared arguments named per call; the rest are counted
MAX_NAMED = 5

Path = tuple[str | int, ...]


def undeclared(schema: Any, arguments: Any) -> list[Path]:
    """The paths of the arguments the schema does not declare, in argument order."""
    return list(_walk(schema, arguments, (), schema, 0))


def _walk(node: Any, value: Any, at: Path, root: Any, depth: int) -> Iterator[Path]:
    if depth > MAX_DEPTH or not isinstance(node, Mapping):
        return
    alts = alternatives(node, root)
    if isinstance(value, Mapping):
        declared: dict[str, Any] = {}
        closed = False
        for alt in alts:
            if OPENING_KEYS.intersection(alt):
                return  # the schema says for itself what else may be passed
            props = alt.get("properties")
            if isinstance(props, Mapping):
                closed = True
                for key, sub in props.items():
                    declared.setdefault(key, sub)
        for key, item in value.items():
            if key in declared:
                yield from _walk(declared[key], item, (*at, key), root, depth + 1)
            elif closed:
                yield (*at, key)
    elif isinstance(value, list):
        for alt in alts:
            items, prefix = alt.get("items"), alt.get("prefixItems")
            if isinstance(items, Mapping) or isinstance(prefix, list):
                for i, item in enumerate(value):
                    sub = prefix[i] if isinstance(prefix, list) and i < len(prefix) else items
                    yield from _walk(sub, item, (*at, i), root, depth + 1)
                return


def _declared_names(schema: Any) -> list[str]:
    names: list[str] = []
    for alt in alternatives(schema, schema):
        props = alt.get("properties")
        if isinstance(props, Mapping):
            names += [str(k) for k in props if k not in names]
    return names


def check_undeclared(calls: Sequence[ToolCall], tools: Sequence[Tool]
                     ) -> tuple[bool, str] | None:
    """(passed, detail) over the calls to offered tools; None when there is none."""
    offered = {t.name: t for t in tools}
    checked = [(i, c) for i, c in enumerate(calls)
               if c.name in offered and c.raw_arguments is None]
    if not checked:
        return None
    failures: list[str] = []
    for i, call in checked:
        schema = offered[call.name].input_schema
        found = undeclared(schema, call.arguments)
        if not found:
            continue
        shown = [json_path(list(p)) for p in found[:MAX_NAMED]]
        if len(found) > MAX_NAMED:
            shown.append(f"and {len(found) - MAX_NAMED:,} more")
        said = f"{call.name} (call {i + 1}) passes what its tool does not declare: {', '.join(shown)}"
        if all(len(p) == 1 for p in found):  # top-level names: say what the tool takes
            names = ", ".join(clip_text(n, 40) for n in _declared_names(schema)[:20]) or "none"
            said += f" (its parameters: {names})"
        failures.append(said)
    if failures:
        return False, "; ".join(failures)
    at = ", ".join(f"{c.name} (call {i + 1})" for i, c in checked)
    return True, f"every argument is declared by its tool: {at}"
