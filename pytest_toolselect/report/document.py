"""The ``tool_selection.v1`` results document as one typed value.

``results.build`` and ``merge_shards.merge_documents`` make a ``ResultsDocument``; the
markdown comment, the HTML report and the side-by-side comparison read its fields. JSON
enters and leaves in one place each: ``to_json()`` gives the file key for key, in the
order it was always written, and ``from_json()`` reads a saved one (``toolselect report``,
``compare``, ``merge``) or the run's own after its secrets are masked. Sections another
part still hands over as JSON (provenance, settings, the probe's and the lint's documents,
the suite line) are held as read, the subject as a ``Subject``, and each case as the
document wrote it, read once into a ``DocumentCase`` (its record, outcome and baseline
entry) for the reports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from pytest_toolselect.exchange.json_value import JSONObject
from pytest_toolselect.gate.decision import Decision
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.records.report_input import Escalations
from pytest_toolselect.records.run_records import CaseRecord

from .run_report import CategoryCount, Confusion, ModelCost, RunReport

T = TypeVar("T")

SCHEMA_VERSION = "tool_selection.v1"


@dataclass(frozen=True, slots=True)
class BaselineInfo:
    """The baseline the run read: its path, what the run did with it, the cases it lost."""

    path: str | None
    #: compared, recorded, updated or replaced (None: no baseline)
    mode: str | None
    written: bool
    #: baseline cases whose file was collected but which are no longer cases
    gone: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "mode": self.mode, "written": self.written,
                "gone": list(self.gone)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BaselineInfo:
        return cls(data["path"], data["mode"], data["written"], tuple(data["gone"]))


@dataclass(frozen=True, slots=True)
class DocumentVerdict:
    """The run's verdict as the document holds it (``gate.decision.Decision``, and the
    shards a partial merge lacks). None: absent from an older document."""

    blocking: bool
    reasons: tuple[str, ...]
    blocking_cases: tuple[str, ...] | None = None
    exit_status: int | None = None
    #: toolselect merge --partial: the shards (K/N) not merged
    missing_shards: tuple[str, ...] | None = None

    @classmethod
    def of(cls, decision: Decision, missing_shards: Sequence[str] = ()) -> DocumentVerdict:
        return cls(decision.blocking, tuple(decision.reasons), tuple(decision.blocking_cases),
                   decision.exit_status, tuple(missing_shards) or None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"blocking": self.blocking, "reasons": list(self.reasons)}
        if self.blocking_cases is not None:
            out["blocking_cases"] = list(self.blocking_cases)
        if self.exit_status is not None:
            out["exit_status"] = self.exit_status
        if self.missing_shards is not None:
            out["missing_shards"] = list(self.missing_shards)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DocumentVerdict:
        cases, missing = data.get("blocking_cases"), data.get("missing_shards")
        return cls(data["blocking"], tuple(data["reasons"]),
                   None if cases is None else tuple(cases), data.get("exit_status"),
                   None if missing is None else tuple(missing))


@dataclass(frozen=True)
class DocumentSummary:
    """The document's ``summary``: the run report's counts, the suite line and adaptive reps."""

    total: int
    #: cases by verdict, in the gate's verdict order
    verdicts: Mapping[str, int]
    categories: Mapping[str, CategoryCount]
    confusion: tuple[Confusion, ...]
    intent_disagreements: Mapping[str, Mapping[str, int]]
    #: the share held against the baseline as written (gate.suite_line reads it); None: none
    suite: JSONObject | None
    escalations: Escalations | None = None
    #: keys of the cases collected and deselected on purpose (-k, -m, --deselect, --lf): named,
    #: not blocking (a case expected and not judged is an error among the cases instead)
    not_run_in_this_run: tuple[str, ...] = ()

    @classmethod
    def of(cls, report: RunReport, suite: JSONObject | None,
           escalations: Escalations | None,
           not_run_in_this_run: Sequence[str] = ()) -> DocumentSummary:
        return cls(report.total, dict(report.verdicts), dict(report.categories),
                   report.confusions,
                   {k: dict(v) for k, v in report.intent_disagreements.items()}, suite,
                   escalations, tuple(sorted(not_run_in_this_run)))

    def to_json(self) -> dict[str, Any]:
        out = {
            "total": self.total,
            "verdicts": dict(self.verdicts),
            "categories": {k: v.to_json() for k, v in self.categories.items()},
            "confusion": [c.to_json() for c in self.confusion],
            "intent_disagreements": {k: dict(v) for k, v in self.intent_disagreements.items()},
            "suite": None if self.suite is None else dict(self.suite),
        }
        if self.escalations is not None:
            out["escalations"] = self.escalations.to_json()
        if self.not_run_in_this_run:
            out["not_run_in_this_run"] = list(self.not_run_in_this_run)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DocumentSummary:
        esc = data.get("escalations")
        return cls(
            total=data["total"], verdicts=dict(data["verdicts"]),
            categories={k: CategoryCount(v["held"], v["scored"], v["baseline_held"],
                                         v["baseline_scored"])
                        for k, v in data["categories"].items()},
            confusion=tuple(Confusion(c["expected"], c["chosen"], c["count"], c["correct"])
                            for c in data["confusion"]),
            intent_disagreements={k: dict(v) for k, v in data["intent_disagreements"].items()},
            suite=data["suite"], escalations=Escalations.from_json(esc) if esc else None,
            not_run_in_this_run=tuple(data.get("not_run_in_this_run") or ()))


@dataclass(frozen=True)
class DocumentCost:
    """The document's ``cost``: the cases' models and the probe's calls, in USD."""

    total_usd: float
    cases_usd: float
    probe_usd: float
    #: per model: calls, priced USD, calls with no known price, token usage
    by_model: Mapping[str, ModelCost]
    cache_savings_usd: Mapping[str, float]
    cap_usd: float | None
    capped: bool
    #: the attribution's calls (in by_model too): cases asked again, calls, priced USD
    attribution: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, report: RunReport, cache_savings: Mapping[str, float], cap: float | None,
           capped: bool, probe_cost: float | None) -> DocumentCost:
        total = sum(c.priced_usd for c in report.costs.values()) + (probe_cost or 0.0)
        return cls(total, total - (probe_cost or 0.0), probe_cost or 0.0, dict(report.costs),
                   dict(sorted(cache_savings.items())), cap, capped,
                   dict(report.attribution) if report.attribution else None)

    def to_json(self) -> dict[str, Any]:
        return {
            "total_usd": self.total_usd,
            "cases_usd": self.cases_usd,
            "probe_usd": self.probe_usd,
            "by_model": {m: c.to_json() for m, c in self.by_model.items()},
            "cache_savings_usd": dict(self.cache_savings_usd),
            "cap_usd": self.cap_usd,
            "capped": self.capped,
            **({"attribution": dict(self.attribution)} if self.attribution else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DocumentCost:
        return cls(
            data["total_usd"], data["cases_usd"], data["probe_usd"],
            {m: ModelCost(r["calls"], r["priced_usd"], r["unpriced_calls"], dict(r["usage"]))
             for m, r in data["by_model"].items()},
            dict(data["cache_savings_usd"]), data["cap_usd"], data["capped"],
            data.get("attribution"))


@dataclass(frozen=True, slots=True)
class Shard:
    """A --toolselect-shard K/N run's place: which shard, and every case key of the suite."""

    index: int
    count: int
    keys: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "count": self.count, "keys": list(self.keys)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Shard:
        return cls(data["index"], data["count"], tuple(data["keys"]))


@dataclass(frozen=True, slots=True)
class BaselineShown:
    """What the document shows of a case's baseline entry (``results.case_entry``)."""

    status: str | None
    passes: int | None
    reps: int | None
    first_tool: str | None
    failing_checks: tuple[str, ...] | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BaselineShown:
        checks = data.get("failing_checks")
        return cls(data.get("status"), data.get("passes"), data.get("reps"),
                   data.get("first_tool"), None if checks is None else tuple(checks))


@dataclass(frozen=True, slots=True)
class DocumentCase:
    """A case as the reports show it: its record, its pytest outcome, its baseline entry."""

    record: CaseRecord
    #: the case's pytest outcome as the one verdict judged it
    outcome: str | None
    #: None: no baseline entry
    baseline: BaselineShown | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DocumentCase:
        """A document's case (``results.case_entry``), its record read once."""
        base = data.get("baseline")
        return cls(CaseRecord.read(data), data.get("outcome"),
                   BaselineShown.from_json(base) if base is not None else None)


class Made(Sequence[T]):
    """A sequence whose items are made when read and not kept: a run of 20,000 cases never
    holds its document's cases beside its records (the writers read them one at a time, in
    order), and a report that reads the shown cases twice makes them twice."""

    __slots__ = ("_length", "_make")

    def __init__(self, length: int, make: Callable[[int], T]) -> None:
        self._length, self._make = length, make

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...
    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._length)))
        if not -self._length <= i < self._length:
            raise IndexError(i)
        return self._make(i % self._length)

    def __iter__(self) -> Iterator[T]:
        return (self._make(i) for i in range(self._length))


