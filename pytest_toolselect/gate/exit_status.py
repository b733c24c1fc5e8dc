"""The run's exit status, decided in one place from the run's facts (data in, status out).

The plugin's ``pytest_sessionfinish`` gathers the facts and calls :func:`exit_status`; what
it returns is the status the session ends with, and the status the plugin keeps against a
later hook (a conftest's ``pytest_sessionfinish``) that would make a failing run pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Exit(IntEnum):
    """pytest's exit codes (``pytest.ExitCode``), named here so the gate imports no pytest."""

    OK = 0
    TESTS_FAILED = 1
    INTERRUPTED = 2
    INTERNAL_ERROR = 3
    USAGE_ERROR = 4
    NO_TESTS_COLLECTED = 5


#: statuses the verdict does not override: the run was refused or broke (an interrupted run
#: is the verdict's too: blocking if what ran blocks, incomplete otherwise)
PYTEST_DECIDES = frozenset({Exit.INTERNAL_ERROR, Exit.USAGE_ERROR})


@dataclass(frozen=True)
class RunFacts:
    """What the end of a run knows that the exit status depends on."""

    #: the status pytest gave the session before the plugin's say (OK, TESTS_FAILED for a
    #: plain test's failure, INTERRUPTED, NO_TESTS_COLLECTED, a dry run's OK, ...)
    pytest_status: int
    #: refused before anything ran (on the xdist workers), or shards whose gates overlap
    usage_problem: bool = False
    #: the baseline on disk is another subject's and was not written over
    write_refused: bool = False
    #: the one verdict's status (gate.decision.Decision.exit_status), None when no case,
    #: group or lint record reached this process (a dry run, a run of plain tests)
    verdict: int | None = None
    #: a report or the baseline asked for could not be written
    report_problems: bool = False


def exit_status(facts: RunFacts) -> int | None:
    """The session's exit status; None when the plugin has nothing to say (pytest's stands).

    A usage problem or a refused baseline write is a usage error; otherwise the one verdict
    decides, unless pytest itself refused the run or broke; a missing report fails a run
    that would pass.
    """
    if facts.usage_problem or facts.write_refused:
        return int(Exit.USAGE_ERROR)
    status = facts.pytest_status
    if facts.verdict is not None and status not in PYTEST_DECIDES:
        status = facts.verdict
    if facts.report_problems and status == Exit.OK:
        status = int(Exit.TESTS_FAILED)  # a report CI expects is missing
    if facts.verdict is None and not facts.report_problems:
        return None
    return int(status)
