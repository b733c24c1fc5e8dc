"""``unsatisfiable-schema``: a parameter whose schema no value satisfies.

A string ``enum`` on an array-typed parameter, a ``minimum`` above the ``maximum``, a
required key a closed object does not declare: every call that passes the parameter fails
``valid_arguments``, whatever the model does, so the fault is the server's and is told
here, once, rather than as a failing call in every case. Only a schema's own keywords are
read (a branch of ``anyOf`` may still hold); pure functions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, TypeGuard

from pytest_toolselect.exchange.schema_paths import deref

from .findings import ERROR, WARNING, Finding

RULE = "unsatisfiable-schema"
_TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")
#: (lower, upper) bounds that leave no value when the lower one is above the upper one
_BOUNDS = (("minimum", "maximum"), ("minLength", "maxLength"), ("minItems", "maxItems"),
           ("minProperties", "maxProperties"), ("minContains", "maxContains"))
#: parameters walked in one tool before the rest is left unread (a huge schema stays fast)
MAX_NODES = 2000


def json_type(value: Any) -> set[str]:
    """The JSON Schema types a JSON value has (an integral number is both)."""
    if value is None:
        return {"null"}
    if isinstance(value, bool):
        return {"boolean"}
    if isinstance(value, int):
        return {"integer", "number"}
    if isinstance(value, float):
        return {"integer", "number"} if value.is_integer() else {"number"}
    if isinstance(value, str):
        return {"string"}
    if isinstance(value, list):
        return {"array"}
    if isinstance(value, Mapping):
        return {"object"}
    return set()


def _number(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def why_unsatisfiable(node: Mapping[str, Any]) -> str | None:
    """Why no value satisfies this schema's own keywords, or None when one may."""
    kind = node.get("type")
    types = ({kind} if isinstance(kind, str) else
             {t for t in kind if isinstance(t, str)} if isinstance(kind, list) else None)
    if types is not None and not types:
        return "its type list is empty"
    listed: list[Any] | None = None
    if "const" in node:
        listed = [node["const"]]
    elif isinstance(node.get("enum"), list):
        listed = node["enum"]
        if not listed:
            return "its enum is empty"
    if listed is not None and types is not None:
        fitting = [v for v in listed if json_type(v) & types]
        if not fitting:
            word = "const" if "const" in node else "enum"
            shown = sorted({t for v in listed for t in json_type(v)} - {"integer"}
                           or {"integer"})
            return (f"its {word} holds only {' and '.join(shown)} values, and its type is "
                    f"{' or '.join(sorted(types))}")
    for low, high in _BOUNDS:
        a, b = node.get(low), node.get(high)
        if _number(a) and _number(b) and a > b:
            return f"its {low} {a} is above its {high} {b}"
    lo = node.get("exclusiveMinimum", node.get("minimum"))
    hi = node.get("exclusiveMaximum", node.get("maximum"))
    if (_number(lo) and _number(hi) and ("exclusiveMinimum" in node or "exclusiveMaximum" in node)
            and lo >= hi):
        return f"no number lies between its bounds {lo} and {hi}"
    props = node.get("properties")
    if node.get("additionalProperties") is False and not node.get("patternProperties"):
        declared = set(props) if isinstance(props, Mapping) else set()
        missing = [r for r in node.get("required") or () if isinstance(r, str)
                   and r not in declared]
        if missing:
            return (f"it requires {', '.join(repr(m) for m in missing)}, which it does not "
                    "declare while allowing no other keys")
    return None


def _nodes(schema: Any, root: Any, path: str, required: bool, seen: list[int]
           ) -> Iterator[tuple[str, Mapping[str, Any], bool]]:
    """(dotted path, schema, required all the way down) of the parameters, items included."""
    node = deref(schema, root)
    if not isinstance(node, Mapping) or len(seen) >= MAX_NODES or id(node) in seen:
        return
    seen.append(id(node))
    yield path, node, required
    props = node.get("properties")
    needed = {r for r in node.get("required") or () if isinstance(r, str)}
    if isinstance(props, Mapping):
        for name, sub in props.items():
            yield from _nodes(sub, root, f"{path}.{name}" if path else str(name),
                              required and name in needed, seen)
    items = node.get("items")
    if isinstance(items, Mapping):
        yield from _nodes(items, root, f"{path}[]" if path else "[]",
                          required and (node.get("minItems") or 0) > 0, seen)
    seen.pop()


def unsatisfiable(server: str, tool_name: str, schema: Any) -> list[Finding]:
    """One finding per parameter of the tool no value satisfies: an error where a call must
    pass it (every call fails), a warning where a call may leave it out."""
    found = []
    for path, node, required in _nodes(schema, schema, "", True, []):
        why = why_unsatisfiable(node)
        if why is None:
            continue
        where = f"parameter {path!r}" if path else "its input schema"
        found.append(Finding(
            RULE, ERROR if required else WARNING, (server,), (tool_name,),
            f"{tool_name}: no value satisfies {where}: {why}"
            + ("; every call fails valid_arguments" if required
               else "; a call can only leave it out"),
            "fix the schema in the server: a model cannot pass what it allows", subject=path))
    return found
