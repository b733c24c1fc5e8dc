"""The scheduler and the rate limiter, on their own (behaviour, not timing)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import threading
from collections.abc import Callable

import pytest

from pytest_toolselect.run.scheduler import RateLimiter, Scheduler, Stopped


class FakeClock:
    """Time that moves only when the limiter sleeps: spacing is exact and instant."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_requests_per_minute_are_spaced_evenly() -> None:
    clock = FakeClock()
    limiter = RateLimiter(rpm=120, clock=clock, sleep=clock.sleep)
    starts = []

    async def run() -> None:
        for _ in range(5):
            await limiter.acquire()
            starts.append(clock.now)

    asyncio.run(run())
    assert [round(b - a, 6) for a, b in itertools.pairwise(starts)] == [0.5, 0.5, 0.5, 0.5]


def test_tokens_per_minute_hold_a_call_until_the_budget_refills() -> None:
    clock = FakeClock()
    limiter = RateLimiter(tpm=6000, clock=clock, sleep=clock.sleep)

    async def run() -> None:
        await limiter.acquire(6000)  # the whole minute's budget
        await limiter.acquire(1000)  # needs 10 s of refill

    asyncio.run(run())
    assert clock.sleeps == [pytest.approx(10.0)]


def test_a_pause_after_a_429_holds_every_new_call() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    limiter.pause(7.0)

    asyncio.run(limiter.acquire())
    assert clock.sleeps == [pytest.approx(7.0)]


async def until(condition: Callable[[], bool]) -> None:
    """Wait on the scheduler's loop until condition() holds (a minute at most: a hang)."""
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.001)
    await asyncio.wait_for(poll(), 60)


def test_never_more_than_n_calls_in_flight() -> None:
    scheduler = Scheduler(concurrency=3)
    try:
        async def job() -> int:
            async def call() -> int:
                # held until the bound is reached, however slowly the jobs were submitted,
                # then a while more: time for a call beyond the bound to start and be counted
                await until(lambda: scheduler.max_in_flight >= 3)
                await asyncio.sleep(0.01)
                return 1
            return await scheduler.call(call)

        futures = [scheduler.submit(job) for _ in range(20)]
        assert sum(f.result(60) for f in futures) == 20
        assert scheduler.max_in_flight == 3
        assert scheduler.started_calls == 20
    finally:
        scheduler.close()


def test_stop_cancels_the_waiting_and_starts_nothing_new() -> None:
    scheduler = Scheduler(concurrency=1)
    release = threading.Event()
    try:
        async def slow() -> str:
            await asyncio.to_thread(release.wait, 10)
            return "done"

        async def job() -> str:
            return await scheduler.call(slow)

        first = scheduler.submit(job)
        rest = [scheduler.submit(job) for _ in range(5)]
        while scheduler.in_flight == 0:
            threading.Event().wait(0.01)
        scheduler.stop()
        release.set()
        for future in rest:
            with pytest.raises((Stopped, concurrent.futures.CancelledError)):
                future.result(60)
        assert scheduler.started_calls == 1
        assert first.cancelled() or first.done()
    finally:
        scheduler.close()


def test_a_cap_check_that_refuses_stops_the_call_before_it_starts() -> None:
    scheduler = Scheduler(concurrency=2)
    try:
        def refuse() -> None:
            raise RuntimeError("cap")

        async def never() -> None:
            raise AssertionError("must not run")

        async def job() -> None:
            await scheduler.call(never, before=refuse)

        with pytest.raises(RuntimeError, match="cap"):
            scheduler.submit(job).result(60)
    finally:
        scheduler.close()


def test_calls_take_slots_in_submission_order_whatever_finishes_preparing_first() -> None:
    scheduler = Scheduler(concurrency=1)
    started: list[int] = []
    prepared: list[int] = []
    try:
        async def job(n: int) -> None:
            # later jobs finish their preparation first (as tool discovery may): each waits
            # for the next one's, so the order is 9..0 however the machine's load runs them
            if n < 9:
                await until(lambda: n + 1 in prepared)

            async def call() -> None:
                started.append(n)
                await asyncio.sleep(0.01)
            prepared.append(n)  # and queues for a slot before the loop runs anything else
            await scheduler.call(call)

        async def hold() -> None:
            # every job queues behind this: it holds the only slot until all ten wait for it
            await scheduler.call(lambda: until(lambda: len(prepared) == 10))

        first = scheduler.submit(hold)
        futures = [scheduler.submit(lambda n=n: job(n)) for n in range(10)]
        first.result(60)
        for future in futures:
            future.result(60)
        assert prepared == list(range(9, -1, -1))
        assert started == list(range(10))
    finally:
        scheduler.close()


def test_a_free_slot_waits_for_an_earlier_job_still_preparing() -> None:
    # with slots free, later jobs that finished preparing first must not take them: under
    # -x the calls made before the stop are the first items', not those that were quicker
    scheduler = Scheduler(concurrency=2)
    started: list[int] = []
    queued: set[int] = set()
    try:
        async def job(n: int) -> None:
            if n == 0:  # the first job's tools come last, after the others asked for a slot
                await until(lambda: queued >= {1, 2, 3})

            async def call() -> None:
                started.append(n)
                await asyncio.sleep(0.01)
            queued.add(n)
            await scheduler.call(call)

        futures = [scheduler.submit(lambda n=n: job(n)) for n in range(4)]
        for future in futures:
            future.result(60)
        assert started[0] == 0, started
        assert sorted(started) == [0, 1, 2, 3]
    finally:
        scheduler.close()


def test_a_job_that_ends_without_a_call_holds_no_later_job_back() -> None:
    scheduler = Scheduler(concurrency=1)
    try:
        async def no_call() -> str:
            return "from the cache"

        async def calls() -> str:
            return await scheduler.call(lambda: asyncio.sleep(0, "asked"))

        async def fails() -> str:
            raise ValueError("no tools")

        futures = [scheduler.submit(no_call), scheduler.submit(fails), scheduler.submit(calls)]
        assert futures[0].result(60) == "from the cache"
        with pytest.raises(ValueError):
            futures[1].result(60)
        assert futures[2].result(60) == "asked"
        # a call outside any job is not ordered against the jobs
        outside = asyncio.run_coroutine_threadsafe(
            scheduler.call(lambda: asyncio.sleep(0, "outside")), scheduler._loop)
        assert outside.result(60) == "outside"
    finally:
        scheduler.close()


def test_a_finished_job_is_not_kept_alive_by_the_scheduler() -> None:
    # a run of 20,000 cases submits 20,000 jobs: each outcome must be freed once its item
    # took it, not held to the session's end by the scheduler
    import gc
    import weakref

    class Outcome:
        pass

    scheduler = Scheduler(concurrency=2)
    try:
        refs = []
        for _ in range(20):
            async def job() -> Outcome:
                return Outcome()

            future = scheduler.submit(job)
            refs.append(weakref.ref(future.result(60)))
            del future
        # the loop's thread drops a job just after its result is set: give it a moment
        for _ in range(100):
            gc.collect()
            if all(r() is None for r in refs):
                break
            threading.Event().wait(0.02)
        assert [r for r in refs if r() is not None] == []
    finally:
        scheduler.close()
