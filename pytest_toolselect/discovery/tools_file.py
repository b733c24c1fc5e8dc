"""Static tools files: tools from a YAML or JSON file in MCP, OpenAI-function or Anthropic shape."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.messages.errors import ServerError, ToolselectError, nearest
from pytest_toolselect.positions.sourcemap import describe, excerpt, load_file

if TYPE_CHECKING:
    pass


def _empty_schema() -> dict[str, Any]:
    """The schema of a tool that takes no arguments (a fresh dict: callers may mutate it)."""
    return {"type": "object", "properties": {}}


#: keys a tool entry may carry beyond the ones read; a key close to one of these or of
#: the read keys is a typo and reported, any other key is ignored (vendor extensions)
_KNOWN_KEYS = (
    "name",
    "description",
    "inputSchema",
    "input_schema",
    "parameters",
    "type",
    "function",
    "title",
    "annotations",
    "outputSchema",
    "output_schema",
    "icons",
    "_meta",
    "meta",
    "execution",
    "strict",
    "cache_control",
)


def load_tools_file(path: Path) -> tuple[Tool, ...]:
    """Tools from a YAML or JSON file in MCP, OpenAI-function or Anthropic shape."""
    return _load_tools_file(Path(path), "")


_SHAPE_FIX = ("write a list of tools, or a mapping with a tools: list; each tool is a mapping "
              "with at least name: (and description:, inputSchema:)")


def _load_tools_file(path: Path, server: str) -> tuple[Tool, ...]:
    # sourcemap reads the file as the case and config loaders do: size, binary and UTF-8
    # checks, no YAML aliases, a depth cap, duplicate keys refused, and a line for every place
    who = f"server '{server}': " if server else ""
    try:
        src = load_file(path, what="tools file",
                        split_hint="split the tools across several servers, each with its own tools_file")
    except ToolselectError as exc:
        raise ServerError(f"{who}{exc.message}", file=exc.file, line=exc.line, place=exc.place,
                          fix=exc.fix) from None

    def bad(message: str, at: tuple[str | int, ...], fix: str, place: str | None = None) -> NoReturn:
        # from None: the message is the whole story, not the _EntryError it may come from
        raise ServerError(f"{who}{message}", file=path, line=src.line_of(at), place=place,
                          fix=fix) from None

    data = src.data
    if data is None:
        bad("the tools file is empty", (), _SHAPE_FIX)
    prefix: tuple[str, ...] = ()
    if isinstance(data, Mapping):
        if "tools" not in data:
            # the keys as excerpts: a file that is no tools file (a mistyped path) is not shown
            keys = ", ".join(repr(excerpt(str(k))) for k in list(data)[:3])
            more = f" and {len(data) - 3} more" if len(data) > 3 else ""
            bad(f"a mapping needs a 'tools' list (it has {keys or 'no keys'}{more})", (), _SHAPE_FIX)
        entries, prefix = data["tools"], ("tools",)
    else:
        entries = data
    if not isinstance(entries, list):
        bad(f"expected a list of tools, or a mapping with a 'tools' list; got {describe(entries)}",
            prefix, _SHAPE_FIX, place="tools" if prefix else None)

    tools: list[Tool] = []
    first_index: dict[str, int] = {}
    for i, entry in enumerate(entries):
        place = f"tools[{i}]" if prefix else f"entry {i}"
        try:
            tool = _parse_entry(entry)
        except _EntryError as exc:
            bad(str(exc), (*prefix, i, *exc.key), exc.fix, place)
        if tool.name in first_index:
            j = first_index[tool.name]
            bad(f"duplicate tool name {tool.name!r} (also at index {j}, line "
                f"{src.line_of((*prefix, j))})", (*prefix, i), "give every tool a unique name", place)
        first_index[tool.name] = i
        tools.append(replace(tool, server=server))
    return tuple(tools)


class _EntryError(Exception):
    """What is wrong with one tools-file entry; the caller adds the file, index and line."""

    def __init__(self, message: str, fix: str, key: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.fix = fix
        #: where in the entry, for the line
        self.key = key


def _parse_entry(entry: Any) -> Tool:
    if not isinstance(entry, Mapping):
        raise _EntryError(f"a tool must be a mapping, got {describe(entry)}",
                          "write each tool as a mapping with at least name: and description:")
    for key in entry:
        if key not in _KNOWN_KEYS:
            # inputschema is inputSchema with the case lost, before it is anything else
            near = next((k for k in _KNOWN_KEYS if k.lower() == str(key).lower()), None) \
                or nearest(str(key), _KNOWN_KEYS)
            if near:
                raise _EntryError(f"unknown key {excerpt(str(key))!r} (did you mean {near!r}?)",
                                  f"rename it to {near}", (str(key),))

    body: Mapping[str, Any] = entry
    at: tuple[str, ...] = ()
    schema_keys: tuple[str, ...] = ("inputSchema", "input_schema")
    if "type" in entry or "function" in entry:
        # OpenAI function tool: nested ({"type": "function", "function": {...}}) as in Chat
        # Completions, or flat ({"type": "function", "name": ...}) as in the Responses API.
        if entry.get("type") != "function":
            raise _EntryError(
                f"type must be 'function' for an OpenAI tool, got {describe(entry.get('type'))}",
                "write type: function for OpenAI's shape, or leave type: out for MCP's "
                "{name, description, inputSchema}", ("type",))
        if "function" in entry:
            body, at = entry["function"], ("function",)
            if not isinstance(body, Mapping):
                raise _EntryError(f"'function' must be a mapping, got {describe(body)}",
                                  "write function: as a mapping with name:, description: and "
                                  "parameters:", at)
        schema_keys = ("parameters",)

    name = body.get("name")
    if name is None:
        raise _EntryError("missing 'name'" if "name" not in body else "'name' is empty",
                          "add name: with the tool's name, as the model is to call it", at)
    if not isinstance(name, str) or not name.strip():
        raise _EntryError(f"'name' must be a non-empty string, got {describe(name)}",
                          "give the tool its name as a string", (*at, "name"))
    description = body.get("description")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise _EntryError(f"tool {name!r}: 'description' must be a string, got {describe(description)}",
                          "write the description as text (quote it in YAML), or leave it out",
                          (*at, "description"))

    present = [k for k in schema_keys if k in body]
    if len(present) > 1:
        raise _EntryError(f"tool {name!r}: give only one of {' and '.join(map(repr, present))}",
                          "keep one of them: they are two spellings of the input schema",
                          (*at, present[1]))
    schema = body[present[0]] if present else None
    if schema is None:
        schema = _empty_schema()
    if not isinstance(schema, Mapping):
        raise _EntryError(
            f"tool {name!r}: {present[0]!r} must be a mapping (a JSON Schema object),"
            f" got {describe(schema)}",
            "write it as a JSON Schema object, e.g. {type: object, properties: {id: {type: string}}}, "
            "or leave it out for a tool that takes no arguments", (*at, present[0]))
    if schema.get("type", "object") != "object":
        raise _EntryError(
            f"tool {name!r}: the input schema's type must be 'object', got {describe(schema.get('type'))}",
            "write type: object and put the arguments under properties:", (*at, present[0], "type"))
    return Tool(name=name, description=description, input_schema=dict(schema))
