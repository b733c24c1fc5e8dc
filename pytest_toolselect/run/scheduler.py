"""Calls ahead of the items that need them: a bounded async scheduler in a background thread.

pytest runs items one at a time; a model call takes a second or two. The run
session hands the scheduler every upcoming case at once, the scheduler runs at
most N calls at a time (and no faster than the rate limit), and each item
waits only for its own result, so items still report in pytest's order while
the wall time approaches calls x latency / N.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import heapq
import itertools
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: the submitting order of the job a call belongs to (calls outside a job go last)
_TICKET: contextvars.ContextVar[int] = contextvars.ContextVar("toolselect_ticket", default=1 << 62)


class Stopped(Exception):
    """The run stopped (-x, Ctrl-C, end of session) before this call started."""


class RateLimiter:
    """Requests and tokens per minute, and a pause every call honours after a 429.

    Requests are spaced evenly (60 / rpm seconds apart) rather than let through in
    bursts, since a burst is what earns a 429 in the first place.
    """

    def __init__(self, rpm: float | None = None, tpm: float | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self.tpm = tpm
        self._clock = clock
        self._sleep = sleep
        self._next = 0.0
        self._resume_at = 0.0
        self._tokens = float(tpm or 0)
        self._filled_at = clock()
        self._guard = threading.Lock()  # pause() comes from any thread
        self._lock: asyncio.Lock | None = None

    def pause(self, seconds: float) -> None:
        """Hold every new call for `seconds` (a 429 or retry-after seen by any call)."""
        with self._guard:
            self._resume_at = max(self._resume_at, self._clock() + seconds)

    async def acquire(self, tokens: int = 0) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # one caller at a time takes the next slot: FIFO spacing
            while True:
                now = self._clock()
                with self._guard:
                    wait = max(self._next - now, self._resume_at - now, 0.0)
                if self.tpm:
                    self._tokens = min(self.tpm, self._tokens + (now - self._filled_at) * self.tpm / 60)
                    self._filled_at = now
                    need = min(tokens, self.tpm)  # one request larger than a minute's budget still goes
                    if need > self._tokens:
                        wait = max(wait, (need - self._tokens) * 60 / self.tpm)
                if wait <= 0:
                    break
                await self._sleep(wait)
            self._next = max(now, self._next) + self.interval
            if self.tpm:
                self._tokens -= min(tokens, self.tpm)


class Scheduler:
    """At most `concurrency` jobs at a time on a private event loop in a daemon thread."""

    def __init__(self, concurrency: int, limiter: RateLimiter | None = None) -> None:
        self.concurrency = max(1, concurrency)
        self.limiter = limiter or RateLimiter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.started_calls = 0
        self._stopped = False
        self._futures: list[concurrent.futures.Future[Any]] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="toolselect-calls", daemon=True)
        self._free = self.concurrency
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._thread.start()
        self._ready.wait()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._ready.set)
        self._loop.run_forever()

    @property
    def stopped(self) -> bool:
        return self._stopped

    def submit(self, job: Callable[[], Awaitable[T]]) -> concurrent.futures.Future[T]:
        """Run job() on the scheduler's loop; the future carries its result or error.

        Jobs take call slots in the order they were submitted (pytest's item order),
        whatever order their own preparation (tool discovery) finishes in: with -x the
        calls made before the stop are those of the first items, not of random ones.
        """
        ticket = len(self._futures)
        future = asyncio.run_coroutine_threadsafe(self._guarded(job, ticket), self._loop)
        self._futures.append(future)
        return future

    async def _guarded(self, job: Callable[[], Awaitable[T]], ticket: int) -> T:
        if self._stopped:
            raise Stopped("the run stopped before this case started")
        _TICKET.set(ticket)  # copied into the job's child tasks, read by call()
        return await job()

    async def _acquire(self) -> None:
        """Take a call slot; waiters are served lowest ticket first."""
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (_TICKET.get(), next(self._order), waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # handed a slot as it was cancelled: pass it on
            raise

    def _release(self) -> None:
        while self._waiting:
            _, _, waiter = heapq.heappop(self._waiting)
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1

    async def call(self, make: Callable[[], Awaitable[T]], tokens: int = 0,
                   before: Callable[[], Awaitable[None] | None] | None = None) -> T:
        """One model call inside a job: takes a slot, then the rate limit, then runs.

        `before` runs once the slot is taken, and is awaited if it returns an awaitable
        (the cost cap's admission: it may wait for other calls to settle, or refuse).
        """
        await self._acquire()
        try:
            if self._stopped:
                raise Stopped("the run stopped before this call started")
            await self.limiter.acquire(tokens)
            if before is not None:
                ready = before()
                if ready is not None:
                    await ready
            self.in_flight += 1
            self.started_calls += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                return await make()
            finally:
                self.in_flight -= 1
        finally:
            self._release()

    def stop(self) -> None:
        """Start no new call, and cancel the jobs still waiting (-x, Ctrl-C, session end)."""
        self._stopped = True
        for future in self._futures:
            future.cancel()

    def close(self, timeout: float = 5.0) -> None:
        self.stop()

        async def _cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self._loop.is_running():
            with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
                asyncio.run_coroutine_threadsafe(_cancel_all(), self._loop).result(timeout)
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self._loop.close()
