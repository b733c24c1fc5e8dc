"""The run session's baseline: where it is, the stored one, keys, renames and gone cases."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.gate.keys import key_for
from pytest_toolselect.run.lifecycle import gone, known_keys, migrate

from .case_outcome import CaseIdentity, case_fingerprint
from .lineage import by_case_fingerprint, renamed_from, reworded

if TYPE_CHECKING:
    from pytest_toolselect.gate.baseline import Baseline
    from pytest_toolselect.inputs.cases import Case
    from pytest_toolselect.records.baseline_entry import CaseEntry, GroupEntry

    from .settings import Settings
    from .state import RunState
    from .wiring import Wiring


class BaselineAccess:
    """The stored baseline this run compares with, and the keys of this run's items."""

    def __init__(self, settings: Settings, wiring: Wiring, state: RunState) -> None:
        self.settings = settings
        #: the subject a stored baseline must belong to
        self.wiring = wiring
        #: writes keys, anchor_of and replaced_subject; reads collected, defined, records
        self.state = state
        #: the file as read by ``load`` (None: not read yet, absent, empty or replaced)
        self._stored: Baseline | None = None
        self._replacing: Baseline | None = None
        self._loaded = False
        self._reworded: tuple[tuple[Mapping[str, Any], int], dict[str, str]] | None = None
        self._migrated: tuple[tuple[int, int, int], Baseline] | None = None
        self._known: tuple[tuple[int, int], set[str]] | None = None
        # memos hold the mapping they were computed from (an id alone could be reused)
        self._fingerprints: tuple[Mapping[str, Any], dict[str, list[str]]] | None = None

    # baseline ---------------------------------------------------------------------
    @cached_property
    def baseline_path(self) -> Path | None:
        return self.settings.path("baseline")

    def load(self) -> None:
        """Read the baseline file once, checked for this run's subject (the check at the
        start calls it): a foreign one is refused here, as a usage error said once; an
        update that replaces another subject's notes that subject. Reading it again is a
        no-op: the run compares with the file as it was when it started."""
        # looked up when called: tests/test_baseline_value.py counts the reads by replacing load
        from pytest_toolselect.gate.baseline import load, subject_mismatch

        if self._loaded or self.baseline_path is None:
            return
        stored = load(self.baseline_path)
        self._loaded = True
        if stored is None or stored.empty:
            # an empty baseline gates nothing: it counts as absent, and this run records
            return
        differ = subject_mismatch(stored.subject, self.wiring.subject)
        if differ and self.settings.flag("update_baseline"):
            # asked to re-record for this subject: the other subject's entries are not compared
            self.state.replaced_subject = stored.subject
            self._replacing = stored
            return
        if differ:
            # the subject's provider names what a baseline belongs to ("litellm" on the openai
            # SDK route, as first recorded): the run's value is said with the route it took
            route = self.wiring.route_name()
            detail = "; ".join(
                f"{k}: baseline {stored.subject.value(k)!r}, this run {self.wiring.subject.value(k)!r}"
                + (f" (via {route})" if k == "provider" and route else "")
                for k in differ
            )
            raise pytest.UsageError(
                f"{self.baseline_path}: this baseline belongs to another subject ({detail}). "
                "A baseline is only compared with runs of the same model and settings: "
                "record one for this subject with --toolselect-update-baseline, "
                "or point --toolselect-baseline at another file."
            )
        self._stored = stored

    @property
    def replacing(self) -> Baseline | None:
        """Another subject's baseline an explicit update read at its start, to re-record for
        this run's subject (written over only if the file is still that one)."""
        return self._replacing

    @property
    def stored(self) -> Baseline | None:
        """The baseline file as ``load`` read it: None when there is none yet, none is asked
        for, it is empty, an update replaces another subject's, or it was not loaded."""
        return self._stored

    @property
    def baseline(self) -> Baseline | None:
        """The stored baseline to compare with, its old node-id keys under this run's keys.

        A value computed from the stored one and the keys collected so far, again only when
        collection (or, under xdist, a worker's report) added keys; never changed in place."""
        stored = self.stored
        if stored is None:
            return None
        state = self.state
        seen = (len(state.collected), sum(len(keys) for keys in state.defined.values()),
                len(state.anchor_of))
        if self._migrated is None or self._migrated[0] != seen:
            self._migrated = (seen, migrate(state, stored))
        return self._migrated[1]

    @property
    def have_baseline(self) -> bool:
        """Verdicts compare with a baseline (an existing one, or one this run records)."""
        return self.baseline_path is not None

    def identity(self, nodeid: str, case: Case) -> CaseIdentity:
        """Who the case is and the one entry it is compared with: its own, or, when it is
        under the key the case was renamed from (same content, old key gone from its file),
        that one. Its fingerprint is collection's (computed then, once) when it has one."""
        key = self.key_of(nodeid)
        fp = self.state.case_fingerprints.get(key) or case_fingerprint(case)
        entry, renamed = self._entry_of(key, fp)
        return CaseIdentity(nodeid=nodeid, key=key, case=case, fingerprint=fp, entry=entry,
                            renamed_from=renamed)

    def _entry_of(self, key: str, case_fp: str) -> tuple[CaseEntry | None, str | None]:
        base = self.baseline
        if base is None:
            return None, None
        own = base.cases.get(key)
        if own is not None:
            return own, None
        renamed = self.renamed_from(case_fp)
        if renamed is None:
            renamed = self.reworded_from(key)
        return (base.cases.get(renamed), renamed) if renamed is not None else (None, None)

    def key_of(self, nodeid: str) -> str:
        """The baseline key of an item of this process (its node id if not collected here)."""
        return self.state.keys.get(nodeid, nodeid)

    def add_item_key(self, item: pytest.Item) -> str:
        anchor = self.settings.config_for(item.path).root
        key = key_for(item.path, item.nodeid, anchor)
        self.state.keys[item.nodeid] = key
        self.state.anchor_of[key.partition("::")[0]] = anchor
        return key

    def _by_case_fingerprint(self) -> dict[str, list[str]]:
        cases = self.baseline.cases if self.baseline is not None else {}
        if self._fingerprints is None or self._fingerprints[0] is not cases:
            self._fingerprints = (cases, by_case_fingerprint(cases))
        return self._fingerprints[1]

    def renamed_from(self, case_fp: str) -> str | None:
        """The gone baseline entry a new case with this content was renamed from, if one."""
        # keys of cases that still exist, filtered out of this run or not
        return renamed_from(self._by_case_fingerprint(), case_fp, self._known_keys())

    def _known_keys(self) -> set[str]:
        """lifecycle.known_keys, again only when collection added keys (the sets only
        grow): asked once per case, it was a run's one quadratic step (20,000 cases: 20 s)."""
        state = self.state
        seen = (len(state.collected), sum(len(keys) for keys in state.defined.values()))
        if self._known is None or self._known[0] != seen:
            self._known = (seen, known_keys(state))
        return self._known[1]

    def reworded(self) -> dict[str, str]:
        """Gone entries of parametrized @case functions and the parameter set that replaced
        each, where one is gone and one is new: {old key: new key} (lineage.reworded)."""
        cases = self.baseline.cases if self.baseline is not None else {}
        # asked once per case: computed again only when collection added to what it reads
        defined = sum(len(keys) for keys in self.state.defined.values())
        memo = self._reworded
        if memo is None or memo[0][0] is not cases or memo[0][1] != defined:
            memo = self._reworded = ((cases, defined), reworded(cases, self.state.defined))
        return memo[1]

    def reworded_from(self, key: str) -> str | None:
        """The gone entry this parameter set of a parametrized @case function replaced."""
        return next((old for old, new in self.reworded().items() if new == key), None)

    def baseline_group(self, nodeid: str) -> GroupEntry | None:
        """The stored entry of a preference group's item (None: none stored)."""
        base = self.baseline
        return base.groups.get(self.key_of(nodeid)) if base is not None else None

    def gone_cases(self) -> list[str]:
        """Baseline keys whose case was removed from its file (or whose file is gone)."""
        base = self.baseline
        if base is None:
            return []
        return gone(self, base.cases)

    def shown_gone(self) -> list[str]:
        """The gone cases a report lists: an entry a renamed case took over is not gone."""
        if not self.baseline:
            return []
        renamed = {r.renamed_from for r in self.state.records.values()}
        return [k for k in self.gone_cases() if k not in renamed]
