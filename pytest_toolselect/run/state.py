"""What one run gathers as it goes: the run session's shared, mutable state.

The session's parts are built once and read their settings; what changes during the run
lives here, in one place, with who writes each field, so a reader sees who touches what.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

    from pytest_toolselect.gate.subject import Subject
    from pytest_toolselect.records.run_records import CaseRecord, GroupRecord, LintRecord


#: what an xdist worker hands the controller of what its collection found (workeroutput)
COLLECTED_KEY = "toolselect_collected"
FINGERPRINTS_KEY = "toolselect_case_fingerprints"
DEFINED_KEY = "toolselect_defined"


@dataclass
class RunState:
    """The run's gathered state, shared by the parts that need it (and the plugin's hooks)."""

    #: nodeid -> a case's record, gathered from reports (controller; CaseRecords.add_record)
    records: dict[str, CaseRecord] = field(default_factory=dict)
    #: nodeid -> a preference group's record (controller; CaseRecords.add_record)
    group_records: dict[str, GroupRecord] = field(default_factory=dict)
    #: server -> what its --toolselect-lint item found (controller; the lint hooks)
    lint_records: dict[str, LintRecord] = field(default_factory=dict)
    #: baseline keys of the case items collected in this process (or, on the controller, by
    #: the workers), before -k/-m deselection (the plugin's collection hooks)
    collected: set[str] = field(default_factory=set)
    #: key -> content fingerprint of those cases: a gone baseline entry of the same file
    #: with one of them was renamed, not lost (the plugin's collection hooks)
    case_fingerprints: dict[str, str] = field(default_factory=dict)
    #: every key a case or groups file read in this run defines, by the file part of its key
    #: (the file's content, whatever filtering pytest did afterwards; the plugin's collectors);
    #: and every parameter set of a parametrized @case function, by the function's key
    #: (``test_x.py::test_f``: it holds ``::``, a file part never does; plugin.collect)
    defined: dict[str, set[str]] = field(default_factory=dict)
    #: keys of the cases collected and then deselected (-k, -m, --deselect, --lf, a shard):
    #: narrowed on purpose, said as not run in this run (plugin.not_run; on the controller,
    #: from the workers too)
    narrowed: set[str] = field(default_factory=set)
    #: node id -> baseline key, for the items of this process (BaselineAccess.add_item_key)
    keys: dict[str, str] = field(default_factory=dict)
    #: a key's file part -> the folder it is relative to (add_item_key and the collectors)
    anchor_of: dict[str, Path] = field(default_factory=dict)
    #: said in the summary under the toolselect section, not failures (the lifecycle)
    baseline_notes: list[str] = field(default_factory=list)
    #: where the baseline was written, once it was (the lifecycle)
    baseline_written: Path | None = None
    #: the subject of a baseline --toolselect-update-baseline re-recorded (BaselineAccess)
    replaced_subject: Subject | None = None
    #: pytest's session, once it started (the plugin)
    pytest_session: pytest.Session | None = None
    #: reports asked for that could not be written: said in the summary, the run fails
    #: (the summary, the lifecycle, the plugin)
    report_problems: list[str] = field(default_factory=list)

    #: failed reports (and collection reports) of anything but a case's own verdict: plain
    #: tests, a group's or lint item's error, a decorated test's teardown (the plugin)
    other_failed: int = 0

    def define(self, part: str, keys: set[str], anchor: Path | None = None) -> None:
        """Keys a case or groups file (its file part, relative to `anchor`), or a
        parametrized @case function (its key), defines (the plugin's collectors)."""
        self.defined.setdefault(part, set()).update(keys)
        if anchor is not None:
            self.anchor_of[part] = anchor

    def dump_collection(self) -> dict[str, Any]:
        """What this worker's collection found, as plain data for the controller."""
        return {COLLECTED_KEY: sorted(self.collected),
                FINGERPRINTS_KEY: dict(self.case_fingerprints),
                DEFINED_KEY: {file: sorted(keys) for file, keys in self.defined.items()}}

    def read_collection(self, output: Mapping[str, Any]) -> None:
        """Add what a worker's collection found (its `dump_collection`) to the controller's."""
        self.collected.update(output.get(COLLECTED_KEY, []))
        self.case_fingerprints.update(output.get(FINGERPRINTS_KEY, {}))
        for file, keys in output.get(DEFINED_KEY, {}).items():
            self.defined.setdefault(file, set()).update(keys)

    def gathered(self) -> bool:
        """Whether any case, group or lint record reached this process."""
        return bool(self.records or self.group_records or self.lint_records)
