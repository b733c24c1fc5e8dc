"""pytest hooks: thin, each hands off to the run session.

Importing this module must stay cheap (it loads in every pytest run of every
user): nothing here imports yaml, jsonschema, mcp, numpy or a model SDK.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.run.case_run import DECORATED_CASE
from pytest_toolselect.run.session import RUN_SESSION, RunSession

from .options import add_options
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
    setup_case,
)

CASE_SUFFIXES = (".toolselect.yaml", ".toolselect.yml", ".toolselect.json")
#: tool_preference_groups.v1 files (kept in step with groups.GROUPS_FILE_SUFFIXES)
GROUPS_SUFFIXES = (".groups.json", ".groups.yaml", ".groups.yml")
COLLECTED_KEY = "toolselect_collected"
FINGERPRINTS_KEY = "toolselect_case_fingerprints"
DEFINED_KEY = "toolselect_defined"
CACHE_STATS_KEY = "toolselect_cache_stats"
PROBLEMS_KEY = "toolselect_start_problems"
#: exit statuses the verdict does not override: the run was refused or broke (an
#: interrupted run is the verdict's too: blocking if what ran blocks, incomplete otherwise)
_PYTEST_DECIDES = (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    from pytest_toolselect.inputs.labels import registered_at_run_time

    from .collect import DECLARED_MARKS

    # before any conftest or plugin registers a mark: these lines are the ini file's own
    early_config.stash[DECLARED_MARKS] = frozenset(
        registered_at_run_time(list(early_config.getini("markers")), ()))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "toolselect_case(**fields): this test is a tool-selection case (see @case)"
    )
    session = RunSession(config)
    config.stash[RUN_SESSION] = session
    config.pluginmanager.register(SessionHooks(session), "toolselect-session")
    config.pluginmanager.register(StartRefusals(session), "toolselect-start-refusals")
    from .not_run import NotRunCases

    config.pluginmanager.register(NotRunCases(session, _is_case), "toolselect-not-run")
    # registered first, so it runs last (after every hook and every later cleanup)
    config.add_cleanup(lambda: _keep_exit_status(session))
    config.addinivalue_line("markers", "toolselect_lint: a --toolselect-lint item (one per server)")
    from pytest_toolselect.run.log_masking import install

    config.add_cleanup(install(session.settings.server_secrets))
    if session.settings.in_use():
        session.check_setup()
        if session.settings.flag("lint"):
            from pytest_toolselect.plugin.lint_items import LintHooks

            config.pluginmanager.register(LintHooks(session), "toolselect-lint")
        from pytest_toolselect.providers.shutdown import exit_quickly

        exit_quickly()
        # the model SDK's import (seconds) runs while collection and MCP servers start
        session.wiring.preload_sdk()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name.endswith(CASE_SUFFIXES):
        from .collect import CaseFile

        return CaseFile.from_parent(parent, path=file_path)
    if file_path.name.endswith(GROUPS_SUFFIXES) and _declares_groups(file_path):
        from .collect import GroupsFile

        return GroupsFile.from_parent(parent, path=file_path)
    return None


def _declares_groups(path: Path) -> bool:
    """A *.groups.json may be anybody's file: collect only those that say they are groups.

    Any version counts (``tool_preference_groups.v2``, a typo in the digit): the loader
    then refuses it with a clear error instead of the file being passed over in silence.
    """
    from pytest_toolselect.positions.bounded import read_bounded

    try:  # a FIFO or a device named *.groups.json is no groups file (and never blocks)
        return b"tool_preference_groups" in read_bounded(path, 4096, head=True)
    except OSError:
        return False


@pytest.fixture
def toolselect_result(request: pytest.FixtureRequest) -> Any:
    """The decorated case's run: turns, scores and calls per rep, for extra assertions."""
    from .collect import label_refusals
    from .decorator import case_from_item

    item = request.node
    case = case_from_item(item)
    refusals = label_refusals(item.config, case)
    if refusals:
        raise refusals[0]  # a label that names a mark some code acts on
    item.stash[CASE] = case
    return setup_case(item, case)


