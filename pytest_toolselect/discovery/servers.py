"""Tool discovery's face: a server's tools (cached per process) and the set a case is offered.

A server is asked for two things only, ``initialize`` (for its instructions) and
``tools/list`` (every page); no tool is ever called. Results, failures included, are
cached per process so a server starts at most once however many items use it.

The parts beside it: ``mcp_run`` (one MCP discovery from synchronous code), ``stdio`` and
``streamable_http`` (the two transports), ``mcp_session`` (what is asked once connected),
``errors`` (what a failed discovery says), ``tools_file`` (static tools files), ``schemas``
(unique names, valid input schemas) and ``found`` (the result). ``mcp`` and ``anyio`` are
imported inside the functions that need them: this module is imported when the plugin
loads, and a run that offers only static tools never pays for them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.inputs.envrefs import resolve_value
from pytest_toolselect.messages.errors import ServerError

from .failures import _describe, _fix_for, _reason
from .found import ServerTools, under_root
from .mcp_run import _run_async, load_sdk
from .schemas import _check_schemas, _check_unique, schema_problem
from .tools_file import _load_tools_file, load_tools_file

if TYPE_CHECKING:
    from pytest_toolselect.inputs.config import ServerSpec

__all__ = ["ServerTools", "clear_cache", "discover", "load_sdk", "load_tools_file", "offered_tools",
           "schema_problem"]

#: the form Claude Code shows, suggested when two servers give one tool name
SUGGESTED_NAME_FORMAT = "mcp__{server}__{tool}"


# --- cache -------------------------------------------------------------------------------

_cache: dict[tuple[ServerSpec, Path], ServerTools | ServerError] = {}
_key_locks: dict[tuple[ServerSpec, Path], threading.Lock] = {}
_cache_lock = threading.Lock()


def clear_cache() -> None:
    """Forget every discovered server (the next discover() starts it again)."""
    with _cache_lock:
        _cache.clear()
        _key_locks.clear()


def discover(spec: ServerSpec, root: Path) -> ServerTools:
    """The tools and instructions of one server; ServerError (only) when it cannot give them."""
    root = Path(root).resolve()
    key = (spec, root)
    with _cache_lock:
        lock = _key_locks.setdefault(key, threading.Lock())
    # One lock per server: concurrent callers wait for the first start instead of
    # starting the server again, while other servers are discovered in parallel.
    with lock:
        cached = _cache.get(key)
        if cached is None:
            try:
                cached = _discover_uncached(spec, root)
            except ServerError as exc:
                cached = exc
            with _cache_lock:
                _cache[key] = cached
    if isinstance(cached, ServerError):
        # Drop the previous raise's traceback so frames do not pile up on the cached error.
        raise cached.with_traceback(None)
    return cached


def discovered(spec: ServerSpec, root: Path) -> bool:
    """Whether discover() answers from memory: nothing to start, connect to or read."""
    key = (spec, Path(root).resolve())
    with _cache_lock:
        return key in _cache


def _discover_uncached(spec: ServerSpec, root: Path) -> ServerTools:
    try:
        if spec.kind == "tools_file":
            if not spec.tools_file:
                raise ServerError(
                    f"server '{spec.name}' has no command, url or tools_file",
                    fix="give it exactly one of them in the servers: section of the config",
                )
            written = resolve_value(spec.tools_file, _describe(spec), f"servers.{spec.name}.tools_file")
            path = under_root(root, written)
            tools = _load_tools_file(path, spec.name)
            _check_schemas(tools, spec, path)
            return ServerTools(spec.name, tools, None)
        result = _run_async(spec, root)
    except ServerError:
        raise
    except Exception as exc:  # the promise: nothing but ServerError leaves discover()
        raise ServerError(f"{_describe(spec)} failed: {_reason(exc)}", fix=_fix_for(spec, exc)) from exc
    _check_unique(result.tools, spec.name)
    _check_schemas(result.tools, spec)
    return result


# --- the offered set ---------------------------------------------------------------------


def offered_tools(
    specs: Sequence[ServerSpec], root: Path, tool_name_format: str | None = None
) -> tuple[tuple[Tool, ...], str | None]:
    """The tools the model is offered (server order, then each server's order) and the
    servers' instructions joined; a tool name given by two servers is an error unless
    tool_name_format renames every tool."""
    unique: list[ServerSpec] = []
    for spec in specs:  # the same server named twice is offered once
        if spec not in unique:
            unique.append(spec)

    owner: dict[str, str] = {}
    tools: list[Tool] = []
    notes: list[tuple[str, str]] = []
    for spec in unique:
        found = discover(spec, root)
        if found.instructions:
            notes.append((spec.name, found.instructions.strip()))
        for tool in found.tools:
            if tool_name_format is not None:
                tool = replace(
                    tool,
                    name=_format_name(tool_name_format, spec.name, tool.name),
                    original_name=tool.name,
                    server=spec.name,
                )
            if tool.name in owner:
                other = owner[tool.name]
                if tool_name_format is not None:
                    raise ServerError(
                        f"tool_name_format {tool_name_format!r} gives the name {tool.name!r}"
                        f" to tools of servers '{other}' and '{spec.name}'",
                        fix="include {server} and {tool} in tool_name_format",
                    )
                raise ServerError(
                    f"servers '{other}' and '{spec.name}' both offer a tool named {tool.name!r}",
                    fix=(
                        f"set tool_name_format, e.g. {SUGGESTED_NAME_FORMAT!r} (the form Claude"
                        " Code shows), to give each server's tools distinct names"
                    ),
                )
            owner[tool.name] = spec.name
            tools.append(tool)

    if not notes:
        return tuple(tools), None
    if len(notes) == 1:
        return tuple(tools), notes[0][1]
    # Several servers: head each one's text so the model knows which tools it speaks for.
    return tuple(tools), "\n\n".join(f"## {name}\n{text}" for name, text in notes)


def _format_name(fmt: str, server: str, tool: str) -> str:
    try:
        return fmt.format(server=server, tool=tool)
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        raise ServerError(
            f"tool_name_format {fmt!r} cannot be applied: {type(exc).__name__}: {exc}",
            fix="use only the placeholders {server} and {tool}",
        ) from exc
