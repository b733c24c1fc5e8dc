"""The run report: every count a reader of a run sees, made once from the typed records.

The terminal summary, the results document (its ``DocumentSummary`` and ``DocumentCost``,
and so the markdown comment and the HTML report, which render it) and ``toolselect merge``
all read their categories, confusions and cost from one ``RunReport``, so no two of them can
count a case differently; whether the run blocks, and which cases, is the one verdict's
(``gate.decision``). Pure: records in, a frozen value out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.terms.vocabulary import Status

#: the label of a rep that called no tool
NOTHING = "(nothing)"


@dataclass(frozen=True, slots=True)
class CategoryCount:
    """Cases held and scored in one category, now and on the baseline (over its scored entries)."""

    held: int = 0
    scored: int = 0
    baseline_held: int = 0
    baseline_scored: int = 0

    def to_json(self) -> dict[str, int]:
        return {"held": self.held, "scored": self.scored, "baseline_held": self.baseline_held,
                "baseline_scored": self.baseline_scored}


@dataclass(frozen=True, slots=True)
class Confusion:
    """Reps of cases expecting ``expected`` (every acceptable answer) that chose ``chosen``."""

    expected: str
    chosen: str
    count: int
    correct: bool

    def to_json(self) -> dict[str, Any]:
        return {"expected": self.expected, "chosen": self.chosen, "count": self.count,
                "correct": self.correct}


@dataclass(frozen=True, slots=True)
class ModelCost:
    """One model's calls: how many, their known price, those with no known price, the token
    usage, and the reps cut at max_tokens after a tool call."""

    calls: int = 0
    priced_usd: float = 0.0
    unpriced_calls: int = 0
    usage: Mapping[str, int] = field(default_factory=dict)
    truncated: int = 0
    #: reps cut at max_tokens before any tool call (billed, in the calls and the price)
    inconclusive: int = 0

    @property
    def paid(self) -> bool:
        """Anything to say about the model's cost."""
        return bool(self.usage or self.priced_usd or self.unpriced_calls)

    def to_json(self) -> dict[str, Any]:
        """The results document's ``cost.by_model`` row (truncation is the terminal's)."""
        return {"calls": self.calls, "priced_usd": self.priced_usd,
                "unpriced_calls": self.unpriced_calls, "usage": dict(sorted(self.usage.items()))}


@dataclass(frozen=True, slots=True)
class RunReport:
    """The counts of one run (or of merged shards), in the order the reports show them."""

    total: int
    #: cases by verdict, in the gate's verdict order
    verdicts: Mapping[str, int]
    categories: Mapping[str, CategoryCount]
    #: most frequent first, then by label
    confusions: tuple[Confusion, ...]
    #: how many intents had a scored phrasing
    intents: int
    intent_disagreements: Mapping[str, Mapping[str, int]]
    costs: Mapping[str, ModelCost]
    #: the attribution's calls (in ``costs`` too): cases asked again, calls, priced USD
    attribution: Mapping[str, Any] = field(default_factory=dict)

    @property
    def wrong_choices(self) -> list[Confusion]:
        """The confusions off the diagonal: where descriptions overlap."""
        return [c for c in self.confusions if not c.correct]


def expected_label(expect: Sequence[str] | None, allow_no_tool: bool = False) -> str:
    """A case's acceptable first tools as one label: alternatives joined, no call as (nothing)."""
    if expect is None:
        return "(any tool)"
    names = list(expect) + ([NOTHING] if allow_no_tool or not expect else [])
    return " | ".join(dict.fromkeys(names))


def build_report(records: Sequence[CaseRecord],
                 baseline_status: Mapping[str, str | None] | None = None) -> RunReport:
    """The report of these records. ``baseline_status``: each case's baseline status by node
    id (absent or None: no scored entry)."""
    verdicts = Counter(r.verdict for r in records)
    by_intent = first_tools_by_intent(records)
    return RunReport(
        total=len(records),
        verdicts={v: verdicts[v] for v in gate.VERDICT_ORDER if verdicts.get(v)},
        categories=_categories(records, baseline_status or {}),
        confusions=_confusions(records),
        intents=len(by_intent),
        intent_disagreements={k: dict(sorted(v.items())) for k, v in sorted(by_intent.items())
                              if len(v) > 1},
        costs=_costs(records),
        attribution=_attribution(records),
    )


