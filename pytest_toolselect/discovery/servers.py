"""MCP tool discovery: stdio servers, streamable HTTP servers and static tools files.

A server is asked for two things only, ``initialize`` (for its instructions) and
``tools/list`` (every page); no tool is ever called. Results, failures included, are
cached per process so a server starts at most once however many items use it.

``mcp`` and ``anyio`` are imported inside the functions that need them: this module is
imported when the plugin loads, and a run that offers only static tools never pays for them.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Awaitable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

from pytest_toolselect.spec.envrefs import resolve
from pytest_toolselect.spec.errors import ServerError, nearest
from pytest_toolselect.spec.tools import Tool

if TYPE_CHECKING:
    from mcp import ClientSession

    from pytest_toolselect.spec.config import ServerSpec

__all__ = ["ServerTools", "clear_cache", "discover", "load_tools_file", "offered_tools", "schema_problem"]

#: a server that keeps answering with a next cursor is broken, not big
MAX_PAGES = 1000
#: how much of a failed server's stderr goes into the error message
STDERR_TAIL_LINES = 20
STDERR_TAIL_CHARS = 3000
#: the form Claude Code shows, suggested when two servers give one tool name
SUGGESTED_NAME_FORMAT = "mcp__{server}__{tool}"


def _empty_schema() -> dict[str, Any]:
    """The schema of a tool that takes no arguments (a fresh dict: callers may mutate it)."""
    return {"type": "object", "properties": {}}


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


class _Probe:
    """What one discovery run saw, for the error message when it fails."""

    def __init__(self) -> None:
        self.phase = "starting the server"
        self.stream_errors: list[Exception] = []
        self.stderr: IO[str] | None = None
        self.noise: Any = None  # an anyio.Event, made inside the event loop
        #: the status and reason of the last HTTP answer that was an error (the SDK keeps
        #: neither: a 401 or a 502 reach it as "Server returned an error response")
        self.http_error: tuple[int, str] | None = None

    async def on_response(self, response: Any) -> None:
        if response.status_code >= 400:
            self.http_error = (response.status_code, response.reason_phrase)

    async def on_message(self, message: Any) -> None:
        # Transport faults (e.g. a print() on the server's stdout) arrive here as values.
        if isinstance(message, Exception):
            line = _line_of(message)
            if line is not None and not line.strip():
                # an empty line (or a lone \r of a \r\n pair) holds no message and glues to
                # none: the SDK passes over it, and so do other clients
                return
            if len(self.stream_errors) < 5:
                self.stream_errors.append(message)
            if self.noise is not None:
                self.noise.set()


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


class _NotJsonRpc(Exception):
    """The server sent something that is not a JSON-RPC message."""


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


# --- failure messages --------------------------------------------------------------------


def _describe(spec: ServerSpec) -> str:
    if spec.command:
        shown = " ".join([spec.command, *spec.args])
        if len(shown) > 120:
            shown = shown[:117] + "..."
        return f"MCP server '{spec.name}' (stdio: {shown})"
    if spec.url:
        return f"MCP server '{spec.name}' (streamable HTTP: {spec.url})"
    return f"server '{spec.name}'"


def _fix(spec: ServerSpec) -> str:
    return f"check servers.{spec.name} in the config"


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions inside (possibly nested) exception groups, in order."""
    # Duck-typed: the builtin BaseExceptionGroup is 3.11+, anyio backports it on 3.10.
    subs = getattr(exc, "exceptions", None)
    if isinstance(subs, tuple | list):
        for sub in subs:
            yield from _leaves(sub)
    else:
        yield exc


def _root_cause(exc: BaseException) -> BaseException:
    import asyncio

    # Cancellations are the task groups unwinding, never the reason.
    leaves = [e for e in _leaves(exc) if not isinstance(e, asyncio.CancelledError)]
    if not leaves:
        return exc
    # A connection-closed error is the echo of a deeper fault when there is one.
    informative = [e for e in leaves if "Connection closed" not in str(e)]
    return (informative or leaves)[0]


def _reason(exc: BaseException) -> str:
    cause = _root_cause(exc)
    text = str(cause).strip()
    name = type(cause).__name__
    return f"{name}: {text}" if text else name


