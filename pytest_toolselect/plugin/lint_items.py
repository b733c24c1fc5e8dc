"""``--toolselect-lint``: one pytest item per server, gated against the baseline like cases.

An item fails on the error-level findings about its server that the baseline does not
hold; findings it holds are known (xfailed, as a still-failing case is). Its findings
travel on the test report as plain data, so the xdist controller records them in the
baseline (under "lint", by server name and finding id) and in the reports.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.lint.findings import ERROR, INFO, Finding, ordered, unsilenced
from pytest_toolselect.lint.render import counts_line
from pytest_toolselect.lint.rugpull import RULE as RUG_PULL
from pytest_toolselect.lint.rugpull import rug_pulls, snapshot
from pytest_toolselect.lint.run import LintReport, discover_servers, toolset_of
from pytest_toolselect.lint.run import lint as run_lint
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.records.run_records import LintRecord
from pytest_toolselect.run.case_run import case_of
from pytest_toolselect.run.session import RunSession

from .shown import shown

if TYPE_CHECKING:
    from _pytest._code.code import ExceptionInfo, TerminalRepr

    from pytest_toolselect.inputs.cases import Case

#: the finding data an item hands the controller
LINT_RECORD = pytest.StashKey[LintRecord]()
ITEM_PREFIX = "toolselect-lint"


class LintFailed(AssertionError):
    """New error-level findings on a server; the text is the whole story."""


def stored_ids(findings: Sequence[Finding]) -> list[str]:
    """What the baseline keeps of a server's findings: every id but the informational, and
    but the rug pulls (the accepted snapshot of the tools is their record)."""
    return sorted({f.id for f in findings if f.severity != INFO and f.rule != RUG_PULL})


def new_errors(findings: Sequence[Finding], known: Sequence[str] | None) -> list[Finding]:
    """Error-level findings the baseline does not hold (None: no baseline, all are new)."""
    held = set(known or ())
    return [f for f in findings if f.severity == ERROR and f.id not in held]


class LintItem(pytest.Item):
    def __init__(self, *, server: str, hooks: LintHooks, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.server = server
        self.hooks = hooks
        self.add_marker("toolselect_lint")

    def setup(self) -> None:
        # a server that cannot give its tools is an error of its own item, as for cases
        failed = self.hooks.failed(self.server)
        if failed is not None:
            raise failed.with_traceback(None) from None

    def runtest(self) -> None:
        session = self.hooks.session
        report = self.hooks.report()
        base = session.baselines.baseline
        tools = self.hooks.tools.get(self.server, ())
        said = self.hooks.instructions.get(self.server)
        pulls = rug_pulls(self.server, tools,
                          base.lint_tools.get(self.server) if base is not None else None, said)
        findings = ordered([*report.for_server(self.server),
                            *unsilenced(pulls, session.settings.config.lint_allow)])
        known = base.lint.get(self.server) if base is not None else None
        new = new_errors(findings, known)
        # a run that updates the baseline accepts what it finds (a rug pull's new text too)
        updating = session.settings.flag("update_baseline") and base is not None
        blocks = (bool(new) and not session.settings.flag("update_baseline")
                  and (base is not None or not session.baselines.have_baseline))
        self.stash[LINT_RECORD] = LintRecord(
            server=self.server, entry=stored_ids(findings),
            findings=[f.to_dict() for f in findings], new=[f.id for f in new] if blocks else [],
            tools=list(report.servers.get(self.server, ())),
            coverage=report.coverage.get(self.server), heatmap=report.heatmap().to_json(),
            threshold=report.threshold, snapshot=snapshot(tools, said),
            accepted=[f.id for f in new] if updating else [])
        errors = [f for f in findings if f.severity == ERROR]
        if blocks:
            raise LintFailed(_explain(self.server, new, base is not None))
        if errors:
            if updating and new:
                why = f"{len(new)} new accepted into the baseline"
            elif base is not None and not new:
                why = "held by the baseline"
            else:
                why = "recorded in the new baseline"
            pytest.xfail(f"{len(errors)} error-level lint finding(s) on {self.server}, {why}")

    def repr_failure(self, excinfo: ExceptionInfo[BaseException],
                     style: Any = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, (LintFailed, ToolselectError)):
            return shown(str(excinfo.value))
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.hooks.session.settings.config.path or self.path, None, f"toolselect lint {self.server}"


def _own(report: pytest.TestReport, rec: LintRecord) -> None:
    """The lint item's outcome is its record's, whatever a mark or flag made of the report
    (as a case item's is its verdict's): failed on new findings, xfailed on known ones."""
    report.toolselect_owned = True  # type: ignore[attr-defined]
    if rec.new:
        if not report.failed:
            report.longrepr = f"{len(rec.new)} new error-level lint finding(s) on server {rec.server!r}"
        report.outcome = "failed"
        if hasattr(report, "wasxfail"):
            del report.wasxfail
        return
    errors = sum(1 for f in rec.findings if f.get("severity") == ERROR)
    if errors:
        if not hasattr(report, "wasxfail"):  # --runxfail made the item's own xfail a no-op
            report.longrepr = None
            report.wasxfail = (f"{errors} error-level lint finding(s) on "
                               f"{rec.server}, known to the baseline")
        report.outcome = "skipped"
    else:
        report.longrepr = None
        report.outcome = "passed"
        if hasattr(report, "wasxfail"):
            del report.wasxfail


def _explain(server: str, new: Sequence[Finding], against_baseline: bool) -> str:
    head = (f"{len(new)} new error-level lint finding(s) on server {server!r}"
            + (" (not in the baseline)" if against_baseline else ""))
    lines = [head]
    for f in new:
        lines += [f"  {f.rule} [{', '.join(f.tools)}]: {f.message}", f"    fix: {f.fix}"]
    return "\n".join(lines)


class LintHooks:
    """Adds the lint items and gathers their findings; registered by the plugin per config."""

    def __init__(self, session: RunSession) -> None:
        self.session = session
        self._cases: list[Case] = []
        self._report: LintReport | None = None
        #: servers that could not give their tools: the error of each
        self._failed: dict[str, ToolselectError] = {}
        #: the tools each server gave, as it names them
        self.tools: dict[str, tuple[Any, ...]] = {}
        #: the instructions (system prompt) of each server that gives any
        self.instructions: dict[str, str] = {}

    def failed(self, server: str) -> ToolselectError | None:
        self.report()
        return self._failed.get(server)

    def report(self) -> LintReport:
        """The lint of every configured server that gives its tools, once per process."""
        if self._report is None:
            self._report = self._lint()
        return self._report

    def _lint(self) -> LintReport:
        config = self.session.settings.config
        timeout = self.session.settings.options.discovery_timeout
        tools: dict[str, tuple[Any, ...]] = {}
        for name in config.servers:
            try:
                found = discover_servers(config, timeout, only=[name])
            except ToolselectError as e:
                self._failed[name] = e
                continue
            for server, got in found.items():
                tools[server] = got.tools
                if got.instructions:
                    self.instructions[server] = got.instructions
        self.tools = tools
        toolset = toolset_of(config, tools, self._cases, str(self.session.settings.model.value),
                             instructions=self.instructions)
        return run_lint(toolset, config.identifiers, allow=config.lint_allow)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        # every collected case counts for coverage, before -k or -m deselect some
        self._cases = [c for c in (case_of(i) for i in items) if c is not None]
        config = self.session.settings.config
        where = _config_place(config.path, session.config.rootpath)
        # the node id given whole: --lf reads "<file>::toolselect-lint[<server>]" back as that
        # name with parameters, and JUnit takes its classname from the file part
        lint_items = [LintItem.from_parent(session, name=f"{ITEM_PREFIX}[{name}]", server=name,
                                           hooks=self, nodeid=f"{where}::{ITEM_PREFIX}[{name}]")
                      for name in config.servers]
        items[:0] = lint_items
        # the items were made after collection: say so, as a collector would, so that the
        # "collected N items" line (and a shard's "deselected") counts them
        session.ihook.pytest_collectreport(report=pytest.CollectReport(
            session.nodeid, "passed", None, [*lint_items]))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        report = yield
        rec = item.stash.get(LINT_RECORD, None)
        if rec is not None and call.when == "call":
            # plain JSON data on the report travels to the xdist controller with it
            report.toolselect_lint = rec.to_json()
            _own(report, rec)
        return report

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        rec = getattr(report, "toolselect_lint", None)
        if isinstance(rec, dict):
            lint = LintRecord.from_json(rec)
            self.session.state.lint_records[lint.server] = lint


    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.session.settings.is_worker or not self.session.state.lint_records:
            return
        terminalreporter.section("toolselect lint")
        for server, rec in sorted(self.session.state.lint_records.items()):
            accepted = f", {len(rec.accepted)} accepted" if rec.accepted else ""
            counts = counts_line(f["severity"] for f in rec.findings)
            terminalreporter.write_line(shown(f"{server}: {counts}; {len(rec.new)} new{accepted}"))


def _config_place(path: Any, rootpath: Any) -> str:
    """The config file's path from the rootdir, as a node id begins (empty: no file there)."""
    from pathlib import Path

    if path is None:
        return ""
    try:
        return Path(path).resolve().relative_to(Path(rootpath).resolve()).as_posix()
    except ValueError:
        return ""

