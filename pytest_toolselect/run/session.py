"""The run session: settings, the baseline, each case's run and record, the summary.

One RunSession lives in ``config.stash`` per pytest process. Workers (xdist)
run cases and attach each record to its test report; the controller gathers
the records from the reports, so a serial run and ``-n 2`` see the same data,
and only the controller prints the summary and writes the baseline.

The session is composed of layers, each one concern and each built on the one before:
``wiring`` (options, configs, model, provider, cache, budget), ``baseline_access`` (the
stored baseline, keys, renames, gone cases), ``case_calls`` (a case's tools and its calls),
``case_record`` (records and outcomes) and ``summary`` (the summary, the probe, reports).
"""

from __future__ import annotations

import pytest

from .summary import SessionSummary

RUN_SESSION = pytest.StashKey["RunSession"]()


class RunSession(SessionSummary):
    """One pytest process's run: the layers above, and the end of the run."""

    def interrupted(self) -> bool:
        """The run stopped before its end: Ctrl-C, pytest.exit() or an internal error."""
        session = self.pytest_session
        return session is not None and session.exitstatus in (pytest.ExitCode.INTERRUPTED,
                                                              pytest.ExitCode.INTERNAL_ERROR)

    def finish(self) -> None:
        """Write the baseline (controller only): recorded when absent, or on request."""

        path = self.baseline_path
        if path is None or self.is_worker or not (self.records or self.group_records or self.lint_records):
            return
        if self.baseline is not None and not self.flag("update_baseline"):
            return
        if self.interrupted():
            # Ctrl-C or a crash mid-run: the cases not reached would be recorded as absent
            # (or, on update, half the suite as of now): the old file stays as it was
            return
        from pytest_toolselect.run.lifecycle import write_baseline

        write_baseline(self)
