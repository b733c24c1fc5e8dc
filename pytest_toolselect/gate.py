"""The gate: a case's status over reps, and its verdict against the baseline.

Only a case that held on the baseline and no longer holds blocks (a
regression). Repeated runs of a real model move marginal cases back and
forth, so a gate on the total or on every failure would block on noise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HELD, FLAKY, FAILING = "held", "flaky", "failing"

# verdicts
REGRESSION = "regression"
FIXED = "fixed"
NEW = "new"
NEW_FAILING = "new_failing"
STILL_FAILING = "still_failing"
ERROR = "error"
#: not run: the cost cap stopped new calls
SKIPPED = "skipped"
#: without any baseline a case is an ordinary test
PASSED, FAILED = "passed", "failed"

VERDICT_ORDER = (REGRESSION, FAILED, ERROR, SKIPPED, FIXED, NEW_FAILING, STILL_FAILING, FLAKY, NEW,
                 HELD, PASSED)


def status_of(passes: int, reps: int) -> str:
    if passes >= reps:
        return HELD
    if passes == 0:
        return FAILING
    return FLAKY


def classify(status: str, base: Mapping[str, Any] | None, *, have_baseline: bool) -> str:
    """The verdict of one case from its status now and its baseline entry (if any)."""
    if status == FLAKY:
        return FLAKY
    if not have_baseline:
        return PASSED if status == HELD else FAILED
    if base is None:
        return NEW if status == HELD else NEW_FAILING
    was = base.get("status")
    if status == HELD:
        return FIXED if was == FAILING else HELD
    # failing now
    return REGRESSION if was == HELD else STILL_FAILING


def pytest_outcome(verdict: str, *, fail_on_flaky: bool, fail_on_still_failing: bool,
                   accept_regressions: bool) -> str:
    """How a verdict shows in pytest: 'passed', 'failed', 'xfailed' or 'warned' (passed + warning)."""
    if verdict in (HELD, PASSED, NEW, FIXED):
        return "passed"
    if verdict == FLAKY:
        return "failed" if fail_on_flaky else "warned"
    if verdict == FAILED:
        return "failed"
    if verdict == REGRESSION:
        return "xfailed" if accept_regressions else "failed"
    if verdict == STILL_FAILING:
        return "failed" if fail_on_still_failing else "xfailed"
    if verdict == NEW_FAILING:
        return "xfailed"
    raise ValueError(f"no pytest outcome for verdict {verdict!r}")
