"""The ``tool_selection.v1`` results document: what the run hands it in, one JSON-able document out.

Everything a reader of a run needs (the markdown comment, the HTML report and the
``toolselect`` command all render from this document alone): provenance, the
subject and settings, every case with its calls and checks, its verdict against the
baseline and its pytest outcome, the summary, the cost, and the preference probe's
own ``tool_preference.v1`` document when groups ran.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_toolselect.gate import rules as gate
from pytest_toolselect.gate.decision import Decision, case_outcome, decide
from pytest_toolselect.spec.records import CaseRecord, as_case_record
from pytest_toolselect.spec.report_input import Escalations, ResultsInput

SCHEMA_VERSION = "tool_selection.v1"

def case_entry(record: CaseRecord | Mapping[str, Any], base: Mapping[str, Any] | None,
               settings: Mapping[str, Any]) -> dict[str, Any]:
    """One case of the document: every key present, whether or not it was scored."""
    rec = as_case_record(record)
    priced = [c for c in rec.costs if c is not None]
    entry = {
        "nodeid": rec.nodeid,
        "key": rec.key,
        "case_id": rec.case_id,
        "category": rec.category,
        "intent": rec.intent,
        "question": rec.question,
        "why": rec.why,
        "expect_tool": rec.expect_tool,
        "allow_no_tool": rec.allow_no_tool,
        "status": rec.status,
        "verdict": rec.verdict,
        "outcome": case_outcome(rec, settings),
        "passes": rec.passes,
        "reps": rec.reps,
        "first_tool": rec.first_tool,
        "first_tools": list(rec.first_tools),
        "calls": list(rec.calls),
        "checks": [[c.to_json() for c in rep] for rep in rec.checks],
        "failing_checks": list(rec.failing_checks),
        "failing_detail": dict(rec.failing_detail),
        "error": rec.error,
        "baseline": (None if base is None else
                     {k: base.get(k) for k in ("status", "passes", "reps", "first_tool",
                                               "failing_checks")}),
        "tools_changed": rec.tools_changed,
        "case_changed": rec.case_changed,
        "model": rec.model,
        "usage": dict(rec.usage),
        "cost_usd": sum(priced) if priced else (None if rec.costs else 0.0),
        "cached": list(rec.cached),
        "renamed_from": rec.renamed_from,
        "dropped_from": rec.dropped_from,
        "tools_diff": rec.tools_diff,
        # what `toolselect merge` needs to join shards: the item's place in the whole
        # suite, and the fingerprints a baseline entry keeps
        "order": rec.order,
        "case_fingerprint": rec.case_fingerprint,
        "tools_fingerprint": rec.tools_fingerprint,
        # and the tools a baseline keeps for the tools-changed note (texts: the document's)
        "toolset": rec.toolset,
    }
    if rec.escalation is not None:
        entry["escalation"] = rec.escalation.to_json()
    if rec.test_failure:
        # a decorated test whose own assertion failed: scored, and failed by its body
        entry["test_failure"] = rec.test_failure
    return entry


def categories(cases: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Held now and on the baseline, per category (baseline: over the cases it holds)."""
    out: dict[str, dict[str, int]] = {}
    for c in cases:
        row = out.setdefault(c["category"] or "(none)",
                             {"held": 0, "scored": 0, "baseline_held": 0, "baseline_scored": 0})
        if c["status"] is not None:
            row["scored"] += 1
            row["held"] += c["status"] == gate.HELD
        base = c["baseline"]
        if base is not None and base.get("status") is not None:
            row["baseline_scored"] += 1
            row["baseline_held"] += base["status"] == gate.HELD
    return dict(sorted(out.items()))


NOTHING = "(nothing)"


def expected_label(expect: Sequence[str] | None, allow_no_tool: bool = False) -> str:
    """A case's acceptable first tools as one label: alternatives joined, no call as (nothing)."""
    if expect is None:
        return "(any tool)"
    names = list(expect) + ([NOTHING] if allow_no_tool or not expect else [])
    return " | ".join(dict.fromkeys(names))


