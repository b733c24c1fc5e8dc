"""Checks on a server's tool list: unique names, and every input schema a valid JSON Schema."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.messages.errors import ServerError

from .failures import _describe

if TYPE_CHECKING:
    from pytest_toolselect.inputs.config import ServerSpec


def _check_unique(tools: Sequence[Tool], server: str) -> None:
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise ServerError(
                f"server '{server}' lists the tool {tool.name!r} twice",
                fix="tool names must be unique within a server",
            )
        seen.add(tool.name)


def _check_schemas(tools: Sequence[Tool], spec: ServerSpec, file: Path | None = None) -> None:
    """Every input schema must be a valid JSON Schema: a model API refuses the whole request
    over one bad schema, and an offline model would not notice it at all."""
    for tool in tools:
        problem = schema_problem(tool.input_schema)
        if problem:
            raise ServerError(
                f"{_describe(spec)}: the input schema of tool {tool.name!r} is not valid JSON Schema:"
                f" {problem}",
                file=file,
                fix=f"fix the tool's {'input schema in the file' if file else 'inputSchema in the server'}:"
                " models receive it as it is",
            )


# Keywords whose value every JSON Schema draft since 4 types the same way. Checking just
# these catches the mistakes that make a model API refuse a request ({"type": 12},
# "required": "id", a property that is not a schema) in microseconds per tool, where a
# metaschema validation with jsonschema takes over a millisecond (seconds at 5,000 tools).
_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_TYPE_LIST = ", ".join(sorted(_SIMPLE_TYPES))
_SCHEMA_KEYS = frozenset({
    "additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then",
    "else", "unevaluatedItems", "unevaluatedProperties",
})
_SCHEMA_MAP_KEYS = frozenset({"properties", "patternProperties", "definitions", "$defs", "dependentSchemas"})
_SCHEMA_LIST_KEYS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_COUNT_KEYS = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"})
_NUMBER_KEYS = frozenset({"minimum", "maximum", "multipleOf"})
_STRING_KEYS = frozenset({"title", "description", "pattern", "format", "$ref", "$id", "$schema"})


def schema_problem(schema: Any, path: str = "") -> str | None:
    """What makes ``schema`` an invalid JSON Schema, as 'at <path>: <problem>', or None.

    A structural check of the keywords above, recursively; other keywords pass unchecked.
    """
    here = f"at {path}: " if path else ""
    if isinstance(schema, bool):
        return None
    if not isinstance(schema, Mapping):
        return f"{here}a schema must be an object or a boolean, got {_shown(schema)}"

    def sub(key: str) -> str:
        return f"{path}.{key}" if path else key

    for key, value in schema.items():
        problem: str | None = None
        if key == "type":
            types_ = value if isinstance(value, list) and value else [value]
            bad = [t for t in types_ if not isinstance(t, str) or t not in _SIMPLE_TYPES]
            if bad:
                problem = f"{_shown(bad[0])} is not a JSON Schema type (one of {_TYPE_LIST})"
        elif key == "required":
            # (a boolean here is draft 3, which MCP does not speak)
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                problem = f"must be a list of property names, got {_shown(value)}"
        elif key == "enum":
            if not isinstance(value, list):
                problem = f"must be a list, got {_shown(value)}"
        elif key in _COUNT_KEYS:
            # 5.0 is an integer to JSON Schema (draft 6 on): a float-minded writer may send it
            whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
            if isinstance(value, bool) or not whole or value < 0:
                problem = f"must be a non-negative integer, got {_shown(value)}"
        elif key in _NUMBER_KEYS:
            if isinstance(value, bool) or not isinstance(value, int | float):
                problem = f"must be a number, got {_shown(value)}"
        elif key in _STRING_KEYS:
            if not isinstance(value, str):
                problem = f"must be a string, got {_shown(value)}"
        elif key in _SCHEMA_KEYS or (key == "items" and not isinstance(value, list)):
            found = schema_problem(value, sub(key))
            if found:
                return found
        elif key in _SCHEMA_MAP_KEYS:
            if not isinstance(value, Mapping):
                problem = f"must map names to schemas, got {_shown(value)}"
            else:
                for name, inner in value.items():
                    found = schema_problem(inner, f"{sub(key)}.{name}")
                    if found:
                        return found
        elif key in _SCHEMA_LIST_KEYS or key == "items":  # items as a list: drafts before 2020-12
            if not isinstance(value, list) or (key != "prefixItems" and key != "items" and not value):
                problem = f"must be a non-empty list of schemas, got {_shown(value)}"
            else:
                for i, inner in enumerate(value):
                    found = schema_problem(inner, f"{sub(key)}[{i}]")
                    if found:
                        return found
        if problem:
            return f"at {sub(key)}: {problem}"
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value, default=repr) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
