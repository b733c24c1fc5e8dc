"""One SDK client per running event loop, closed when that loop shuts down."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, TypeVar

C = TypeVar("C")


class LoopClients(Generic[C]):
    """One SDK client per running event loop, closed when that loop shuts down.

    A client's connection pool belongs to the loop it was made on, and the
    session may run each call under its own asyncio.run(). Making a client per
    call costs ~40 ms (TLS context) and loses connection reuse, so one is kept
    per loop. It is closed from an async generator's `finally`: asyncio.run()
    (and any runner that calls loop.shutdown_asyncgens()) closes open async
    generators before closing the loop, which is the one hook a loop offers.
    """

    def __init__(self, make: Callable[[], C], close: Callable[[C], Awaitable[Any]]) -> None:
        self._make = make
        self._close = close
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[C, Any]] = (
            weakref.WeakKeyDictionary()
        )

    async def get(self) -> C:
        loop = asyncio.get_running_loop()
        held = self._by_loop.get(loop)
        if held is not None:
            return held[0]
        client = self._make()
        keeper = self._keep(loop, client)
        await keeper.__anext__()  # started: the loop now tracks it for shutdown
        self._by_loop[loop] = (client, keeper)
        return client

    async def _keep(self, loop: asyncio.AbstractEventLoop, client: C) -> AsyncIterator[None]:
        try:
            yield
        finally:
            self._by_loop.pop(loop, None)
            with contextlib.suppress(Exception):
                await self._close(client)
