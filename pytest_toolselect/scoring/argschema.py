"""``valid_arguments``: each call of the first turn against its tool's input schema.

The schema is read as the JSON Schema draft it declares in ``$schema`` (2020-12, MCP's
default, when it declares none or one jsonschema does not know) and validated with
jsonschema; a failure names the call, the JSON path and the keyword that failed. A schema
the metaschema refuses (``type: any``, a ``pattern`` that is no regex) is validated without
the keywords it refuses, and the check says which, once per tool: what can be validated
is. Pure: a schema's validator is built once per process, keyed by the schema's JSON text.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_toolselect.exchange.clip import clip_middle, clip_text
from pytest_toolselect.exchange.tool import Tool, ToolCall

#: errors named per call; the rest are counted (a list of 10,000 bad items stays readable)
MAX_ERRORS = 5
#: characters of one error's message (jsonschema quotes the whole value it refused)
MAX_MESSAGE = 160

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def json_path(path: Sequence[str | int]) -> str:
    """A place in the arguments as a JSONPath: ``$``, ``$.items[0].sku``, ``$["a b"]``."""
    out = "$"
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _NAME.fullmatch(step):
            out += f".{step}"
        else:
            out += f"[{json.dumps(clip_text(step, 40), ensure_ascii=False)}]"
    return out


#: keywords whose value maps names to schemas, or lists schemas: a refused schema there is
#: replaced by one that accepts anything, so its siblings are still read
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems", "items"})
#: refused keywords dropped from one schema before it is given up on
MAX_REPAIRS = 25


def _repaired(schema: Any, cls: Any) -> tuple[Any, list[str]] | None:
    """The schema less each keyword the metaschema refuses (a refused subschema accepts
    anything), with a note per drop; None when the schema itself is refused (not an object)."""
    from jsonschema.exceptions import best_match

    work = copy.deepcopy(schema)
    meta = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
    notes: list[str] = []
    for _ in range(MAX_REPAIRS):
        error = best_match(meta.iter_errors(work))
        if error is None:
            return work, notes
        path = list(error.absolute_path)
        if not path:
            return None
        parent: Any = work
        for step in path[:-1]:
            parent = parent[step]
        above = path[-2] if len(path) > 1 else None
        if above in _SCHEMA_MAPS or (isinstance(parent, list) and above in _SCHEMA_LISTS):
            parent[path[-1]] = {}
        else:  # the keyword, or the item of a keyword's list ("required": ["a", 5])
            del parent[path[-1]]
        notes.append(f"{clip_middle(error.message, MAX_MESSAGE)} at {json_path(path)} "
                     f"({error.validator})")
    return None


@functools.lru_cache(maxsize=2048)
def _validator(schema_json: str) -> tuple[Any, str]:
    """The validator of a schema (its JSON text), or None; and what was left out of the
    schema to build it, or why there is none ("" when the schema is valid as it is)."""
    import jsonschema
    from jsonschema.exceptions import SchemaError
    from jsonschema_specifications import REGISTRY

    schema = json.loads(schema_json)
    try:
        # no $schema, or one jsonschema does not know: MCP's default dialect
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    except Exception as e:  # a $schema that is not a string: no URI to look up
        return None, f"its $schema cannot be read ({e})"
    note = ""
    try:
        cls.check_schema(schema)
    except SchemaError as e:
        found = _repaired(schema, cls)
        if found is None:
            where = json_path(list(e.absolute_path))
            return None, f"{clip_middle(e.message, MAX_MESSAGE)} at {where} ({e.validator})"
        schema, notes = found
        note = f"{'; '.join(notes)}; validated without {'it' if len(notes) == 1 else 'them'}"
    # the metaschemas only: a $ref to a URL is never fetched (tests and runs stay offline)
    return cls(schema, registry=REGISTRY), note


def validator_for(schema: Mapping[str, Any]) -> tuple[Any, str]:
    """The schema's validator (None: there is none) and a note: what of the schema is not
    valid JSON Schema and was left out, or why there is no validator."""
    try:
        text = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as e:
        return None, f"it is not JSON ({e})"
    return _validator(text)


def _order(path: Any) -> list[tuple[int, int, str]]:
    """A path's sort key: indexes as numbers (10 after 9), names as text."""
    return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in path]