def _keep_exit_status(session: RunSession) -> None:
    """Put back the failing exit status the plugin decided if something that ran after its
    pytest_sessionfinish (another plugin's or a conftest's) made the run pass: pytest returns
    session.exitstatus as it is after the configuration's cleanups."""
    decided, pytest_session = session.state.exit_status, session.state.pytest_session
    if decided and pytest_session is not None and pytest_session.exitstatus == 0:
        pytest_session.exitstatus = decided


def _is_case(item: pytest.Item) -> bool:
    from .collect import CaseItem

    return isinstance(item, CaseItem) or item.get_closest_marker("toolselect_case") is not None


def _fingerprints(items: list[pytest.Item], keys: dict[str, str]) -> dict[str, str]:
    """Key -> content fingerprint of the cases these items stand for (those that parse)."""
    from pytest_toolselect.run.case_outcome import case_fingerprint
    from pytest_toolselect.run.case_run import case_of

    return {keys[item.nodeid]: case_fingerprint(case)
            for item in items if (case := case_of(item)) is not None}


class SessionHooks:
    """The hooks that need the run session; registered per pytest config."""

    def __init__(self, session: RunSession) -> None:
        self.session = session

    def pytest_report_header(self) -> list[str] | None:
        if not self.session.settings.in_use():
            return None
        note = self.session.settings.configs.note()
        local = self.session.wiring.local_line()
        return [self.session.wiring.model_line(), *([local] if local else []),
                *([note] if note else [])]

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        from .collect import label_item
        from .decorator import case_from_item

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
        shard = self.session.settings.options.shard if self.session.settings.in_use() else None
        if shard is not None:
            from .shard import select

            keys = self.session.state.keys
            select(items, self.session.settings.pytest_config, str(shard),
                   key=lambda item: keys.get(item.nodeid, item.nodeid))
        if cases or groups or (self.session.settings.in_use() and self.session.settings.flag("lint")):
            from pytest_toolselect.run.imports import import_parts

            # before any thread of the run starts: it then imports nothing of the package
            import_parts()
        if not (cases or groups):
            return  # a run of ordinary tests: no config or baseline is read
        from pytest_toolselect.run.lifecycle import overlap_problem

        if not self.session.settings.is_worker:
            problem = overlap_problem(self.session.baselines)
            if problem is not None:
                raise pytest.UsageError(problem)

    @pytest.hookimpl(wrapper=True)
    def pytest_pycollect_makeitem(self) -> Generator[None, Any, Any]:
        from .collect import define_families

        # every parameter set of a function, before node ids or -k keep some
        made = yield
        if isinstance(made, list):
            define_families(self.session, made)
        return made

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from .shard import GLOBAL_ORDER

        # the final order is the report's order, identical on every xdist worker; a shard
        # keeps each item's place in the whole suite, so merged shards read as one run
        for index, item in enumerate(session.items):
            item.stash[ORDER] = item.stash.get(GLOBAL_ORDER, index)
        if self.session.settings.flag("dry_run") and not self.session.settings.is_worker:
            self.session.summary.dry_run(session.items)

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
        for key in (RECORD, RUN):
            if key in item.stash:
                del item.stash[key]

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
            self.session.state.earlier_runs.pop(item.nodeid, None)

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
            from .ownership import own_report

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
        elif report.skipped and rec is not None and rec.verdict == gate.SKIPPED:
            # point the skip at the case, not at the plugin line that skipped it
            reason = (call.excinfo.value.msg if call.excinfo is not None
                      else rec.error if isinstance(rec, CaseRecord) else None)
            report.longrepr = (str(item.path), (item.location[1] or 0) + 1, self._shown(f"Skipped: {reason}"))
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, str] | None:
        from .ownership import shown_status

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
            self.session.state.shown_above.add(report.nodeid)
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
        from .xdist_schedule import DeepLoadScheduling

        concurrency = self.session.settings.options.concurrency
        return DeepLoadScheduling(config, log, depth=2 * concurrency)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.session.settings.in_use():
            from pytest_toolselect.run.spend import configure_node

            # one cost cap for the whole run: the workers charge one shared spend
            configure_node(node.config, node, self.session.settings.cost_cap)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # a worker that died (killed, os._exit) sends no output: xdist reports its item as
        # failed, and the cases it never judged are named at the end (plugin/not_run.py)
        output = getattr(node, "workeroutput", None)
        if not isinstance(output, dict):
            return
        self.session.state.collected.update(output.get(COLLECTED_KEY, []))
        self.session.state.case_fingerprints.update(output.get(FINGERPRINTS_KEY, {}))
        for file, keys in output.get(DEFINED_KEY, {}).items():
            self.session.state.defined.setdefault(file, set()).update(keys)
        stats = output.get(CACHE_STATS_KEY)
        if isinstance(stats, dict):
            self.session.state.worker_cache_stats.append(stats)
        for problem in output.get(PROBLEMS_KEY, []):
            if problem not in self.session.state.start_problems:  # every worker finds it
                self.session.state.start_problems.append(problem)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # Ctrl-C, -x or the end: nothing queued may still start
        self.session.close()
        if self.session.settings.is_worker:
            output = session.config.workeroutput  # type: ignore[attr-defined]
            output[COLLECTED_KEY] = sorted(self.session.state.collected)
            output[FINGERPRINTS_KEY] = dict(self.session.state.case_fingerprints)
            output[DEFINED_KEY] = {f: sorted(k) for f, k in self.session.state.defined.items()}
            stats = self.session.wiring.cache_stats()
            if stats is not None:
                output[CACHE_STATS_KEY] = stats.to_dict()
            output[PROBLEMS_KEY] = list(self.session.state.start_problems)
            return
        if self.session.state.start_problems:
            # refused on the workers at their start (nothing ran): said once, a usage error
            self.session.state.report_problems.extend(self.session.state.start_problems)
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            self.session.state.exit_status = int(session.exitstatus)
            return
        if self.session.state.collected and getattr(session.config.option, "dist", "no") != "no":
            # under xdist the controller learns the cases only now: refuse the gate here
            from pytest_toolselect.run.lifecycle import overlap_problem

            problem = overlap_problem(self.session.baselines)
            if problem is not None:
                self.session.state.report_problems.append(problem)
                session.exitstatus = pytest.ExitCode.USAGE_ERROR
        self.session.finish()
        if self.session.state.write_refused is not None:
            # another subject's baseline is on disk now: said once, a usage error
            self.session.state.report_problems.append(self.session.state.write_refused)
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        if self.session.state.gathered() and session.exitstatus not in _PYTEST_DECIDES:
            # the one verdict decides, never the count pytest kept of the items' outcomes
            session.exitstatus = self.session.summary.decision().exit_status
        self.session.summary.write_reports(int(session.exitstatus), session.testsfailed)
        if self.session.state.report_problems and session.exitstatus == 0:
            session.exitstatus = 1  # a report CI expects is missing
        if self.session.state.gathered() or self.session.state.report_problems:
            self.session.state.exit_status = int(session.exitstatus)

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
        if state.dry_run_lines:
            terminalreporter.section("toolselect dry run")
            for line in state.dry_run_lines:
                terminalreporter.write_line(self._shown(line))
            return
        if state.records or (state.baseline_written and not state.group_records):
            from pytest_toolselect.report.terminal import lines, summarize

            terminalreporter.section("toolselect")
            data = run.summary.summary_input()
            # FAILURES and ERRORS above hold each failed case's block and each error's
            # message, unless --tb hides them
            if terminalreporter.config.option.tbstyle not in ("no", "line"):
                data = dataclasses.replace(data, shown_above=frozenset(state.shown_above))
            for line in lines(summarize(data)):
                terminalreporter.write_line(self._shown(line))
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


    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        # a dry run counts the calls and makes none
        return True if self.session.settings.flag("dry_run") else None


class StartRefusals:
    """What would let pytest judge a case instead of the gate, refused at the start."""

    def __init__(self, session: RunSession) -> None:
        self.session = session

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Generator[None, None, None]:
        result = yield
        # after every other plugin and conftest: what they left on the items is what would run
        from .ownership import refusal

        state = self.session.state
        problem = refusal(items, _is_case, lambda item: state.case_fingerprints.get(
            state.keys.get(item.nodeid, "")))
        if problem is None:
            return result
        if not self.session.settings.is_worker:
            raise pytest.UsageError(problem)
        # a worker cannot stop the run at its start (xdist takes that for a crash): it runs
        # nothing, and the controller says the problem once and exits with the usage error
        self.session.state.start_problems.append(problem)
        self.session.settings.pytest_config.hook.pytest_deselected(items=list(items))
        items[:] = []
        return result
