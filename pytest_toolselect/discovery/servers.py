"""MCP tool discovery: stdio servers, streamable HTTP servers and static tools files.

A server is asked for two things only, ``initialize`` (for its instructions) and
``tools/list`` (every page); no tool is ever called. Results, failures included, are
cached per process so a server starts at most once however many items use it.

``mcp`` and ``anyio`` are imported inside the functions that need them: this module is
imported when the plugin loads, and a run that offers only static tools never pays for them.

The parts beside it: ``errors`` (what a failed discovery says), ``tools_file`` (static tools
files) and ``schemas`` (unique names, valid input schemas).
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Awaitable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_toolselect.spec.envrefs import resolve
from pytest_toolselect.spec.errors import ServerError
from pytest_toolselect.spec.tools import Tool

from .errors import _describe, _fail, _fix, _NotJsonRpc, _Probe, _reason
from .schemas import _check_schemas, _check_unique, schema_problem
from .tools_file import _empty_schema, _load_tools_file, load_tools_file

if TYPE_CHECKING:
    from mcp import ClientSession

    from pytest_toolselect.spec.config import ServerSpec

__all__ = ["ServerTools", "clear_cache", "discover", "load_tools_file", "offered_tools", "schema_problem"]

#: a server that keeps answering with a next cursor is broken, not big
MAX_PAGES = 1000
#: the form Claude Code shows, suggested when two servers give one tool name
SUGGESTED_NAME_FORMAT = "mcp__{server}__{tool}"


@dataclass(frozen=True)
class ServerTools:
    server: str
    tools: tuple[Tool, ...]
    instructions: str | None


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


def _discover_uncached(spec: ServerSpec, root: Path) -> ServerTools:
    try:
        if spec.kind == "tools_file":
            if not spec.tools_file:
                raise ServerError(
                    f"server '{spec.name}' has no command, url or tools_file",
                    fix="give it exactly one of them in the servers: section of the config",
                )
            path = _resolve(root, spec.tools_file)
            tools = _load_tools_file(path, spec.name)
            _check_schemas(tools, spec, path)
            return ServerTools(spec.name, tools, None)
        result = _run_async(spec, root)
    except ServerError:
        raise
    except Exception as exc:  # the promise: nothing but ServerError leaves discover()
        raise ServerError(f"{_describe(spec)} failed: {_reason(exc)}", fix=_fix(spec)) from exc
    _check_unique(result.tools, spec.name)
    _check_schemas(result.tools, spec)
    return result


def _resolve(root: Path, path: str) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else root / p


# --- MCP ---------------------------------------------------------------------------------


_discovering: ContextVar[bool] = ContextVar("toolselect_discovering", default=False)
_quiet_installed = False


#: the SDK's logs of a fault that the ServerError quotes: a stdout line or an HTTP body that
#: is not JSON-RPC, an HTTP answer of another content type, a redirect it does not follow
_QUOTED = ("Failed to parse JSONRPC", "Error parsing JSON response", "Unexpected content type",
           "Redirect to ")


class _QuietParseErrors(logging.Filter):
    """Drops the SDK's log (and traceback) of a fault the ServerError already quotes, while
    discovering: it would follow the error in every report."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_discovering.get() and str(record.msg).startswith(_QUOTED))


def _quiet_parse_errors() -> None:
    global _quiet_installed
    with _cache_lock:
        if not _quiet_installed:
            for name in ("mcp.client.stdio", "mcp.client.streamable_http"):
                logging.getLogger(name).addFilter(_QuietParseErrors())
            _quiet_installed = True


async def _guarded(probe: _Probe, work: Awaitable[ServerTools]) -> ServerTools:
    """Runs the requests, stopped at the first message that is not JSON-RPC.

    The SDK skips such a line, but the MCP spec forbids it, and a line that glued a log
    to a response has swallowed that response: waiting on would end only at the timeout.
    """
    import anyio
    import anyio.lowlevel

    async def watch() -> None:
        await probe.noise.wait()
        raise _NotJsonRpc()

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch)
        result = await work
        # The SDK hands a bad line to the handler in a task of its own: let it run, so a
        # line that came before the last answer is never missed.
        await anyio.lowlevel.checkpoint()
        if probe.stream_errors:
            raise _NotJsonRpc()
        tg.cancel_scope.cancel()
    return result


def _run_async(spec: ServerSpec, root: Path) -> ServerTools:
    """Runs discovery in a fresh event loop; callers are synchronous."""
    import anyio

    probe = _Probe()
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as stderr:
        probe.stderr = stderr
        try:
            if not _loop_running():
                return anyio.run(_discover_async, spec, root, probe)
            # Called from inside a running loop (an async test): anyio.run would refuse,
            # so run the discovery in its own thread with its own loop.
            return _in_thread(lambda: anyio.run(_discover_async, spec, root, probe))
        except ServerError:
            raise
        except Exception as exc:
            _fail(spec, probe, exc)


