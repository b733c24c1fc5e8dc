"""The plugin's machinery: the run session and the hooks that drive it.

The one place where a run's machinery is first imported. The entry module
(``plugin/__init__.py``, loaded by every pytest run of every user) imports a small fixed
set and calls `start` only once the run turns out to concern toolselect: at configure time
when a config file or a toolselect option is there (or xdist distributes the run), else
when collection meets a case file, a groups file or a test marked as a case. A run of
ordinary tests never imports this module (``tests/test_import_cost.py``). What the
entry's lookout saw before that (the pytest session, files that failed to collect) is
handed over here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Generator
from typing import Any

import pytest

from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.providers.shutdown import exit_quickly
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.run.case_outcome import case_fingerprint
from pytest_toolselect.run.case_run import DECORATED_CASE, case_of
from pytest_toolselect.run.imports import import_parts
from pytest_toolselect.run.lifecycle import overlap_problem
from pytest_toolselect.run.log_masking import install
from pytest_toolselect.run.session import RUN_SESSION, RunSession
from pytest_toolselect.run.spend import configure_node
from pytest_toolselect.terms.vocabulary import Verdict

from .adaptive_reps import AdaptiveReps
from .attribution import Attribution
from .collect import CaseItem, define_families, label_item
from .decorator import case_from_item
from .dry_run import NAME as DRY_RUN
from .dry_run import DryRun
from .not_run import NotRunCases
from .options import FINAL
from .ownership import NAME as OWNERSHIP
from .ownership import Ownership, own_report, shown_status
from .run_end import end_of_run
from .shard import GLOBAL_ORDER, Shard
from .shard import NAME as SHARD
from .shown import shown
from .verdict import (
    CASE,
    IN_BODY,
    ORDER,
    RECORD,
    RUN,
    CaseFailed,
    conclude_case,
    record_failed_body,
)
from .xdist_schedule import DeepLoadScheduling

CACHE_STATS_KEY = "toolselect_cache_stats"


def start(config: pytest.Config, *, pytest_session: pytest.Session | None = None,
          failed: int = 0) -> SessionHooks:
    """Build the run session and register its hooks, once per config; the session's hooks.

    `pytest_session` and `failed` are what the entry's lookout saw before the start: the
    pytest session, and how many files failed to collect (they fail the run too).
    """
    hooks = config.pluginmanager.get_plugin("toolselect-session")
    if isinstance(hooks, SessionHooks):
        return hooks
    session = RunSession(config)
    config.stash[RUN_SESSION] = session
    session.state.pytest_session = pytest_session
    session.state.other_failed += failed
    found = Shard.of(session)
    if found is not None:  # before the session's hooks: it takes its share after they key items
        config.pluginmanager.register(found, SHARD)
    hooks = SessionHooks(session)
    config.pluginmanager.register(hooks, "toolselect-session")
    config.pluginmanager.register(Ownership(session, _is_case), OWNERSHIP)
    config.pluginmanager.register(NotRunCases(session, _is_case), "toolselect-not-run")
    # the entry registered this list's runner first, so it runs last (after every hook and
    # every later cleanup)
    config.stash[FINAL].append(lambda: _keep_exit_status(hooks))
    config.add_cleanup(install(session.settings.server_secrets))
    if session.settings.in_use():
        session.check_setup()
        if DryRun.applies(session):
            config.pluginmanager.register(DryRun(session), DRY_RUN)
        # what follows a case's reps, each registered when it applies: the runner takes them
        adaptive, attribution = AdaptiveReps.of(session), Attribution.of(session)
        for feature in (adaptive, attribution):
            if feature is not None:
                feature.register(config)
        session.follow_reps_with(adaptive, attribution)
        if session.settings.flag("lint"):
            # the lint's modules only for a run that lints (tests/test_import_cost.py)
            from pytest_toolselect.plugin.lint_items import LintHooks

            config.pluginmanager.register(LintHooks(session), "toolselect-lint")
        exit_quickly()
        # the model SDK's import (seconds) runs while collection and MCP servers start
        session.wiring.preload_sdk()
    return hooks


def _keep_exit_status(hooks: SessionHooks) -> None:
    """Put back the failing exit status the plugin decided if something that ran after its
    pytest_sessionfinish (another plugin's or a conftest's) made the run pass: pytest returns
    session.exitstatus as it is after the configuration's cleanups."""
    decided, pytest_session = hooks.decided, hooks.session.state.pytest_session
    if decided and pytest_session is not None and pytest_session.exitstatus == 0:
        pytest_session.exitstatus = decided


def _is_case(item: pytest.Item) -> bool:
    return isinstance(item, CaseItem) or item.get_closest_marker("toolselect_case") is not None


