"""Attribution as one plugin object: a case the gate would block is asked again with the
baseline's tools, to tell a change of the tools from a change of the model.

Registered by the machinery's start only when a baseline is compared: ``--toolselect-
attribution on``, a baseline named, and the run not re-recording it
(``--toolselect-update-baseline``). It reads its options once, holds this process's
calls under its caps, and is the one way in to the feature's code: the runner attributes
each case through it (run/attribution.py asks, gate/attribution.py decides), and the dry
run reads its bound from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_toolselect.gate.attribution import parse_max_calls
from pytest_toolselect.run import attribution

if TYPE_CHECKING:
    from pytest_toolselect.run.case_outcome import CaseOutcome
    from pytest_toolselect.run.contracts import Caller
    from pytest_toolselect.run.session import RunSession

NAME = "toolselect-attribution"
#: the options it reads (and no other part does)
OPTIONS = ("attribution", "attribution_max_calls")
#: the run's attribution, for whoever needs it (the dry run); absent: no case is attributed
ATTRIBUTION = pytest.StashKey["Attribution"]()


class Attribution:
    """The run's attribution: its caps and the calls this process made under them."""

    def __init__(self, per_case: int, per_run: int) -> None:
        #: the attribution's calls in this process, under --toolselect-attribution-max-calls
        self.spend = attribution.Spend(per_case, per_run)

    @classmethod
    def of(cls, session: RunSession) -> Attribution | None:
        """The run's attribution, or None when no baseline is compared: the option is off,
        no baseline is named, or the run re-records it."""
        settings = session.settings
        if (not settings.in_use() or settings.options.attribution != "on"
                or session.baselines.baseline_path is None or settings.flag("update_baseline")):
            return None
        return cls(*parse_max_calls(settings.options.attribution_max_calls))

    def register(self, config: pytest.Config) -> None:
        """Registered with pytest under its name, and stashed for the parts that read it."""
        config.pluginmanager.register(self, NAME)
        config.stash[ATTRIBUTION] = self

    def cap(self, cases: int) -> int:
        """The most calls it may make over `cases` cases (the dry run's bound)."""
        return min(self.spend.per_run, self.spend.per_case * cases)

    async def attribute(self, runner: Caller, outcome: CaseOutcome, tokens: int) -> CaseOutcome:
        """The outcome with what asking again found, when the gate would block the case."""
        return await attribution.attribute(runner, self.spend, outcome, tokens)
