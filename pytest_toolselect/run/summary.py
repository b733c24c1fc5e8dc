"""The run session's summary: the suite line, the probe, the results document, report files."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.gate.decision import GateSettings, decide
from pytest_toolselect.inputs.report_formats import FORMATS
from pytest_toolselect.inputs.shard_option import parse_shard
from pytest_toolselect.messages.masking import redact_data
from pytest_toolselect.providers import price_per_token
from pytest_toolselect.records.report_input import ResultsInput, SuiteChange, SummaryInput
from pytest_toolselect.terms.vocabulary import Verdict

from .probe_items import iter_calls, load_groups, summary_lines
from .provenance import provenance
from .report_files import write_reports

if TYPE_CHECKING:
    from pytest_toolselect.gate.decision import Decision
    from pytest_toolselect.probe.comparison import Comparison
    from pytest_toolselect.probe.values import ProbeSummary
    from pytest_toolselect.records.baseline_entry import GroupEntry

    from .baseline_access import BaselineAccess
    from .case_record import CaseRecords
    from .settings import Settings
    from .state import RunState
    from .wiring import Wiring


class SessionSummary:
    """What the controller says at the end: summary input, results, reports."""

    def __init__(self, settings: Settings, wiring: Wiring, baselines: BaselineAccess,
                 recorder: CaseRecords, state: RunState) -> None:
        self.settings = settings
        #: the subject and the model line
        self.wiring = wiring
        #: what the records are compared with, and the gone cases
        self.baselines = baselines
        #: the gathered records, in order
        self.recorder = recorder
        #: reads what the run gathered; writes report_problems
        self.state = state
        self._probe: tuple[list[str], ProbeSummary, Comparison | None] | None = None
        self._stopped: str | None = None

    def cache_savings(self) -> dict[str, float]:
        """USD the cache reads saved, by model: what those tokens would have cost as input."""
        reads: Counter[str] = Counter()
        for rec in self.state.records.values():
            if rec.model:
                reads[rec.model] += rec.usage.get("cache_read_tokens", 0)
        if not any(reads.values()):
            return {}
        saved = {}
        for model, tokens in reads.items():
            price = price_per_token(model, self.settings.config.prices) if tokens else None
            if price is not None:
                saved[model] = tokens * (price["input"] - price["cache_read"])
        return saved

    def cost_capped(self) -> bool:
        return (any(r.verdict == Verdict.SKIPPED for r in self.state.records.values())
                or any(c.skipped for r in self.state.group_records.values() for c in r.calls))

    def suite(self) -> SuiteChange | None:
        """The share of cases held now against the baseline (None: no baseline compared)."""
        base = self.baselines.baseline
        if base is None:
            return None
        # --toolselect-update-baseline accepts the drop, as it accepts regressions
        blocking = self.settings.flag("fail_on_suite_drop") and not self.settings.flag("update_baseline")
        return gate.measure_suite(self.recorder.ordered_records(),
                                  {k: e.status for k, e in base.cases.items()},
                                  fail_on_drop=blocking)

    # the preference probe (controller) -------------------------------------------------
    def probe(self) -> tuple[list[str], ProbeSummary, Comparison | None]:
        """The probe's summary lines, summary and baseline comparison (computed once)."""
        if self._probe is None:
            stored = self.stored_groups()
            mec = self.settings.options.min_effect_change
            self._probe = summary_lines(
                self.recorder.ordered_group_records(), stored, seed=self.settings.options.seed,
                model=str(self.settings.model.value), min_effect_change=mec,
                verbose=self.settings.pytest_config.get_verbosity() > 0,
            )
        return self._probe

    def stored_groups(self) -> Mapping[str, GroupEntry]:
        """The baseline's preference group entries, by key (none without a baseline)."""
        base = self.baselines.baseline
        return base.groups if base is not None else {}

    def probe_lines(self) -> list[str]:
        return self.probe()[0]

    def probe_blocks(self) -> bool:
        """Effect or position-bias changes block only under --toolselect-min-effect-change."""
        if not self.state.group_records or self.settings.flag("update_baseline"):
            return False
        comparison = self.probe()[2]
        return bool(comparison and comparison.blocking)

    def preference_document(self) -> dict[str, Any] | None:
        """The probe's tool_preference.v1 document (None: no group ran)."""
        if not self.state.group_records:
            return None
        # reports are imported where one is made, not with the run's parts (run/imports.py)
        from pytest_toolselect.report.probe_report import GroupGate, build_document


        records = self.recorder.ordered_group_records()
        calls = list(iter_calls(records))
        stored = self.stored_groups()
        # what `toolselect merge` needs to join shards' probes as one run's
        rows = {r.group_id: GroupGate(r.key, r.order, r.entry, stored.get(r.key)) for r in records}
        return build_document(calls, self.probe()[1], load_groups(records),
                              max_tokens=self.settings.options.max_tokens,
                              reps=self.settings.reps, subject=self.wiring.subject,
                              gate=rows, comparison=self.probe()[2])

    def gate_settings(self) -> GateSettings:
        """The flags the one verdict reads (gate.decision), from the options resolved once."""
        options = self.settings.options
        return GateSettings(fail_on_flaky=options.fail_on_flaky,
                            fail_on_still_failing=options.fail_on_still_failing,
                            update_baseline=options.update_baseline,
                            fail_on_drift=options.fail_on_drift)

    def decision(self) -> Decision:
        """The run's one verdict: what the session's exit status and every report read."""
        suite = self.suite()
        lint = self.lint_document()
        return decide(self.recorder.ordered_records(), self.gate_settings(),
                      suite_blocks=bool(suite is not None and suite.blocks),
                      probe_blocks=self.probe_blocks(), capped=self.cost_capped(),
                      new_lint=len((lint or {}).get("new") or ()),
                      other_failed=self.state.other_failed, stopped=self.stopped())

    def stopped(self) -> str | None:
        """Why the run ended before every item ran (-x, --sw, Ctrl-C), or None (read once, at
        the end, before the verdict sets the exit status)."""
        if self._stopped is None:
            session = self.state.pytest_session
            why = session.shouldfail or session.shouldstop if session is not None else None
            if not why and session is not None and session.exitstatus == pytest.ExitCode.INTERRUPTED:
                why = "interrupted"
            self._stopped = str(why) if why else ""
        return self._stopped or None

    def shard(self) -> dict[str, Any] | None:
        """A --toolselect-shard run's K/N and the whole suite's case keys (merge checks them)."""
        spec = self.settings.options.shard
        if spec is None:
            return None
        k, n = parse_shard(str(spec))
        return {"index": k, "count": n, "keys": sorted(self.state.collected)}

    def results_input(self, exitstatus: int | None = None,
                      failed_items: int | None = None) -> ResultsInput:
        """Everything the results document needs (report.results.build)."""
        summary = self.summary_input()
        settings = {name: getattr(self.settings.options, name) for name in (
            "reps", "rule", "history", "adaptive", "max_extra_reps", "max_tokens", "temperature",
            "fail_on_flaky", "fail_on_still_failing", "fail_on_suite_drop", "update_baseline",
            "min_effect_change", "lint", "fail_on_drift", "attribution")}
        # the route's name as the terminal's model line says it (subject.provider is what a
        # baseline belongs to, and stays "litellm" on the openai SDK route)
        settings["route"] = self.wiring.route_name()
        base = self.baselines.baseline
        return ResultsInput(
            provenance=provenance(self.settings.rootdir,
                                  self.settings.pytest_config.invocation_params.args, exitstatus,
                                  failed_items, self.state.other_failed, self.stopped()),
            subject=self.wiring.subject.to_json(),
            settings=settings,
            records=summary.records,
            baseline_cases=base.cases if base is not None else {},
            baseline_path=summary.baseline_path,
            baseline_mode=summary.baseline_mode,
            baseline_written=summary.baseline_written,
            gone=summary.gone,
            suite=summary.suite,
            escalations=summary.escalations,
            cache_savings=summary.cache_savings,
            cost_cap=summary.cost_cap,
            capped=self.cost_capped(),
            probe_blocks=self.probe_blocks(),
            preference=self.preference_document(),
            lint=self.lint_document(),
            other_failed=self.state.other_failed,
            shard=self.shard(),
            not_run_in_this_run=tuple(sorted(self.state.narrowed)),
        )

    def lint_document(self) -> dict[str, Any] | None:
        if not self.state.lint_records:
            return None
        # the lint's modules only for a run that lints (tests/test_import_cost.py)
        from pytest_toolselect.lint.findings import merged_document

        section = merged_document(self.state.lint_records)
        return section.to_json() if section is not None else None

    def write_reports(self, exitstatus: int | None = None, failed_items: int | None = None) -> None:
        """--toolselect-json, -markdown, -html (``inputs.report_formats``): the results document
        and its renderings."""
        wanted = {row.name: self.settings.option(row.name) for row in FORMATS}
        wanted = {name: r for name, r in wanted.items() if r.value is not None}
        if not wanted or self.settings.is_worker or not self.state.gathered():
            return
        # reports are imported where one is made, not with the run's parts (run/imports.py)
        from pytest_toolselect.report.results import build_masked

        # every string of the document masked once, whatever part of the run it came from,
        # as the JSON it is written as: the sections at once, each case as the writers read it
        secrets = self.settings.server_secrets()
        document = build_masked(self.results_input(exitstatus, failed_items),
                                lambda value: redact_data(value, secrets))
        self.state.report_problems += write_reports(
            document, {name: self.settings.resolve_path(r) for name, r in wanted.items()})

    def summary_input(self) -> SummaryInput:
        """Everything the terminal summary needs."""
        # reports are imported where one is made, not with the run's parts (run/imports.py)
        from pytest_toolselect.report.results import escalations

        if self.baselines.baseline_path is None:
            mode = None
        elif self.baselines.baseline is None:
            mode = "replaced" if self.state.replaced_subject is not None else "recorded"
        elif self.settings.flag("update_baseline"):
            mode = "updated"
        else:
            mode = "compared"
        return SummaryInput(
            model_line=self.wiring.model_line(),
            cache_savings=self.cache_savings(),
            cost_cap=self.settings.options.max_cost_usd,
            verbose=self.settings.pytest_config.get_verbosity() > 0,
            cache=(str(cache) if (cache := self.settings.path("cache")) is not None else None),
            baseline_path=(str(self.baselines.baseline_path)
                           if self.baselines.baseline_path else None),
            baseline_mode=mode,
            baseline_written=self.state.baseline_written is not None,
            records=tuple(self.recorder.ordered_records()),
            gone=tuple(self.baselines.shown_gone()),
            suite=self.suite(),
            escalations=escalations(self.state.records.values()),
            cache_counts=self.cache_counts(),
            probe_cost=self.probe_cost(),
        )

    def probe_cost(self) -> tuple[float, int]:
        """What the probe's billed calls cost, and how many were priced."""
        priced = [c.cost_usd for r in self.state.group_records.values() for c in r.calls
                  if c.cost_usd is not None]
        return sum(priced), len(priced)

    def cache_counts(self) -> dict[str, Any] | None:
        """The response cache's hits, misses and savings: this process's and every worker's."""
        return self.wiring.cache_counts()
