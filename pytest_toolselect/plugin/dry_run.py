"""--toolselect-dry-run as one plugin object: it counts the items' calls and makes none.

Registered by the plugin's pytest_configure only when the option is on; it holds what it
found and says it in its own section of the terminal summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.run.dry_run import dry_run_lines

from .adaptive_reps import ADAPTIVE_REPS
from .attribution import ATTRIBUTION
from .shown import shown

if TYPE_CHECKING:
    from pytest_toolselect.run.session import RunSession

NAME = "toolselect-dry-run"


class DryRun:
    """Counts the calls the collected items would make, runs none, and says what it found."""

    def __init__(self, session: RunSession) -> None:
        self.session = session
        #: what the dry run found, said in the terminal summary (the controller's)
        self.lines: list[str] = []

    @staticmethod
    def applies(session: RunSession) -> bool:
        return session.settings.in_use() and session.settings.flag("dry_run")

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.session.settings.is_worker:
            # the features' bounds are their own objects', registered when they apply
            adaptive = session.config.stash.get(ADAPTIVE_REPS, None)
            attribution = session.config.stash.get(ATTRIBUTION, None)
            self.lines = dry_run_lines(self.session.settings, self.session.calls, session.items,
                                       adaptive.max_extra if adaptive is not None else 0,
                                       attribution.cap if attribution is not None else None)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        return True  # no item runs: nothing is called

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.session.settings.is_worker or not self.lines:
            return
        terminalreporter.section("toolselect dry run")
        for line in self.lines:
            terminalreporter.write_line(shown(line, self.session.settings.server_secrets()))
