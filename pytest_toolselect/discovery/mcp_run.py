"""One MCP discovery run to its end from synchronous code: a fresh event loop (or a thread
with its own loop when one is already running), one deadline, the transport the spec names.
"""

from __future__ import annotations

import importlib
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_toolselect.spec.errors import ServerError

from .errors import _fail, _Probe
from .found import ServerTools
from .mcp_session import _discovering, _quiet_parse_errors

if TYPE_CHECKING:
    from pytest_toolselect.spec.config import ServerSpec


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
            from .stdio import _discover_stdio

            return await _discover_stdio(spec, root, probe)
        from .streamable_http import _discover_http

        return await _discover_http(spec, probe)
