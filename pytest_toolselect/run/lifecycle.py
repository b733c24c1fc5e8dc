"""The baseline's lifecycle in a run: keys migrated, entries judged gone, the overlap
guard, and the write (under a lock, merged with what is on disk, never emptied).

Functions of the run's baseline part and state; the session's parts call them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pytest_toolselect.gate.atomic import locked
from pytest_toolselect.gate.keys import (
    defines_function,
    existing_file,
    family_of,
    function_of,
    legacy_renames,
    split,
)
from pytest_toolselect.gate.overwrite import overwrite_refusal
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.positions.bounded import read_bounded
from pytest_toolselect.positions.sourced import MAX_BYTES

from .baseline_note import first_recording_note

if TYPE_CHECKING:
    from pytest_toolselect.gate.baseline import Baseline
    from pytest_toolselect.records.run_records import CaseRecord

    from .settings import Settings
    from .state import RunState
    from .wiring import Wiring


class Baselines(Protocol):
    """What the lifecycle reads of the run's baseline part (which imports this module)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def wiring(self) -> Wiring: ...
    @property
    def state(self) -> RunState: ...
    @property
    def baseline(self) -> Baseline | None: ...
    @property
    def baseline_path(self) -> Path | None: ...
    def reworded(self) -> dict[str, str]: ...
    def renamed_from(self, case_fp: str) -> str | None: ...
    @property
    def replacing(self) -> Baseline | None: ...


#: under this share of the baseline's entries found in the run, a compare is refused
MIN_OVERLAP = 0.5
#: keys shown from each side when it is
SHOWN = 3
CI_FALSE = ("", "0", "false", "no", "off")


def in_ci() -> bool:
    """CI is set to a true value (GitHub Actions, GitLab and most others set CI=true)."""
    return os.environ.get("CI", "").strip().lower() not in CI_FALSE


def known_keys(state: RunState) -> set[str]:
    keys = set(state.collected)
    for defined in state.defined.values():
        keys |= defined
    return keys


def migrate(state: RunState, base: Baseline) -> Baseline:
    """The baseline with its node-id keys (written before keys existed) under this run's
    keys: a new value, the one given is left as it was read."""
    current = known_keys(state)
    return base.with_keys(legacy_renames(base.cases, current, state.anchor_of),
                          legacy_renames(base.groups, current, state.anchor_of))


def anchors(run: Baselines) -> list[Path]:
    return run.settings.configs.roots()


def is_gone(state: RunState, key: str, where: list[Path], texts: dict[Path, str]) -> bool:
    """Whether the case a baseline key names was removed from its file (or the file)."""
    if key in state.collected:
        return False
    file, rest = split(key)
    defined = state.defined.get(file)
    if defined is not None:
        # the file was read in this run: its content decides, not pytest's filtering
        return key not in defined
    family = state.defined.get(family_of(key)) if file.endswith(".py") else None
    if family is not None:
        # a parametrized @case function collected in this run: its parameter sets decide
        return key not in family
    path = existing_file(file, where)
    if path is None:
        return True
    if path.suffix == ".py":
        if path not in texts:
            try:
                texts[path] = read_bounded(path, MAX_BYTES).decode("utf-8", errors="replace")
            except OSError:
                return False
        return not defines_function(texts[path], function_of(rest))
    return False


def gone(run: Baselines, keys: Iterable[str]) -> list[str]:
    """Baseline keys whose case no longer exists (removed from its file, or the file gone)."""
    where = anchors(run)
    texts: dict[Path, str] = {}
    return sorted(k for k in keys if is_gone(run.state, k, where, texts))


def overlap_problem(run: Baselines) -> str | None:
    """A compare run whose cases share under half of the baseline's entries: the message."""
    base = run.baseline
    if (base is None or not base.cases or run.settings.flag("update_baseline")
            or not known_keys(run.state)):
        return None
    where = anchors(run)
    texts: dict[Path, str] = {}
    # an entry whose case was renamed in its file (same content under a new id) is this
    # suite's too, and so is one a case of this run took over by its content (its file
    # renamed or moved: lineage.renamed_from), or a reworded parametrized @case replaced
    in_file: dict[str, set[str]] = {}
    for key, fp in run.state.case_fingerprints.items():
        in_file.setdefault(split(key)[0], set()).add(fp)
    taken = {run.renamed_from(fp) for fp in set(run.state.case_fingerprints.values())}
    paired = run.reworded()
    shared = [k for k, entry in base.cases.items()
              if entry.case_fingerprint in in_file.get(split(k)[0], ())
              or k in taken or k in paired or not is_gone(run.state, k, where, texts)]
    if len(shared) >= MIN_OVERLAP * len(base.cases):
        return None
    unmatched = sorted(set(base.cases) - set(shared))
    ours = sorted(known_keys(run.state))
    return (
        f"{run.baseline_path}: this run's cases match {len(shared)} of the baseline's "
        f"{len(base.cases)} entries, too few to gate on. "
        + _unmatched_cause(run.state, unmatched, ours, set(base.cases), where)
    )


