"""Attribution in a run: a case the gate would block is asked again with the baseline's tools.

The decisions are gate/attribution.py's; this module finds the cases to ask (only those
the gate would call a regression, whose baseline entry keeps its tool set), asks the
paired arms interleaved and, when the tool set changed, the variants of the search for
the edit that broke the case. Every call goes through the runner: the same scheduler,
rate limits, response cache (rep indices from attribution.REP_OFFSET) and cost cap as the
case's own reps; the calls are capped per case and per process
(--toolselect-attribution-max-calls) and counted on the record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.gate import attribution as attr
from pytest_toolselect.providers import TurnRequest
from pytest_toolselect.records.attribution import Attribution, Cause, ChangedTool, PairedCheck
from pytest_toolselect.scoring.checks import score
from pytest_toolselect.terms.vocabulary import Verdict

from .budget import CostCapReached
from .case_run import first_tool
from .escalation import judged

if TYPE_CHECKING:
    from pytest_toolselect.providers import Turn

    from .case_outcome import CaseOutcome
    from .case_run import CaseRun
    from .contracts import Caller

#: why the attribution stopped before it was complete
CAPPED, COST_CAP, FAILED = "attribution cap", "cost cap", "a call failed"


@dataclass
class Spend:
    """The attribution's calls this process made (the per-run cap counts these)."""

    per_case: int = attr.DEFAULT_MAX_CALLS[0]
    per_run: int = attr.DEFAULT_MAX_CALLS[1]
    calls: int = 0


class _Stop(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass
class _Asker:
    """One case's attribution calls, under its caps."""

    runner: Caller
    run: CaseRun
    tokens: int
    spend: Spend
    known: frozenset[str]
    calls: int = 0
    costs: list[float | None] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)

    def room(self) -> int:
        return max(0, min(self.spend.per_case - self.calls, self.spend.per_run - self.spend.calls))

    async def ask(self, arms: Sequence[tuple[tuple[Tool, ...], str | None]], n: int
                  ) -> list[tuple[int, int, list[Turn]]]:
        """n reps of each arm, interleaved (rep i of every arm before rep i + 1 of any):
        per arm its passes, reps and turns."""
        if n < 1 or n * len(arms) > self.room():
            raise _Stop(CAPPED)
        self.calls += n * len(arms)
        self.spend.calls += n * len(arms)
        jobs = [(a, self.runner.call(TurnRequest(question=self.run.case.question, tools=tools,
                                                 system=system or None, rep=attr.REP_OFFSET + i,
                                                 context=self.run.case.context),
                                     self.tokens))
                for i in range(n) for a, (tools, system) in enumerate(arms)]
        results = await asyncio.gather(*(j for _, j in jobs), return_exceptions=True)
        filled = bool(getattr(self.runner.wiring.provider, "fills_arguments", True))
        out: list[tuple[int, int, list[Turn]]] = [(0, 0, []) for _ in arms]
        errors = [r for r in results if isinstance(r, BaseException)]
        for (a, _), turn in zip(jobs, results, strict=True):
            if isinstance(turn, BaseException):
                continue
            self.costs.append(turn.cost_usd)
            for k, v in turn.usage.items():
                self.usage[k] = self.usage.get(k, 0) + v
            scored = score(self.run.case, turn.calls, arms[a][0], arguments_filled=filled)
            passes, reps, turns = out[a]
            out[a] = (passes + int(self.known.isdisjoint(scored.failing)), reps + 1, [*turns, turn])
        if errors:
            raise _Stop(COST_CAP if any(isinstance(e, CostCapReached) for e in errors) else FAILED)
        return out


def _tools(defs: Sequence[dict[str, Any]]) -> tuple[Tool, ...]:
    return tuple(Tool(d["name"], d.get("description", ""), dict(d.get("input_schema") or {}))
                 for d in defs)


