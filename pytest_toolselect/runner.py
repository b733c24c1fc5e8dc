"""Running cases' calls ahead of their items, on the scheduler.

The first case item to set up hands every case this process is due to run to
the scheduler; each item then waits for its own result. In a serial run those
are all remaining items; under pytest-xdist a worker only knows the items the
controller has queued for it, so it looks again at each item.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .scheduler import RateLimiter, Scheduler

if TYPE_CHECKING:
    import pytest

    from .cases import Case
    from .providers import Turn
    from .session import CaseRun, RunSession


def _token_estimate(question: str, tools: Iterable[Any], system: str | None) -> int:
    """A rough prompt size for the tokens-per-minute limit (4 characters a token)."""
    text = question + (system or "") + json.dumps([t.to_dict() for t in tools], default=str)
    return len(text) // 4


class CaseRunner:
    def __init__(self, session: RunSession) -> None:
        self.session = session
        self._scheduler: Scheduler | None = None
        self._pending: dict[str, concurrent.futures.Future[CaseRun]] = {}

    @property
    def scheduler(self) -> Scheduler:
        if self._scheduler is None:
            opt = self.session.option
            limiter = RateLimiter(rpm=opt("rpm").value, tpm=opt("tpm").value)
            self._scheduler = Scheduler(int(opt("concurrency").value), limiter)
        return self._scheduler

    def prefetch(self, upcoming: Iterable[tuple[str, Case]]) -> None:
        """Start the calls of cases not started yet (in the order given)."""
        if self._scheduler is not None and self._scheduler.stopped:
            return
        for nodeid, case in upcoming:
            if nodeid not in self._pending:
                self._pending[nodeid] = self.scheduler.submit(lambda c=case: self._job(c))

    def result(self, nodeid: str, case: Case) -> CaseRun:
        """This case's run: prefetched, or started now; its error raised here."""
        future = self._pending.pop(nodeid, None)
        if future is None:
            future = self.scheduler.submit(lambda: self._job(case))
        return future.result()

    async def _job(self, case: Case) -> CaseRun:
        from .checks import score
        from .session import CaseRun

        session = self.session
        tools, system = await asyncio.to_thread(session.tools_for, case)
        run = CaseRun(case=case, tools=tools, system=system)
        tokens = _token_estimate(case.question, tools, system)
        turns = await asyncio.gather(*(self._call(case, run, rep, tokens)
                                       for rep in range(session.reps)))
        for turn in turns:
            run.turns.append(turn)
            run.scores.append(score(case, turn.calls, tools))
        return run

    async def _call(self, case: Case, run: CaseRun, rep: int, tokens: int) -> Turn:
        from .providers import TurnRequest

        session = self.session
        provider = session.provider
        request = TurnRequest(question=case.question, tools=run.tools,
                              system=run.system or None, rep=rep)
        try:
            turn = await self.scheduler.call(lambda: provider.first_turn(request), tokens,
                                             before=session.budget.check)
        except Exception as e:
            # a reply cut before any tool call is an error, but it was billed
            billed = getattr(e, "turn", None)
            if billed is not None:
                session.budget.charge(provider.model, billed.cost_usd)
            raise
        session.budget.charge(provider.model, turn.cost_usd)
        return turn

    def stop(self) -> None:
        if self._scheduler is not None:
            self._scheduler.stop()

    def close(self) -> None:
        if self._scheduler is not None:
            self._scheduler.close()


def queued_items(config: pytest.Config, items: list[pytest.Item]) -> list[pytest.Item] | None:
    """Under pytest-xdist, the items the controller has queued for this worker, in order.

    xdist keeps them in its worker plugin's queue; there is no public API for it, so
    this looks defensively and returns None when it cannot tell.
    """
    for plugin in config.pluginmanager.get_plugins():
        queue = getattr(plugin, "torun", None)
        if queue is None or not hasattr(plugin, "nextitem_index"):
            continue
        try:
            with queue.lock() as pending:
                indices = [plugin.nextitem_index, *pending]
        except Exception:
            return None
        return [items[i] for i in indices if isinstance(i, int) and 0 <= i < len(items)]
    return None
