"""Read YAML or JSON text and remember the line of every JSON path, so errors can name it.

Both formats are parsed from a stream of events (never recursively), which lets us:
refuse YAML aliases outright (no alias bomb can expand), cap nesting depth before
Python's recursion limit is near, reject duplicate keys (YAML and ``json`` silently
keep the last one), and record where each key and list item starts.

YAML plain scalars are resolved with the YAML 1.2 core schema (as JSON is), not
PyYAML's 1.1 rules: ``no`` stays a string, ``1e5`` is a number, dates stay strings.
One deliberate deviation: a plain integer with a leading zero (``04138203``) stays a
string, because in this plugin such values are nearly always identifiers whose zeros
matter. Mapping keys are always taken as written (``on:`` is the key "on").
"""

from __future__ import annotations

import bisect
import datetime
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ToolselectError, nearest

#: files above this are refused before they are read (10 MB)
MAX_BYTES = 10 * 1024 * 1024
#: our formats nest about 5 levels; anything this deep is a mistake or an attack
MAX_DEPTH = 64

PathT = tuple[str | int, ...]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def format_path(path: PathT) -> str:
    """A JSON path as users read it: ``cases[3].expect_args[0]`` (the top is ``(top level)``)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _NAME.match(part):
            out += f".{part}" if out else part
        else:
            out += '["' + part.replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return out or "(top level)"


@dataclass
class Sourced:
    """Parsed data, the line (1-based) where each JSON path starts, and how to name places.

    ``lines`` is keyed by paths as written in the file. Loaders that rename keys (camelCase
    aliases to snake_case) record it in ``renames`` so messages and lines still follow the
    file; ``prefix`` is prepended to every shown path (``tool.toolselect`` in pyproject).
    """

    file: str
    data: Any
    lines: dict[PathT, int] = field(default_factory=dict)
    prefix: PathT = ()
    #: (canonical parent path, canonical key) -> the key as written
    renames: dict[tuple[PathT, str], str] = field(default_factory=dict)

    def written(self, path: PathT) -> PathT:
        """A canonical path as the file spells it."""
        out: list[str | int] = []
        for i, part in enumerate(path):
            if isinstance(part, str):
                part = self.renames.get((tuple(path[:i]), part), part)
            out.append(part)
        return tuple(out)

    def line_of(self, path: PathT) -> int | None:
        """The line of ``path`` (canonical), or of its nearest ancestor that has one."""
        p = self.written(tuple(path))
        while True:
            if p in self.lines:
                return self.lines[p]
            if not p:
                return None
            p = p[:-1]

    def place(self, path: PathT) -> str | None:
        full = self.prefix + self.written(tuple(path))
        return format_path(full) if full else None

    def subject(self, path: PathT) -> str:
        """What a message calls the value at ``path``: ``expect_tool`` or ``expect_tool[0]``."""
        w = self.written(tuple(path))
        for i in range(len(w) - 1, -1, -1):
            if isinstance(w[i], str):
                return format_path(w[i:])
        return "the value" if w else "the file"

    def error(self, path: PathT, message: str, fix: str | None = None,
              line: int | None = None) -> ToolselectError:
        return ToolselectError(
            message, file=self.file, line=line if line is not None else self.line_of(path),
            place=self.place(path), fix=fix,
        )


def _err(
    file: str, line: int | None, message: str, fix: str | None = None, place: PathT | None = None
) -> ToolselectError:
    return ToolselectError(
        message, file=file, line=line, fix=fix,
        place=format_path(place) if place is not None else None,
    )


def too_deep(file: str, line: int | None) -> ToolselectError:
    return _err(
        file, line, f"nested more than {MAX_DEPTH} levels deep",
        "flatten the structure; the formats read here nest only a few levels",
    )


def nesting_depth(value: Any) -> int:
    """How deep lists and mappings nest in already-parsed data (iteratively: no recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping):
            children: Any = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break  # deep enough to refuse; no need to walk the rest
        stack.extend((child, depth) for child in children)
    return deepest