def _fail(spec: ServerSpec, probe: _Probe, exc: BaseException) -> NoReturn:
    cause = _root_cause(exc)
    if isinstance(cause, ServerError):  # our own, raised inside the task groups
        raise cause.with_traceback(None) from None
    what = _describe(spec)
    fix = _fix(spec)
    if isinstance(cause, _NotJsonRpc) and probe.stream_errors:
        where = "on stdout " if spec.command else ""
        reason = (
            f"during {probe.phase}, it wrote a line {where}that is not JSON-RPC:"
            f" {_stream_error(probe.stream_errors[0])}"
        )
        fix = (
            "an MCP stdio server must write only JSON-RPC messages to stdout; send its logs to stderr"
            if spec.command
            else "fix what the server sends"
        )
    elif _is_validation_error(cause):
        reason = f"answered {probe.phase} with a result that breaks the MCP schema: {_invalid_fields(cause)}"
        fix = (
            "fix the server's tool definitions: each inputSchema must be a JSON Schema object"
            " with type 'object'"
            if probe.phase.startswith("tools/list")
            else f"fix the server's answer to {probe.phase}"
        )
    elif isinstance(cause, TimeoutError):
        reason = (
            f"did not finish start, initialize and tools/list within {spec.limit:g} s"
            f" (timeout; it was at: {probe.phase})"
        )
        fix = (
            f"if the server is just slow to start, raise servers.{spec.name}.timeout"
            " (or --toolselect-discovery-timeout for every server); else check it"
        )
    elif isinstance(cause, FileNotFoundError) and spec.command and probe.phase == "starting the server":
        reason = f"command {spec.command!r} not found"
        fix = f"check servers.{spec.name}.command: a name on PATH, or a path relative to the rootdir"
    elif isinstance(cause, PermissionError) and probe.phase == "starting the server":
        reason = f"command {spec.command!r} cannot be executed ({cause.strerror})"
    elif "Connection closed" in str(cause) and spec.command:
        reason = f"exited or closed its stdout during {probe.phase}"
        fix = "run its command by hand from the rootdir to see why it stops"
    elif _is_connect_error(cause):
        reason = f"cannot connect during {probe.phase}: {_reason(cause)}"
        fix = f"start the server first, or check servers.{spec.name}.url"
    elif spec.url and probe.http_error is not None:
        reason, fix = _http_error(spec, probe, str(cause))
    elif spec.url and str(cause).startswith("Failed to parse JSON response"):
        reason = f"answered {probe.phase} with a body that is not JSON-RPC: {_pydantic_detail(str(cause))}"
        fix = f"check that servers.{spec.name}.url is the server's MCP endpoint"
    else:
        reason = f"failed during {probe.phase}: {_reason(cause)}"
    if probe.stream_errors and not isinstance(cause, _NotJsonRpc):
        reason += f"; it wrote something that is not JSON-RPC: {_stream_error(probe.stream_errors[0])}"
    from pytest_toolselect.providers.secrets import redact

    tail = _stderr_tail(probe.stderr)
    if tail:
        # The fix goes before the stderr lines, where it cannot be read as one of them.
        message = f"{what}: {reason} ({fix})\nlast lines of its stderr:\n{tail}"
        # a server may log the credentials it was given in `env:` (or any key) as it fails
        raise ServerError(redact(message, spec.secrets)) from cause
    raise ServerError(redact(f"{what}: {reason}", spec.secrets), fix=fix) from cause


#: what to check for an HTTP error status, by status
_HTTP_FIXES = {
    401: "check the credentials in servers.{name}.headers: the server wants a token it accepts",
    403: "check the credentials in servers.{name}.headers: the server refused them for this endpoint",
    404: "check the path in servers.{name}.url (the mcp SDK serves streamable HTTP at /mcp)",
    405: "check that servers.{name}.url is a streamable HTTP endpoint (it must accept POST)",
}
#: the SDK's stand-in messages for an HTTP error; any other message is the server's own
_STAND_INS = ("Server returned an error response", "Not Found", "Session terminated")


