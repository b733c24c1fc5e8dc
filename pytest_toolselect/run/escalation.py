"""Adaptive reps in a run: asking a case again until the sequential rule settles it.

The decisions are sequential.py's; this module finds a case's plan (its history in
the baseline, or a first recording) and asks the extra batches through the runner,
so they take the same scheduler slots, rate limit, response cache and cost cap as
the case's first reps. The cost cap or a stopped run (-x, Ctrl-C) ends the asking:
the case is then judged on the reps it has.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from pytest_toolselect.gate import sequential
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.records.run_records import Escalation
from pytest_toolselect.scoring.checks import score
from pytest_toolselect.terms.vocabulary import Verdict

from .budget import CostCapReached
from .case_outcome import Plan
from .scheduler import Stopped

if TYPE_CHECKING:
    from pytest_toolselect.providers import TurnRequest

    from .case_outcome import CaseIdentity, CaseOutcome
    from .contracts import Caller, CallParts


#: why a case stopped being asked before the rule settled it
CAPPED, STOPPED, CUT = "cost cap", "run stopped", "replies cut at max_tokens"


def plan_for(parts: CallParts, identity: CaseIdentity,
             found: tuple[sequential.Design, sequential.Test]) -> Plan | None:
    """The case's plan under the run's design and test (`found`: the AdaptiveReps plugin
    object's, which exists only when reps adapt), or None: there is nothing to compare with
    and nothing being recorded. Made once per case, before its first reps: the outcome
    carries it to the verdict."""
    design, test = found
    # a renamed case is judged against the entry it was renamed from: asked again against it
    entry = identity.entry
    if entry is not None:
        return Plan(design, test, tuple(entry.runs), entry.evaluated)
    if parts.baselines.baseline is None or parts.settings.flag("update_baseline"):
        return Plan(design, test, None)  # recorded now for the first time
    return None  # a new case compared with nothing: reported, not recorded


def verdict_rule(parts: CallParts, plan: Plan | None, escalation: Escalation,
                 reps: int) -> gate.Rule | None:
    """The rule that judges a case asked beyond its fixed reps: the sequential bound at
    the look it stopped at. A case whose asking the cost cap or a stopped run cut short
    is judged as if that look were the last (the reps it has are all it gets). None:
    judge it with the configured rule as usual."""
    if plan is None or plan.history is None:
        return None
    design, test = plan.design, plan.test
    if escalation.stopped:
        design = replace(design, max_extra=max(0, reps - design.base_reps))
    base = gate.get_rule(parts.settings.options.rule)
    # every rule of the family also blocks a clean break (always held, every rep fails
    # now), however short the history: extra reps that all fail keep it one
    return gate.Rule(base.name, base.summary,
                     lambda history, passes, n: (gate.clean_break(history, passes, n) or
                                                 sequential.regressed(history, passes, n,
                                                                      design, test)))


def judged(parts: CallParts, outcome: CaseOutcome) -> tuple[Verdict, list[str]]:
    """The gate's verdict of a case's reps (and the checks set aside, gate.judge), by the
    rule its adaptive reps leave it with: what its record says and what attribution asks."""
    run = outcome.run
    rule: str | gate.Rule = parts.settings.options.rule
    if run.escalation is not None:
        rule = verdict_rule(parts, outcome.plan, run.escalation, len(run.scores)) or rule
    return gate.judge([s.failing for s in run.scores], outcome.identity.entry,
                      have_baseline=parts.baselines.have_baseline, rule=rule)


async def escalate(runner: Caller, outcome: CaseOutcome,
                   request: Callable[[int], TurnRequest], tokens: int) -> CaseOutcome:
    """The outcome with the reps its plan asks for in batches, and what happened noted on
    its run."""
    plan, run = outcome.plan, outcome.run
    if plan is None:
        return outcome
    asked = 0
    stopped: str | None = None
    while (n := plan.extra(plan.passes(run), len(run.scores))) > 0:
        # every rep asked so far, cut ones too: each request is a new sample
        reps = len(run.scores) + len(run.inconclusive)
        before = len(run.scores)
        results = await asyncio.gather(*(runner.rep(request(rep), tokens)
                                         for rep in range(reps, reps + n)),
                                       return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                continue
            turn, conclusive = result
            if not conclusive:  # billed and kept, not scored: the rule asks again
                run = run.with_reps([], [], [turn])
                continue
            run = run.with_reps([turn], [score(
                run.case, turn.calls, run.tools, arguments_filled=bool(
                    getattr(runner.wiring.provider, "fills_arguments", True)))])
            asked += 1
        errors = [r for r in results if isinstance(r, BaseException)]
        if any(isinstance(e, CostCapReached) for e in errors):
            stopped = CAPPED
        elif any(isinstance(e, (Stopped, asyncio.CancelledError)) for e in errors):
            stopped = STOPPED
        elif errors:
            raise errors[0]
        elif len(run.scores) == before:
            stopped = CUT  # a whole batch cut before any tool call: asking again would loop
        if stopped:
            break
    if asked or stopped:
        run = replace(run, escalation=Escalation(extra_reps=asked, stopped=stopped,
                                                 recording=plan.history is None))
    return outcome.with_run(run)
