"""Adaptive reps as one plugin object: a case the rule cannot settle is asked again.

Registered by the machinery's start only when reps adapt: ``--toolselect-adaptive on``, a
baseline named (compared with, or recorded for the first time), a model that answers
differently when asked again (``Wiring.deterministic``) and a gate rule with a test to
repeat. It reads its options once, holds the run's design, and is the one way in to the
feature's code: the runner plans and escalates each case through it (run/escalation.py,
the decisions gate/sequential.py's), and the dry run reads its bound from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from pytest_toolselect.gate import sequential
from pytest_toolselect.run import escalation

if TYPE_CHECKING:
    from pytest_toolselect.providers import TurnRequest
    from pytest_toolselect.run.case_outcome import CaseIdentity, CaseOutcome, Plan
    from pytest_toolselect.run.contracts import Caller, CallParts
    from pytest_toolselect.run.session import RunSession

NAME = "toolselect-adaptive-reps"
#: the options it reads (and no other part does)
OPTIONS = ("adaptive", "max_extra_reps")
#: the run's adaptive reps, for whoever needs them (the dry run); absent: reps are fixed
ADAPTIVE_REPS = pytest.StashKey["AdaptiveReps"]()


class AdaptiveReps:
    """The run's adaptive reps: its design, each case's plan and the extra reps it asks."""

    def __init__(self, design: sequential.Design, test: sequential.Test) -> None:
        #: the sequential design and test, found once from the gate rule, reps and cap
        self.design, self.test = design, test

    @classmethod
    def of(cls, session: RunSession) -> AdaptiveReps | None:
        """The run's adaptive reps, or None when its reps are fixed: the option is off, no
        baseline is named, the model is deterministic (asked again it would answer the
        same) or the gate rule has no test to repeat."""
        settings, options = session.settings, session.settings.options
        if (not settings.in_use() or options.adaptive != "on"
                or session.baselines.baseline_path is None or session.wiring.deterministic):
            return None
        found = sequential.design_for(options.rule, settings.reps, options.max_extra_reps)
        return cls(*found) if found is not None else None

    def register(self, config: pytest.Config) -> None:
        """Registered with pytest under its name, and stashed for the parts that read it."""
        config.pluginmanager.register(self, NAME)
        config.stash[ADAPTIVE_REPS] = self

    @property
    def max_extra(self) -> int:
        """The most extra reps it may ask of one case (the dry run's bound)."""
        return self.design.max_extra

    def plan(self, parts: CallParts, identity: CaseIdentity) -> Plan | None:
        """The case's plan, made once before its first reps (None: nothing to compare with
        and nothing being recorded)."""
        return escalation.plan_for(parts, identity, (self.design, self.test))

    async def escalate(self, runner: Caller, outcome: CaseOutcome,
                       request: Callable[[int], TurnRequest], tokens: int) -> CaseOutcome:
        """The outcome with the extra reps its plan asks for."""
        return await escalation.escalate(runner, outcome, request, tokens)