def _http_error(spec: ServerSpec, probe: _Probe, message: str) -> tuple[str, str]:
    assert probe.http_error is not None
    status, phrase = probe.http_error
    reason = f"answered {status} {phrase} during {probe.phase}".rstrip()
    if message and message not in _STAND_INS:  # a JSON-RPC error the server put in the body
        reason += f": {message}"
    default = ("the server failed: see its logs" if status >= 500
               else "check servers.{name}.url and servers.{name}.headers")
    return reason, _HTTP_FIXES.get(status, default).format(name=spec.name)


def _pydantic_detail(message: str) -> str:
    """The line of a pydantic error that says what was wrong, without its schema and link."""
    lines = [line.strip() for line in message.splitlines()[1:] if line.strip()]
    useful = [line for line in lines if not line.startswith("For further information")]
    return useful[0] if useful else message.splitlines()[0]


def _is_validation_error(exc: BaseException) -> bool:
    # pydantic's, raised by the SDK when an answer does not fit its MCP types
    return type(exc).__name__ == "ValidationError" and callable(getattr(exc, "errors", None))


def _invalid_fields(exc: BaseException) -> str:
    """'tools[2].inputSchema.type: Input should be 'object' (got 12)', for the first few errors."""
    try:
        errors = exc.errors()  # type: ignore[attr-defined]
    except Exception:
        return str(exc).splitlines()[0]
    parts = []
    for error in errors[:3]:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.get("loc", ()))
        got = repr(error.get("input"))
        got = got if len(got) <= 80 else got[:77] + "..."
        parts.append(f"{path.lstrip('.') or 'the result'}: {error.get('msg', 'invalid')} (got {got})")
    more = f"; and {len(errors) - 3} more" if len(errors) > 3 else ""
    return "; ".join(parts) + more


def _is_connect_error(exc: BaseException) -> bool:
    return type(exc).__name__ in ("ConnectError", "ConnectTimeout") or isinstance(exc, ConnectionError)


