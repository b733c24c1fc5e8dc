"""Running one case inside a pytest item and turning its verdict into a pytest outcome.

Shared by case-file items and decorated test functions: the model is asked in
the setup phase (so a provider or server failure is a pytest *error*, never a
pass or a failure) and the verdict is applied in the call phase.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.exchange.clip import clip_text
from pytest_toolselect.gate.decision import case_outcome
from pytest_toolselect.gate.evidence import dropped_label
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.providers import billed_turns
from pytest_toolselect.records.run_records import CaseRecord, GroupRecord
from pytest_toolselect.run.budget import CostCapReached
from pytest_toolselect.run.case_outcome import CaseOutcome
from pytest_toolselect.run.case_run import CaseRun
from pytest_toolselect.run.session import RUN_SESSION
from pytest_toolselect.terms.vocabulary import Outcome, Verdict

from .shown import shown

if TYPE_CHECKING:
    from pytest_toolselect.inputs.cases import Case

ORDER = pytest.StashKey[int]()
RUN = pytest.StashKey[CaseOutcome]()
#: the item's record (a case's or a preference group's), set in setup or call
RECORD = pytest.StashKey[CaseRecord | GroupRecord]()
#: set while the test's body runs: a report made then is a subtest's (pytest's subtests
#: fixture, pytest-subtests), which keeps its own outcome
IN_BODY = pytest.StashKey[bool]()
#: a decorated test's case, set by the toolselect_result fixture
CASE = pytest.StashKey["Case"]()


class CaseFailed(AssertionError):
    """A case's verdict fails the item; its text is the whole explanation."""


class ToolselectFlakyWarning(UserWarning):
    """A case whose reps disagree: reported, not blocking unless asked."""


class ToolselectUnofferedWarning(UserWarning):
    """A forbidden tool no server of the case offers: the check cannot catch a wrong choice."""


def warn_unoffered(item: pytest.Item, run: CaseRun) -> None:
    """Said in the item's own setup, so it lands on this case (a prefetch runs for many)."""
    offered = {t.name for t in run.tools}
    names = [n for n in run.case.forbid_tools if n not in offered]
    if not names:
        return
    case = run.case
    listed = ", ".join(repr(n) for n in names)
    secrets = item.config.stash[RUN_SESSION].settings.server_secrets()
    message = shown(
        f"case {case.id!r}: forbid_tools names {listed}, which no server of the case offers, so "
        f"the check fails only if the model calls a tool it was never offered (remove "
        f"{'it' if len(names) == 1 else 'them'}, or name an offered tool)", secrets)
    # pointed at the case's line, so the warnings summary names the file and the line
    notice(ToolselectUnofferedWarning(message), filename=str(case.source or item.path),
           lineno=case.line or 0)


def notice(warning: Warning, filename: str | None = None, lineno: int = 0) -> None:
    """Say a notice in pytest's warnings summary, where no warning filter can raise it:
    `-W error` or `filterwarnings = error` would turn a case the gate does not block (a
    flaky one) into a failure, or a note about a case into its setup error. Filters the
    user sets for this category by name (ignore it) still apply."""
    with warnings.catch_warnings():
        category = type(warning)
        # inside this block only: each filter that would raise shows the notice instead
        # (typeshed declares the filters a Sequence; they are the list the module reads)
        warnings.filters[:] = [  # type: ignore[index]
            ("default", *rest) if action == "error" else (action, *rest)
            for action, *rest in warnings.filters]
        warnings.simplefilter("default", category, append=True)  # (and says the filters changed)
        if filename is None:
            warnings.warn(warning, stacklevel=2)
        else:
            warnings.warn_explicit(warning, category, filename=filename, lineno=lineno)


def record_item(item: pytest.Item, case: Case, outcome: CaseOutcome | None,
                **why: Any) -> CaseRecord:
    """The item's case record, at its place in the run's order (`why`: what the recorder
    takes of a case that did not run: its error, verdict, billed calls)."""
    session = item.config.stash[RUN_SESSION]
    return session.recorder.record(item.nodeid, item.stash.get(ORDER, 0), case, outcome, **why)


