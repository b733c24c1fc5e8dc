"""Running cases' calls ahead of their items, on the scheduler.

Each case item, as it sets up, hands the scheduler the items due after it in this
process, up to a window a few times the call slots wide; each item then waits for
its own result. In a serial run those are the session's next items; under
pytest-xdist a worker only knows the items the controller has queued for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_toolselect.exchange.replies import reply_faults
from pytest_toolselect.providers import (
    InconclusiveError,
    TruncatedError,
    TurnRequest,
    UnreadableReplyError,
    billed_turns,
    carry_paid,
)
from pytest_toolselect.providers.pricing import request_bytes
from pytest_toolselect.scoring.checks import score

from .case_outcome import CaseOutcome
from .case_run import CaseRun
from .contracts import CaseSteps
from .scheduler import RateLimiter, Scheduler

if TYPE_CHECKING:
    import pytest

    from pytest_toolselect.exchange.context import GivenTurn
    from pytest_toolselect.exchange.tool import Tool
    from pytest_toolselect.inputs.cases import Case
    from pytest_toolselect.providers import Turn

    from .baseline_access import BaselineAccess
    from .settings import Settings
    from .wiring import Wiring


#: items whose calls may run ahead of the item being run, per call slot, and at least:
#: the slots stay busy while a case's tools are found, and a large suite's jobs and
#: outcomes are not all held at once
PREFETCH_PER_SLOT = 4
PREFETCH_MIN = 64

T = TypeVar("T")

#: a coroutine factory: the work one item waits for
Job = Callable[[], Awaitable[Any]]


def _token_estimate(question: str, tools: Iterable[Any], system: str | None,
                    context: tuple[GivenTurn, ...] = ()) -> int:
    """A rough prompt size for the tokens-per-minute limit (4 bytes a token)."""
    return request_bytes(question, system, tools, context) // 4


class CaseRunner:
    """A case's reps (and adaptive extra reps) as calls on the scheduler, under the cost cap."""

    def __init__(self, settings: Settings, wiring: Wiring, baselines: BaselineAccess,
                 find_tools: Callable[[Case], Awaitable[tuple[tuple[Tool, ...], str | None]]],
                 server_specs: Callable[[Case], tuple[tuple[Any, ...], str]] | None = None,
                 steps: CaseSteps | None = None) -> None:
        self.settings = settings
        self.wiring = wiring
        #: what escalation compares a case with
        self.baselines = baselines
        #: a case -> the tools it offers and the system prompt it sends (CaseCalls.find_tools)
        self.find_tools = find_tools
        #: a case -> its servers' specs and root, for a provider that starts them (a harness)
        self.server_specs = server_specs
        self._scheduler: Scheduler | None = None
        self._pending: dict[str, concurrent.futures.Future[Any]] = {}
        #: what follows a case's reps: its adaptive reps and attribution, when they apply
        self.steps = steps if steps is not None else CaseSteps()

    @property
    def scheduler(self) -> Scheduler:
        if self._scheduler is None:
            opt = self.settings.option
            limiter = RateLimiter(rpm=opt("rpm").value, tpm=opt("tpm").value)
            self._scheduler = Scheduler(int(opt("concurrency").value), limiter)
        return self._scheduler

    def prefetch(self, upcoming: Iterable[tuple[str, Job]]) -> None:
        """Start the jobs of items not started yet (in the order given)."""
        if self._scheduler is not None and self._scheduler.stopped:
            return
        for nodeid, job in upcoming:
            if nodeid not in self._pending:
                self._pending[nodeid] = self.scheduler.submit(job)

    def result(self, nodeid: str, job: Job) -> Any:
        """This item's result: prefetched, or started now; its error raised here."""
        future = self._pending.pop(nodeid, None)
        if future is None:
            future = self.scheduler.submit(job)
        return future.result()

    async def case_job(self, case: Case, nodeid: str) -> CaseOutcome:
        """The case's reps, its adaptive reps by its plan and, when the gate would block it,
        its attribution: the outcome the recorder judges and records."""
        steps = self.steps
        # who the case is and what it is compared with, found once for its whole journey
        identity = self.baselines.identity(nodeid, case)
        plan = steps.adaptive.plan(self, identity) if steps.adaptive is not None else None

        tools, system = await self.find_tools(case)
        tokens = _token_estimate(case.question, tools, system, case.context)
        servers, root = ((), None)
        provider = self.wiring.provider
        if self.server_specs is not None and hasattr(getattr(provider, "inner", provider),
                                                     "harness_tools"):
            servers, root = self.server_specs(case)

        def request(rep: int) -> TurnRequest:
            return TurnRequest(question=case.question, tools=tools, system=system or None, rep=rep,
                               servers=servers, root=root, context=case.context)

        results = await asyncio.gather(*(self.rep(request(rep), tokens)
                                         for rep in range(self.settings.reps)),
                                       return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        replies = [r for r in results if not isinstance(r, BaseException)]
        if errors:
            # the case errs on its first error, with every rep that was paid for (the
            # others' replies too): each cost figure counts them
            carry_paid(errors[0], (*(turn for turn, _ in replies),
                                   *(t for e in errors for t in billed_turns(e)[0])))
            raise errors[0]
        turns = [turn for turn, conclusive in replies if conclusive]
        cut = tuple(turn for turn, conclusive in replies if not conclusive)
        if not turns:
            raise InconclusiveError(self.wiring.provider.model, cut, self.settings.options.max_tokens)
        filled = bool(getattr(self.wiring.provider, "fills_arguments", True))
        run = CaseRun(case=case, tools=tools, system=system, turns=tuple(turns),
                      scores=tuple(score(case, t.calls, tools, arguments_filled=filled) for t in turns),
                      inconclusive=cut)
        outcome = CaseOutcome(identity, run, plan)
        if steps.adaptive is not None:
            outcome = await steps.adaptive.escalate(self, outcome, request, tokens)
        if steps.attribution is not None:
            outcome = await steps.attribution.attribute(self, outcome, tokens)
        return outcome

    async def rep(self, request: TurnRequest, tokens: int) -> tuple[Turn, bool]:
        """One rep's call: its turn, and whether it is conclusive. A reply cut at max_tokens
        before any tool call is inconclusive: billed and shown, but no evidence either way,
        so the case is judged on its other reps (docs/gate.md). Other errors raise."""
        try:
            return await self.call(request, tokens), True
        except TruncatedError as e:
            return e.turn, False

    async def call(self, request: TurnRequest, tokens: int) -> Turn:
        """One model call: a scheduler slot, the rate limit, the cost cap, then the call.

        Under a cap the call reserves the most it can cost before it starts (budget.py),
        and is charged what it did cost when it returns.
        """
        provider = self.wiring.provider
        budget = self.wiring.budget
        bound = getattr(provider, "max_cost_usd", None) if budget.cap is not None else None
        held: list[float] = []

        async def admit() -> None:
            held.append(await budget.reserve(bound(request) if callable(bound) else None))

        try:
            turn = await self.scheduler.call(lambda: provider.first_turn(request), tokens,
                                             before=admit)
        except Exception as e:
            # a reply cut before any tool call is an error, but it was billed
            billed = getattr(e, "turn", None)
            if billed is not None:
                budget.charge(provider.model, billed.cost_usd)
            elif getattr(e, "unsettled", False) and budget.cap is not None:
                # timed out mid-call: it may have been billed, so the cap counts the most it
                # can have cost (no price known: the cap is blind from here)
                budget.charge(provider.model, sum(held) if any(held) else None)
            raise
        else:
            budget.charge(provider.model, turn.cost_usd)
        finally:
            # charged first, released after: the spend and holds never read less than the truth
            for amount in held:
                budget.release(amount)
        _check_readable(provider.model, turn, request)
        return turn

    def stop(self) -> None:
        if self._scheduler is not None:
            self._scheduler.stop()

    def close(self) -> None:
        if self._scheduler is not None:
            self._scheduler.close()


def _check_readable(model: str, turn: Turn, request: TurnRequest) -> None:
    """A reply that cannot be read as a tool choice is the item's error, whoever made it (a
    hook's provider, a cache entry from before): the HTTP providers raise it themselves."""
    faults = reply_faults(turn, offered={t.name for t in request.tools})
    if faults:
        raise UnreadableReplyError(model, turn, faults)


def prefetch_window(concurrency: int) -> int:
    """How many items' calls run ahead of the item being run: a few per call slot."""
    return max(PREFETCH_MIN, PREFETCH_PER_SLOT * concurrency)


def calls_to_start(ahead: Sequence[T], started: Callable[[T], bool]) -> list[T]:
    """Of the items due next (`ahead`, in order, a window long), those whose calls start
    now: every one not started yet, unless the first and the one half a window on have
    started (the window is refilled in batches, not an item at a time: each hand-over
    wakes the scheduler's thread, and the look costs two lookups)."""
    half = len(ahead) // 2
    if half and started(ahead[0]) and started(ahead[half - 1]):
        return []
    return [item for item in ahead if not started(item)]


def queued_items(config: pytest.Config, items: list[pytest.Item],
                 limit: int) -> list[pytest.Item] | None:
    """Under pytest-xdist, the first `limit` items the controller has queued for this
    worker, in order.

    xdist keeps them in its worker plugin's queue; there is no public API for it, so
    this looks defensively and returns None when it cannot tell.
    """
    for plugin in config.pluginmanager.get_plugins():
        queue = getattr(plugin, "torun", None)
        if queue is None or not hasattr(plugin, "nextitem_index"):
            continue
        try:
            with queue.lock() as pending:
                indices = [plugin.nextitem_index, *itertools.islice(pending, limit - 1)]
        except Exception:
            return None
        return [items[i] for i in indices if isinstance(i, int) and 0 <= i < len(items)]
    return None