#: branches of an anyOf / oneOf named in its error
MAX_BRANCHES = 3


def _describe(error: Any) -> str:
    text = f"{json_path(list(error.absolute_path))}: {clip_middle(error.message, MAX_MESSAGE)} " \
           f"({error.validator})"
    # anyOf / oneOf: why each branch did not hold (its first error), in branch order
    first: dict[Any, Any] = {}
    for sub in sorted(error.context or (), key=lambda e: _order(e.relative_schema_path)):
        if sub.relative_schema_path:
            first.setdefault(sub.relative_schema_path[0], sub)
    branches = [f"branch {i + 1 if isinstance(i, int) else i}: "
                f"{json_path(list(sub.absolute_path))}: {clip_middle(sub.message, MAX_MESSAGE)} "
                f"({sub.validator})" for i, sub in list(first.items())[:MAX_BRANCHES]]
    if len(first) > MAX_BRANCHES:
        branches.append(f"and {len(first) - MAX_BRANCHES} more branches")
    return text + (f" [{'; '.join(branches)}]" if branches else "")


def call_problems(schema: Mapping[str, Any], arguments: Any) -> list[str] | str:
    """Every error of ``arguments`` against ``schema``, by path (``[]``: valid), or a string
    saying why the schema cannot be used."""
    validator, why = validator_for(schema)
    if validator is None:
        return why
    try:
        errors = list(validator.iter_errors(arguments))
    except Exception as e:  # an unresolvable $ref, a pattern Python cannot compile
        ref = getattr(e, "ref", None)
        if isinstance(ref, str):
            ref = "#" + ref if ref.startswith("/") else ref  # a JSON pointer into the schema
            return f"$ref {clip_text(ref, 80)!r} resolves to nothing (a URL is never fetched)"
        said = (str(e).splitlines() or [type(e).__name__])[0]
        return f"validating with it fails: {clip_middle(said, MAX_MESSAGE)}"
    errors.sort(key=lambda e: (_order(e.absolute_path), str(e.validator)))
    shown = [_describe(e) for e in errors[:MAX_ERRORS]]
    if len(errors) > MAX_ERRORS:
        shown.append(f"and {len(errors) - MAX_ERRORS:,} more")
    return shown


def check_valid_arguments(calls: Sequence[ToolCall], tools: Sequence[Tool]
                          ) -> tuple[bool, str] | None:
    """(passed, detail) over the calls to offered tools; None when there is none (a call to
    a tool not offered is tool_choice's to report)."""
    offered = {t.name: t for t in tools}
    checked = [(i, c) for i, c in enumerate(calls) if c.name in offered]
    if not checked:
        return None
    failures: list[str] = []
    valid: list[str] = []
    unchecked: list[str] = []
    # a schema repaired to be read is said once per tool, after the verdicts
    repaired: dict[str, str] = {}
    for i, call in checked:
        at = f"{call.name} (call {i + 1})"
        if call.raw_arguments is not None:
            failures.append(f"{at}: the arguments are not a JSON object")
            continue
        schema = offered[call.name].input_schema
        found = call_problems(schema, call.arguments)
        if isinstance(found, str):
            unchecked.append(f"{at}: its input schema is not valid JSON Schema: {found}")
            continue
        left_out = validator_for(schema)[1]
        if left_out:
            repaired.setdefault(call.name, f"{call.name}'s input schema is not valid JSON "
                                           f"Schema: {left_out}")
        (failures if found else valid).append(f"{at}: {'; '.join(found)}" if found else at)
    notes = [f"not checked: {'; '.join(unchecked)}"] if unchecked else []
    notes += repaired.values()
    if failures:
        return False, "; ".join([*failures, *notes])
    if valid:
        return True, "; ".join([f"arguments valid against the input schema: "
                                f"{', '.join(valid)}", *notes])
    return True, "; ".join(notes)
