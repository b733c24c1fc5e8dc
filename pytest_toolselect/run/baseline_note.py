"""What a first recording of the baseline holds, what it left out and why, and the fix.

Pure: the run's records and the keys it knows in, one sentence out (None: nothing left out).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from pytest_toolselect.messages.plural import plural
from pytest_toolselect.records.run_records import CaseRecord, GroupRecord
from pytest_toolselect.terms.vocabulary import Verdict


def first_recording_note(path: Path | str, records: Sequence[CaseRecord],
                         groups: Sequence[GroupRecord], known: Iterable[str], *,
                         stopped: bool = False) -> str | None:
    """The note after a first recording: the cases and groups recorded, each kind of case
    or group left out (not run, errored, inconclusive, not run for the cost cap, a group
    with no scored call), and the one command that records them. None: nothing left out."""
    scored = [r for r in records if r.status is not None]
    recorded_groups = [g for g in groups if g.entry]
    ran = {r.key for r in records} | {g.key for g in groups}
    not_run = len(set(known) - ran)
    unscored = [r for r in records if r.status is None]
    cut = sum(1 for r in unscored if r.inconclusive)
    capped = sum(1 for r in unscored if r.verdict == Verdict.SKIPPED)
    errored = len(unscored) - cut - capped
    empty_groups = len(groups) - len(recorded_groups)
    left = [part for count, part in (
        (not_run, f"{plural(not_run, 'item')} not run ("
                  + ("the run stopped early, or deselected" if stopped else "deselected with -k, -m "
                     "or --deselect") + ")"),
        (errored, f"{errored} errored"),
        (cut, f"{cut} inconclusive (every rep cut at max_tokens before any tool call)"),
        (capped, f"{capped} not run (cost cap)"),
        (empty_groups, f"{plural(empty_groups, 'group')} with no scored call"),
    ) if count]
    if not left:
        return None
    what = plural(len(scored), "case")
    if groups:
        what += f" and {plural(len(recorded_groups), 'preference group')}"
    return (f"recorded {what}; left out, with no entry yet: {'; '.join(left)}. A plain run "
            "compares and writes nothing: to record them, run every case with "
            f"`pytest --toolselect-baseline={path} --toolselect-update-baseline`")
