"""MCP tool discovery: stdio servers, streamable HTTP servers and static tools files.

A server is asked for two things only, ``initialize`` (for its instructions) and
``tools/list`` (every page); no tool is ever called. Results, failures included, are
cached per process so a server starts at most once however many items use it.

``mcp`` and ``anyio`` are imported inside the functions that need them: this module is
imported when the plugin loads, and a run that offers only static tools never pays for them.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

from .errors import ServerError, nearest
from .tools import Tool

if TYPE_CHECKING:
    from mcp import ClientSession

    from .config import ServerSpec

__all__ = ["ServerTools", "clear_cache", "discover", "load_tools_file", "offered_tools"]

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
            tools = _load_tools_file(_resolve(root, spec.tools_file), spec.name)
            return ServerTools(spec.name, tools, None)
        result = _run_async(spec, root)
    except ServerError:
        raise
    except Exception as exc:  # the promise: nothing but ServerError leaves discover()
        raise ServerError(f"{_describe(spec)} failed: {_reason(exc)}", fix=_fix(spec)) from exc
    _check_unique(result.tools, spec.name)
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

    async def on_message(self, message: Any) -> None:
        # Transport faults (e.g. a print() on the server's stdout) arrive here as values.
        if isinstance(message, Exception) and len(self.stream_errors) < 5:
            self.stream_errors.append(message)


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

    # One deadline for start + initialize + every tools/list page. The SDK's shutdown of a
    # stdio server is shielded from it and bounded on its own (a few seconds at most).
    with anyio.fail_after(spec.timeout):
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
        env=dict(spec.env),
        cwd=cwd,
    )
    async with (
        stdio_client(params, errlog=probe.stderr) as (read, write),
        ClientSession(read, write, message_handler=probe.on_message) as session,
    ):
        return await _list(spec, session, probe)


async def _discover_http(spec: ServerSpec, probe: _Probe) -> ServerTools:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    assert spec.url is not None
    # The SDK takes headers only through a client of its own httpx flavour (httpx2);
    # the timeouts mirror its defaults, and our own deadline bounds the whole run anyway.
    client = httpx2.AsyncClient(headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0))
    async with (
        client,
        streamable_http_client(spec.url, http_client=client) as (read, write),
        ClientSession(read, write, message_handler=probe.on_message) as session,
    ):
        return await _list(spec, session, probe)


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
        f"{_describe(spec)} was still paginating tools/list after {MAX_PAGES} pages",
        fix="fix the server's tools/list paging",
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
    if isinstance(cause, TimeoutError):
        reason = (
            f"did not finish start, initialize and tools/list within {spec.timeout:g} s"
            f" (timeout; it was at: {probe.phase})"
        )
        fix = f"raise servers.{spec.name}.timeout if the server is slow to start, or check it"
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
    elif spec.url and str(cause) == "Not Found":
        reason = f"answered 404 Not Found during {probe.phase}"
        fix = f"check the path in servers.{spec.name}.url (the mcp SDK serves streamable HTTP at /mcp)"
    else:
        reason = f"failed during {probe.phase}: {_reason(cause)}"
    if probe.stream_errors:
        reason += f"; it wrote something that is not JSON-RPC: {_stream_error(probe.stream_errors[0])}"
    tail = _stderr_tail(probe.stderr)
    if tail:
        # The fix goes before the stderr lines, where it cannot be read as one of them.
        message = f"{what}: {reason} ({fix})\nlast lines of its stderr:\n{tail}"
        raise ServerError(message) from cause
    raise ServerError(f"{what}: {reason}", fix=fix) from cause


def _is_connect_error(exc: BaseException) -> bool:
    return type(exc).__name__ in ("ConnectError", "ConnectTimeout") or isinstance(exc, ConnectionError)


def _stream_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):  # pydantic: show the offending line, not the schema dump
        try:
            first = errors()[0]
            return repr(str(first.get("input", ""))[:200])
        except Exception:
            pass
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


def _load_tools_file(path: Path, server: str) -> tuple[Tool, ...]:
    who = f"server '{server}': " if server else ""

    def bad(message: str, place: str | None = None, line: int | None = None) -> NoReturn:
        raise ServerError(f"{who}{message}", file=path, place=place, line=line)

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        bad("tools file not found")
    except (OSError, UnicodeDecodeError) as exc:
        bad(f"cannot read the tools file: {exc}")

    data: Any
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            bad(f"not valid JSON: {exc.msg}", line=exc.lineno)
    else:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or str(exc)
            bad(f"not valid YAML: {problem}", line=mark.line + 1 if mark is not None else None)

    if isinstance(data, Mapping):
        if "tools" not in data:
            bad("a mapping needs a 'tools' list")
        entries, prefix = data["tools"], "tools"
    else:
        entries, prefix = data, ""
    if not isinstance(entries, list):
        bad(
            f"expected a list of tools, or a mapping with a 'tools' list; got {type(entries).__name__}",
            place=prefix or None,
        )

    tools: list[Tool] = []
    first_index: dict[str, int] = {}
    for i, entry in enumerate(entries):
        place = f"{prefix}[{i}]" if prefix else f"entry {i}"
        try:
            tool = _parse_entry(entry)
        except _EntryError as exc:
            bad(str(exc), place=place)
        if tool.name in first_index:
            bad(f"duplicate tool name {tool.name!r} (also at index {first_index[tool.name]})", place)
        first_index[tool.name] = i
        tools.append(replace(tool, server=server))
    return tuple(tools)


class _EntryError(Exception):
    """What is wrong with one tools-file entry; the caller adds the file and index."""


def _parse_entry(entry: Any) -> Tool:
    if not isinstance(entry, Mapping):
        raise _EntryError(f"a tool must be a mapping, got {type(entry).__name__}")
    for key in entry:
        if key not in _KNOWN_KEYS:
            near = nearest(str(key), _KNOWN_KEYS)
            if near:
                raise _EntryError(f"unknown key {key!r} (did you mean {near!r}?)")

    body: Mapping[str, Any] = entry
    schema_keys: tuple[str, ...] = ("inputSchema", "input_schema")
    if "type" in entry or "function" in entry:
        # OpenAI function tool: nested ({"type": "function", "function": {...}}) as in Chat
        # Completions, or flat ({"type": "function", "name": ...}) as in the Responses API.
        if entry.get("type") != "function":
            raise _EntryError(f"type must be 'function' for an OpenAI tool, got {entry.get('type')!r}")
        if "function" in entry:
            body = entry["function"]
            if not isinstance(body, Mapping):
                raise _EntryError(f"'function' must be a mapping, got {type(body).__name__}")
        schema_keys = ("parameters",)

    name = body.get("name")
    if name is None:
        raise _EntryError("missing 'name'")
    if not isinstance(name, str) or not name.strip():
        raise _EntryError(f"'name' must be a non-empty string, got {name!r}")
    description = body.get("description")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise _EntryError(f"tool {name!r}: 'description' must be a string, got {type(description).__name__}")

    present = [k for k in schema_keys if k in body]
    if len(present) > 1:
        raise _EntryError(f"tool {name!r}: give only one of {' and '.join(map(repr, present))}")
    schema = body[present[0]] if present else None
    if schema is None:
        schema = _empty_schema()
    if not isinstance(schema, Mapping):
        raise _EntryError(
            f"tool {name!r}: {present[0]!r} must be a mapping (a JSON Schema object),"
            f" got {type(schema).__name__}"
        )
    if schema.get("type", "object") != "object":
        raise _EntryError(
            f"tool {name!r}: the input schema's type must be 'object', got {schema.get('type')!r}"
        )
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