def _categories(records: Iterable[CaseRecord], baseline_status: Mapping[str, str | None]
                ) -> dict[str, CategoryCount]:
    rows: dict[str, list[int]] = {}
    for r in records:
        row = rows.setdefault(r.category or "(none)", [0, 0, 0, 0])
        if r.status is not None:
            row[0] += r.status == Status.HELD
            row[1] += 1
        base = baseline_status.get(r.nodeid)
        if base is not None:
            row[2] += base == Status.HELD
            row[3] += 1
    return {k: CategoryCount(*v) for k, v in sorted(rows.items())}


def _confusions(records: Iterable[CaseRecord]) -> tuple[Confusion, ...]:
    """Expected first tool against the one chosen, one count per scored rep."""
    counts: Counter[tuple[str, str]] = Counter()
    correct: dict[tuple[str, str], bool] = {}
    for r in records:
        if r.expect_tool is None or r.status is None:
            continue
        # the label holds every acceptable answer, so a (label, chosen) pair is right or
        # wrong whichever case it came from
        want = expected_label(r.expect_tool, r.allow_no_tool)
        # judged against the names themselves, not the label split at " | ": a tool's name
        # may hold that separator
        accepted = set(r.expect_tool) | ({NOTHING} if r.allow_no_tool or not r.expect_tool
                                         else set())
        for first in r.first_tools:
            got = first if first is not None else NOTHING
            counts[(want, got)] += 1
            correct[(want, got)] = got in accepted
    return tuple(Confusion(w, g, n, correct[(w, g)])
                 for (w, g), n in sorted(counts.items(), key=lambda p: (-p[1], p[0])))


def _costs(records: Iterable[CaseRecord]) -> dict[str, ModelCost]:
    """Per model, every rep's call: priced, or with no known price (counted, not summed)."""
    rows: dict[str, tuple[int, float, int, Counter[str], int, int]] = {}
    for r in records:
        if not r.model:
            continue
        calls, priced, unpriced, usage, truncated, cut = rows.get(
            r.model, (0, 0.0, 0, Counter(), 0, 0))
        usage.update(r.usage)
        # the attribution's calls (asked again with the baseline's tools) are the model's too
        found = r.attribution
        usage.update(found.usage if found else {})
        costs = [*r.costs, *(found.costs if found else ())]
        rows[r.model] = (calls + len(costs), priced + sum(c for c in costs if c is not None),
                         unpriced + sum(1 for c in costs if c is None), usage,
                         truncated + r.truncated, cut + r.inconclusive)
    return {m: ModelCost(calls, priced, unpriced, dict(usage), truncated, cut)
            for m, (calls, priced, unpriced, usage, truncated, cut) in sorted(rows.items())}


def _attribution(records: Iterable[CaseRecord]) -> dict[str, Any]:
    """The cases asked again with the baseline's tools and what that cost (empty: none)."""
    found = [r.attribution for r in records if r.attribution and r.attribution.calls]
    if not found:
        return {}
    costs = [c for a in found for c in a.costs]
    return {"cases": len(found), "calls": sum(a.calls for a in found),
            "priced_usd": sum(c for c in costs if c is not None)}


def first_tools_by_intent(records: Iterable[CaseRecord]) -> dict[str, Counter[str]]:
    """The first tools each intent's scored phrasings and reps chose."""
    by_intent: dict[str, Counter[str]] = {}
    for r in records:
        if r.intent and r.status is not None:
            by_intent.setdefault(r.intent, Counter()).update(
                f if f is not None else NOTHING for f in r.first_tools)
    return by_intent