def read_text(path: Path, *, what: str = "file", split_hint: str | None = None,
              max_bytes: int = MAX_BYTES) -> str:
    """A file's text, refusing missing, huge, binary and non-UTF-8 files with a clear message."""
    file = str(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise _err(file, None, f"{what} not found", "check the path") from None
    except OSError as exc:
        raise _err(file, None, f"cannot read {what}: {exc.strerror or exc}",
                   "check that it is a readable file") from None
    if size > max_bytes:
        # checked before reading, so a huge file costs nothing
        raise _err(
            file, None,
            f"{what} is {size / 1024 / 1024:.1f} MB; files over {max_bytes // 1024 // 1024} MB "
            "are refused",
            split_hint or "split it into smaller files",
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise _err(file, None, f"cannot read {what}: {exc.strerror or exc}",
                   "check that it is a readable file") from None
    nul = raw.find(b"\x00")
    if nul != -1:
        raise _err(
            file, raw.count(b"\n", 0, nul) + 1,
            f"{what} is binary (it holds NUL bytes), not YAML or JSON text",
            "point to the text file, or save it as UTF-8 text",
        )
    try:
        # utf-8-sig: a byte order mark written by some editors is not an error
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _err(
            file, raw.count(b"\n", 0, exc.start) + 1,
            f"{what} is not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be decoded)",
            "save it as UTF-8",
        ) from None


def load_file(path: Path, *, what: str = "file", split_hint: str | None = None) -> Sourced:
    """Read and parse one file: ``.json`` as JSON, everything else as YAML."""
    text = read_text(path, what=what, split_hint=split_hint)
    return parse_text(text, file=str(path), json_syntax=path.suffix.lower() == ".json")


def parse_text(text: str, *, file: str, json_syntax: bool = False) -> Sourced:
    """Parse text; ``data`` is None when the document is empty (or only comments)."""
    if json_syntax:
        return _parse_json(text, file)
    return _parse_yaml(text, file)


# -- YAML ------------------------------------------------------------------------------

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
        ok = {
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "bool": lambda v: isinstance(v, bool),
            "null": lambda v: v is None,
        }[kind]
        if ok(resolved):
            return float(resolved) if kind == "float" else resolved
        raise _err(file, line, f"{value!r} is not a valid !!{kind}", "remove the tag or fix the value")
    raise _unsupported_tag(tag, file, line)


def _unsupported_tag(tag: str, file: str, line: int) -> ToolselectError:
    shown = "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else tag
    return _err(
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


def _parse_yaml(text: str, file: str) -> Sourced:
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
            line = event.start_mark.line + 1
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise _err(
                        file, line, "more than one YAML document (a second '---')",
                        "keep one document per file",
                    )
            elif isinstance(event, yaml.AliasEvent):
                # refusing aliases outright is what makes an alias bomb impossible
                raise _err(
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
                        raise _err(
                            file, line,
                            f"duplicate key {key!r}" + (f" (first on line {first})" if first else ""),
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
                    raise _err(
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
            raise _err(
                file, mark.line + 1,
                f"invalid YAML: a tab character at column {mark.column + 1}; YAML indents "
                "with spaces only",
                "replace the tab with spaces (set the editor to insert spaces for YAML)",
            ) from None
        problem = exc.problem or exc.context or "syntax error"
        context = f" ({exc.context})" if exc.context and exc.problem else ""
        raise _err(
            file, mark.line + 1 if mark else None,
            f"invalid YAML: {problem}{context}"
            + (f" at column {mark.column + 1}" if mark else ""),
            "check the indentation and quoting here; quote strings that hold ': ' or "
            "start with one of [ { * & ! | > ' \" % @ `",
        ) from None
    except yaml.reader.ReaderError as exc:
        raise _err(
            file, text.count("\n", 0, exc.position) + 1,
            f"invalid YAML: {exc.reason} (character #x{exc.character:04x})"
            if isinstance(exc.character, int)
            else f"invalid YAML: {exc.reason}",
            "remove the control character",
        ) from None
    except yaml.YAMLError as exc:  # anything else the parser raises
        raise _err(file, None, f"invalid YAML: {exc}", "fix the YAML syntax") from None
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


# -- JSON ------------------------------------------------------------------------------

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


def _parse_json(text: str, file: str) -> Sourced:
    """An iterative JSON parser that records lines; values decode exactly as ``json`` does."""
    from json.decoder import JSONDecodeError, scanstring

    newlines = [i for i, c in enumerate(text) if c == "\n"]

    def line_at(pos: int) -> int:
        return bisect.bisect_right(newlines, pos - 1) + 1

    def fail(pos: int, message: str) -> ToolselectError:
        col = pos - (newlines[line_at(pos) - 2] + 1 if line_at(pos) > 1 else 0) + 1
        return _err(
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
            key, end = scanstring(text, pos + 1, True)
        except JSONDecodeError as exc:
            raise fail(exc.pos, _json_msg(exc.msg)) from None
        container, path = frame[0], frame[1]
        if key in container:
            raise _err(
                file, line_at(pos),
                f"duplicate key {key!r} (first on line {lines.get((*path, key))})",
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
                value, pos = scanstring(text, pos + 1, True)
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


# -- JSON Schema -----------------------------------------------------------------------


@functools.cache
def _schema_text(name: str) -> str:
    from importlib.resources import files

    return (files("pytest_toolselect") / "schemas" / f"{name}.json").read_text("utf-8")


def load_schema(name: str) -> dict[str, Any]:
    """A fresh copy of a shipped schema (callers may adjust it before compiling)."""
    schema: dict[str, Any] = json.loads(_schema_text(name))
    return schema


def compile_schema(schema: dict[str, Any]) -> Any:
    """A jsonschema validator for ``schema`` (format checks off: they are annotations)."""
    import jsonschema  # lazy: the plugin loads in every pytest run

    return jsonschema.Draft202012Validator(schema)


def validate(validator: Any, src: Sourced, *,
             aliases: Mapping[str, Mapping[str, str]] | None = None) -> None:
    """Validate ``src.data`` and raise every mistake as a plain sentence, in file order.

    ``aliases`` maps a schema ``title`` to the aliases accepted there, for "did you mean".
    """
    from .allerrors import by_place, raise_all

    raise_all([_most_relevant(group, src, aliases) for group in by_place(validator.iter_errors(src.data))])


def _most_relevant(errors: list[Any], src: Sourced,
                   aliases: Mapping[str, Mapping[str, str]] | None) -> ToolselectError:
    """The one error that speaks for a place's errors, as a sentence."""
    from jsonschema.exceptions import WEAK_MATCHES, best_match, by_relevance

    # at equal depth an unknown key beats a missing one: "wyh" is more likely a typo of
    # "why" than a separate mistake, and the unknown-key message suggests the spelling
    err = best_match(errors, key=by_relevance(WEAK_MATCHES, frozenset({"additionalProperties"})))
    # a oneOf of {"required": [...]} branches ("exactly one of these keys") is unreadable
    # from inside any one branch: report it as a whole
    up = err
    while up is not None:
        if _is_one_key_of(up):
            err = up
            break
        up = up.parent
    return _rewrite(err, src, aliases or {})


def _is_one_key_of(err: Any) -> bool:
    return (
        err.validator == "oneOf"
        and isinstance(err.instance, dict)
        and all(
            isinstance(b, dict) and set(b) == {"required"} and len(b["required"]) == 1
            for b in err.validator_value
        )
    )


_ONE_OF_FIX = {
    "matcher": ('add one, e.g. equals: "04138203"',
                "split it into one matcher per operator, each with the same path"),
    "server": ("add command: for MCP over stdio, url: for MCP over streamable HTTP, or "
               "tools_file: for a static list of tools",
               "keep one: a server gets its tools from exactly one place"),
}

_TYPE_WORDS = {
    "string": "a string", "array": "a list", "object": "a mapping", "boolean": "true or false",
    "integer": "a whole number", "number": "a number", "null": "empty",
}


def describe(value: Any) -> str:
    """A value as a message names it: "the string 'find_company'", "a list", ..."""
    if value is None:
        return "nothing (the value is empty)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"the string {shown!r}"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} item" + ("" if len(value) == 1 else "s")
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (datetime.date, datetime.time)):
        # TOML reads an unquoted 2024-01-31 as a date
        return f"the {type(value).__name__} {value.isoformat()} (not a string: quote it)"
    return f"a Python {type(value).__name__}"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _scalar_text(value: Any) -> str:
    if isinstance(value, str):
        return value if _NAME.match(value) else json.dumps(value, ensure_ascii=False)
    return json.dumps(value)


def _suggest_name(value: str, pattern: str) -> str | None:
    """A valid spelling of a bad name or id (``bad name`` -> ``bad-name``), if one is near."""
    if "A-Za-z0-9" not in pattern:
        return None  # not a name pattern (paths, URLs): no guessing
    cand = re.sub(r"[^A-Za-z0-9_.:-]+", "-", value).strip("-")
    if not cand:
        return None
    for c in (cand, cand.replace(".", "-").replace(":", "-"), "_" + cand):
        if c and re.search(pattern, c):
            return c
    return None


def _example(path: Any, subject: str, desc: str | None) -> str | None:
    """The "e.g." of a schema description, as a fix: ``e.g. reps: 3``."""
    m = re.search(r"e\.g\. (.+)$", desc or "")
    if not m:
        return None
    key = f"{subject}: " if path and isinstance(path[-1], str) else ""
    return f"e.g. {key}{m.group(1)}"


def _rewrite(err: Any, src: Sourced,
             aliases: Mapping[str, Mapping[str, str]]) -> ToolselectError:
    """One jsonschema error as a sentence naming the place, the problem and the fix."""
    path: PathT = tuple(err.path)
    schema = err.schema if isinstance(err.schema, dict) else {}
    desc = schema.get("description")
    title = schema.get("title")
    subject = src.subject(path)
    inst = err.instance
    v = err.validator
    this = f"this {title}" if title else subject

    if _is_one_key_of(err):
        ops = [b["required"][0] for b in err.validator_value]
        present = [k for k in ops if k in inst]
        fixes = _ONE_OF_FIX.get(title or "", ("add one", "keep one"))
        listed = ", ".join(ops[:-1]) + " or " + ops[-1]
        if not present:
            return src.error(path, f"{this} has none of {listed}: it needs exactly one", fixes[0])
        both = " and ".join(repr(k) for k in present)
        return src.error(path, f"{this} has {both}: it needs exactly one of {listed}", fixes[1])

    if v == "additionalProperties" and err.validator_value is False:
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        extras = [k for k in inst if k not in props and not any(re.search(p, k) for p in patterns)]
        key = extras[0] if extras else "?"
        choices = [*props, *aliases.get(title or "", {})]
        near = nearest(key, choices)
        kpath = (*path, key)
        if near:
            return src.error(kpath, f"unknown key {key!r}; did you mean {near!r}?",
                             f"rename it to {near}")
        return src.error(kpath, f"unknown key {key!r}",
                         "remove it; the keys allowed here are " + ", ".join(props))

    if v == "required":
        missing = [k for k in err.validator_value if k not in inst]
        key = missing[0] if missing else "?"
        kdesc = schema.get("properties", {}).get(key, {}).get("description")
        return src.error(path, f"{this} is missing the required key {key!r}",
                         f"add {key}: with {kdesc}" if kdesc else f"add {key}:")

    if "propertyNames" in err.relative_schema_path:
        # the error sits on the mapping; the bad name is the instance
        kpath = (*path, inst)
        what = "server name" if path and path[-1] == "servers" else "key"
        suggestion = _suggest_name(inst, err.validator_value) if v == "pattern" else None
        return src.error(kpath, f"{what} {inst!r} is not valid: it must be {desc or 'a name'}",
                         f"rename it, e.g. to {suggestion}" if suggestion else "rename it")

    if v == "type":
        expected = err.validator_value
        expected = [expected] if isinstance(expected, str) else list(expected)
        want = desc or " or ".join(_TYPE_WORDS.get(t, t) for t in expected)
        fix = None
        # "key: " before an example value, except for list items
        key = f"{subject}: " if path and isinstance(path[-1], str) else ""
        if inst is None:
            fix = f"give {subject} a value, or remove it"
        elif "array" in expected and isinstance(inst, (str, int, float, bool)):
            fix = f"write it as a list: {key}[{_scalar_text(inst)}]"
        elif "string" in expected and isinstance(inst, (int, float, bool)):
            fix = f'quote it: {key}"{json.dumps(inst)}"'
        elif "boolean" in expected and isinstance(inst, str):
            fix = "write true or false, without quotes"
        elif {"number", "integer"} & set(expected) and isinstance(inst, str) and _is_number(inst):
            fix = "write the number without quotes"
        if fix is None:
            fix = _example(err.path, subject, desc) or (
                f"give {subject} " + " or ".join(_TYPE_WORDS.get(t, t) for t in expected)
            )
        return src.error(path, f"{subject} must be {want}; got {describe(inst)}", fix)

    if v in ("minLength", "pattern") and (v == "minLength" or err.validator_value == "\\S"):
        return src.error(path, f"{subject} must not be empty",
                         f"write {desc}" if desc else "give it a value")

    if v == "pattern":
        suggestion = _suggest_name(inst, err.validator_value) if isinstance(inst, str) else None
        return src.error(path, f"{subject} {inst!r} is not valid: it must be {desc}",
                         f"e.g. {subject}: {suggestion}" if suggestion
                         else _example(err.path, subject, desc) or "change the value")

    if v == "minItems":
        noun = {"cases": "case", "servers": "server name"}.get(subject, "item")
        count = "one" if err.validator_value == 1 else str(err.validator_value)
        return src.error(path, f"{subject} must not be empty: it must be {desc or 'a list'}",
                         f"add at least {count} {noun}")

    if v in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        return src.error(path, f"{subject} must be {desc}; got {inst!r}",
                         _example(err.path, subject, desc) or "change the value")

    if v in ("const", "enum"):
        allowed = [err.validator_value] if v == "const" else list(err.validator_value)
        shown = " or ".join(_scalar_text(a) for a in allowed)
        return src.error(path, f"{subject} must be {shown}; got {describe(inst)}",
                         f"write {subject}: {_scalar_text(allowed[0])}")

    if v == "dependentRequired":
        for key, needs in err.validator_value.items():
            lacking = [n for n in needs if key in inst and n not in inst]
            if lacking:
                return src.error(
                    (*path, key),
                    f"{key!r} only applies together with {lacking[0]!r} in {this}",
                    f"add {lacking[0]}, or remove {key}",
                )

    return src.error(path, f"{subject}: {err.message}",
                     _example(err.path, subject, desc) or "change the value to fit the format")