def _line_of(exc: Exception) -> str | None:
    """The stdout line a parse error of the SDK quotes (pydantic's input), if it quotes one."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            line = errors()[0].get("input")
        except Exception:
            return None
        return line if isinstance(line, str) else None
    return None


def _stream_error(exc: Exception) -> str:
    line = _line_of(exc)
    if line is not None:  # pydantic: show the offending line, not the schema dump
        if line.startswith("\ufeff"):
            # invisible in most editors and logs, so say what it is
            return f"{line[:200]!r} (it starts with a UTF-8 byte order mark: write UTF-8 without one)"
        return repr(line[:200])
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def _stderr_tail(stderr: IO[str] | None) -> str:
    if stderr is None:
        return ""
    try:
        stderr.flush()
        # Only the end matters; a chatty server may have logged megabytes before it failed.
        size = stderr.seek(0, os.SEEK_END)
        stderr.seek(max(0, size - 64 * 1024))
        lines = stderr.read().rstrip().splitlines()[-STDERR_TAIL_LINES:]
    except (OSError, ValueError):
        return ""
    text = "\n".join("  " + line for line in lines)
    return text[-STDERR_TAIL_CHARS:]


# --- static tools files ------------------------------------------------------------------

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
    from pytest_toolselect.spec.errors import ToolselectError
    from pytest_toolselect.spec.sourcemap import describe, load_file

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
            keys = ", ".join(map(repr, list(data)[:5]))
            bad(f"a mapping needs a 'tools' list (it has {keys or 'no keys'})", (), _SHAPE_FIX)
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
    from pytest_toolselect.spec.sourcemap import describe

    if not isinstance(entry, Mapping):
        raise _EntryError(f"a tool must be a mapping, got {describe(entry)}",
                          "write each tool as a mapping with at least name: and description:")
    for key in entry:
        if key not in _KNOWN_KEYS:
            # inputschema is inputSchema with the case lost, before it is anything else
            near = next((k for k in _KNOWN_KEYS if k.lower() == str(key).lower()), None) \
                or nearest(str(key), _KNOWN_KEYS)
            if near:
                raise _EntryError(f"unknown key {key!r} (did you mean {near!r}?)",
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


# --- the offered set ---------------------------------------------------------------------


def _check_unique(tools: Sequence[Tool], server: str) -> None:
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise ServerError(
                f"server '{server}' lists the tool {tool.name!r} twice",
                fix="tool names must be unique within a server",
            )
        seen.add(tool.name)


def _check_schemas(tools: Sequence[Tool], spec: ServerSpec, file: Path | None = None) -> None:
    """Every input schema must be a valid JSON Schema: a model API refuses the whole request
    over one bad schema, and an offline model would not notice it at all."""
    for tool in tools:
        problem = schema_problem(tool.input_schema)
        if problem:
            raise ServerError(
                f"{_describe(spec)}: the input schema of tool {tool.name!r} is not valid JSON Schema:"
                f" {problem}",
                file=file,
                fix=f"fix the tool's {'input schema in the file' if file else 'inputSchema in the server'}:"
                " models receive it as it is",
            )


# Keywords whose value every JSON Schema draft since 4 types the same way. Checking just
# these catches the mistakes that make a model API refuse a request ({"type": 12},
# "required": "id", a property that is not a schema) in microseconds per tool, where a
# metaschema validation with jsonschema takes over a millisecond (seconds at 5,000 tools).
_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_TYPE_LIST = ", ".join(sorted(_SIMPLE_TYPES))
_SCHEMA_KEYS = frozenset({
    "additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then",
    "else", "unevaluatedItems", "unevaluatedProperties",
})
_SCHEMA_MAP_KEYS = frozenset({"properties", "patternProperties", "definitions", "$defs", "dependentSchemas"})
_SCHEMA_LIST_KEYS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_COUNT_KEYS = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"})
_NUMBER_KEYS = frozenset({"minimum", "maximum", "multipleOf"})
_STRING_KEYS = frozenset({"title", "description", "pattern", "format", "$ref", "$id", "$schema"})


def schema_problem(schema: Any, path: str = "") -> str | None:
    """What makes ``schema`` an invalid JSON Schema, as 'at <path>: <problem>', or None.

    A structural check of the keywords above, recursively; other keywords pass unchecked.
    """
    here = f"at {path}: " if path else ""
    if isinstance(schema, bool):
        return None
    if not isinstance(schema, Mapping):
        return f"{here}a schema must be an object or a boolean, got {_shown(schema)}"

    def sub(key: str) -> str:
        return f"{path}.{key}" if path else key

    for key, value in schema.items():
        problem: str | None = None
        if key == "type":
            types_ = value if isinstance(value, list) and value else [value]
            bad = [t for t in types_ if not isinstance(t, str) or t not in _SIMPLE_TYPES]
            if bad:
                problem = f"{_shown(bad[0])} is not a JSON Schema type (one of {_TYPE_LIST})"
        elif key == "required":
            # (a boolean here is draft 3, which MCP does not speak)
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                problem = f"must be a list of property names, got {_shown(value)}"
        elif key == "enum":
            if not isinstance(value, list):
                problem = f"must be a list, got {_shown(value)}"
        elif key in _COUNT_KEYS:
            # 5.0 is an integer to JSON Schema (draft 6 on): a float-minded writer may send it
            whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
            if isinstance(value, bool) or not whole or value < 0:
                problem = f"must be a non-negative integer, got {_shown(value)}"
        elif key in _NUMBER_KEYS:
            if isinstance(value, bool) or not isinstance(value, int | float):
                problem = f"must be a number, got {_shown(value)}"
        elif key in _STRING_KEYS:
            if not isinstance(value, str):
                problem = f"must be a string, got {_shown(value)}"
        elif key in _SCHEMA_KEYS or (key == "items" and not isinstance(value, list)):
            found = schema_problem(value, sub(key))
            if found:
                return found
        elif key in _SCHEMA_MAP_KEYS:
            if not isinstance(value, Mapping):
                problem = f"must map names to schemas, got {_shown(value)}"
            else:
                for name, inner in value.items():
                    found = schema_problem(inner, f"{sub(key)}.{name}")
                    if found:
                        return found
        elif key in _SCHEMA_LIST_KEYS or key == "items":  # items as a list: drafts before 2020-12
            if not isinstance(value, list) or (key != "prefixItems" and key != "items" and not value):
                problem = f"must be a non-empty list of schemas, got {_shown(value)}"
            else:
                for i, inner in enumerate(value):
                    found = schema_problem(inner, f"{sub(key)}[{i}]")
                    if found:
                        return found
        if problem:
            return f"at {sub(key)}: {problem}"
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value, default=repr) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
