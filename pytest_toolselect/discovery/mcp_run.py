"""One MCP discovery run to its end from synchronous code: a fresh event loop (or a thread
with its own loop when one is already running), one deadline, the transport the spec names.

The SDK is imported by ``load_sdk``: once, one thread at a time (see there).
"""

from __future__ import annotations

import importlib
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_toolselect.messages.errors import ServerError

from .failures import _describe, _fail, _Probe, _reason
from .found import ServerTools
from .mcp_session import _discovering, _quiet_parse_errors
from .stdio import _discover_stdio
from .streamable_http import _discover_http

if TYPE_CHECKING:
    from pytest_toolselect.inputs.config import ServerSpec


#: every module a discovery imports, in an order that imports none of them half-way: the
#: transports import each other's parts, so two first imports in two threads deadlock
_SDK_MODULES = ("anyio", "anyio._backends._asyncio", "httpx2", "mcp", "mcp.client.stdio",
                "mcp.client.streamable_http")
_sdk_lock = threading.Lock()
_sdk_loaded = False


def load_sdk() -> None:
    """Import the MCP SDK and what discovery runs on, once, one thread at a time.

    Python's import locks raise ``_DeadlockError`` when two threads import
    ``mcp.client.stdio`` and ``mcp.client.streamable_http`` for the first time at once (a
    suite with a stdio and an HTTP server, discovered in parallel). The run calls this on
    its main thread before its worker threads start; every discovery calls it too, so one
    started from other threads still imports the SDK serially.
    """
    global _sdk_loaded
    if _sdk_loaded:
        return
    with _sdk_lock:
        if not _sdk_loaded:
            for name in _SDK_MODULES:
                importlib.import_module(name)
            _sdk_loaded = True


def _run_async(spec: ServerSpec, root: Path) -> ServerTools:
    """Runs discovery in a fresh event loop; callers are synchronous."""
    probe = _Probe()
    try:
        load_sdk()
    except ImportError as exc:
        raise ServerError(f"{_describe(spec)} cannot be discovered: {_reason(exc)}",
                          fix="install the mcp package in this environment (pip install mcp)"
                          ) from exc
    import anyio

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

    # The SDK was imported before the deadline starts (load_sdk): the server's timeout is
    # its own time, not the first import of the mcp package (seconds on a loaded machine).
    _quiet_parse_errors()
    _discovering.set(True)  # the SDK's tasks, started from this one, inherit it
    probe.noise = anyio.Event()
    # One deadline for start + initialize + every tools/list page. The SDK's shutdown of a
    # stdio server is shielded from it and bounded on its own (a few seconds at most).
    with anyio.fail_after(spec.limit):
        if spec.command:
            return await _discover_stdio(spec, root, probe)
        return await _discover_http(spec, probe)
