"""What a case did in this run (its turns and scores per rep), and the case an item stands for."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.terms.vocabulary import Status

if TYPE_CHECKING:
    from pytest_toolselect.exchange.tool import Tool, ToolCall
    from pytest_toolselect.exchange.turns import Turn
    from pytest_toolselect.inputs.cases import Case
    from pytest_toolselect.records.attribution import Attribution
    from pytest_toolselect.records.run_records import Escalation

#: the case a decorated test stands for, set by the plugin at collection (the run never
#: reads markers itself: the plugin is the pytest face, the run only uses what it hands over)
DECORATED_CASE = pytest.StashKey["Case"]()


@dataclass(frozen=True)
class CaseRun:
    """What one case did in this run: its turns and scores per rep.

    Frozen: a decorated test reads it (``toolselect_result``) while the plugin's verdict
    and record read the same value, so a test's own code cannot change what is judged.
    More reps make a new value (``with_reps``)."""

    case: Case
    tools: tuple[Tool, ...]
    system: str | None
    turns: tuple[Turn, ...] = ()
    scores: tuple[Any, ...] = ()  # checks.ScoreResult per rep
    #: adaptive reps: the extra reps asked and why they stopped early (None: not asked again)
    escalation: Escalation | None = None
    #: a case the gate would block, asked again with the baseline's tools (run/attribution.py)
    attribution: Attribution | None = None
    #: reps whose reply was cut at max_tokens before any tool call: billed and shown, never
    #: scored (the case is judged on the others)
    inconclusive: tuple[Turn, ...] = ()

    def with_reps(self, turns: Iterable[Turn], scores: Iterable[Any],
                  inconclusive: Iterable[Turn] = ()) -> CaseRun:
        """This run with more reps after its own (turns and their scores in order)."""
        return replace(self, turns=(*self.turns, *turns), scores=(*self.scores, *scores),
                       inconclusive=(*self.inconclusive, *inconclusive))

    @property
    def passes(self) -> int:
        return sum(1 for s in self.scores if s.passed)

    @property
    def status(self) -> Status:
        return gate.status_of(self.passes, len(self.scores))

    @property
    def passed(self) -> bool:
        """Every rep passed every check."""
        return bool(self.scores) and self.passes == len(self.scores)

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The first rep's tool calls."""
        return self.turns[0].calls if self.turns else ()

    @property
    def first_tool(self) -> str | None:
        """The first tool the first rep called (None: it called nothing)."""
        return first_tool(self.turns[0]) if self.turns else None


def first_tool(turn: Turn) -> str | None:
    return turn.calls[0].name if turn.calls else None


def case_of(item: pytest.Item) -> Case | None:
    """The case an item stands for, or None (not a case, or one that does not parse)."""
    case = getattr(item, "case", None)
    if case is not None:
        return case  # type: ignore[no-any-return]
    # a decorated test's case, handed over by the plugin at collection (absent: it does
    # not parse, and its own setup reports the error)
    return item.stash.get(DECORATED_CASE, None)
