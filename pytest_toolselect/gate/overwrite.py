"""Whether a baseline write may go over the file as it is now: never over another subject's.

The run read the file at its start; under the write's lock it reads it again. A file that
now holds another subject's baseline (another job recorded the same path, or it changed
during the run) is refused and left as it is. Two cases may be written: one that holds this
run's own subject (merged with it, so two updates at once both land), and the other
subject's baseline an explicit update read at its start, unchanged since (the user asked to
re-record it for this subject). Pure: values in, a message or None out.
"""

from __future__ import annotations

from pathlib import Path

from .baseline import Baseline
from .subject import Subject


def named(subject: Subject) -> str:
    """A subject in one line: its differing fields are what a reader needs to tell two apart."""
    return ", ".join(f"{k}={v!r}" for k, v in subject.fields.items())


def overwrite_refusal(path: Path | str, on_disk: Baseline | None, writes: Subject,
                      replacing: Baseline | None) -> str | None:
    """The refusal to write ``writes``'s baseline over ``on_disk`` (the file now), or None.

    ``replacing``: the other subject's baseline an explicit update read at its start."""
    if on_disk is None or on_disk.empty or not on_disk.subject.differing(writes):
        return None
    if replacing is not None and on_disk.to_json() == replacing.to_json():
        return None  # the file the user asked to re-record, as it was when the run began
    differ = ", ".join(on_disk.subject.differing(writes))
    return (f"{path}: the baseline was not written: the file now holds another subject's "
            f"baseline ({named(on_disk.subject)}), not this run's ({named(writes)}; they differ "
            f"in {differ}), and it changed since this run read it at its start (another run "
            "recorded the same path). It was left as it is. Give each model and settings a "
            "baseline file of its own (--toolselect-baseline), or re-record this one on "
            "purpose with --toolselect-update-baseline")
