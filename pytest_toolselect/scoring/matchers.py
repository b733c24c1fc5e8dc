"""Argument matchers (``expect_args``) and the JSON-schema walking they share with
the identifier rules. Pure functions: no I/O, nothing but the standard library."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from pytest_toolselect.exchange.schema_paths import INDEX, alternatives, deref

#: the operations a matcher may use, exactly one per matcher
OPS = ("equals", "one_of", "contains", "matches", "absent", "equals_text")
#: keys that change how the operation applies: ``optional`` passes a call that leaves the
#: argument out (if given, it must match); ``by_value`` compares numbers and numeric strings
#: by their value (``"100"`` as ``100``), which ``equals`` and ``one_of`` never do unasked
MODIFIERS = ("optional", "by_value")
#: the path that matches against every argument value instead of one named path
ANY_PATH = "any"

# a numeric string as JSON would write it; rejects Python-only spellings ("1_000", "nan")
_NUMERIC = re.compile(r"\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*")
_INTEGER = re.compile(r"\s*[+-]?\d+\s*")

Segment = str | int


# --- validation ---------------------------------------------------------------------


def validate_matcher(m: Mapping[str, Any]) -> str | None:
    """Why the matcher is malformed, or None when it is well formed."""
    if not isinstance(m, Mapping):
        return f"a matcher must be a mapping like {{path: ..., equals: ...}}, got {_show(m)}"
    path = m.get("path")
    if "path" not in m:
        return "matcher has no 'path'"
    if not isinstance(path, str) or not path.strip():
        return f"matcher 'path' must be a non-empty string, got {_show(path)}"
    unknown = [k for k in m if k != "path" and k not in OPS and k not in MODIFIERS]
    if unknown:
        return (f"unknown matcher op {', '.join(repr(k) for k in unknown)} "
                f"(expected one of: {', '.join(OPS)}, or {' or '.join(MODIFIERS)} beside one)")
    ops = [k for k in OPS if k in m]
    if not ops:
        return f"matcher for {path!r} has no op (one of: {', '.join(OPS)})"
    if len(ops) > 1:
        return f"matcher for {path!r} has {len(ops)} ops ({', '.join(ops)}); use one per matcher"
    op = ops[0]
    value = m[op]
    for key in MODIFIERS:
        if key in m and not isinstance(m[key], bool):
            return f"matcher for {path!r}: {key!r} must be true or false, got {_show(m[key])}"
    if m.get("optional") and (op == "absent" or path == ANY_PATH):
        return (f"matcher for {path!r}: 'optional' cannot go with "
                f"{'absent' if op == 'absent' else 'path any'} (it names no single value to "
                "check when given)")
    if m.get("by_value") and op not in ("equals", "one_of"):
        return f"matcher for {path!r}: 'by_value' goes with equals or one_of, not {op!r}"
    if op == "absent":
        if not isinstance(value, bool):
            return f"matcher for {path!r}: 'absent' must be true or false, got {_show(value)}"
        if path == ANY_PATH:
            return "matcher with path 'any' cannot use 'absent' (it names no single path)"
    elif op == "one_of":
        if not isinstance(value, (list, tuple)):
            return f"matcher for {path!r}: 'one_of' must be a list, got {_show(value)}"
    elif op == "matches":
        if not isinstance(value, str):
            return f"matcher for {path!r}: 'matches' must be a regex string, got {_show(value)}"
        try:
            re.compile(value)
        except re.error as e:
            return f"matcher for {path!r}: invalid regex {value!r}: {e}"
    elif op == "contains" and (value is None or isinstance(value, (bool, list, dict))):
        return f"matcher for {path!r}: 'contains' must be a string, got {_show(value)}"
    elif op == "equals_text" and not isinstance(value, str):
        return f"matcher for {path!r}: 'equals_text' must be a string, got {_show(value)}"
    return None


# --- evaluation ---------------------------------------------------------------------


def evaluate(m: Mapping[str, Any], arguments: Mapping[str, Any],
             schema: Mapping[str, Any] | None = None) -> tuple[bool, str]:
    """Whether the arguments satisfy the matcher, and a sentence saying what was compared.

    ``schema`` is the tool's input schema, kept for callers that pass it; values compare
    as JSON values (``"100"`` is not ``100``) unless the matcher says ``by_value``. A
    malformed matcher never passes.
    """
    error = validate_matcher(m)
    if error is not None:
        return False, error
    path: str = m["path"]
    op = next(k for k in OPS if k in m)
    expected = m[op]
    want = _describe(op, expected)
    numeric = m.get("by_value") is True

    if path == ANY_PATH:
        leaves = list(iter_leaves(arguments))
        for segments, value in leaves:
            if _test(op, expected, value, numeric):
                return True, f"{dotted(segments)} {want} (via 'any')"
        got = ", ".join(f"{dotted(s)}={_show(v)}" for s, v in leaves) or "no argument values"
        return False, f"any: expected some argument value to {want}, got {got}"

    found, value = resolve(arguments, path.split("."))
    if op == "absent":
        if expected:
            return ((True, f"{path} is absent") if not found
                    else (False, f"{path}: expected absent, got {_show(value)}"))
        return ((True, f"{path} is present") if found
                else (False, f"{path}: expected present, but the path is missing"))
    if not found:
        if m.get("optional") is True:
            return True, f"{path} is left out, which this matcher allows"
        return False, f"{path}: expected to {want}, but the path is missing"
    if _test(op, expected, value, numeric):
        return True, f"{path} {want}"
    return False, f"{path}: expected to {want}, got {_show(value)}"


def _describe(op: str, expected: Any) -> str:
    if op == "one_of":
        return f"be one of {_show(list(expected))}"
    if op == "contains":
        return f"contain {_show(expected)}"
    if op == "matches":
        return f"match /{expected}/"
    if op == "equals_text":
        return f"equal {_show(expected)} as text (case and surrounding space aside)"
    return f"equal {_show(expected)}"


def _test(op: str, expected: Any, actual: Any, numeric: bool) -> bool:
    if op == "equals":
        return values_equal(expected, actual, numeric)
    if op == "one_of":
        return any(values_equal(e, actual, numeric) for e in expected)
    if op == "equals_text":
        return isinstance(actual, str) and text_equal(expected, actual)
    # contains / matches look at each element of a list, so one good item is enough
    items = actual if isinstance(actual, list) else [actual]
    if op == "contains":
        needle = string_form(expected).casefold()
        return any(needle in string_form(i).casefold() for i in items)
    if op == "matches":
        rx = re.compile(expected)  # re caches compiled patterns
        return any(rx.search(string_form(i)) is not None for i in items)
    return False


def values_equal(expected: Any, actual: Any, numeric: bool = False) -> bool:
    """JSON equality; with ``numeric``, numbers and numeric strings compare by value."""
    if numeric:
        a, b = as_number(expected), as_number(actual)
        if a is not None and b is not None:
            return a == b
    return _json_equal(expected, actual)


def text_equal(expected: str, actual: str) -> bool:
    """Equal but for case and the whitespace around the text: every other character
    (digits, signs, decimal points, punctuation, a zero-width character) must be there."""
    return expected.strip().casefold() == actual.strip().casefold()


def _json_equal(a: Any, b: Any) -> bool:
    # JSON types, not Python's: True is not 1, "1" is not 1, but 1 and 1.0 are one number
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def as_number(v: Any) -> int | float | None:
    """The numeric value of a JSON number or numeric string, else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str) and _NUMERIC.fullmatch(v):
        # ints stay ints so long identifiers-as-numbers compare exactly
        return int(v) if _INTEGER.fullmatch(v) else float(v)
    return None