def _loop_running() -> bool:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _in_thread(fn: Any) -> ServerTools:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="toolselect-discover", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    result: ServerTools = box["result"]
    return result


async def _discover_async(spec: ServerSpec, root: Path, probe: _Probe) -> ServerTools:
    import anyio

    # The SDK is imported before the deadline starts: the server's timeout is its own
    # time, not the first import of the mcp package (seconds on a loaded machine).
    importlib.import_module("mcp.client.stdio" if spec.command else "mcp.client.streamable_http")
    _quiet_parse_errors()
    _discovering.set(True)  # the SDK's tasks, started from this one, inherit it
    probe.noise = anyio.Event()
    # One deadline for start + initialize + every tools/list page. The SDK's shutdown of a
    # stdio server is shielded from it and bounded on its own (a few seconds at most).
    with anyio.fail_after(spec.limit):
        if spec.command:
            return await _discover_stdio(spec, root, probe)
        return await _discover_http(spec, probe)


async def _discover_stdio(spec: ServerSpec, root: Path, probe: _Probe) -> ServerTools:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    assert spec.command is not None and probe.stderr is not None
    cwd = _resolve(root, spec.cwd) if spec.cwd else root
    if not cwd.is_dir():
        raise ServerError(
            f"{_describe(spec)} cannot start: its cwd {str(cwd)!r} is not a directory",
            fix=f"check servers.{spec.name}.cwd; relative paths start at the rootdir",
        )
    params = StdioServerParameters(
        command=_command(spec.command, root),
        args=list(spec.args),
        # Only the declared variables: the SDK adds its safe default set (PATH, HOME, ...)
        # and never the rest of os.environ, so a key in the test process does not leak.
        env=resolve(spec.env, _describe(spec), f"servers.{spec.name}.env"),
        cwd=cwd,
    )
    async with (
        stdio_client(params, errlog=probe.stderr) as (read, write),
        ClientSession(read, write, message_handler=probe.on_message) as session,
    ):
        return await _guarded(probe, _list(spec, session, probe))


async def _discover_http(spec: ServerSpec, probe: _Probe) -> ServerTools:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    assert spec.url is not None
    # The SDK takes headers only through a client of its own httpx flavour (httpx2);
    # the timeouts mirror its defaults, and our own deadline bounds the whole run anyway.
    headers = resolve(spec.headers, _describe(spec), f"servers.{spec.name}.headers")
    client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0),
                                event_hooks={"response": [probe.on_response]})
    async with (
        client,
        streamable_http_client(spec.url, http_client=client) as (read, write),
        ClientSession(read, write, message_handler=probe.on_message) as session,
    ):
        return await _guarded(probe, _list(spec, session, probe))


async def _list(spec: ServerSpec, session: ClientSession, probe: _Probe) -> ServerTools:
    from mcp import types

    probe.phase = "initialize"
    init = await session.initialize()
    tools: list[Tool] = []
    cursor: str | None = None
    seen: set[str] = set()
    for page in range(1, MAX_PAGES + 1):
        probe.phase = "tools/list" if page == 1 else f"tools/list (page {page})"
        params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        result = await session.list_tools(params=params)
        tools.extend(
            Tool(
                name=t.name,
                description=t.description or "",
                input_schema=dict(t.input_schema) if t.input_schema else _empty_schema(),
                server=spec.name,
            )
            for t in result.tools
        )
        cursor = result.next_cursor
        if not cursor:  # absent, or the "" some servers send on the last page
            instructions = init.instructions if init.instructions and init.instructions.strip() else None
            return ServerTools(spec.name, tuple(tools), instructions)
        if cursor in seen:
            raise ServerError(
                f"{_describe(spec)} repeated the tools/list cursor {cursor!r} (page {page});"
                " its pagination loops",
                fix="fix the server's tools/list paging",
            )
        seen.add(cursor)
    raise ServerError(
        f"{_describe(spec)} was still paginating tools/list after {MAX_PAGES} pages"
        f" ({len(tools)} tools so far): every answer carried a nextCursor",
        fix="fix the server's tools/list paging: the last page must have no nextCursor",
    )


def _command(command: str, root: Path) -> str:
    # "python" in a config means this interpreter, so an example runs inside a venv
    # whose python is not the first one on PATH.
    if command in ("python", "python3"):
        return sys.executable
    # A relative path (not a bare name looked up on PATH) is relative to the rootdir.
    if os.sep in command or (os.altsep and os.altsep in command):
        return str(_resolve(root, command))
    return command


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
