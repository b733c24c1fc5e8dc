"""What the run's calls read of the session's parts, and the features a case's reps are
followed by, as Protocols.

The runner and the case records both judge a case's adaptive reps (run/escalation.py); the
escalation names the parts it reads here instead of importing the classes that hold them
(they import it), so the run has no import circle. The features that follow a case's reps
(adaptive reps, attribution) are plugin objects the plugin registers when they apply; the
run, which never imports the plugin, knows them by the steps below (`CaseSteps`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pytest_toolselect.providers import Turn, TurnRequest

    from .baseline_access import BaselineAccess
    from .case_outcome import CaseIdentity, CaseOutcome, Plan
    from .settings import Settings
    from .wiring import Wiring


class CallParts(Protocol):
    """The parts a case's calls are decided from: settings, the provider, the stored baseline."""

    @property
    def settings(self) -> Settings: ...
    @property
    def wiring(self) -> Wiring: ...
    @property
    def baselines(self) -> BaselineAccess: ...


class Caller(CallParts, Protocol):
    """One model call through the run's scheduler, rate limits and cost cap (the runner)."""

    async def call(self, request: TurnRequest, tokens: int) -> Turn: ...

    async def rep(self, request: TurnRequest, tokens: int) -> tuple[Turn, bool]:
        """One rep's call: its turn, and False when it is inconclusive (cut before a tool call)."""
        ...


class AdaptiveStep(Protocol):
    """Adaptive reps (plugin/adaptive_reps.py): a case's plan, and its extra reps."""

    def plan(self, parts: CallParts, identity: CaseIdentity) -> Plan | None: ...

    async def escalate(self, runner: Caller, outcome: CaseOutcome,
                       request: Callable[[int], TurnRequest], tokens: int) -> CaseOutcome: ...


class AttributionStep(Protocol):
    """Attribution (plugin/attribution.py): a case the gate would block, asked again."""

    async def attribute(self, runner: Caller, outcome: CaseOutcome,
                        tokens: int) -> CaseOutcome: ...


@dataclass
class CaseSteps:
    """The features that follow a case's reps in this run, as the plugin registered them
    (None: the feature does not apply); set once at the start, before any case runs."""

    adaptive: AdaptiveStep | None = None
    attribution: AttributionStep | None = None