@dataclass(frozen=True)
class ResultsDocument:
    """One run's results (or merged shards'), section by section as the file holds them."""

    provenance: JSONObject
    #: provider, model and the sampling settings a baseline belongs to
    subject: Subject
    settings: JSONObject
    baseline: BaselineInfo
    verdict: DocumentVerdict
    summary: DocumentSummary
    cost: DocumentCost
    #: every case as the document writes it (``results.case_entry``): as read from a file,
    #: or made one at a time from the run's records (``Made``)
    cases: Sequence[JSONObject]
    #: the probe's tool_preference.v1 document (None: no group ran)
    preference: JSONObject | None
    #: every tool description by tool fingerprint (None: absent from an older document)
    tool_texts: Mapping[str, str] | None
    #: every tool whole, by tool fingerprint (None: none carried)
    tools: Mapping[str, JSONObject] | None = None
    #: the lint's merged document (None: no lint ran)
    lint: JSONObject | None = None
    shard: Shard | None = None

    @property
    def shown_cases(self) -> Made[DocumentCase]:
        """The cases in the document's order as the reports show them, each read when asked
        for (none is kept: a report that reads them twice reads them twice)."""
        cases = self.cases
        return Made(len(cases), lambda i: DocumentCase.from_json(cases[i]))

    @property
    def records(self) -> tuple[CaseRecord, ...]:
        """The cases as records, for the gate's and the notes' readers."""
        return tuple(c.record for c in self.shown_cases)

    def to_json(self, cases: bool = True) -> dict[str, Any]:
        """The document as the results file holds it, key for key; ``cases=False``: with
        its ``cases`` left empty, in their place (the JSON writer writes them one at a time
        there, and masking the run's document masks each as it is made)."""
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "provenance": dict(self.provenance),
            "subject": self.subject.to_json(),
            "settings": dict(self.settings),
            "baseline": self.baseline.to_json(),
            "verdict": self.verdict.to_json(),
            "summary": self.summary.to_json(),
            "cost": self.cost.to_json(),
            "cases": [dict(c) for c in self.cases] if cases else [],
            "preference": self.preference,
        }
        if self.tool_texts is not None:
            out["tool_texts"] = dict(self.tool_texts)
        if self.tools:
            out["tools"] = dict(self.tools)
        if self.lint:
            out["lint"] = self.lint
        if self.shard is not None:
            out["shard"] = self.shard.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResultsDocument:
        """A document as a results file holds it (checked against its schema by the reader)."""
        shard = data.get("shard")
        return cls(
            provenance=data["provenance"], subject=Subject.from_json(data["subject"]),
            settings=data["settings"],
            baseline=BaselineInfo.from_json(data["baseline"]),
            verdict=DocumentVerdict.from_json(data["verdict"]),
            summary=DocumentSummary.from_json(data["summary"]),
            cost=DocumentCost.from_json(data["cost"]),
            cases=tuple(data["cases"]), preference=data["preference"],
            tool_texts=data.get("tool_texts"), tools=data.get("tools"), lint=data.get("lint"),
            shard=Shard.from_json(shard) if shard is not None else None)
