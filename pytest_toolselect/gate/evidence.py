"""What a run is evidence of, for a case's history: pure functions over run records
(a saved document's case or a hand-made record is read into one, with CaseRecord.read,
where it enters).

A rep answered from the response cache repeats an answer the model gave before; adding
it to the history again would count one ask as several clean runs, and the next
ordinary wobble would then look significant. A history restarted because what the case
was offered changed is said in the summary, never done silently.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytest_toolselect.gate.verdict_rules import Run, history_of
from pytest_toolselect.messages.plural import plural
from pytest_toolselect.records.baseline_entry import CaseEntry
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.terms.vocabulary import Verdict


def fresh_run(rec: CaseRecord) -> Run | None:
    """The (passes, reps) of the reps the model was really asked; None when the cache
    answered every rep (the run is no new evidence)."""
    if not any(rec.cached):
        return rec.passes, rec.reps
    fresh = [i for i, hit in enumerate(rec.cached) if not hit]
    if not fresh or len(rec.checks) != len(rec.cached):
        return None
    passes = sum(1 for i in fresh if all(c.passed for c in rec.checks[i]))
    return passes, len(fresh)


def replayed(rec: CaseRecord) -> bool:
    """Every rep of a scored case came from the response cache."""
    return rec.status is not None and fresh_run(rec) is None


def dropped_from(verdict: Verdict, base: CaseEntry | None) -> list[int] | None:
    """For a case that fails every rep now, held on the baseline at times, and that the
    rule does not call a regression (too little evidence): the baseline's pooled
    [passes, reps]. None otherwise ("still failing" is then the truth)."""
    if base is None or verdict != Verdict.STILL_FAILING:
        return None
    runs = history_of(base)
    passes, reps = sum(p for p, _ in runs), sum(r for _, r in runs)
    return [passes, reps] if passes else None


#: the report section (and count) of a case dropped_from gives: not "still failing"
DROPPED = "dropped_not_significant"


def section(rec: CaseRecord) -> str:
    """The report section of a record (a run's, or a results case read as one): its verdict, or DROPPED."""
    if rec.verdict == Verdict.STILL_FAILING and rec.dropped_from:
        return DROPPED
    return rec.verdict


def dropped_label(held: Iterable[int]) -> str:
    passes, reps = held
    return f"dropped, not significant: held {passes}/{reps} on the baseline"


def history_lines(records: Iterable[CaseRecord]) -> list[str]:
    """What an update did to the histories: cases restarted (and why), replays not counted."""
    tools = case = cached = 0
    for rec in records:
        if rec.status is None:
            continue
        if rec.case_changed:
            case += 1
        elif rec.tools_changed:
            tools += 1
        elif replayed(rec) and rec.in_baseline:
            # a new case is recorded from its replayed run: an entry needs one
            cached += 1
    out = []
    if tools or case:
        why = [f"{n} because {what} changed" for n, what in (
            (tools, "the tools offered or the system prompt"), (case, "the case itself")) if n]
        out.append(f"history: restarted for {plural(tools + case, 'case')} "
                   f"({'; '.join(why)}): their earlier runs were of another question or other tools")
    if cached:
        out.append(f"history: {plural(cached, 'case')} answered from the response "
                   "cache added no run (a replayed answer is not new evidence)")
    return out
