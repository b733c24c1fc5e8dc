"""The plugin owns the outcome of its case items; pytest's machinery never changes it.

A case item's outcome is the one verdict's (gate.decision.case_outcome of its record),
whatever marks, flags or other plugins did to the report: the plugin's report hook is the
outermost wrapper and sets the outcome last, and the session's exit status is recomputed
from the verdict at the end. What the plugin cannot make harmless is refused at the start:
pytest's outcome marks (skip, skipif, xfail) on a case, and one case standing for several
items of one test (a repeat plugin).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.gate.decision import case_outcome
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.run.case_outcome import case_fingerprint
from pytest_toolselect.run.case_run import case_of
from pytest_toolselect.run.session import RUN_SESSION
from pytest_toolselect.terms.vocabulary import Outcome

from .shown import shown
from .verdict import RECORD, RUN, record_item, xfail_reason

if TYPE_CHECKING:
    from pytest_toolselect.gate.decision import GateSettings
    from pytest_toolselect.inputs.cases import Case
    from pytest_toolselect.run.session import RunSession

NAME = "toolselect-ownership"
#: a worker's refusals at its start, in its output to the xdist controller
REFUSED_KEY = "toolselect_start_problems"

#: marks whose whole purpose is to change a test's outcome (pytest's skipping plugin)
OUTCOME_MARKS = ("skip", "skipif", "xfail")
#: items named in a refusal (the rest are counted)
SHOWN = 3


def _named(nodeids: Sequence[str]) -> str:
    more = f" and {len(nodeids) - SHOWN} more" if len(nodeids) > SHOWN else ""
    return ", ".join(nodeids[:SHOWN]) + more


def _own_item(item: pytest.Item) -> bool:
    """A preference group's or a lint item: the plugin's too, judged at the session's end."""
    return getattr(item, "group", None) is not None or item.get_closest_marker("toolselect_lint") is not None


def refusal(items: Sequence[pytest.Item], is_case: Callable[[pytest.Item], bool],
            fingerprint_of: Callable[[pytest.Item], str | None] = lambda item: None) -> str | None:
    """The one usage error for case items pytest would judge instead of the gate, or None.
    ``fingerprint_of``: an item's case fingerprint as collection computed it (None: not
    known, computed here)."""
    cases = [i for i in items if is_case(i)]
    marked = [f"{i.nodeid} ({m})" for i in items if is_case(i) or _own_item(i)
              for m in dict.fromkeys(mk.name for mk in i.iter_markers() if mk.name in OUTCOME_MARKS)]
    if marked:
        return (f"{_named(marked)}: a toolselect case's outcome is the gate's verdict, and a "
                f"{'/'.join(OUTCOME_MARKS)} mark would hide it (a regression shown as xfailed, "
                "or never run). Remove the mark from the case (a conftest that marks every test "
                "can leave out items with a toolselect_case marker or a .toolselect. file), or "
                "leave the case out of the run with -k, -m or --deselect")
    seen: dict[tuple[str, str], str] = {}
    doubled: list[str] = []
    for item in cases:
        case = case_of(item)
        if case is None:
            continue
        function = item.nodeid.partition("[")[0]
        mark = (function, fingerprint_of(item) or case_fingerprint(case))
        if mark in seen:
            doubled.append(f"{item.nodeid} (as {seen[mark]})")
        else:
            seen[mark] = item.nodeid
    if doubled:
        return (f"{_named(doubled)}: the same case runs as several items of one test (a plugin "
                "that repeats tests, such as pytest-repeat's --count, or a parametrization that "
                "does not change the case), and each copy would be a baseline case of its own. "
                "Ask for more reps with --toolselect-reps instead, or leave the repeat out of "
                "the toolselect run")
    return None


def _why_not_run(report: pytest.TestReport, call: pytest.CallInfo[None]) -> str:
    """What stopped a case before the model was asked, in a line."""
    if hasattr(report, "wasxfail"):
        return f"an xfail stopped it before the model was asked ({report.wasxfail or 'no reason'})"
    if report.skipped:
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        return f"it was skipped before the model was asked ({reason})"
    exc = call.excinfo.value if call.excinfo is not None else None
    what = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    return f"its setup failed before the model was asked ({what.rstrip(': ')})"


