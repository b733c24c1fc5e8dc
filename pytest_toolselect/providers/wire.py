"""Tools on the wire: names a provider accepts, schemas it takes, arguments and usage it returns.

Shared by the HTTP providers, so both send and read the same way.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

from pytest_toolselect.exchange.clip import clip_text
from pytest_toolselect.exchange.replies import call_faults
from pytest_toolselect.exchange.tool import Tool, ToolCall

#: Anthropic's and OpenAI's rule for tool names
SAFE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: Top-level schema keys dropped before sending. `$schema` is metadata a model never
#: needs, and Anthropic has answered a draft-07 `$schema` with HTTP 500
#: (anthropics/anthropic-sdk-python#1001); MCP servers built on zod send exactly that.
DROP_SCHEMA_KEYS = ("$schema",)


class NameMap:
    """Real tool names <-> names a provider accepts, unique within one request.

    A name that already fits is kept as-is (so the request reads like the real
    tool list); any other is sanitised, and a short hash of the real name is
    appended when sanitising or truncating would make it collide.
    """

    def __init__(self, names: Iterable[str]) -> None:
        names = list(names)
        self.to_wire: dict[str, str] = {}
        taken = {n for n in names if SAFE_NAME.match(n)}
        for name in names:
            if SAFE_NAME.match(name):
                self.to_wire[name] = name
                continue
            base = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "tool"
            wire = base
            if wire in taken:
                digest = hashlib.sha1(name.encode()).hexdigest()[:8]
                wire = f"{base[:55]}_{digest}"
            n = 2
            while wire in taken:  # a hash collision: vanishingly rare, but stay unique
                wire = f"{base[:52]}_{digest}_{n}"
                n += 1
            taken.add(wire)
            self.to_wire[name] = wire
        self.to_real = {w: r for r, w in self.to_wire.items()}

    def wire(self, name: str) -> str:
        return self.to_wire.get(name, name)

    def real(self, wire: str) -> str:
        # a name the model made up maps to itself, bounded: the report shows what it called
        real = self.to_real.get(wire)
        return real if real is not None else clip_text(wire)


def clean_schema(tool: Tool) -> tuple[dict[str, Any], list[str]]:
    """The tool's input schema as sent, and the keys dropped ("<tool>/<key>")."""
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    dropped = [f"{tool.name}/{k}" for k in DROP_SCHEMA_KEYS if k in schema]
    out = {k: v for k, v in schema.items() if k not in DROP_SCHEMA_KEYS}
    if not out:
        # both APIs require an object schema; a tools file may give none for a no-argument tool
        out = {"type": "object", "properties": {}}
    return out, dropped


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """(arguments, raw_arguments): a JSON object string or dict is parsed; anything else kept raw."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None:
        return {}, None
    if isinstance(raw, str):
        if not raw.strip():
            # some servers send "" for a call without arguments: that is {}, not garbage
            return {}, None
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nested past json's depth limit
            return {}, raw
        return (value, None) if isinstance(value, dict) else ({}, raw)
    return {}, json.dumps(raw, default=str)


def read_call(index: int, name: Any, arguments: Any, names: NameMap) -> tuple[ToolCall, list[str]]:
    """The reply's tool call number `index` (1-based) under its real name, and what is wrong
    with it as the wire sent it (a name that is null, empty or odd, arguments not an object):
    checked before the name is mapped or clipped, so nothing odd hides past the clip."""
    args, raw = parse_arguments(arguments)
    faults = call_faults(index, name, raw)
    real = names.real(name) if isinstance(name, str) else ""
    return ToolCall(real, args, raw_arguments=raw), faults


def wire_tools(
    tools: Iterable[Tool], schema_key: str
) -> tuple[list[dict[str, Any]], NameMap, tuple[str, ...]]:
    """Each tool as {name, description?, <schema_key>: schema} under its wire name, the
    tool-name map, and the schema keys dropped ("<tool>/<key>")."""
    tools = list(tools)
    names = NameMap(t.name for t in tools)
    specs: list[dict[str, Any]] = []
    dropped: list[str] = []
    for tool in tools:
        schema, gone = clean_schema(tool)
        dropped += gone
        spec: dict[str, Any] = {"name": names.wire(tool.name)}
        if tool.description:
            spec["description"] = tool.description
        spec[schema_key] = schema
        specs.append(spec)
    return specs, names, tuple(dropped)


def make_usage(input_tokens: int, output_tokens: int, cache_read: int, cache_write: int) -> dict[str, int]:
    return {"input_tokens": max(0, input_tokens), "output_tokens": max(0, output_tokens),
            "cache_read_tokens": max(0, cache_read), "cache_write_tokens": max(0, cache_write)}


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