def _fingerprints(items: list[pytest.Item], keys: dict[str, str]) -> dict[str, str]:
    """Key -> content fingerprint of the cases these items stand for (those that parse)."""
    return {keys[item.nodeid]: case_fingerprint(case)
            for item in items if (case := case_of(item)) is not None}


class SessionHooks:
    """The hooks that need the run session; registered per pytest config."""

    def __init__(self, session: RunSession) -> None:
        self.session = session
        #: the exit status the plugin gave the session at its end (run_end.end_of_run): a
        #: failing one is put back if a later hook set a passing one (_keep_exit_status)
        self.decided: int | None = None
        #: node ids whose pytest report already shows the case in full (a failure's whole
        #: block) or its error's whole message: the summary does not print it again
        self.shown_above: set[str] = set()

    def pytest_report_header(self) -> list[str] | None:
        if not self.session.settings.in_use():
            return None
        note = self.session.settings.configs.note()
        local = self.session.wiring.local_line()
        return [self.session.wiring.model_line(), *([local] if local else []),
                *([note] if note else [])]

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        cases = [i for i in items if _is_case(i)]
        for item in cases:
            if item.get_closest_marker("toolselect_case") is not None:
                # a bad case is reported as the item's error when it runs
                with contextlib.suppress(ToolselectError):
                    case = case_from_item(item)
                    item.stash[DECORATED_CASE] = case  # the run reads it; it reads no marker
                    label_item(item, case)
        # before -k/-m deselect: these are the cases that exist
        self.session.state.collected.update(self.session.baselines.add_item_key(i) for i in cases)
        self.session.state.case_fingerprints.update(_fingerprints(cases, self.session.state.keys))
        groups = [i for i in items if getattr(i, "group", None) is not None]
        for item in groups:
            self.session.baselines.add_item_key(item)
        lint = self.session.settings.in_use() and self.session.settings.flag("lint")
        if cases or groups or lint:
            # before any thread of the run starts: it then imports nothing of the package
            import_parts(lint=lint)
        if not (cases or groups):
            return  # a run of ordinary tests: no config or baseline is read
        if not self.session.settings.is_worker:
            problem = overlap_problem(self.session.baselines)
            if problem is not None:
                raise pytest.UsageError(problem)

    @pytest.hookimpl(wrapper=True)
    def pytest_pycollect_makeitem(self) -> Generator[None, Any, Any]:
        # every parameter set of a function, before node ids or -k keep some
        made = yield
        if isinstance(made, list):
            define_families(self.session, made)
        return made

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # the final order is the report's order, identical on every xdist worker; a shard
        # keeps each item's place in the whole suite, so merged shards read as one run
        for index, item in enumerate(session.items):
            item.stash[ORDER] = item.stash.get(GLOBAL_ORDER, index)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        case = item.stash.get(CASE, None)
        item.stash[IN_BODY] = True
        try:
            result = yield
        except BaseException as exc:
            if case is not None:  # the test's own assertion failed: the case still counts
                record_failed_body(item, case, exc)
            raise
        finally:
            item.stash[IN_BODY] = False
        if case is not None:
            conclude_case(item, case)
        return result

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        # each attempt (a rerun plugin runs the item again) starts without the last's record
        if RECORD in item.stash:
            del item.stash[RECORD]
        if RUN in item.stash:
            del item.stash[RUN]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, Any]:
        try:
            return (yield)
        finally:
            # the outcome and record have reached the item's reports and the gate; pytest keeps
            # every item to the session's end, so a large suite would keep every run alive
            if RECORD in item.stash:
                del item.stash[RECORD]
            if RUN in item.stash:
                del item.stash[RUN]
            # a rerun plugin's attempts are over: their reps are in the record now
            self.session.calls.attempts_over(item.nodeid)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        # the outermost wrapper: whatever marks, flags or plugins made of the report, a
        # case item's outcome is its verdict's (plugin/ownership.py)
        report = yield
        if item.stash.get(IN_BODY, False):
            return report  # a subtest's report, made inside the body: its outcome is its own
        rec = item.stash.get(RECORD, None)
        if _is_case(item):
            own_report(item, call, report)
            rec = item.stash.get(RECORD, None)
        elif rec is not None and (call.when == "call" or (call.when == "setup" and not report.passed)):
            # plain JSON data on the report travels to the xdist controller with it
            report.toolselect = rec.to_json()
        if call.excinfo is not None and isinstance(call.excinfo.value, (CaseFailed, ToolselectError)):
            # the message is the whole story; a traceback through the plugin adds nothing
            report.longrepr = self._shown(str(call.excinfo.value))
            # plain data, so it reaches the xdist controller with the report
            report.toolselect_shown = True
        elif report.skipped and rec is not None and rec.verdict == Verdict.SKIPPED:
            # point the skip at the case, not at the plugin line that skipped it
            # pytest's skip exception says its reason as its text
            reason = (str(call.excinfo.value) if call.excinfo is not None
                      else rec.error if isinstance(rec, CaseRecord) else None)
            report.longrepr = (str(item.path), (item.location[1] or 0) + 1, self._shown(f"Skipped: {reason}"))
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        return shown_status(report)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        rec = getattr(report, "toolselect", None)
        if isinstance(rec, dict):
            self.session.recorder.add_record(rec)
            if not self.session.settings.is_worker:
                # gathered: pytest keeps every report to the end (its summary's stats), and
                # the record's JSON on each would hold every case twice
                del report.toolselect
        if report.failed and getattr(report, "toolselect_shown", False):
            self.shown_above.add(report.nodeid)
        if report.failed and not getattr(report, "toolselect_owned", False):
            self.session.state.other_failed += 1  # not a case's verdict: a plain failure
        # after pytest's own hook has counted the failure: -x / --maxfail stop new calls now
        pytest_session = self.session.state.pytest_session
        if pytest_session is not None and (pytest_session.shouldfail or pytest_session.shouldstop):
            self.session.calls.stop()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.session.state.other_failed += 1  # a file that does not collect fails the run

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session.state.pytest_session = session

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        # only for plain `-n` (dist load) in a run that uses toolselect: keep each worker's
        # queue about twice its call concurrency deep so its calls can run ahead
        if config.getvalue("dist") != "load" or not self.session.settings.in_use():
            return None
        concurrency = self.session.settings.options.concurrency
        return DeepLoadScheduling(config, log, depth=2 * concurrency)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.session.settings.in_use():
            # one cost cap for the whole run: the workers charge one shared spend
            configure_node(node.config, node, self.session.settings.cost_cap)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # a worker that died (killed, os._exit) sends no output: xdist reports its item as
        # failed, and the cases it never judged are named at the end (plugin/not_run.py)
        output = getattr(node, "workeroutput", None)
        if not isinstance(output, dict):
            return
        self.session.state.read_collection(output)
        stats = output.get(CACHE_STATS_KEY)
        if isinstance(stats, dict):
            self.session.wiring.add_worker_cache_stats(stats)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # Ctrl-C, -x or the end: nothing queued may still start
        self.session.close()
        if self.session.settings.is_worker:
            output = session.config.workeroutput  # type: ignore[attr-defined]
            output.update(self.session.state.dump_collection())
            stats = self.session.wiring.cache_stats()
            if stats is not None:
                output[CACHE_STATS_KEY] = stats.to_dict()
            return
        ownership = session.config.pluginmanager.get_plugin(OWNERSHIP)
        refused = ownership.refused if isinstance(ownership, Ownership) else []
        self.decided = end_of_run(self.session, session, refused)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if "pytest_toolselect.run.spend" in sys.modules:
            sys.modules["pytest_toolselect.run.spend"].cleanup(config)
        # discovery is cached for one run; a run in the same process (pytester, an IDE)
        # must see servers and tools files as they are now
        servers = sys.modules.get("pytest_toolselect.discovery.servers")
        if servers is not None:
            servers.clear_cache()

    def _shown(self, text: str) -> str:
        return shown(text, self.session.settings.server_secrets())

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        run, state = self.session, self.session.state
        if run.settings.is_worker:
            return
        if state.records or (state.baseline_written and not state.group_records):
            # reports are imported where one is made, not with the run's parts (run/imports.py)
            from pytest_toolselect.report.terminal import lines, summarize

            terminalreporter.section("toolselect")
            data = run.summary.summary_input()
            # FAILURES and ERRORS above hold each failed case's block and each error's
            # message, unless --tb hides them
            if terminalreporter.config.option.tbstyle not in ("no", "line"):
                data = dataclasses.replace(data, shown_above=frozenset(self.shown_above))
            for line in lines(summarize(data)):
                terminalreporter.write_line(self._shown(line))
            # reports are imported where one is made, not with the run's parts (run/imports.py)
            from pytest_toolselect.report.words import not_run_line

            narrowed = not_run_line(sorted(state.narrowed - {r.key for r in state.records.values()}))
            if narrowed:
                terminalreporter.write_line(self._shown(narrowed))
        if state.group_records:
            terminalreporter.section("toolselect preference probe")
            for line in run.summary.probe_lines():
                terminalreporter.write_line(self._shown(line))
        local = run.wiring.local_line()
        if local and (state.records or state.group_records):
            terminalreporter.write_line(self._shown(local))
        for note in state.baseline_notes:
            terminalreporter.write_line(self._shown(f"toolselect: {note}"), yellow=True)
        for problem in state.report_problems:
            terminalreporter.write_line(self._shown(f"toolselect: {problem}"), red=True)
