"""What the run's calls read of the session's parts, as a Protocol.

The runner and the case records both judge a case's adaptive reps (run/escalation.py); the
escalation names the parts it reads here instead of importing the classes that hold them
(they import it), so the run has no import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pytest_toolselect.providers import Turn, TurnRequest

    from .baseline_access import BaselineAccess
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
