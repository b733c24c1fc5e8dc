"""Bounded copies of what a model sent, for run records and what reports show.

A reply's arguments are scored in full. A run record is not the place for them
whole: it travels from xdist workers to the controller and is written out (the
terminal, JUnit XML, results files), and a 5 MB string or 10,000 keys a model or a
broken proxy sent must not become 5 MB in each. Long strings keep their head and
say how much was cut; big objects and lists keep their first entries and say how
many more there were.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from .tool import ToolCall

#: characters of a string kept (a long company name or address fits)
MAX_TEXT = 200
#: keys of an object, or items of a list, kept
MAX_ITEMS = 20
#: levels of nesting kept
MAX_DEPTH = 8
#: the key that stands for an object's keys left out
MORE = "…"


def clip_text(text: str, limit: int = MAX_TEXT) -> str:
    """`text`, or its first `limit` characters and how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit:,} chars)"


def clip_middle(text: str, limit: int) -> str:
    """`text`, or about `limit` characters of it from both ends: for an error message, whose
    cause is often at its end (a server's stderr) after a long command line."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} … ({len(text) - 2 * half:,} chars cut) … {text[-half:]}"


def clip_value(value: Any, depth: int = 0) -> Any:
    """A JSON value with long strings cut and big objects, lists and nesting trimmed."""
    if isinstance(value, str):
        return clip_text(value)
    if isinstance(value, (dict, list)) and depth >= MAX_DEPTH:
        kind = "object" if isinstance(value, dict) else "list"
        return f"… ({kind} nested deeper than {MAX_DEPTH} levels)"
    if isinstance(value, dict):
        out = {clip_text(str(k)): clip_value(v, depth + 1)
               for k, v in islice(value.items(), MAX_ITEMS)}
        if len(value) > MAX_ITEMS:
            out[MORE] = f"+{len(value) - MAX_ITEMS:,} more keys"
        return out
    if isinstance(value, list):
        items = [clip_value(v, depth + 1) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"… +{len(value) - MAX_ITEMS:,} more items")
        return items
    return value


def clip_call(call: ToolCall) -> ToolCall:
    """A tool call as a record holds it: its name, its arguments and raw text clipped."""
    raw = call.raw_arguments
    return ToolCall(clip_text(call.name), clip_value(call.arguments),
                    clip_text(raw) if raw is not None else None)

