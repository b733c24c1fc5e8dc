"""Read YAML or JSON text and remember the line of every JSON path, so errors can name it.

Both formats are parsed from a stream of events, never recursively (``yamlmap``,
``jsonmap``; ``sourced`` holds the parsed data and its lines), which lets us: refuse YAML
aliases outright (no alias bomb can expand), cap nesting depth before
Python's recursion limit is near, reject duplicate keys (YAML and ``json`` silently
keep the last one), and record where each key and list item starts.

YAML plain scalars are resolved with the YAML 1.2 core schema (as JSON is), not
PyYAML's 1.1 rules: ``no`` stays a string, ``1e5`` is a number, dates stay strings.
One deliberate deviation: a plain integer with a leading zero (``04138203``) stays a
string, because in this plugin such values are nearly always identifiers whose zeros
matter. Mapping keys are always taken as written (``on:`` is the key "on").
"""

from __future__ import annotations

import datetime
import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_toolselect.exchange.json_value import JSONObject
from pytest_toolselect.messages.allerrors import by_place, raise_all
from pytest_toolselect.messages.errors import ToolselectError, nearest
from pytest_toolselect.messages.masking import redact
from pytest_toolselect.messages.plural import plural

from .jsonmap import parse_json
from .sourced import BARE_KEY, MAX_BYTES, MAX_DEPTH, PathT, Sourced, file_error
from .yamlmap import parse_yaml


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
    from .bounded import FileTooLarge, NotRegularFile, read_bounded

    file = str(path)
    try:
        raw = read_bounded(path, max_bytes)
    except FileNotFoundError:
        raise file_error(file, None, f"{what} not found", "check the path") from None
    except NotRegularFile as exc:
        raise file_error(file, None, f"cannot read {what}: {exc.strerror}",
                   f"point to the {what} itself") from None
    except FileTooLarge as exc:
        # a regular file's size is checked before it is read, so a huge file costs nothing
        raise file_error(file, None, f"{what} is {exc.said}",
                   split_hint or "split it into smaller files") from None
    except OSError as exc:
        raise file_error(file, None, f"cannot read {what}: {exc.strerror or exc}",
                   "check that it is a readable file") from None
    nul = raw.find(b"\x00")
    if nul != -1:
        raise file_error(
            file, raw.count(b"\n", 0, nul) + 1,
            f"{what} is binary (it holds NUL bytes), not YAML or JSON text",
            "point to the text file, or save it as UTF-8 text",
        )
    try:
        # utf-8-sig: a byte order mark written by some editors is not an error
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise file_error(
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
        return parse_json(text, file)
    return parse_yaml(text, file)


# -- JSON Schema -----------------------------------------------------------------------


@functools.cache
def _schema_text(name: str) -> str:
    from importlib.resources import files

    return (files("pytest_toolselect") / "schemas" / f"{name}.json").read_text("utf-8")


def load_schema(name: str) -> dict[str, Any]:
    """A fresh copy of a shipped schema (callers may adjust it before compiling)."""
    schema: dict[str, Any] = json.loads(_schema_text(name))
    return schema


def compile_schema(schema: JSONObject) -> Any:
    """A jsonschema validator for ``schema`` (format checks off: they are annotations)."""
    import jsonschema  # lazy: the plugin loads in every pytest run

    return jsonschema.Draft202012Validator(schema)


def validate(validator: Any, src: Sourced, *,
             aliases: Mapping[str, Mapping[str, str]] | None = None) -> None:
    """Validate ``src.data`` and raise every mistake as a plain sentence, in file order.

    ``aliases`` maps a schema ``title`` to the aliases accepted there, for "did you mean".
    """
    raise_all([e for _, e in schema_problems(validator, src, aliases=aliases)])


def schema_problems(validator: Any, src: Sourced, *,
                    aliases: Mapping[str, Mapping[str, str]] | None = None,
                    ) -> list[tuple[PathT, ToolselectError]]:
    """Every mistake :func:`validate` raises, each with the place in the data it is at."""
    return [(tuple(group[0].absolute_path), e)
            for group in by_place(validator.iter_errors(src.data))
            for e in _most_relevant(group, src, aliases)]


def _most_relevant(errors: list[Any], src: Sourced,
                   aliases: Mapping[str, Mapping[str, str]] | None) -> list[ToolselectError]:
    """The error that speaks for a place's errors, as a sentence (one for each unknown key
    of a mapping that has several)."""
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
    if err.validator == "additionalProperties" and err.validator_value is False:
        out = _unknown_keys(err, src, aliases or {})
    else:
        out = [_rewrite(err, src, aliases or {})]
    if err.validator in ("required", "additionalProperties"):
        out += _other_missing_keys(errors, err, src, aliases or {})
    return out


def _other_missing_keys(errors: list[Any], reported: Any, src: Sourced,
                        aliases: Mapping[str, Mapping[str, str]]) -> list[ToolselectError]:
    """Every other key the mapping misses, each once: one mistake per run is a run per
    mistake. A missing key that an unknown key is a likely misspelling of is left to the
    unknown key's "did you mean"."""
    first = _missing(reported)[:1] if reported.validator == "required" else []
    typos: set[str] = set()
    if reported.validator == "additionalProperties":
        schema = reported.schema if isinstance(reported.schema, dict) else {}
        choices = [*schema.get("properties", {}), *aliases.get(schema.get("title") or "", {})]
        typos = {near for key in reported.instance if (near := nearest(str(key), choices))}
    out: list[ToolselectError] = []
    seen = set(first) | typos
    for err in errors:
        if err.validator != "required":
            continue
        for key in _missing(err):
            if key not in seen:
                seen.add(key)
                out.append(_missing_key(err, key, src))
    return out


def _missing(err: Any) -> list[str]:
    inst = err.instance if isinstance(err.instance, Mapping) else {}
    return [k for k in err.validator_value if k not in inst]


def _missing_key(err: Any, key: str, src: Sourced) -> ToolselectError:
    path: PathT = tuple(err.path)
    schema = err.schema if isinstance(err.schema, dict) else {}
    title = schema.get("title")
    this = f"this {title}" if title else src.subject(path)
    kdesc = schema.get("properties", {}).get(key, {}).get("description")
    return src.error(path, f"{this} is missing the required key {key!r}",
                     f"add {key}: with {kdesc}" if kdesc else f"add {key}:")


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
    "context turn": ("add call: with result: for a turn of one call, or calls: for several",
                     "keep one: a turn of one call is call: with result:, of several calls:"),
    "server": ("add command: for MCP over stdio, url: for MCP over streamable HTTP, or "
               "tools_file: for a static list of tools",
               "keep one: a server gets its tools from exactly one place"),
}

