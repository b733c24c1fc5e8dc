"""YAML from its event stream (never recursively): lines, no aliases, no duplicate keys, depth cap.

Plain scalars are resolved with the YAML 1.2 core schema (see ``sourcemap``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from pytest_toolselect.messages.errors import ToolselectError

from .sourced import MAX_DEPTH, PathT, Sourced, file_error, shown_key, too_deep

_Y_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_Y_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_Y_ZERO_LED = re.compile(r"^[-+]?0[0-9]")
_Y_INT10 = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_Y_INT8 = re.compile(r"^0o[0-7]+$")
_Y_INT16 = re.compile(r"^0x[0-9a-fA-F]+$")
_Y_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_Y_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$")
_Y_NAN = re.compile(r"^\.(?:nan|NaN|NAN)$")

_TAG = "tag:yaml.org,2002:"


def _resolve_plain(value: str) -> Any:
    """YAML 1.2 core schema for an untagged plain scalar (leading-zero integers stay text)."""
    if _Y_NULL.match(value):
        return None
    if _Y_BOOL.match(value):
        return value.lower() == "true"
    if _Y_ZERO_LED.match(value):
        return value  # 04138203: an identifier, not the number 4138203
    if _Y_INT10.match(value):
        return int(value)
    if _Y_INT8.match(value):
        return int(value[2:], 8)
    if _Y_INT16.match(value):
        return int(value[2:], 16)
    if _Y_FLOAT.match(value) and any(c.isdigit() for c in value):
        return float(value)
    if _Y_INF.match(value):
        return -math.inf if value.startswith("-") else math.inf
    if _Y_NAN.match(value):
        return math.nan
    return value


def _resolve_tagged(value: str, tag: str, file: str, line: int) -> Any:
    kind = tag[len(_TAG):] if tag.startswith(_TAG) else None
    if kind == "str":
        return value
    if kind in ("int", "float", "bool", "null"):
        resolved = _resolve_plain(value)
        ok: Callable[[Any], bool] = {
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "bool": lambda v: isinstance(v, bool),
            "null": lambda v: v is None,
        }[kind]
        if ok(resolved):
            return float(resolved) if kind == "float" else resolved
        raise file_error(file, line, f"{value!r} is not a valid !!{kind}", "remove the tag or fix the value")
    raise _unsupported_tag(tag, file, line)


def _unsupported_tag(tag: str, file: str, line: int) -> ToolselectError:
    shown = "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag
    return file_error(
        file, line, f"YAML tag {shown} is not supported",
        "remove the tag; only plain strings, numbers, booleans, lists and mappings are read",
    )


class _Frame:
    __slots__ = ("container", "key", "key_line", "path")

    def __init__(self, container: dict[str, Any] | list[Any], path: PathT) -> None:
        self.container = container
        self.path = path
        self.key: str | None = None  # mapping frames: the key awaiting its value
        self.key_line = 0


def parse_yaml(text: str, file: str) -> Sourced:
    import yaml  # lazy: the plugin loads in every pytest run

    loader_cls = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    lines: dict[PathT, int] = {}
    stack: list[_Frame] = []
    root: Any = None
    have_root = False
    documents = 0

    def attach(value: Any, line: int) -> PathT:
        nonlocal root, have_root
        if not stack:
            root, have_root = value, True
            lines[()] = line
            return ()
        top = stack[-1]
        if isinstance(top.container, dict):
            assert top.key is not None
            path = (*top.path, top.key)
            top.container[top.key] = value
            top.key = None
            return path
        path = (*top.path, len(top.container))
        lines[path] = line
        top.container.append(value)
        return path

    def expecting_key() -> bool:
        return bool(stack) and isinstance(stack[-1].container, dict) and stack[-1].key is None

    try:
        for event in yaml.parse(text, Loader=loader_cls):
            # the parser marks every event it emits (the stubs allow None for hand-built ones)
            assert event.start_mark is not None
            line = event.start_mark.line + 1
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise file_error(
                        file, line, "more than one YAML document (a second '---')",
                        "keep one document per file",
                    )
            elif isinstance(event, yaml.AliasEvent):
                # refusing aliases outright is what makes an alias bomb impossible
                raise file_error(
                    file, line, f"YAML aliases (*{event.anchor}) are not supported",
                    "write the value out in full instead of using &anchor / *alias",
                )
            elif isinstance(event, yaml.ScalarEvent):
                if expecting_key():
                    top = stack[-1]
                    assert isinstance(top.container, dict)
                    key = event.value
                    if key in top.container:
                        first = lines.get((*top.path, key))
                        raise file_error(
                            file, line,
                            f"duplicate key {shown_key(key)!r}"
                            + (f" (first on line {first})" if first else ""),
                            "keep one of them", place=(*top.path, key),
                        )
                    top.key = key
                    top.key_line = line
                    lines[(*top.path, key)] = line
                    continue
                if event.tag not in (None, "!"):
                    value: Any = _resolve_tagged(event.value, event.tag, file, line)
                elif event.tag is None and event.implicit[0]:
                    value = _resolve_plain(event.value)
                else:
                    value = event.value
                attach(value, line)
            elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if expecting_key():
                    raise file_error(
                        file, line, "a list or mapping cannot be a key",
                        "use a plain string as the key",
                    )
                if event.tag not in (None, "!", _TAG + "map", _TAG + "seq"):
                    raise _unsupported_tag(event.tag, file, line)
                if len(stack) >= MAX_DEPTH:
                    raise too_deep(file, line)
                container: dict[str, Any] | list[Any] = (
                    {} if isinstance(event, yaml.MappingStartEvent) else []
                )
                path = attach(container, line)
                stack.append(_Frame(container, path))
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                stack.pop()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if "nesting depth" in (exc.problem or ""):
            # libyaml's own cap (about 1000 levels) fires before ours could be reached
            raise too_deep(file, mark.line + 1 if mark else None) from None
        if mark is not None and _char_at(text, mark.line, mark.column) == "\t":
            raise file_error(
                file, mark.line + 1,
                f"invalid YAML: a tab character at column {mark.column + 1}; YAML indents "
                "with spaces only",
                "replace the tab with spaces (set the editor to insert spaces for YAML)",
            ) from None
        problem = exc.problem or exc.context or "syntax error"
        context = f" ({exc.context})" if exc.context and exc.problem else ""
        raise file_error(
            file, mark.line + 1 if mark else None,
            f"invalid YAML: {problem}{context}"
            + (f" at column {mark.column + 1}" if mark else ""),
            "check the indentation and quoting here; quote strings that hold ': ' or "
            "start with one of [ { * & ! | > ' \" % @ `",
        ) from None
    except yaml.reader.ReaderError as exc:
        raise file_error(
            file, text.count("\n", 0, exc.position) + 1,
            f"invalid YAML: {exc.reason} (character #x{exc.character:04x})"
            if isinstance(exc.character, int)
            else f"invalid YAML: {exc.reason}",
            "remove the control character",
        ) from None
    except yaml.YAMLError as exc:  # anything else the parser raises
        raise file_error(file, None, f"invalid YAML: {exc}", "fix the YAML syntax") from None
    return Sourced(file=file, data=root if have_root else None, lines=lines)


def _char_at(text: str, line: int, column: int) -> str:
    """The character at a 0-based line and column ("" past the end)."""
    start = 0
    for _ in range(line):
        start = text.find("\n", start) + 1
        if start == 0:
            return ""
    pos = start + column
    return text[pos] if pos < len(text) and "\n" not in text[start:pos] else ""