def own_report(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """Set a case item's setup or call report to its verdict's outcome, and attach its record."""
    if call.when == "teardown":
        return  # a decorated test's own teardown is its own: it fails as a plain test does
    case = case_of(item)
    if case is None:
        return  # a case that does not parse: its setup error says so
    session = item.config.stash[RUN_SESSION]
    rec = item.stash.get(RECORD, None)
    if call.when == "setup":
        if report.passed and rec is None:
            return  # the call decides
        if rec is None:
            # skipped, xfailed or failed by something other than the plugin: the case did not
            # run, and a case that did not run is an error, never a pass
            rec = record_item(item, case, None,
                              error=f"the case did not run: {_why_not_run(report, call)}")
            item.stash[RECORD] = rec
    elif rec is None:
        outcome = item.stash.get(RUN, None)
        if outcome is None:
            return
        # the body skipped or xfailed itself after the model was asked: the case is scored
        rec = record_item(item, case, outcome)
        item.stash[RECORD] = rec
    # RECORD holds a group's record on a group item; a case item's is a case's
    assert isinstance(rec, CaseRecord)
    _set_outcome(report, rec, case, session.summary.gate_settings(),
                 session.settings.server_secrets())
    # plain JSON data on the report travels to the xdist controller with it
    report.toolselect = rec.to_json()  # type: ignore[attr-defined]
    report.toolselect_owned = True  # type: ignore[attr-defined]


def _set_outcome(report: pytest.TestReport, rec: CaseRecord, case: Case,
                 settings: GateSettings, secrets: Sequence[str] = ()) -> None:
    """The report's outcome and the text pytest shows for it (terminal, JUnit), masked as
    every report is (``secrets``: the values the run's servers declare)."""
    wanted = case_outcome(rec, settings)
    if wanted in (Outcome.ERROR, Outcome.FAILED):
        if not report.failed or hasattr(report, "wasxfail"):
            # reports are imported where one is made, not with the run's parts (run/imports.py)
            from pytest_toolselect.report.terminal import describe

            text = rec.error if wanted == Outcome.ERROR else "\n".join(describe(rec))
            report.longrepr = shown(str(text), secrets)
            report.toolselect_shown = True  # type: ignore[attr-defined]
        # pytest's own words from here on: a report knows passed, failed and skipped
        report.outcome = "failed"
        _drop_xfail(report)
    elif wanted == Outcome.XFAILED:
        report.outcome = "skipped"
        report.wasxfail = shown(xfail_reason(rec), secrets)
    elif wanted == Outcome.SKIPPED:
        if not report.skipped:
            report.outcome = "skipped"
            report.longrepr = (str(case.source or ""), case.line or 0,
                               shown(f"Skipped: {rec.error}", secrets))
        _drop_xfail(report)
    else:  # passed, or passed with a notice (flaky)
        report.outcome = "passed"
        report.longrepr = None
        _drop_xfail(report)


def _drop_xfail(report: pytest.TestReport) -> None:
    if hasattr(report, "wasxfail"):
        del report.wasxfail


def shown_status(report: pytest.TestReport) -> tuple[str, str, str] | None:
    """The status line pytest shows for a case item's report: pytest's own words for the
    outcome the plugin set, given first so that no other status hook can show another."""
    if not getattr(report, "toolselect_owned", False) or report.outcome not in (
            "passed", "failed", "skipped"):
        return None  # not a case's report, or a rerun plugin's own outcome ("rerun")
    if hasattr(report, "wasxfail"):
        return ("xfailed", "x", "XFAIL") if report.skipped else None
    if report.skipped:
        return "skipped", "s", "SKIPPED"
    if report.when == "setup":
        return ("error", "E", "ERROR") if report.failed else ("", "", "")
    return ("failed", "F", "FAILED") if report.failed else ("passed", ".", "PASSED")



class Ownership:
    """What would let pytest judge a case instead of the gate, refused at the start; on an
    xdist worker, which cannot raise a usage error, held and handed to the controller, which
    says it once (plugin.run_end)."""

    def __init__(self, session: RunSession, is_case: Callable[[pytest.Item], bool]) -> None:
        self.session = session
        self.is_case = is_case
        #: what was refused at the start (on a worker; on the controller, every worker's)
        self.refused: list[str] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Generator[None, None, None]:
        result = yield
        # after every other plugin and conftest: what they left on the items is what would run
        state = self.session.state
        problem = refusal(items, self.is_case, lambda item: state.case_fingerprints.get(
            state.keys.get(item.nodeid, "")))
        if problem is None:
            return result
        if not self.session.settings.is_worker:
            raise pytest.UsageError(problem)
        # a worker cannot stop the run at its start (xdist takes that for a crash): it runs
        # nothing, and the controller says the problem once and exits with the usage error
        self.refused.append(problem)
        self.session.settings.pytest_config.hook.pytest_deselected(items=list(items))
        items[:] = []
        return result

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.session.settings.is_worker:
            session.config.workeroutput[REFUSED_KEY] = list(self.refused)  # type: ignore[attr-defined]

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None)
        for problem in output.get(REFUSED_KEY, []) if isinstance(output, dict) else ():
            if problem not in self.refused:  # every worker finds it
                self.refused.append(problem)
