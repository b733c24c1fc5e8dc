"""What the run's parts use of the run session, as a Protocol.

The session imports the runner, the probe's items and escalation; they name what they
read of it here instead of importing it back, so the run has no import circle.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pytest_toolselect.gate.baseline import Baseline
    from pytest_toolselect.providers import Provider, Turn, TurnRequest
    from pytest_toolselect.spec.cases import Case
    from pytest_toolselect.spec.config import Config
    from pytest_toolselect.spec.tools import Tool

    from .budget import Budget
    from .settings import Resolved


class RunSession(Protocol):
    """The session as the runner, the probe's items and escalation see it."""

    @property
    def reps(self) -> int: ...
    @property
    def provider(self) -> Provider: ...
    @property
    def budget(self) -> Budget: ...
    @property
    def config(self) -> Config: ...
    @property
    def baseline(self) -> Baseline | None: ...
    @property
    def baseline_path(self) -> Path | None: ...
    def option(self, name: str) -> Resolved: ...
    def flag(self, name: str) -> bool: ...
    def baseline_entry(self, nodeid: str) -> dict[str, Any] | None: ...
    def tools_for(self, case: Case) -> tuple[tuple[Tool, ...], str | None]: ...


class Caller(Protocol):
    """One model call through the run's scheduler, rate limits and cost cap (the runner)."""

    @property
    def session(self) -> RunSession: ...
    async def call(self, request: TurnRequest, tokens: int) -> Turn: ...