async def attribute(runner: Caller, spend: Spend, outcome: CaseOutcome,
                    tokens: int) -> CaseOutcome:
    """The outcome with what asking again found noted on its run (``run.attribution``), when
    the gate would call the case a regression; the outcome as it is otherwise. Asked only
    when a baseline is compared (the Attribution plugin object, which holds `spend`)."""
    if judged(runner, outcome)[0] != Verdict.REGRESSION:
        return outcome
    run, entry = outcome.run, outcome.identity.entry
    stored = runner.baselines.baseline
    if entry is None or stored is None:
        return outcome
    found = stored.tool_set(entry.tools_fingerprint)
    if found is None:
        return outcome.with_run(replace(run, attribution=attr.unavailable(
            "the baseline does not keep the tools this case was recorded with (written before "
            "it kept them): update it on main (--toolselect-update-baseline) to keep them")))
    base_tools, base_system = found
    head_tools, head_system = run.tools, run.system
    same = ([t.to_dict() for t in base_tools], base_system) == (
        [t.to_dict() for t in head_tools], head_system)
    deterministic = runner.wiring.deterministic
    n = attr.paired_reps(runner.settings.reps, deterministic)
    asker = _Asker(runner, run, tokens, spend, entry.evaluated)
    history = entry.runs
    recorded = (sum(p for p, _ in history), sum(r for _, r in history))
    result = Attribution(None, recorded=recorded, same_tools=same, reps_per_arm=n)
    try:
        # identical requests: one arm is both (asking it twice would sample the same thing)
        n = min(n, asker.room() // (1 if same else 2))
        arms = [(base_tools, base_system)] + ([] if same else [(head_tools, head_system)])
        answers = await asker.ask(arms, n)
        base_now = answers[0][:2]
        head_now = answers[-1][:2]
        head_turns = answers[-1][2]
        paired, p = attr.paired_outcome(recorded, base_now, head_now, deterministic)
        result = replace(result, outcome=paired,
                        paired=PairedCheck(round(p, 6), base_now, head_now))
        if paired == Verdict.REGRESSION and not same:
            base_d = [t.to_dict() for t in base_tools]
            head_d = [t.to_dict() for t in head_tools]
            changed = attr.changes(base_d, base_system, head_d, head_system)
            chosen = {first_tool(t) for t in (*head_turns, *run.turns)}
            m = attr.variant_reps(runner.settings.reps, deterministic)

            async def restores(revert: list[ChangedTool]) -> tuple[bool, tuple[int, int]]:
                tools, system = attr.variant(base_d, base_system, head_d, head_system, revert)
                ((passes, reps, _),) = await asker.ask([(_tools(tools), system)], m)
                return attr.worse((passes, reps), head_now, attr.RESTORE_ALPHA,
                                  deterministic)[0], (passes, reps)

            causes, search = await _search(changed, base_now, restores)
            causes = [replace(c, shadowing=c.change.part == "added" and c.change.tool in chosen,
                              diff=attr.diff_of(base_d, base_system, head_d, head_system,
                                                c.change.tool))
                      for c in causes]
            result = replace(result, causes=tuple(causes), search=search)
    except _Stop as stop:
        result = replace(result, stopped=stop.why)
    result = replace(result, calls=asker.calls, costs=tuple(asker.costs),
                    usage=dict(sorted(asker.usage.items())))
    if result.outcome is None:
        result = replace(result, unavailable=f"stopped before the paired check was made ({result.stopped})")
    else:
        result = replace(result, summary=attr.summary(result))  # what every report says, for JSON readers too
    return outcome.with_run(replace(run, attribution=result))


async def _search(changed: list[ChangedTool], base_now: tuple[int, int],
                  restores: Callable[[list[ChangedTool]], Awaitable[tuple[bool, tuple[int, int]]]]
                  ) -> tuple[list[Cause], str]:
    """The smallest set of changed tools whose head version breaks the case, found by
    putting them back: one alone needs no call (the baseline's tools are that set put
    back); a few are tried one at a time; many are halved while one half takes it back."""
    if len(changed) == 1:
        return [Cause(changed[0], base_now)], "single"
    if len(changed) <= attr.ONE_AT_A_TIME:
        causes = []
        for c in changed:
            ok, evidence = await restores([c])
            if ok:
                causes.append(Cause(c, evidence))
        return (causes, "one at a time") if causes else ([], "together")
    candidates, evidence = list(changed), base_now
    while len(candidates) > 1:
        first, second = attr.halves(candidates)
        ok, seen = await restores(first)
        if ok:
            candidates, evidence = first, seen
            continue
        ok, seen = await restores(second)
        if not ok:
            return [], "together"
        candidates, evidence = second, seen
    return [Cause(candidates[0], evidence)], "halving"