def _unmatched_cause(state: RunState, unmatched: list[str], ours: list[str], stored: set[str],
                     where: list[Path]) -> str:
    """Why the baseline's entries were not found, as far as the run can tell, and the fix."""
    families: dict[str, list[str]] = {}
    for key in unmatched:
        if split(key)[0].endswith(".py") and family_of(key) in state.defined:
            families.setdefault(family_of(key), []).append(key)
    if families and sum(map(len, families.values())) == len(unmatched):
        said = "; ".join(
            f"{len(olds)} entries of {family} are gone and it has "
            f"{len([k for k in state.defined[family] if k not in stored])} new parameter sets"
            for family, olds in sorted(families.items()))
        return (f"{said}: questions reworded (a parameter set with no ids takes its id from "
                "its values), too many at once to tell which new one replaced which. Give "
                "parametrize ids= so that a reworded question keeps its key, or re-record "
                "with --toolselect-update-baseline.")
    lost = sorted({split(k)[0] for k in unmatched
                   if split(k)[0] not in state.defined and existing_file(split(k)[0], where) is None})
    new = sorted({split(k)[0] for k in ours} - {split(k)[0] for k in stored})
    # a file renamed keeps its cases' ids, whatever else changed; another suite's do not match
    ids_lost = {split(k)[1] for k in unmatched if split(k)[0] in lost}
    if lost and new and ids_lost & {split(k)[1] for k in ours if split(k)[0] in new}:
        return (f"The baseline's case files {', '.join(lost[:SHOWN])} no longer exist and this "
                f"run's {', '.join(new[:SHOWN])} have no entries: a case file renamed or moved "
                "(its cases are followed by their content, but not those whose content changed "
                "too). Rename it back for this change, or re-record the baseline with "
                "--toolselect-update-baseline.")
    return (
        f"Baseline keys: {', '.join(unmatched[:SHOWN])}; "
        f"this run's keys: {', '.join(ours[:SHOWN])}. Keys are case files' paths relative to the "
        "folder of their toolselect config: likely another suite's baseline, or a config "
        "moved to another folder. Point --toolselect-baseline at this suite's baseline, or "
        "re-record it with --toolselect-update-baseline."
    )


def check_ci(run: Baselines) -> None:
    """In CI a missing baseline is an error, not a silent first recording."""
    path = run.baseline_path
    if path is None or run.settings.flag("update_baseline") or not in_ci():
        return
    if not os.path.lexists(path):
        import pytest

        raise pytest.UsageError(
            f"{path}: no baseline at this path, and CI is set: a run in CI would record it "
            "and gate nothing. Check the path (--toolselect-baseline), or record it on "
            "purpose with --toolselect-update-baseline."
        )


def read_only(path: Path) -> bool:
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    # the mode bits, not os.access: as root access() allows writing a 0444 file
    return stat.S_IMODE(mode) & 0o222 == 0 or not os.access(path, os.W_OK)


def write_baseline(run: Baselines, records: list[CaseRecord]) -> str | None:
    """Record or update the baseline (controller) with the run's records, in order: merged
    under a lock with the file as it is now, never with nothing scored, never over a
    read-only file. Returns why it was not written over the file on disk (another
    subject's: the run ends as a usage error), None otherwise."""
    # looked up when called: tests/test_baseline_value.py counts the reads by replacing load
    from pytest_toolselect.gate.baseline import build, load, subject_mismatch, write
    path = run.baseline_path
    assert path is not None
    scored = [r for r in records if r.status is not None]
    group_entries = {r.key: r.entry for r in run.state.group_records.values() if r.entry}
    lint_entries = {s: r.entry for s, r in run.state.lint_records.items()}
    lint_tools = {s: r.snapshot for s, r in run.state.lint_records.items()}
    if not scored and not group_entries and not lint_entries:
        run.state.baseline_notes.append(f"no case was scored: the baseline was not written ({path})")
        return None
    if read_only(path):
        run.state.report_problems.append(f"cannot write the baseline {path}: the file is read-only; "
                                         "it was left as it is (make it writable to record)")
        return None
    try:
        with locked(path):
            old = run.baseline
            on_disk = load(path)
            if on_disk is not None and on_disk.empty:
                on_disk = None  # an empty baseline counts as absent
            refused = overwrite_refusal(path, on_disk, run.wiring.subject, run.replacing)
            if refused is not None:
                # never over another subject's baseline: a usage error, the file as it is
                return refused
            if on_disk is not None and not subject_mismatch(on_disk.subject, run.wiring.subject):
                # another run may have written it since this one started: merge with that
                old = migrate(run.state, on_disk)
            baseline = build(run.wiring.subject, records, old,
                             gone(run, old.cases) if old is not None else (),
                             history=run.settings.options.history,
                             group_entries=group_entries, lint_entries=lint_entries,
                             lint_tools=lint_tools)
            write(path, baseline)
    except ToolselectError as e:
        run.state.report_problems.append(f"the baseline was not written: {e}")
        return None
    except OSError as e:
        run.state.report_problems.append(f"cannot write the baseline {path}: {e.strerror or e}")
        return None
    run.state.baseline_written = path
    if old is None:
        note = first_recording_note(
            path, records, list(run.state.group_records.values()), known_keys(run.state),
            stopped=_stopped(run.state))
        if note:
            run.state.baseline_notes.append(note)
    return None


def _stopped(state: RunState) -> bool:
    """The run ended before every item ran (-x, --sw, Ctrl-C)."""
    session = state.pytest_session
    return session is not None and bool(session.shouldfail or session.shouldstop)