def setup_case(item: pytest.Item, case: Case) -> CaseRun:
    """Ask the model for the case; on failure record an error entry and re-raise."""
    session = item.config.stash[RUN_SESSION]
    session.calls.prefetch(item)
    try:
        outcome = session.calls.run_case(item.nodeid, case)
    except CostCapReached as e:
        item.stash[RECORD] = record_item(item, case, None, error=str(e), verdict=Verdict.SKIPPED,
                                         billed=billed_turns(e)[0])
        pytest.skip(str(e))
    except ToolselectError as e:
        billed, cut = billed_turns(e)
        item.stash[RECORD] = record_item(item, case, None, error=str(e), billed=billed,
                                         inconclusive=cut)
        # The message is the report (plugin.py replaces the longrepr with it), but pytest
        # formats the traceback of a setup error first, chained causes included: through
        # anyio and the mcp SDK that costs about a second of CPU per item of a dead server.
        raise e.with_traceback(None) from None
    except Exception as e:
        item.stash[RECORD] = record_item(item, case, None, error=f"{type(e).__name__}: {e}")
        raise
    item.stash[RUN] = outcome
    warn_unoffered(item, outcome.run)
    return outcome.run


def conclude_case(item: pytest.Item, case: Case) -> None:
    """Score the run against the baseline and raise what the verdict means in pytest."""
    # reports are imported where one is made, not with the run's parts (run/imports.py)
    from pytest_toolselect.report.terminal import describe

    __tracebackhide__ = True
    session = item.config.stash[RUN_SESSION]
    rec = record_item(item, case, item.stash[RUN])
    item.stash[RECORD] = rec
    # the one verdict's outcome (plugin/ownership.py sets the report to it, whatever else ran)
    outcome = case_outcome(rec, session.summary.gate_settings())
    if outcome == Outcome.FAILED:
        raise CaseFailed("\n".join(describe(rec, verbose=item.config.get_verbosity() > 0)))
    secrets = session.settings.server_secrets()
    if outcome == Outcome.XFAILED:
        pytest.xfail(shown(xfail_reason(rec), secrets))
    if outcome == Outcome.WARNED:
        text = "\n".join(describe(rec))
        notice(ToolselectFlakyWarning(shown(f"{item.nodeid}: {text}", secrets)))


def record_failed_body(item: pytest.Item, case: Case, exc: BaseException) -> None:
    """A decorated test whose own assertion failed: its scored record, with that failure.

    The body runs before the verdict is applied; without this the case would vanish from the
    case count, the baseline and the reports while pytest still fails the test.
    """
    outcome = item.stash.get(RUN, None)
    if outcome is None or isinstance(exc, pytest.xfail.Exception) or not isinstance(
            exc, (Exception, pytest.fail.Exception)):
        # not scored (its setup failed), or the body skipped or xfailed itself (pytest's
        # xfail is a kind of its fail): the case is scored with its verdict's outcome
        return
    rec = record_item(item, case, outcome)
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    item.stash[RECORD] = replace(rec, test_failure=clip_text(
        f"{type(exc).__name__}: {message}" if message else type(exc).__name__))


def xfail_reason(rec: CaseRecord) -> str:
    label = {Verdict.STILL_FAILING: "still failing", Verdict.NEW_FAILING: "new failing",
             Verdict.DRIFT: "drift (fails with the baseline's tools too)",
             Verdict.REGRESSION: "regression accepted by --toolselect-update-baseline"}[rec.verdict]
    if rec.dropped_from:
        label = dropped_label(rec.dropped_from)
    checks = ", ".join(rec.failing_checks) or "?"
    first = next(iter(rec.failing_detail.values()), "")
    # a reason is printed and goes into JUnit XML: bounded like every shown text
    return f"{label}: {checks}: {clip_text(str(first), 600)} | why: {clip_text(str(rec.why))}"
