"""The run session: settings, the baseline, each case's run and record, the summary.

One RunSession lives in ``config.stash`` per pytest process. Workers (xdist)
run cases and attach each record to its test report; the controller gathers
the records from the reports, so a serial run and ``-n 2`` see the same data,
and only the controller prints the summary and writes the baseline.

The session is composed of parts, one concern each, each given only the parts it uses:
``settings`` and ``wiring`` (run/wiring.py: options, configs, model; provider, cache,
budget), ``baselines`` (the stored baseline, keys, renames, gone cases), ``calls`` (a
case's tools and its calls), ``recorder`` (records and outcomes) and ``summary`` (the
summary, the probe, reports). What the run gathers as it goes is ``state`` (run/state.py).
"""

from __future__ import annotations

import pytest

from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.providers.preflight import check, check_model
from pytest_toolselect.run.lifecycle import check_ci, write_baseline

from .baseline_access import BaselineAccess
from .cache import check_mode, check_path
from .case_calls import CaseCalls
from .case_record import CaseRecords
from .contracts import AdaptiveStep, AttributionStep, CaseSteps
from .settings import Settings
from .state import RunState
from .summary import SessionSummary
from .wiring import Wiring

RUN_SESSION = pytest.StashKey["RunSession"]()


class RunSession:
    """One pytest process's run: its parts, the check at its start and the end of the run."""

    def __init__(self, config: pytest.Config) -> None:
        self.state = RunState()
        self.settings = Settings(config)
        self.wiring = Wiring(self.settings)
        self.baselines = BaselineAccess(self.settings, self.wiring, self.state)
        #: the features that follow a case's reps, set by the plugin when they apply
        self._steps = CaseSteps()
        self.calls = CaseCalls(self.settings, self.wiring, self.baselines, self._steps)
        self.recorder = CaseRecords(self.settings, self.wiring, self.baselines, self.calls,
                                    self.state)
        self.summary = SessionSummary(self.settings, self.wiring, self.baselines, self.recorder,
                                      self.state)

    def follow_reps_with(self, adaptive: AdaptiveStep | None,
                         attribution: AttributionStep | None) -> None:
        """The features that follow each case's reps in this run (None: one that does not
        apply): the plugin objects the plugin registered, set before any case runs."""
        self._steps.adaptive, self._steps.attribution = adaptive, attribution

    def check_setup(self) -> None:
        """Refuse a bad config or a bad or foreign baseline before anything runs (usage error)."""
        settings, baselines = self.settings, self.baselines
        try:
            _ = settings.config
            if self.wiring.custom_provider is None:  # a bad model string or a missing key: no request
                if settings.flag("dry_run"):
                    check_model(str(settings.model.value))  # it calls nothing: no key needed
                else:
                    check(str(settings.model.value), settings.provider_settings())
                    # a harness that reads what it sends from itself (Claude Code) does so
                    # now: a CLI that cannot start is one usage error, with its stderr
                    provider = self.wiring.provider
                    offered = getattr(getattr(provider, "inner", provider), "offered", None)
                    if callable(offered):
                        offered()
            # every option is read here, once: a bad value (a misspelled gate rule, a
            # negative cost cap) is one usage error before any call, not one per item
            options = settings.options
            if options.cache_mode is not None:
                check_mode(options.cache_mode)
            cache = settings.path("cache")
            if cache is not None:
                check_path(cache)
            if baselines.baseline_path is not None:
                check_ci(baselines)
                baselines.load()  # read once, here: a foreign baseline is refused now
        except ToolselectError as e:
            raise pytest.UsageError(str(e)) from None

    def close(self) -> None:
        """Ctrl-C, -x or the end: nothing queued may still start; the response cache closed."""
        self.calls.close()
        self.wiring.close()

    def interrupted(self) -> bool:
        """The run stopped before its end: Ctrl-C, pytest.exit() or an internal error."""
        session = self.state.pytest_session
        return session is not None and session.exitstatus in (pytest.ExitCode.INTERRUPTED,
                                                              pytest.ExitCode.INTERNAL_ERROR)

    def finish(self) -> str | None:
        """Write the baseline (controller only): recorded when absent, or on request. Returns
        why it was not written over the file on disk (another subject's), None otherwise."""

        path = self.baselines.baseline_path
        if path is None or self.settings.is_worker or not self.state.gathered():
            return None
        if self.baselines.baseline is not None and not self.settings.flag("update_baseline"):
            return None
        if self.interrupted():
            # Ctrl-C or a crash mid-run: the cases not reached would be recorded as absent
            # (or, on update, half the suite as of now): the old file stays as it was
            return None
        return write_baseline(self.baselines, self.recorder.ordered_records())