_TYPE_WORDS = {
    "string": "a string", "array": "a list", "object": "a mapping", "boolean": "true or false",
    "integer": "a whole number", "number": "a number", "null": "empty",
}


#: characters of a value read from a file that an error quotes: enough to recognise it,
#: too few to print a file that was never meant to be read (a path mistyped to /etc/passwd)
EXCERPT = 40


def excerpt(text: str) -> str:
    """The start of a value read from a file, as an error quotes it: its first line, at
    most EXCERPT characters, credentials masked (before the cut, so none is left half)."""
    lines = text.splitlines() or [""]
    first = redact(lines[0])
    if len(first) > EXCERPT:
        return first[:EXCERPT - 3] + "..."
    return first + ("..." if len(lines) > 1 else "")


def describe(value: Any) -> str:
    """A value as a message names it: "the string 'find_company'", "a list", ..."""
    if value is None:
        return "nothing (the value is empty)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = excerpt(value)
        if shown == value:
            return f"the string {shown!r}"
        return f"the string {shown!r} ({len(value):,} characters)"
    if isinstance(value, (list, tuple)):
        return f"a list of {plural(len(value), 'item')}"
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
        if excerpt(value) != value:  # a long or masked value from the file: its excerpt
            return json.dumps(excerpt(value), ensure_ascii=False)
        return value if BARE_KEY.match(value) else json.dumps(value, ensure_ascii=False)
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


def _unknown_keys(err: Any, src: Sourced,
                  aliases: Mapping[str, Mapping[str, str]]) -> list[ToolselectError]:
    """Each key a mapping does not allow, with the key it is nearest to as the fix."""
    path: PathT = tuple(err.path)
    schema = err.schema if isinstance(err.schema, dict) else {}
    props = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = [k for k in err.instance
              if k not in props and not any(re.search(p, k) for p in patterns)] or ["?"]
    choices = [*props, *aliases.get(schema.get("title") or "", {})]
    out = []
    for key in extras:
        near = nearest(key, choices)
        kpath = (*path, key)
        if near:
            out.append(src.error(kpath, f"unknown key {excerpt(key)!r}; did you mean {near!r}?",
                                 f"rename it to {near}"))
        else:
            out.append(src.error(kpath, f"unknown key {excerpt(key)!r}",
                                 "remove it; the keys allowed here are " + ", ".join(props)))
    return out


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
        return _unknown_keys(err, src, aliases)[0]

    if v == "required":
        return _missing_key(err, (_missing(err) or ["?"])[0], src)

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
