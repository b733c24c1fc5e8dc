"""What an MCP discovery does once connected, whatever the transport: ``initialize``, every
``tools/list`` page, and a stop at the first message that is not JSON-RPC.

``mcp`` and ``anyio`` are imported inside the functions: the plugin imports discovery when it
loads, and a run that offers only static tools never pays for them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable
from contextvars import ContextVar
from typing import TYPE_CHECKING

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.messages.errors import ServerError

from .failures import _describe, _NotJsonRpc, _Probe
from .found import ServerTools
from .tools_file import _empty_schema

if TYPE_CHECKING:
    from mcp import ClientSession

    from pytest_toolselect.inputs.config import ServerSpec

#: a server that keeps answering with a next cursor is broken, not big
MAX_PAGES = 1000

_install_lock = threading.Lock()
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
    with _install_lock:
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
