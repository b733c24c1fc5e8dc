"""The controller requires a record for every case it expected (gate/expected.py).

Each process that collects (the only one, or each xdist worker) notes every case item
pytest collected and those it deselected (-k, -m, --deselect, --lf: narrowed on purpose,
said as not run in this run; a shard: another shard's to run). The rest it expects, each as
the not-run record it would become, and a worker sends that list to the controller on the
first report it sends (a worker that dies before any report is replaced and its successor
sends it, or another worker has). After the test loop the controller gives every expected
case without a record an error that names why: a worker crashed while running it, or a hook
ran the tests and left it out, or a conftest dropped the item. A case the run stopped
before (-x, --maxfail) is left to the run's own "stopped" reason.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.gate.expected import key_record, unjudged
from pytest_toolselect.gate.keys import split
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.run.case_run import case_of
from pytest_toolselect.run.session import RUN_SESSION
from pytest_toolselect.terms.vocabulary import Verdict

from .dry_run import NAME as DRY_RUN
from .shard import GLOBAL_ORDER, OTHER_SHARD
from .shard import NAME as SHARD
from .shown import shown

if TYPE_CHECKING:
    from pytest_toolselect.run.session import RunSession

#: the worker's output key of what it expects
EXPECTED_KEY = "toolselect_expected"
#: xdist's report for the item a worker was running when it died
_CRASHED = "???"
#: why an expected case has no record, by what the controller saw of it
_NEVER_SET_UP = ("its test protocol never set it up (a plugin or conftest that runs the tests, "
                 "pytest_runtest_protocol, left it out)")
_NO_REPORT = ("no record of its verdict reached the controller (a plugin or conftest that runs "
              "the tests, pytest_runtest_protocol, left it out, one that rewrites reports dropped "
              "it, or its xdist worker died)")
_LOST_RECORD = ("it ran, but no record of its verdict reached the gate (a plugin or conftest that "
                "rewrites reports, pytest_runtest_logreport or pytest_runtest_makereport, dropped it)")
_DROPPED = ("it was collected, then left out of the run without being deselected (a plugin or "
            "conftest pytest_collection_modifyitems that drops items; narrow a run with -k, -m "
            "or --deselect, which are said as such)")


class NotRunCases:
    """Every expected case is judged or named (registered on every process; the controller
    judges)."""

    def __init__(self, session: RunSession, is_case: Callable[[pytest.Item], bool]) -> None:
        self.session, self.is_case = session, is_case
        #: every case item pytest collected here, in collection order (held as items: a
        #: plugin may rename one after collection, and its node id is read at the end)
        self.collected: list[pytest.Item] = []
        #: the items pytest was told were deselected, by identity
        self.deselected: set[int] = set()
        #: node id -> the case as its not-run record, for every case this run expects and
        #: has not yet judged (the controller drops each as its record arrives)
        self.expected: dict[str, CaseRecord] = {}
        #: node id -> where pytest shows it (a report made on the controller needs it)
        self.locations: dict[str, tuple[str, int | None, str]] = {}
        #: node ids of expected cases the final item list does not hold
        self.dropped: set[str] = set()
        self.started: set[str] = set()
        #: node id -> xdist's message, for the items a worker was running when it died
        self.crashed: dict[str, str] = {}
        #: node id (the key) -> why, for the baseline's cases of a file skipped at collection
        self.skipped: dict[str, str] = {}
        #: a file or folder skipped at collection (importorskip, a module-level skip): why
        self._skipped_paths: dict[Path, str] = {}
        #: node id -> location of each preference group expected (collected, not deselected)
        self.groups: dict[str, tuple[str, int | None, str]] = {}
        #: node ids of every item a report reached the controller for
        self.reported: set[str] = set()
        self._group_items: list[pytest.Item] = []
        self._sent = False

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        if self.is_case(item):
            self.collected.append(item)
        elif getattr(item, "group", None) is not None:
            self._group_items.append(item)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # a file skipped whole never shows its cases: the baseline's cases of it are expected
        if report.skipped and "::" not in report.nodeid and report.nodeid:
            config = self.session.settings.pytest_config
            longrepr = report.longrepr
            reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
            self._skipped_paths[config.rootpath / report.nodeid] = reason

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected.update(id(item) for item in items)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        final = {id(item): index for index, item in enumerate(session.items)}
        for index, item in enumerate(self.collected):
            if id(item) in self.deselected:
                continue
            # the place in the whole suite (a shard's too); a dropped item's after the rest
            rec = self._as_record(item, item.stash.get(GLOBAL_ORDER, final.get(
                id(item), len(final) + index)))
            if rec is not None:
                self.expected[item.nodeid] = rec
                self.locations[item.nodeid] = item.location
                if id(item) not in final:
                    self.dropped.add(item.nodeid)
        self._expect_skipped_files()
        for item in self._group_items:
            if id(item) not in self.deselected:
                self.groups[item.nodeid] = item.location
                if id(item) not in final:
                    self.dropped.add(item.nodeid)
        # another shard's items are that shard's to run: toolselect merge joins them
        self.session.state.narrowed.update(
            self.session.baselines.key_of(item.nodeid) for item in self.collected
            if id(item) in self.deselected and not item.stash.get(OTHER_SHARD, False))

    def _expect_skipped_files(self) -> None:
        """The baseline's cases of each file (or folder) skipped at collection: each is
        expected, and not run unless a later collection of it ran."""
        base = self.session.baselines.baseline if self._skipped_paths else None
        if base is None:
            return
        settings = self.session.settings
        option = settings.pytest_config.option
        # a run narrowed on purpose may have left these out anyway: named, not blocking
        narrowed = bool(self.deselected or getattr(option, "keyword", "")
                        or getattr(option, "markexpr", ""))
        shard = settings.pytest_config.pluginmanager.get_plugin(SHARD)
        for path, reason in self._skipped_paths.items():
            anchor = settings.config_for(path).root
            rel = Path(os.path.relpath(path, anchor)).as_posix()
            for key in base.cases:
                file = split(key)[0]
                if not (file == rel or file.startswith(rel + "/")) or key in self.expected:
                    continue
                if shard is not None and not shard.holds(key):
                    continue  # another shard's case: that shard names it
                if narrowed:
                    self.session.state.narrowed.add(key)
                    continue
                self.expected[key] = key_record(key)
                self.locations[key] = (file, None, key)
                self.skipped[key] = (f"its file was skipped at collection ({reason}), so the "
                                     "baseline's case was never collected")

    def _as_record(self, item: pytest.Item, order: int) -> CaseRecord | None:
        case = case_of(item)
        if case is None:
            return None  # a case that does not parse: its own error says so
        state = self.session.state
        key = state.keys.get(item.nodeid) or self.session.baselines.add_item_key(item)
        return CaseRecord(
            nodeid=item.nodeid, key=key, order=order, case_id=case.id,
            question=case.question, category=case.category, intent=case.intent, why=case.why,
            expect_tool=list(case.expect_tool) if case.expect_tool is not None else None,
            allow_no_tool=case.allow_no_tool, case_fingerprint=state.case_fingerprints.get(key),
            status=None, verdict=Verdict.ERROR)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.started.add(item.nodeid)

    def _manifest(self) -> dict[str, Any]:
        """What this worker expects, as plain JSON for the controller."""
        return {"cases": [rec.to_json() for rec in self.expected.values()],
                "locations": {n: list(loc) for n, loc in self.locations.items()},
                "dropped": sorted(self.dropped), "narrowed": sorted(self.session.state.narrowed),
                "skipped": dict(self.skipped),
                "groups": {n: list(loc) for n, loc in self.groups.items()}}

    def _take(self, sent: Any) -> None:
        """A worker's manifest, on the controller (every worker's holds the same cases)."""
        if not isinstance(sent, dict) or self.session.settings.is_worker:
            return
        judged = self.session.state.records
        for data in sent.get("cases", []):
            # a case already judged needs no name (a worker's last manifest comes at its end)
            if data["nodeid"] not in judged:
                self.expected.setdefault(data["nodeid"], CaseRecord.from_json(data))
        for nodeid, loc in sent.get("locations", {}).items():
            self.locations.setdefault(nodeid, (loc[0], loc[1], loc[2]))
        self.dropped.update(sent.get("dropped", []))
        self.skipped.update(sent.get("skipped", {}))
        for nodeid, loc in sent.get("groups", {}).items():
            self.groups.setdefault(nodeid, (loc[0], loc[1], loc[2]))
        self.session.state.narrowed.update(sent.get("narrowed", []))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item) -> Generator[None, Any, Any]:
        report = yield
        if self.session.settings.is_worker and not self._sent:
            # on the first report (a worker that dies later has sent it) and in the worker's
            # output at its end (a worker whose items never report sends that)
            self._sent = True
            report.toolselect_expected = self._manifest()
        return report

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.session.settings.is_worker:
            session.config.workeroutput[EXPECTED_KEY] = self._manifest()  # type: ignore[attr-defined]

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None)  # none from a worker that died
        if isinstance(output, dict):
            self._take(output.get(EXPECTED_KEY))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._take(getattr(report, "toolselect_expected", None))
        self.reported.add(report.nodeid)
        if report.when == _CRASHED and report.failed:
            self.crashed[report.nodeid] = str(report.longrepr)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        # its record has arrived: the expected record would only ever name it if none had, so
        # the controller lets it go (20,000 of them were a run's largest leftover); a worker
        # keeps its own, as its last manifest sends them
        if not self.session.settings.is_worker and nodeid in self.session.state.records:
            self.expected.pop(nodeid, None)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, Any]:
        result = yield
        # a worker runs only what it is sent; -x, --sw and a dry run leave items out on purpose
        if not (self.session.settings.is_worker or session.config.option.collectonly
                or session.config.pluginmanager.has_plugin(DRY_RUN)
                or session.shouldfail or session.shouldstop):
            self._name_the_unjudged(session)
        return result

    def _name_the_unjudged(self, session: pytest.Session) -> None:
        under_xdist = getattr(session.config.option, "dist", "no") != "no"
        for rec in unjudged(self.expected, self.session.state.records, self._why(under_xdist)):
            if rec.nodeid in self.crashed:
                # xdist's own failure of the item stands (terminal, JUnit); the case's record
                # says it was never judged, and the verdict counts it once, as the case
                self.session.state.other_failed -= 1
                self.session.recorder.add_record(rec.to_json())
                continue
            # held before the report is shown: a hook that drops records from reports drops
            # this one's too
            self.session.recorder.add_record(rec.to_json())
            _report(session, rec, self.locations.get(rec.nodeid))
        why = self._why(under_xdist)
        for nodeid, location in self.groups.items():
            if nodeid not in self.reported and nodeid not in self.session.state.group_records:
                # a group that never reported fails the run as any item outside the gate's
                # cases does (counted among the other items that failed)
                _report_group(session, nodeid, location, f"the preference group did not run: "
                                                         f"{why(nodeid)}")

    def _why(self, under_xdist: bool) -> Callable[[str], str]:
        def why(nodeid: str) -> str:
            if nodeid in self.crashed:
                return f"its xdist worker died while running it ({self.crashed[nodeid]})"
            if nodeid in self.dropped:
                return _DROPPED
            if nodeid in self.skipped:
                return self.skipped[nodeid]
            if under_xdist:
                return _NO_REPORT
            return _LOST_RECORD if nodeid in self.started else _NEVER_SET_UP
        return why


def _report_group(session: pytest.Session, nodeid: str, location: tuple[str, int | None, str],
                  text: str) -> None:
    secrets = session.config.stash[RUN_SESSION].settings.server_secrets()
    report = pytest.TestReport(nodeid, location, {}, "failed", shown(text, secrets), "setup")
    report.toolselect_shown = True  # type: ignore[attr-defined]
    hook = session.config.hook
    hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
    hook.pytest_runtest_logreport(report=report)
    hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)


def _report(session: pytest.Session, rec: CaseRecord,
            location: tuple[str, int | None, str] | None) -> None:
    """The case's setup error, as any error is shown (terminal, JUnit), before any report is
    written; its record rides on it to the session's gathered records."""
    where = location or (rec.nodeid.partition("::")[0], None, rec.nodeid)
    secrets = session.config.stash[RUN_SESSION].settings.server_secrets()
    report = pytest.TestReport(rec.nodeid, where, {}, "failed", shown(rec.error or "", secrets),
                               "setup")
    report.toolselect = rec.to_json()  # type: ignore[attr-defined]
    report.toolselect_owned = True  # type: ignore[attr-defined]
    report.toolselect_shown = True  # type: ignore[attr-defined]
    hook = session.config.hook
    hook.pytest_runtest_logstart(nodeid=rec.nodeid, location=where)
    hook.pytest_runtest_logreport(report=report)
    hook.pytest_runtest_logfinish(nodeid=rec.nodeid, location=where)
