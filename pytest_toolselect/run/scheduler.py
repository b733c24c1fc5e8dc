"""Calls ahead of the items that need them: a bounded async scheduler in a background thread.

pytest runs items one at a time; a model call takes a second or two. The run
session hands the scheduler the upcoming cases a window at a time (a few per
call slot), the scheduler runs at most N calls at a time (and no faster than the
rate limit), and each item waits only for its own result, so items still report
in pytest's order while the wall time approaches calls x latency / N.
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
        #: the jobs not finished yet, by ticket (stop() cancels them); a finished one is
        #: dropped at once, so a long run does not keep every case's outcome alive here
        self._futures: dict[int, concurrent.futures.Future[Any]] = {}
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="toolselect-calls", daemon=True)
        self._free = self.concurrency
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        #: by ticket: the job asked for its first call slot, or ended without one
        self._arrived: list[bool] = []
        #: every ticket below this one has arrived: only those may take a slot
        self._arrived_below = 0
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
        ticket = len(self._arrived)
        self._arrived.append(False)  # before the job can run: _arrive reads it on the loop
        future = asyncio.run_coroutine_threadsafe(self._guarded(job, ticket), self._loop)
        self._futures[ticket] = future
        future.add_done_callback(lambda _: self._futures.pop(ticket, None))
        return future

    async def _guarded(self, job: Callable[[], Awaitable[T]], ticket: int) -> T:
        try:
            if self._stopped:
                raise Stopped("the run stopped before this case started")
            _TICKET.set(ticket)  # copied into the job's child tasks, read by call()
            return await job()
        finally:
            self._arrive(ticket)  # a job that ends without a call holds no later one back
            self._dispatch()

    def _arrive(self, ticket: int) -> None:
        if ticket >= len(self._arrived) or self._arrived[ticket]:
            return  # a call outside any job, or the job's later calls
        self._arrived[ticket] = True
        while self._arrived_below < len(self._arrived) and self._arrived[self._arrived_below]:
            self._arrived_below += 1

    def _may_start(self, ticket: int) -> bool:
        """Whether every job submitted before this one has asked for a slot (or ended).

        A job's preparation (its tools, in a thread) may finish after a later job's; held
        back, the later one cannot take the slot its predecessor needs, so calls start in
        pytest's order and -x stops the run after the first items' calls, whatever the load.
        """
        return ticket >= len(self._arrived) or ticket < self._arrived_below

    async def _acquire(self) -> None:
        """Take a call slot; waiters are served lowest ticket first, in submitting order."""
        ticket = _TICKET.get()
        self._arrive(ticket)
        if self._free > 0 and not self._waiting and self._may_start(ticket):
            self._free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (ticket, next(self._order), waiter))
        self._dispatch()  # this arrival may be the one the waiters were held for
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # handed a slot as it was cancelled: pass it on
            raise

    def _release(self) -> None:
        self._free += 1
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand free slots to the lowest waiting tickets that may start."""
        while self._free > 0 and self._waiting:
            ticket, _, waiter = self._waiting[0]
            if waiter.done():  # cancelled while it waited
                heapq.heappop(self._waiting)
                continue
            if not self._may_start(ticket):
                return  # an earlier job is still preparing: its slot waits for it
            heapq.heappop(self._waiting)
            self._free -= 1
            waiter.set_result(None)

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
        # a copy: the loop's thread drops each job from the dict as it finishes
        for future in list(self._futures.values()):
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