def string_form(v: Any) -> str:
    """The text a value shows to ``contains`` / ``matches``: strings as they are,
    everything else as JSON writes it."""
    if isinstance(v, str):
        return v
    try:
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(v)


def _show(v: Any) -> str:
    try:
        text = json.dumps(v, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(v)
    return text if len(text) <= 120 else text[:117] + "..."


# --- argument paths -----------------------------------------------------------------


def dotted(segments: Sequence[Segment]) -> str:
    return ".".join(str(s) for s in segments)


def resolve(arguments: Any, segments: Sequence[str]) -> tuple[bool, Any]:
    """(found, value) at a dotted path split into segments; list indexes are digits."""
    if not segments:
        return True, arguments
    if isinstance(arguments, Mapping):
        # longest key first, so a key that itself holds a dot stays reachable
        for k in range(len(segments), 0, -1):
            key = ".".join(segments[:k])
            if key in arguments:
                found, value = resolve(arguments[key], segments[k:])
                if found:
                    return True, value
        return False, None
    if isinstance(arguments, (list, tuple)) and INDEX.fullmatch(segments[0]):
        i = int(segments[0])
        if i < len(arguments):
            return resolve(arguments[i], segments[1:])
    return False, None


def iter_leaves(value: Any, prefix: tuple[Segment, ...] = ()
                ) -> Iterator[tuple[tuple[Segment, ...], Any]]:
    """Every scalar in the arguments with its path (keys as str, list indexes as int)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from iter_leaves(v, (*prefix, str(k)))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from iter_leaves(v, (*prefix, i))
    else:
        yield prefix, value


# --- JSON schema --------------------------------------------------------------------


def _child(node: Any, seg: Segment, root: Any) -> Any:
    """The schema of ``seg`` inside ``node``: the first alternative that declares it."""
    for alt in alternatives(node, root):
        found = _step(alt, seg)
        if found is not None:
            return found
    return None


def _step(node: Mapping[str, Any], seg: Segment) -> Any:
    if isinstance(seg, str):
        props = node.get("properties")
        if isinstance(props, Mapping) and seg in props:
            return props[seg]
    index = seg if isinstance(seg, int) else (int(seg) if INDEX.fullmatch(seg) else None)
    if index is not None:
        prefix_items = node.get("prefixItems")
        if isinstance(prefix_items, list) and index < len(prefix_items):
            return prefix_items[index]
        items = node.get("items")
        if isinstance(items, list):
            return items[index] if index < len(items) else None
        if isinstance(items, Mapping):
            return items
    elif isinstance(node.get("additionalProperties"), Mapping):
        return node["additionalProperties"]
    return None


def property_schema(schema: Mapping[str, Any] | None,
                    segments: Sequence[Segment]) -> Mapping[str, Any] | None:
    """The schema of the argument at ``segments`` in a tool's input schema, if declared."""
    if not schema:
        return None
    node: Any = schema
    for seg in segments:
        node = _child(node, seg, schema)
        if node is None:
            return None
    return deref(node, schema)


def schema_any(node: Any, root: Any, pred: Callable[[Mapping[str, Any]], bool]) -> bool:
    """Whether one of the node's alternatives (its $ref's target, the keywords beside it, its
    anyOf/oneOf/allOf branches) satisfies ``pred``."""
    return any(pred(alt) for alt in alternatives(node, root))