def confusion(cases: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Expected first tool against the one chosen, one count per rep, most frequent first.

    Off-diagonal mass (``correct`` false) is where descriptions overlap.
    """
    counts: Counter[tuple[str, str]] = Counter()
    correct: dict[tuple[str, str], bool] = {}
    for c in cases:
        expect = c["expect_tool"]
        if expect is None or c["status"] is None:
            continue
        # the label holds every acceptable answer, so a (label, chosen) pair is right or
        # wrong whichever case it came from
        want = expected_label(expect, bool(c["allow_no_tool"]))
        # judged against the names themselves, not the label split at " | ": a tool's name
        # may hold that separator
        accepted = set(expect) | ({NOTHING} if c["allow_no_tool"] or not expect else set())
        for first in c["first_tools"]:
            got = first if first is not None else NOTHING
            counts[(want, got)] += 1
            correct[(want, got)] = got in accepted
    return [{"expected": w, "chosen": g, "count": n, "correct": correct[(w, g)]}
            for (w, g), n in sorted(counts.items(), key=lambda p: (-p[1], p[0]))]


def first_tools_by_intent(cases: Iterable[CaseRecord | Mapping[str, Any]]
                          ) -> dict[str, Counter[str]]:
    """The first tools each intent's scored phrasings and reps chose (cases or run records)."""
    by_intent: dict[str, Counter[str]] = {}
    for c in map(as_case_record, cases):
        if c.intent and c.status is not None:
            by_intent.setdefault(c.intent, Counter()).update(
                f if f is not None else NOTHING for f in c.first_tools)
    return by_intent


def intent_disagreements(by_intent: Mapping[str, Counter[str]]) -> dict[str, dict[str, int]]:
    """Intents whose phrasings or reps chose different first tools."""
    return {k: dict(sorted(v.items())) for k, v in sorted(by_intent.items()) if len(v) > 1}


def cost(cases: Sequence[Mapping[str, Any]], cache_savings: Mapping[str, float],
         cap: float | None, capped: bool, probe_cost: float | None) -> dict[str, Any]:
    by_model: dict[str, dict[str, Any]] = {}
    for c in cases:
        if not c["model"]:
            continue
        row = by_model.setdefault(c["model"], {"calls": 0, "priced_usd": 0.0, "unpriced_calls": 0,
                                               "usage": Counter()})
        row["calls"] += len(c["first_tools"])
        row["usage"].update(c["usage"])
        if c["cost_usd"] is None:
            row["unpriced_calls"] += len(c["first_tools"])
        else:
            row["priced_usd"] += c["cost_usd"]
    total = sum(r["priced_usd"] for r in by_model.values()) + (probe_cost or 0.0)
    return {
        "total_usd": total,
        "cases_usd": total - (probe_cost or 0.0),
        "probe_usd": probe_cost or 0.0,
        "by_model": {m: {**r, "usage": dict(sorted(r["usage"].items()))}
                     for m, r in sorted(by_model.items())},
        "cache_savings_usd": dict(sorted(cache_savings.items())),
        "cap_usd": cap,
        "capped": capped,
    }


def verdict(cases: Sequence[CaseRecord | Mapping[str, Any]], settings: Mapping[str, Any],
            suite: Mapping[str, Any] | None, probe_blocks: bool, capped: bool,
            lint: Mapping[str, Any] | None = None, other_failed: int = 0,
            stopped: str | None = None) -> Decision:
    """The run's one verdict (gate.decision.decide) from what a document holds."""
    return decide(cases, settings, suite_blocks=bool(suite is not None and suite.get("blocks")),
                  probe_blocks=probe_blocks, capped=capped,
                  # a lint item lists its findings as new only when they fail it
                  new_lint=len((lint or {}).get("new") or ()), other_failed=other_failed,
                  stopped=stopped)


def build(data: ResultsInput | Mapping[str, Any]) -> dict[str, Any]:
    """The document from what the session hands it (SessionSummary.results_input)."""
    data = data if isinstance(data, ResultsInput) else ResultsInput.read(data)
    settings = data.settings
    records = data.records
    cases = [case_entry(r, data.baseline_cases.get(r.renamed_from or r.key), settings)
             for r in records]
    suite = data.suite.to_json() if data.suite is not None else None
    preference = data.preference
    probe_cost = None
    if preference is not None:
        probe_cost = sum(r["cost_usd"] or 0.0 for r in preference["results"])
    verdicts = Counter(c["verdict"] for c in cases)
    the_verdict = verdict(records, settings, suite, data.probe_blocks, data.capped, data.lint,
                          data.other_failed, data.provenance.get("stopped")).to_json()
    document = {
        "schema_version": SCHEMA_VERSION,
        "provenance": dict(data.provenance),
        "subject": dict(data.subject),
        "settings": dict(settings),
        "baseline": {
            "path": data.baseline_path,
            "mode": data.baseline_mode,
            "written": data.baseline_written,
            "gone": list(data.gone),
        },
        "verdict": the_verdict,
        "summary": {
            "total": len(cases),
            "verdicts": {v: verdicts[v] for v in gate.VERDICT_ORDER if verdicts.get(v)},
            "categories": categories(cases),
            "confusion": confusion(cases),
            "intent_disagreements": intent_disagreements(first_tools_by_intent(cases)),
            "suite": suite,
        },
        "cost": cost(cases, data.cache_savings, data.cost_cap, data.capped, probe_cost),
        "cases": cases,
        "preference": preference,
        "tool_texts": tool_texts(records),
        **({"lint": data.lint} if data.lint else {}),
        **({"shard": dict(data.shard)} if data.shard is not None else {}),
    }
    if data.escalations is not None:
        # adaptive reps asked some cases again (absent otherwise: older readers see no change)
        document["summary"]["escalations"] = data.escalations.to_json()
    return document


def tool_texts(records: Iterable[CaseRecord]) -> dict[str, str]:
    """Every tool description the records carried, by tool fingerprint: one table per run
    (a record carries a text only where its process met it first)."""
    texts: dict[str, str] = {}
    for rec in records:
        texts.update(rec.tool_texts)
    return dict(sorted(texts.items()))


def escalations(records: Iterable[CaseRecord | Mapping[str, Any]]) -> Escalations | None:
    """How many cases were asked again, the calls that cost, and the verdicts they reached
    (run records, or a merged document's cases)."""
    escalated = [(r, r.escalation) for r in map(as_case_record, records) if r.escalation]
    if not escalated:
        return None
    verdicts = Counter(r.verdict for r, _ in escalated)
    return Escalations(
        cases=len(escalated),
        calls=sum(e.extra_reps for _, e in escalated),
        stopped=sum(1 for _, e in escalated if e.stopped),
        verdicts={v: verdicts[v] for v in gate.VERDICT_ORDER if verdicts.get(v)},
    )
