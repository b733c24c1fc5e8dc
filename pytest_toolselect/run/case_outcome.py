"""One case's journey through a run, as one value carried from the runner to the recorder.

A case is found by its identity (node id, baseline key, content fingerprint) and compared
with one baseline entry (its own, or the one it was renamed from): both are worked out
once, by ``BaselineAccess.identity``. The runner adds the plan of its adaptive reps and
what it did (``CaseOutcome``); the recorder judges that and builds the record from it.
Nothing on the way looks the entry up, plans or fingerprints the case again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pytest_toolselect.gate import sequential
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.records.fingerprint import fingerprint

if TYPE_CHECKING:
    from pytest_toolselect.inputs.cases import Case
    from pytest_toolselect.records.baseline_entry import CaseEntry

    from .case_run import CaseRun


def case_fingerprint(case: Case) -> str:
    """The case's content fingerprint: the one place a run computes it (at collection,
    or for a case collection did not see, where its identity is made)."""
    return fingerprint(case.fingerprint_data())


@dataclass(frozen=True)
class Plan:
    """How a case's adaptive reps are asked and judged (run/escalation.py decides)."""

    design: sequential.Design
    test: sequential.Test
    #: the case's stored runs; None: a first recording (nothing to test against)
    history: tuple[gate.Run, ...] | None
    #: the checks its entry was evaluated with (None: every check counts); a rep that fails
    #: only others is not evidence the rule can use (gate.judge sets them aside)
    known: frozenset[str] | None = None

    def passes(self, run: CaseRun) -> int:
        if self.known is None:
            return run.passes
        return sum(1 for s in run.scores if self.known.isdisjoint(s.failing))

    def extra(self, passes: int, reps: int) -> int:
        """How many more reps to ask now (0: settled)."""
        if self.history is None:
            # once reps disagree they always will: the cap is bought batch by batch
            return min(self.design.batch, sequential.recording_extra(passes, reps, self.design))
        if sequential.decide(self.history, passes, reps, self.design, self.test) == sequential.MORE:
            return self.design.next_batch(reps)
        return 0


@dataclass(frozen=True)
class CaseIdentity:
    """Who a case is in this run and what it is compared with."""

    nodeid: str
    #: its baseline key (its node id when collection did not give it one)
    key: str
    case: Case
    fingerprint: str
    #: the baseline entry it is judged against (None: new, or no baseline)
    entry: CaseEntry | None = None
    #: the key of that entry when the case was renamed from it (same content, old key gone)
    renamed_from: str | None = None


@dataclass(frozen=True)
class CaseOutcome:
    """What one case did in this run, with everything it is judged by: its identity and
    entry, the plan of its adaptive reps (computed once, before they are asked), its reps."""

    identity: CaseIdentity
    run: CaseRun
    #: None: adaptive reps are off for this case
    plan: Plan | None = None

    def with_run(self, run: CaseRun) -> CaseOutcome:
        return replace(self, run=run)

