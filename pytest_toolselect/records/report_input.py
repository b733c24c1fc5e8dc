"""What a run hands its reports: the terminal summary's input, the results document's input,
and the two figures that travel inside both (the suite line, the adaptive reps).

Frozen dataclasses, built by the run (``run/summary.py``) and read by attribute in
``report/terminal.py`` and ``report/results.py``. ``SuiteChange`` and ``Escalations`` are
written into the results document, so they have ``to_json()`` (key for key as the document
holds them) and a strict ``from_json()``. A saved document stays JSON: ``toolselect report``
and ``merge`` read its ``summary.suite`` as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .baseline_entry import CaseEntry
from .run_records import CaseRecord, as_case_record
from .strict import require_keys

_SUITE_KEYS = ("cases", "held_now", "held_baseline", "rate_now", "rate_baseline", "change",
               "low", "high", "level", "method", "dropped", "blocks")


@dataclass(frozen=True, slots=True)
class SuiteChange:
    """The share of cases held now against the baseline, over the cases scored in both,
    with the interval of the change (``gate.verdict_rules.measure_suite``)."""

    cases: int
    held_now: int
    held_baseline: int
    rate_now: float
    rate_baseline: float
    change: float
    low: float
    high: float
    level: float
    method: str
    #: the whole interval below zero: the suite got worse beyond noise
    dropped: bool
    #: dropped, and --toolselect-fail-on-suite-drop makes that fail the run
    blocks: bool

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in _SUITE_KEYS}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SuiteChange:
        require_keys(cls, data, _SUITE_KEYS)
        return cls(**{k: data[k] for k in _SUITE_KEYS})


@dataclass(frozen=True, slots=True)
class Escalations:
    """Adaptive reps over the run: the cases asked again, the extra calls, how many stopped
    early, and the verdicts they reached (in the gate's verdict order)."""

    cases: int
    calls: int
    stopped: int
    verdicts: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"cases": self.cases, "calls": self.calls, "stopped": self.stopped,
                "verdicts": dict(self.verdicts)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Escalations:
        require_keys(cls, data, ("cases", "calls", "stopped", "verdicts"))
        return cls(data["cases"], data["calls"], data["stopped"], dict(data["verdicts"]))


@dataclass(frozen=True, slots=True)
class CaseDryRun:
    """What the selection cases would take, no call made (``run.dry_run.case_dry_run``):
    calls, input tokens by part, and the cost as a (low, high) range."""

    cases: int
    #: cases whose tools could not be listed: counted in calls, not in tokens or cost
    unlisted: int
    reps: int
    calls: int
    #: the most calls adaptive reps may add over the run, and to one case
    extra_calls_max: int
    max_extra_per_case: int
    #: input tokens by part: tools, system, question, overhead
    input_tokens: Mapping[str, int]
    input_tokens_estimate: int
    output_tokens_estimate: int
    #: (every fixed rep, every extra rep asked too); None: no known price
    estimated_cost_usd: tuple[float, float] | None
    #: the most calls attribution may make over the run (0: it will not run)
    attribution_calls_max: int = 0


@dataclass(frozen=True)
class SummaryInput:
    """Everything the terminal summary needs (``report.terminal.summarize``)."""

    model_line: str
    #: USD the cache reads saved, by model
    cache_savings: dict[str, float]
    cost_cap: float | None
    verbose: bool
    #: the response cache's path (None: no cache)
    cache: str | None
    baseline_path: str | None
    #: compared, recorded, replaced or updated (None: no baseline)
    baseline_mode: str | None
    baseline_written: bool
    records: tuple[CaseRecord, ...]
    #: baseline keys no longer a case
    gone: tuple[str, ...]
    suite: SuiteChange | None
    escalations: Escalations | None
    #: node ids whose whole block (a failure) or whole error message pytest's FAILURES or
    #: ERRORS section already shows: the summary does not print it again
    shown_above: frozenset[str] = frozenset()
    #: the cache's lookups over the whole run, every worker's (hits, misses, saved_usd):
    #: a replay miss is an error item with no scored record, yet a miss (None: no cache opened)
    cache_counts: Mapping[str, Any] | None = None
    #: the preference probe's priced calls (USD, count): the cost cap counts them with the
    #: cases', so the summary's total does too
    probe_cost: tuple[float, int] = (0.0, 0)


@dataclass(frozen=True)
class ResultsInput:
    """Everything the results document needs (``report.results.build``): the summary's
    figures plus provenance, subject, settings, the stored cases, the probe and the lint.
    The mappings are JSON the document holds as they are."""

    provenance: Mapping[str, Any]
    subject: Mapping[str, Any]
    settings: Mapping[str, Any]
    records: tuple[CaseRecord, ...]
    #: the stored baseline's entries by key
    baseline_cases: Mapping[str, CaseEntry]
    baseline_path: str | None
    baseline_mode: str | None
    baseline_written: bool
    gone: tuple[str, ...]
    suite: SuiteChange | None
    escalations: Escalations | None
    cache_savings: Mapping[str, float]
    cost_cap: float | None
    #: the cost cap left calls unmade
    capped: bool
    probe_blocks: bool
    #: the probe's tool_preference.v1 document (None: no group ran)
    preference: Mapping[str, Any] | None
    lint: Mapping[str, Any] | None
    #: items that failed outside the gate's cases (plain tests, a case's own teardown)
    other_failed: int = 0
    #: a --toolselect-shard run's {"index", "count", "keys"} (None: not sharded)
    shard: Mapping[str, Any] | None = None
    #: keys of the cases collected and deselected on purpose (-k, -m, --deselect, --lf)
    not_run_in_this_run: tuple[str, ...] = ()

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> ResultsInput:
        """From plain data made by hand: settings, records, provenance and subject are
        required; what else is absent reads as nothing (no baseline, no cost, no probe)."""
        suite, esc = data.get("suite"), data.get("escalations")
        return cls(
            provenance=data["provenance"], subject=data["subject"], settings=data["settings"],
            records=tuple(map(as_case_record, data["records"])),
            baseline_cases={k: CaseEntry.from_json(e)
                            for k, e in (data.get("baseline_cases") or {}).items()},
            baseline_path=data.get("baseline_path"), baseline_mode=data.get("baseline_mode"),
            baseline_written=bool(data.get("baseline_written")),
            gone=tuple(data.get("gone") or ()),
            suite=SuiteChange.from_json(suite) if suite else None,
            escalations=Escalations.from_json(esc) if esc else None,
            cache_savings=data.get("cache_savings") or {}, cost_cap=data.get("cost_cap"),
            capped=bool(data.get("capped")), probe_blocks=bool(data.get("probe_blocks")),
            preference=data.get("preference"), lint=data.get("lint"),
            other_failed=int(data.get("other_failed") or 0), shard=data.get("shard"),
            not_run_in_this_run=tuple(data.get("not_run_in_this_run") or ()),
        )
