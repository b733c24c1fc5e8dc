"""JSON walked iteratively with the line of every path; strings decode through ``json``'s own
scanner, so values are exactly what ``json.loads`` gives, and duplicate keys and depth are checked.

Why a walker of its own: ``json.loads`` with ``object_pairs_hook`` sees duplicate keys but not
where anything starts (its C scanner reports no positions), and it recurses, so depth is
capped only by the recursion limit. PyYAML's parser reads JSON differently: an escaped
surrogate pair stays two lone surrogates, most raw C1 characters (U+0080 to U+009F) and a tab after a
colon are refused, ``1e5`` is a string and ``NaN`` is not a number. Only the structure is
walked here; strings go through ``json.decoder.scanstring`` and numbers through ``int`` and
``float`` as ``json`` does.
"""

from __future__ import annotations

import bisect
import json.decoder
import math
import re
from collections.abc import Callable
from json.decoder import JSONDecodeError
from typing import Any

from pytest_toolselect.messages.errors import ToolselectError

from .sourced import MAX_DEPTH, PathT, Sourced, file_error, shown_key, too_deep

# the string scanner json.loads uses; typeshed leaves this public name of json.decoder out
_scanstring: Callable[[str, int, bool], tuple[str, int]] = (
    json.decoder.scanstring)  # type: ignore[attr-defined]

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS: tuple[tuple[str, Any], ...] = (
    ("true", True), ("false", False), ("null", None),
    # the json module accepts these too; so do we, to read the same files it reads
    ("NaN", math.nan), ("Infinity", math.inf), ("-Infinity", -math.inf),
)


def _json_msg(msg: str) -> str:
    # scanstring's messages read "Invalid control character at"; we add the column
    msg = msg[:-3] if msg.endswith(" at") else msg
    return msg[:1].lower() + msg[1:] + " in a string"


def parse_json(text: str, file: str) -> Sourced:
    """An iterative JSON parser that records lines; values decode exactly as ``json`` does."""
    newlines = [i for i, c in enumerate(text) if c == "\n"]

    def line_at(pos: int) -> int:
        return bisect.bisect_right(newlines, pos - 1) + 1

    def fail(pos: int, message: str) -> ToolselectError:
        col = pos - (newlines[line_at(pos) - 2] + 1 if line_at(pos) > 1 else 0) + 1
        return file_error(
            file, line_at(pos), f"invalid JSON: {message} at column {col}",
            "check for a missing comma, quote or bracket, or a trailing comma, here "
            "or on the line before",
        )

    lines: dict[PathT, int] = {}
    # frames: [container, path, state]; states: "first" (just opened), "value", "next"
    stack: list[list[Any]] = []
    root: Any = None
    have_root = False
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    if pos == len(text):
        return Sourced(file=file, data=None, lines={})

    def read_key(pos: int, frame: list[Any]) -> int:
        if pos >= len(text) or text[pos] != '"':
            raise fail(pos, "expected a key in double quotes")
        try:
            key, end = _scanstring(text, pos + 1, True)
        except JSONDecodeError as exc:
            raise fail(exc.pos, _json_msg(exc.msg)) from None
        container, path = frame[0], frame[1]
        if key in container:
            raise file_error(
                file, line_at(pos),
                f"duplicate key {shown_key(key)!r} (first on line {lines.get((*path, key))})",
                "keep one of them", place=(*path, key),
            )
        lines[(*path, key)] = line_at(pos)
        end = _WS.match(text, end).end()  # type: ignore[union-attr]
        if end >= len(text) or text[end] != ":":
            raise fail(end, "expected ':' after the key")
        frame[3] = key
        frame[2] = "value"
        return _WS.match(text, end + 1).end()  # type: ignore[union-attr]

    while True:
        if have_root and not stack:
            break
        if stack:
            frame = stack[-1]
            container, path, state = frame[0], frame[1], frame[2]
            is_obj = isinstance(container, dict)
            close = "}" if is_obj else "]"
            if state in ("first", "next"):
                if pos < len(text) and text[pos] == close:
                    stack.pop()
                    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                    if stack:
                        stack[-1][2] = "next"
                    continue
                if state == "next":
                    if pos >= len(text) or text[pos] != ",":
                        raise fail(pos, f"expected ',' or '{close}'")
                    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if is_obj:
                    pos = read_key(pos, frame)
                    continue
                frame[2] = "value"
            # a value, inside frame
            if is_obj:
                vpath: PathT = (*path, frame[3])
            else:
                vpath = (*path, len(container))
                lines[vpath] = line_at(pos)
        else:
            vpath = ()
            lines[()] = line_at(pos)

        if pos >= len(text):
            raise fail(pos, "unexpected end of file")
        c = text[pos]
        value: Any
        opened = False
        if c in "{[":
            if len(stack) >= MAX_DEPTH:
                raise too_deep(file, line_at(pos))
            value = {} if c == "{" else []
            opened = True
            pos += 1
        elif c == '"':
            try:
                value, pos = _scanstring(text, pos + 1, True)
            except JSONDecodeError as exc:
                raise fail(exc.pos, _json_msg(exc.msg)) from None
        else:
            m = _NUMBER.match(text, pos)
            if m:
                integer, frac, exp = m.groups()
                value = float(integer + (frac or "") + (exp or "")) if frac or exp else int(integer)
                pos = m.end()
            else:
                for word, lit in _LITERALS:
                    if text.startswith(word, pos):
                        value = lit
                        pos += len(word)
                        break
                else:
                    raise fail(pos, f"unexpected character {c!r}")
        # place the value
        if stack:
            frame = stack[-1]
            if isinstance(frame[0], dict):
                frame[0][frame[3]] = value
            else:
                frame[0].append(value)
            frame[2] = "next"
        else:
            root, have_root = value, True
        if opened:
            stack.append([value, vpath, "first", None])
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]

    if pos != len(text):
        raise fail(pos, "extra text after the end of the JSON document")
    return Sourced(file=file, data=root, lines=lines)
