"""The cost cap reserves a call's highest price before it starts: the spend passes the cap by
at most one call's reservation, serially, with calls in flight, and across xdist workers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
from pathlib import Path

import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from hypothesis import given, settings
from hypothesis import strategies as st
from test_models_e2e import models  # noqa: F401  (a fixture: the keys set, the SDKs imported)

from conftest import FIND, NESTED_XDIST, Project, case
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.providers.pricing import FRAMING_TOKENS, request_bytes, reservation_usd
from pytest_toolselect.run.budget import Budget, CostCapReached
from pytest_toolselect.run.spend import _SCHEMA, SharedBudget, _connect

# --- the rule, for any prices and any concurrency ---------------------------------------------

#: (reservation, the fraction of it the call really costs, event-loop turns it takes)
CALLS = st.lists(st.tuples(st.floats(0.0, 5.0), st.floats(0.0, 1.0), st.integers(0, 5)),
                 min_size=1, max_size=40)


def _shared(path: Path, cap: float, pid: int | None = None) -> SharedBudget:
    with contextlib.closing(_connect(str(path))) as db:
        db.executescript(_SCHEMA)
    budget = SharedBudget(cap=cap, path=str(path))
    if pid is not None:
        budget._pid = pid  # a worker of its own in this one process (a live pid: not dropped)
    return budget


async def _run(budgets: list[Budget], calls: list[tuple[float, float, int]], concurrency: int,
               seed: int) -> tuple[list[float], list[float]]:
    """The calls, `concurrency` at a time, each on one of `budgets` (workers sharing a spend),
    as the runner makes them: reserve, run, charge, release. Returns (the spend each refused
    call was refused at, the reservations held)."""
    slots = asyncio.Semaphore(concurrency)
    turns = random.Random(seed)
    refused: list[float] = []
    held: list[float] = []

    async def one(n: int, reservation: float, share: float, length: int) -> None:
        budget = budgets[n % len(budgets)]
        async with slots:
            try:
                amount = await budget.reserve(reservation)
            except CostCapReached:
                refused.append(budget.totals()[0])
                return
            held.append(amount)
            try:
                for _ in range(length + turns.randrange(3)):
                    await asyncio.sleep(0)
                budget.charge("m", reservation * share)
            finally:
                budget.release(amount)

    await asyncio.gather(*(one(n, *c) for n, c in enumerate(calls)))
    return refused, held


@settings(deadline=None, max_examples=60)
@given(cap=st.floats(0.01, 20.0), calls=CALLS, concurrency=st.integers(1, 16),
       workers=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_the_spend_never_passes_the_cap_by_more_than_one_reservation(
        tmp_path_factory: pytest.TempPathFactory, cap: float, calls: list[tuple[float, float, int]],
        concurrency: int, workers: int, seed: int) -> None:
    if workers == 1:
        budgets: list[Budget] = [Budget(cap=cap, poll_s=0.0)]
    else:  # xdist workers: each its own Budget on the one shared file
        path = tmp_path_factory.mktemp("spend") / "spend.sqlite"
        pids = [os.getpid(), os.getppid(), 1][:workers]
        budgets = [_shared(path, cap, pid) for pid in pids]
        for b in budgets:
            b.poll_s = 0.0
    refused, held = asyncio.run(_run(budgets, calls, concurrency, seed))
    spent = budgets[0].totals()[0]
    largest = max((c[0] for c in calls), default=0.0)
    assert spent <= cap + largest + 1e-9
    # a call is refused only once the spend itself reached the cap (never for reservations
    # that were about to settle), and every call not refused ran
    assert all(at >= cap for at in refused)
    assert len(held) + len(refused) == len(calls)
    assert sum(b.reserved for b in budgets) == pytest.approx(0.0, abs=1e-9)


def test_a_call_waits_while_reservations_fill_the_cap_and_starts_when_they_settle() -> None:
    async def scenario() -> list[str]:
        budget = Budget(cap=1.0, poll_s=0.001)
        seen: list[str] = []
        first = await budget.reserve(1.2)  # a reservation past the cap: one call alone
        second = asyncio.ensure_future(budget.reserve(0.8))
        for _ in range(20):
            await asyncio.sleep(0)
        seen.append("waiting" if not second.done() else "started")
        budget.charge("m", 0.1)  # it cost far less than reserved
        budget.release(first)
        await asyncio.wait_for(second, timeout=60)
        seen.append("started")
        budget.charge("m", 0.95)
        budget.release(second.result())
        with pytest.raises(CostCapReached, match=r"spent \$1.0500 of \$1"):
            await budget.reserve(0.01)
        return seen

    assert asyncio.run(scenario()) == ["waiting", "started"]


def test_a_dead_workers_reservations_do_not_hold_the_others_back(tmp_path: Path) -> None:
    path = tmp_path / "spend.sqlite"
    alive = _shared(path, 1.0)
    alive.poll_s = 0.001
    with contextlib.closing(_connect(str(path))) as db:  # a worker that crashed holding $5 (no such process)
        db.execute("INSERT INTO reserved (pid, usd) VALUES (?, 5.0)", (2**22 + 12345,))
    assert asyncio.run(asyncio.wait_for(alive.reserve(0.5), timeout=60)) == 0.5


# --- the reservation ---------------------------------------------------------------------------

TOOLS = (Tool("find_company", "Search the company register by name.",
              {"type": "object", "properties": {"name": {"type": "string"}}}),)


@given(question=st.text(min_size=1, max_size=200), system=st.one_of(st.none(), st.text(max_size=100)),
       max_tokens=st.integers(1, 8192), rates=st.tuples(*[st.floats(0, 100)] * 4))
def test_the_reservation_prices_every_input_byte_at_the_dearest_rate_and_max_tokens_out(
        question: str, system: str | None, max_tokens: int,
        rates: tuple[float, float, float, float]) -> None:
    inp, out, read, write = rates
    prices = {"x/m": {"input_per_mtok": inp, "output_per_mtok": out, "cache_read_per_mtok": read,
                      "cache_write_per_mtok": write}}
    size = request_bytes(question, system, TOOLS)
    # no token is shorter than a byte: a bound on the request's own input tokens
    assert size >= len(question) + len(system or "")
    got = reservation_usd("x/m", prices, max_tokens=max_tokens, size=size)
    assert got == pytest.approx(((size + FRAMING_TOKENS) * max(inp, read, write)
                                 + max_tokens * out) / 1e6)
    assert reservation_usd("x/unpriced-model-name", {}, max_tokens=max_tokens, size=size) is None


# --- end to end: the figures, $1 a call under a $1.50 cap --------------------------------

#: $1 a call: 100 output tokens at $10,000 per million, input free; max_tokens 150 reserves $1.50
PRICES = {"input_per_mtok": 0, "output_per_mtok": 10_000}
CAP = 1.5
RESERVATION = 1.5


@pytest.mark.usefixtures("models")
@pytest.mark.parametrize("how", ["serial", "concurrency 1", pytest.param("-n 2", marks=NESTED_XDIST)])
def test_a_dollar_a_call_under_a_cap_of_one_fifty(project: Project, fake_api: FakeAPI, how: str) -> None:
    model = "openai/gpt-test"
    project.config(model=model, api_base=fake_api.url + "/v1", retry_backoff=0, max_tokens=150,
                  prices={model: PRICES})
    fake_api.handler = lambda body: Reply(tool_calls=[("find_company", {"name": "Acme"})],
                                          input_tokens=1000, output_tokens=100, delay=0.05)
    project.cases([case(f"c{n}", FIND[1], FIND[2]) for n in range(10)])
    args = [f"--toolselect-max-cost-usd={CAP}", "-p", "no:cacheprovider"]
    if how == "-n 2":
        result = project.pytester.runpytest_subprocess("-n", "2", *args)
    else:
        result = project.pytester.runpytest(*args, *(["--toolselect-concurrency=1"]
                                                     if how == "concurrency 1" else []))
    assert result.ret == 2, result.stdout.str()
    made = len(fake_api.requests)
    spent = float(re.search(r"cost: \$([0-9.]+) of a \$1.5 cap", result.stdout.str()).group(1))  # type: ignore[union-attr]
    assert spent == pytest.approx(made * 1.0)
    # before: $8 serially, $10 with -n 2 (every call in flight before the first was priced)
    assert spent <= CAP + RESERVATION
    # the first call holds the whole cap, so the second waits for it, then crosses: two calls
    assert made == 2
    result.assert_outcomes(passed=2, skipped=8)
