"""Servers declared for an MCP client, read as toolselect servers (``servers_from:``).

Teams already declare their servers for the client they use; the config can take them from
that file instead of writing them twice. Four shapes are read:

* Claude Code's project ``.mcp.json`` and Cursor's ``.cursor/mcp.json``: ``mcpServers``,
  each ``command``/``args``/``env`` (stdio) or ``type: http`` with ``url``/``headers``;
* VS Code's ``.vscode/mcp.json``: ``servers``, each with ``type`` ``stdio`` or ``http``;
* Claude Desktop's ``claude_desktop_config.json``: ``mcpServers``, stdio only.

Variables are read as the client reads them: ``${VAR}`` and ``${VAR:-default}`` (Claude
Code), ``${env:VAR}``, ``${workspaceFolder}`` and ``${userHome}`` (VS Code and Cursor);
Claude Desktop expands nothing. An environment variable stays a reference (``${VAR}``),
resolved when the server starts and masked in its messages, as in toolselect.yaml. A server
toolselect cannot start (SSE, a VS Code ``${input:...}`` prompt, an ``envFile``) is refused
with the place and what to write instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_toolselect.messages.allerrors import raise_all
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.positions.sourced import Sourced
from pytest_toolselect.positions.sourcemap import describe, parse_text, read_text

#: where a client keeps a project's servers, relative to the project (the config's folder):
#: looked for, in this order, when the config names no servers
FOUND_WITHOUT_NAMING = (".mcp.json", ".vscode/mcp.json", ".cursor/mcp.json")

CLAUDE_CODE, VSCODE, CURSOR, DESKTOP = "Claude Code", "VS Code", "Cursor", "Claude Desktop"

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
# ${...} with anything but a closing brace inside
_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def client_of(path: Path, data: Any) -> str:
    """Which client's file this is, from its name (its shape where the name says nothing)."""
    name, folder = path.name.lower(), path.parent.name.lower()
    if name == "claude_desktop_config.json":
        return DESKTOP
    if folder == ".vscode" or (isinstance(data, dict) and "servers" in data
                                and "mcpServers" not in data):
        return VSCODE
    if folder == ".cursor":
        return CURSOR
    return CLAUDE_CODE


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (VS Code's mcp.json) as plain JSON, every
    other character where it was, so lines in messages still match the file."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            in_string = c != '"'
            i += 1
        elif c == '"':
            in_string = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:end]))
            i = end
        else:
            out.append(c)
            i += 1
    return _drop_trailing_commas("".join(out))


def _drop_trailing_commas(text: str) -> str:
    """A comma with only blanks before the closing bracket, blanked (strings left alone)."""
    out = list(text)
    in_string = False
    last_comma: int | None = None
    i = 0
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            in_string = c != '"'
        elif c == '"':
            in_string, last_comma = True, None
        elif c == ",":
            last_comma = i
        elif c in "]}":
            if last_comma is not None:
                out[last_comma] = " "
            last_comma = None
        elif not c.isspace():
            last_comma = None
        i += 1
    return "".join(out)


def read_client_file(path: Path, shown: str) -> tuple[str, Sourced]:
    """The client a file belongs to and its parsed text (``shown``: the path messages give)."""
    text = read_text(path, what="MCP client config")
    src = parse_text(strip_jsonc(text), file=shown, json_syntax=True)
    return client_of(path, src.data), src


def client_servers(path: Path, shown: str, workspace: Path,
                   environ: dict[str, str] | None = None) -> dict[str, Any]:
    """The servers of one client file, by name: each a ServerSpec's fields, ``source`` (its
    file and line) among them.

    ``workspace`` is the project folder (``${workspaceFolder}``, and where a stdio server
    starts, as its client starts it). Every mistake of the file is raised at once."""
    env = dict(os.environ) if environ is None else environ
    client, src = read_client_file(path, shown)
    data = src.data
    key = "servers" if client == VSCODE else "mcpServers"
    if not isinstance(data, dict) or not isinstance(data.get(key), dict):
        other = "mcpServers" if key == "servers" else "servers"
        if isinstance(data, dict) and isinstance(data.get(other), dict):
            key = other  # the other client's shape in a file named for this one: read it
        else:
            raise src.error((), f"a {client} MCP config holds its servers under {key!r}; "
                            f"got {describe(data)}",
                            f'write {{"{key}": {{"name": {{"command": ..., "args": [...]}}}}}}')
    errors: list[ToolselectError] = []
    servers: dict[str, Any] = {}
    for name, entry in data[key].items():
        place = (key, name)
        try:
            fields = _server_fields(client, name, entry, src, place, workspace, env)
        except ToolselectError as e:
            errors.append(e)
            continue
        servers[name] = {**fields, "source": f"{shown}:{src.line_of(place) or 1}"}
    raise_all(errors)
    return servers


