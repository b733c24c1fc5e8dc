"""The one verdict of a run: each case's outcome, which block and why, and the exit status.

A pure function of the run's case records (or a saved document's cases), the settings
and the few facts about the run beyond its cases (the suite's pass rate, the preference
probe, the cost cap, the lint, items that failed outside the gate). Everything that says
whether a run passes reads this one value: the outcome pytest shows for each case item,
the session's exit status, the results document's ``verdict``, the markdown comment, the
HTML badge, JUnit (through the items' outcomes) and ``toolselect merge``. Nothing else
decides it, so none of them can disagree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_toolselect.messages.plural import plural
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.terms.vocabulary import Outcome, Verdict

from . import verdict_rules as gate

#: outcomes of a case item that fail the run
BLOCKING_OUTCOMES = (Outcome.FAILED, Outcome.ERROR)

#: verdicts that block whatever the flags (a regression unless accepted), in the reasons' order
_ALWAYS = {Verdict.REGRESSION: ("regression", "regressions"),
           Verdict.FAILED: ("failing case (no baseline)", "failing cases (no baseline)"),
           Verdict.ERROR: ("error (not scored)", "errors (not scored)")}


@dataclass(frozen=True, slots=True)
class GateSettings:
    """The flags the one verdict reads, resolved once: from the run's options, or read from
    a saved document's settings."""

    fail_on_flaky: bool = False
    fail_on_still_failing: bool = False
    #: an update run accepts its regressions (and its drift) into the baseline
    update_baseline: bool = False
    fail_on_drift: bool = False

    @classmethod
    def read(cls, settings: Mapping[str, Any]) -> GateSettings:
        """A results document's settings: a flag it does not hold is off."""
        return cls(*(bool(settings.get(name)) for name in (
            "fail_on_flaky", "fail_on_still_failing", "update_baseline", "fail_on_drift")))


def case_outcome(rec: CaseRecord, settings: GateSettings) -> Outcome:
    """How one case ends in pytest: passed, failed, xfailed, warned, error or skipped."""
    if rec.test_failure:
        return Outcome.FAILED  # a decorated test's own assertion failed: the case still counts
    if rec.verdict in (Verdict.ERROR, Verdict.SKIPPED):
        return Outcome(rec.verdict)
    return gate.pytest_outcome(
        rec.verdict,
        fail_on_flaky=settings.fail_on_flaky,
        fail_on_still_failing=settings.fail_on_still_failing,
        accept_regressions=settings.update_baseline,
        fail_on_drift=settings.fail_on_drift,
    )


@dataclass(frozen=True)
class CaseOutcome:
    """One case's part of the verdict."""

    nodeid: str
    key: str
    verdict: str
    outcome: str

    @property
    def blocks(self) -> bool:
        return self.outcome in BLOCKING_OUTCOMES


@dataclass(frozen=True)
class Decision:
    """The run's verdict: every case's outcome, the reasons it blocks, its exit status."""

    cases: tuple[CaseOutcome, ...]
    reasons: tuple[str, ...]
    exit_status: int

    @property
    def blocking(self) -> bool:
        return bool(self.reasons)

    @property
    def blocking_cases(self) -> list[str]:
        """The keys of the cases that block, in the run's order."""
        return [c.key for c in self.cases if c.blocks]

    def to_json(self) -> dict[str, Any]:
        """The results document's ``verdict``."""
        return {"blocking": self.blocking, "reasons": list(self.reasons),
                "blocking_cases": self.blocking_cases, "exit_status": self.exit_status}


def decide(cases: Iterable[CaseRecord], settings: GateSettings, *,
           suite_blocks: bool = False, probe_blocks: bool = False, capped: bool = False,
           new_lint: int = 0, other_failed: int = 0, stopped: str | None = None) -> Decision:
    """The verdict of a run (or of merged shards: the same function over all their cases).

    other_failed counts the items that failed outside the gate's cases (plain tests, a
    preference group's or lint item's error, a decorated test's own teardown): they fail
    the run as they would without the plugin, and the verdict says so. stopped says why the
    run ended before every item ran (-x, --sw, Ctrl-C): a partial run is never green.
    """
    records = list(cases)
    outcomes = tuple(CaseOutcome(r.nodeid, r.key, r.verdict, case_outcome(r, settings))
                     for r in records)
    counts = Counter(r.verdict for r in records)
    reasons = [f"{counts[v]} {one if counts[v] == 1 else many}"
               for v, (one, many) in _ALWAYS.items()
               if counts.get(v) and not (v == Verdict.REGRESSION and settings.update_baseline)]
    own = sum(1 for r in records if r.test_failure)
    if own:
        whose = "its" if own == 1 else "their"
        reasons.append(f"{plural(own, 'decorated test')} failed {whose} own assertion")
    if counts.get(Verdict.DRIFT) and settings.fail_on_drift and not settings.update_baseline:
        reasons.append(f"{counts[Verdict.DRIFT]} drift (--toolselect-fail-on-drift)")
    if counts.get(Verdict.FLAKY) and settings.fail_on_flaky:
        reasons.append(f"{counts[Verdict.FLAKY]} flaky (--toolselect-fail-on-flaky)")
    if counts.get(Verdict.STILL_FAILING) and settings.fail_on_still_failing:
        reasons.append(f"{counts[Verdict.STILL_FAILING]} still failing (--toolselect-fail-on-still-failing)")
    if suite_blocks:
        reasons.append("the suite's pass rate fell (--toolselect-fail-on-suite-drop)")
    if probe_blocks:
        reasons.append("a preference effect moved (--toolselect-min-effect-change)")
    if capped:
        reasons.append("the cost cap stopped the run before every call was made")
    if new_lint:
        reasons.append(f"{plural(new_lint, 'new lint finding')}")
    if other_failed:
        reasons.append(f"{plural(other_failed, 'other item')} failed (not a "
                       "case's verdict: a plain test, a subtest, a preference group, a setup outside a "
                       "case)")
    # calls were left unmade, or items never ran: incomplete, unless what ran already blocks
    status = 2 if capped else 1 if reasons else 2 if stopped else 0
    if stopped:
        reasons.append(f"the run stopped before every item ran ({stopped})")
    return Decision(outcomes, tuple(reasons), status)

