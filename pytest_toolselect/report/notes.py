"""A case's notes, shared by every report: renamed, dropped without significance, and
what changed since the baseline (with the tools added, removed or changed). Pure."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pytest_toolselect.gate.attribution import summary
from pytest_toolselect.gate.evidence import dropped_label
from pytest_toolselect.gate.toolsdiff import lines as tool_lines
from pytest_toolselect.messages.plural import plural
from pytest_toolselect.records.attribution import Attribution
from pytest_toolselect.records.run_records import CaseRecord, Escalation
from pytest_toolselect.records.tool_changes import ToolChange


def notes(case: CaseRecord, *, changes: bool = True) -> list[tuple[str, list[str]]]:
    """(note, detail lines) pairs, for a run's record or a results document's case read as one;
    ``changes=False`` leaves out what changed since the baseline (a list that names each tool
    change once, with its cases, says it for every case)."""
    out: list[tuple[str, list[str]]] = []
    if case.model == "local/bm25" and "arguments" in case.failing_checks:
        # the embedded model picks a tool and passes no argument: a matcher can only miss
        out.append(("local/bm25 fills no arguments; use a real model for argument checks", []))
    if case.renamed_from:
        out.append((f"renamed from {case.renamed_from} (compared with its baseline entry)", []))
    if case.dropped_from:
        out.append((dropped_label(case.dropped_from)
                    + " (too little evidence for the gate's rule to call it a regression)", []))
    if case.escalation is not None:
        out.append((escalated_label(case.escalation), []))
    if case.attribution is not None:
        out.append(attribution_note(case.attribution))
    changed = [what for what, moved in (("the tools offered or the system prompt", case.tools_changed),
                                        ("the case itself", case.case_changed)) if moved]
    if changed and changes:
        out.append((f"since the baseline, {' and '.join(changed)} changed",
                    [pointer] if (pointer := tools_pointer(case.tools_diff or [])) else []))
    return out


#: the title of the section that shows each tool change once (terminal, markdown, HTML)
TOOLS_SECTION = "tools changed since the baseline"


def tools_pointer(changes: Sequence[ToolChange]) -> str | None:
    """A case's tool changes by name only: the diffs are shown once, in TOOLS_SECTION."""
    if not changes:
        return None
    named = ", ".join(f"{c.change} {c.tool}" for c in changes)
    return f"{named} (see {TOOLS_SECTION!r})"


def tool_changes(records: Iterable[CaseRecord]) -> list[dict[str, Any]]:
    """Each distinct tool change of the run once, in the order first met, with the cases
    that were offered it: ``{"tool", "change", "diff", "line", "cases"}``."""
    found: dict[tuple[str, str, str | None], dict[str, Any]] = {}
    for case in records:
        for change in case.tools_diff or ():
            key = (change.tool, change.change, change.diff)
            entry = found.setdefault(key, {"tool": key[0], "change": key[1], "diff": key[2],
                                           "line": tool_lines([change])[0], "cases": []})
            entry["cases"].append(case.nodeid)
    return list(found.values())


def attribution_note(found: Attribution) -> tuple[str, list[str]]:
    """What asking again with the baseline's tools found, and the word diffs of its causes."""
    calls = found.calls
    spent = f"attribution: {plural(calls, 'call')}"
    if found.outcome is None:
        return f"not attributed: {found.unavailable}", [spent] if calls else []
    details = [f"{c.change.tool}: {c.diff}" for c in found.causes if c.diff]
    if found.stopped:
        spent += f", stopped early ({found.stopped})"
    return summary(found), [*details, spent]


def escalated_label(escalation: Escalation) -> str:
    """One case's adaptive reps: how many times more it was asked, and why it stopped early."""
    asked = escalation.extra_reps
    label = f"adaptive reps: asked {plural(asked, 'more time')}"
    if escalation.stopped:
        label += f", stopped early ({escalation.stopped})"
    return label


def note_lines(case: CaseRecord, *, changes: bool = True) -> list[str]:
    """Every note and detail as one flat list of lines."""
    return [line for note, details in notes(case, changes=changes) for line in (note, *details)]