def _server_fields(client: str, name: str, entry: Any, src: Sourced, place: tuple[str, ...],
                   workspace: Path, env: dict[str, str]) -> dict[str, Any]:
    if not _NAME.match(name):
        raise src.error(place, f"the server name {name!r} is not one toolselect can use",
                        "name it with letters, digits, _ and - only")
    if not isinstance(entry, dict):
        raise src.error(place, f"a server is a mapping; got {describe(entry)}",
                        'write {"command": ..., "args": [...]} or {"type": "http", "url": ...}')
    kind = str(entry.get("type") or ("http" if "url" in entry else "stdio")).lower()
    if "envFile" in entry:
        raise src.error((*place, "envFile"), "envFile is not read by toolselect",
                        "set those variables in the environment (in CI, from secrets)")
    expand = _expander(client, src, place, workspace, env)
    if kind == "stdio":
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise src.error(place, "a stdio server needs a command",
                            'add "command": the program that starts it')
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise src.error((*place, "args"), "args is a list of strings",
                            'write "args": ["--flag", "value"]')
        fields: dict[str, Any] = {
            "command": expand(command, ("command",)),
            "args": tuple(expand(a, ("args", i)) for i, a in enumerate(args)),
            "env": tuple((k, expand(str(v), ("env", k)))
                         for k, v in _mapping(entry, "env", src, place).items()),
            # the client starts it in the project folder; relative paths mean the same here
            "cwd": expand(str(entry["cwd"]), ("cwd",)) if "cwd" in entry else str(workspace),
        }
        return fields
    if kind in ("http", "streamable-http", "streamablehttp"):
        url = entry.get("url")
        if not isinstance(url, str) or not url.strip():
            raise src.error(place, "an http server needs a url", 'add "url": "https://.../mcp"')
        return {"url": expand(url, ("url",)),
                "headers": tuple((k, expand(str(v), ("headers", k)))
                                 for k, v in _mapping(entry, "headers", src, place).items())}
    if kind == "sse":
        raise src.error((*place, "type"), "an SSE server: toolselect speaks MCP over stdio and "
                        "streamable HTTP, not the older SSE transport",
                        "point it at the server's streamable HTTP endpoint (often /mcp) with "
                        '"type": "http", or declare it in toolselect.yaml')
    raise src.error((*place, "type"), f"unknown server type {kind!r}",
                    'use "stdio" (command, args, env) or "http" (url, headers)')


def _mapping(entry: dict[str, Any], key: str, src: Sourced,
             place: tuple[str, ...]) -> dict[str, Any]:
    value = entry.get(key, {})
    if not isinstance(value, dict):
        raise src.error((*place, key), f"{key} is a mapping of names to values; "
                        f"got {describe(value)}", f'write "{key}": {{"NAME": "value"}}')
    return value


def _expander(client: str, src: Sourced, place: tuple[str, ...], workspace: Path,
              env: dict[str, str]) -> Callable[[str, tuple[str | int, ...]], str]:
    """The client's variables in one value, as toolselect writes them: an environment
    variable as ``${NAME}`` (read when the server starts), the rest as their values."""

    def literal(text: str) -> str:
        return text.replace("${", "$${")  # toolselect reads ${NAME}; keep the client's text

    def expand(value: str, where: tuple[str | int, ...]) -> str:
        if client == DESKTOP:
            return literal(value)
        out, last = [], 0
        for m in _VARIABLE.finditer(value):
            if value[last:m.start()].endswith("$"):
                # "$" then a reference reads as toolselect's escape, $${NAME}: say so
                raise src.error((*place, *where), f"{value!r} has a '$' right before "
                                f"${{{m.group(1)}}}, which toolselect would read as the "
                                "literal text", "declare this server in toolselect.yaml")
            out.append(literal(value[last:m.start()]))
            out.append(_one(m.group(1), where))
            last = m.end()
        out.append(literal(value[last:]))
        return "".join(out)

    def _one(inner: str, where: tuple[str | int, ...]) -> str:
        at = (*place, *where)
        if client in (VSCODE, CURSOR):
            if inner.startswith("env:") and _ENV_NAME.match(inner[4:]):
                return "${" + inner[4:] + "}"
            if inner == "workspaceFolder":
                return literal(str(workspace))
            if inner == "workspaceFolderBasename":
                return literal(workspace.name)
            if inner == "userHome":
                return literal(str(Path.home()))
            if inner in ("pathSeparator", "/"):
                return os.sep
            if inner.startswith("input:"):
                raise src.error(at, f"${{{inner}}} asks the person at {client} for a value; "
                                "a test run cannot ask", "read it from the environment instead: "
                                f"${{env:{inner[6:].upper().replace('-', '_') or 'NAME'}}}")
            raise src.error(at, f"${{{inner}}} is not a variable toolselect can read",
                            "use ${env:NAME}, ${workspaceFolder} or ${userHome}")
        name, sep, default = inner.partition(":-")
        if not _ENV_NAME.match(name):
            raise src.error(at, f"${{{inner}}} is not a variable reference",
                            "write ${NAME} or ${NAME:-default}")
        if sep and name not in env:
            return literal(default)
        return "${" + name + "}"

    return expand
