"""A failed discovery said plainly: what the server was doing, why it failed, how to fix it.

``_Probe`` gathers what one MCP discovery saw (its phase, stream faults, stderr, the last HTTP
error) so the ServerError can quote it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any, NoReturn, TextIO

from pytest_toolselect.messages.errors import ServerError, ToolselectError
from pytest_toolselect.messages.masking import redact

if TYPE_CHECKING:
    from pytest_toolselect.inputs.config import ServerSpec


#: how much of a failed server's stderr goes into the error message
STDERR_TAIL_LINES = 20
STDERR_TAIL_CHARS = 3000


class _Probe:
    """What one discovery run saw, for the error message when it fails."""

    def __init__(self) -> None:
        self.phase = "starting the server"
        self.stream_errors: list[Exception] = []
        self.stderr: TextIO | None = None
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


class _NotJsonRpc(Exception):
    """The server sent something that is not a JSON-RPC message."""


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


#: said of a fault of this process, where "check the config" would send the user astray
INTERNAL_FIX = ("not a fault of the server or its config: an internal error of"
                " pytest-toolselect, please report it with this message")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _internal(exc: BaseException) -> bool:
    """A fault of this process, not of the server or the config: an import that deadlocked
    or failed, or an error raised by the plugin's own code (not one of its messages)."""
    if isinstance(exc, ToolselectError):
        return False
    if isinstance(exc, ImportError) or type(exc).__name__ == "_DeadlockError":
        return True
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    # raised in a frame of this package (a bug of ours), not of the SDK or the server
    return tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(
        _PACKAGE + os.sep)


def _fix_for(spec: ServerSpec, exc: BaseException) -> str:
    return INTERNAL_FIX if _internal(exc) else _fix(spec)


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
    fix = _fix_for(spec, cause)
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
        text = stderr.read()
    except (OSError, ValueError):
        return ""

    # masked before it is cut: a private key's last lines would no longer show its shape
    lines = redact(text).rstrip().splitlines()[-STDERR_TAIL_LINES:]
    text = "\n".join("  " + line for line in lines)
    return text[-STDERR_TAIL_CHARS:]
