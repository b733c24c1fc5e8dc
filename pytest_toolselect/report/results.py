"""The ``tool_selection.v1`` results document: plain data in, one JSON-able document out.

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

SCHEMA_VERSION = "tool_selection.v1"

#: verdicts whose items fail or error the pytest run, whatever the flags
_ALWAYS_BLOCKING = {gate.REGRESSION: ("regression", "regressions"),
                    gate.FAILED: ("failing case (no baseline)", "failing cases (no baseline)"),
                    gate.ERROR: ("error (not scored)", "errors (not scored)")}


def outcome_of(verdict: str, settings: Mapping[str, Any]) -> str:
    """How the item ended in pytest: passed, failed, xfailed, warned, error or skipped."""
    if verdict in (gate.ERROR, gate.SKIPPED):
        return verdict
    return gate.pytest_outcome(
        verdict,
        fail_on_flaky=bool(settings.get("fail_on_flaky")),
        fail_on_still_failing=bool(settings.get("fail_on_still_failing")),
        accept_regressions=bool(settings.get("update_baseline")),
    )


def case_entry(rec: Mapping[str, Any], base: Mapping[str, Any] | None,
               settings: Mapping[str, Any]) -> dict[str, Any]:
    """One case of the document: every key present, whether or not it was scored."""
    costs = list(rec.get("costs") or [])
    priced = [c for c in costs if c is not None]
    entry = {
        "nodeid": rec["nodeid"],
        "key": rec.get("key", rec["nodeid"]),
        "case_id": rec["case_id"],
        "category": rec.get("category"),
        "intent": rec.get("intent"),
        "question": rec["question"],
        "why": rec.get("why"),
        "expect_tool": rec.get("expect_tool"),
        "allow_no_tool": bool(rec.get("allow_no_tool")),
        "status": rec.get("status"),
        "verdict": rec["verdict"],
        "outcome": "failed" if rec.get("test_failure") else outcome_of(rec["verdict"], settings),
        "passes": rec.get("passes", 0),
        "reps": rec.get("reps", 0),
        "first_tool": rec.get("first_tool"),
        "first_tools": list(rec.get("first_tools") or []),
        "calls": list(rec.get("calls") or []),
        "checks": list(rec.get("checks") or []),
        "failing_checks": list(rec.get("failing_checks") or []),
        "failing_detail": dict(rec.get("failing_detail") or {}),
        "error": rec.get("error"),
        "baseline": (None if base is None else
                     {k: base.get(k) for k in ("status", "passes", "reps", "first_tool",
                                               "failing_checks")}),
        "tools_changed": bool(rec.get("tools_changed")),
        "case_changed": bool(rec.get("case_changed")),
        "model": rec.get("model"),
        "usage": dict(rec.get("usage") or {}),
        "cost_usd": sum(priced) if priced else (None if costs else 0.0),
        "cached": list(rec.get("cached") or []),
        "renamed_from": rec.get("renamed_from"),
        "dropped_from": rec.get("dropped_from"),
        "tools_diff": rec.get("tools_diff"),
        # what `toolselect merge` needs to join shards: the item's place in the whole
        # suite, and the fingerprints a baseline entry keeps
        "order": rec.get("order"),
        "case_fingerprint": rec.get("case_fingerprint"),
        "tools_fingerprint": rec.get("tools_fingerprint"),
        # and the tools a baseline keeps for the tools-changed note (texts: the document's)
        "toolset": rec.get("toolset"),
    }
    if rec.get("escalation"):
        entry["escalation"] = dict(rec["escalation"])
    if rec.get("test_failure"):
        # a decorated test whose own assertion failed: scored, and failed by its body
        entry["test_failure"] = rec["test_failure"]
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


def first_tools_by_intent(cases: Iterable[Mapping[str, Any]]) -> dict[str, Counter[str]]:
    """The first tools each intent's scored phrasings and reps chose (cases or run records)."""
    by_intent: dict[str, Counter[str]] = {}
    for c in cases:
        if c.get("intent") and c.get("status") is not None:
            by_intent.setdefault(c["intent"], Counter()).update(
                f if f is not None else NOTHING for f in c.get("first_tools") or ())
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


def verdict(cases: Sequence[Mapping[str, Any]], settings: Mapping[str, Any],
            suite: Mapping[str, Any] | None, probe_blocks: bool, capped: bool) -> dict[str, Any]:
    """Does this run block the merge, and why (each reason a sentence)."""
    counts = Counter(c["verdict"] for c in cases)
    reasons = []
    for v, (one, many) in _ALWAYS_BLOCKING.items():
        if counts.get(v) and not (v == gate.REGRESSION and settings.get("update_baseline")):
            reasons.append(f"{counts[v]} {one if counts[v] == 1 else many}")
    own = sum(1 for c in cases if c.get("test_failure"))
    if own:
        whose = "its" if own == 1 else "their"
        reasons.append(f"{own} decorated test{'s' if own != 1 else ''} failed {whose} own assertion")
    if counts.get(gate.FLAKY) and settings.get("fail_on_flaky"):
        reasons.append(f"{counts[gate.FLAKY]} flaky (--toolselect-fail-on-flaky)")
    if counts.get(gate.STILL_FAILING) and settings.get("fail_on_still_failing"):
        reasons.append(f"{counts[gate.STILL_FAILING]} still failing (--toolselect-fail-on-still-failing)")
    if suite is not None and suite.get("blocks"):
        reasons.append("the suite's pass rate fell (--toolselect-fail-on-suite-drop)")
    if probe_blocks:
        reasons.append("a preference effect moved (--toolselect-min-effect-change)")
    if capped:
        reasons.append("the cost cap stopped the run before every call was made")
    return {"blocking": bool(reasons), "reasons": reasons}


def build(data: Mapping[str, Any]) -> dict[str, Any]:
    """The document from the session's plain data (see SessionSummary.results_input)."""
    settings = data["settings"]
    base_cases: Mapping[str, Mapping[str, Any]] = data.get("baseline_cases") or {}
    cases = [case_entry(r, base_cases.get(r.get("renamed_from") or r.get("key", r["nodeid"])), settings)
             for r in data["records"]]
    preference = data.get("preference")
    probe_cost = None
    if preference is not None:
        probe_cost = sum(r["cost_usd"] or 0.0 for r in preference["results"])
    verdicts = Counter(c["verdict"] for c in cases)
    the_verdict = verdict(cases, settings, data.get("suite"), bool(data.get("probe_blocks")),
                          bool(data.get("capped")))
    new_lint = len((data.get("lint") or {}).get("new") or ())
    if new_lint:
        the_verdict = {"blocking": True, "reasons": [
            *the_verdict["reasons"], f"{new_lint} new lint finding{'' if new_lint == 1 else 's'}"]}
    document = {
        "schema_version": SCHEMA_VERSION,
        "provenance": dict(data["provenance"]),
        "subject": dict(data["subject"]),
        "settings": dict(settings),
        "baseline": {
            "path": data.get("baseline_path"),
            "mode": data.get("baseline_mode"),
            "written": bool(data.get("baseline_written")),
            "gone": list(data.get("gone") or []),
        },
        "verdict": the_verdict,
        "summary": {
            "total": len(cases),
            "verdicts": {v: verdicts[v] for v in gate.VERDICT_ORDER if verdicts.get(v)},
            "categories": categories(cases),
            "confusion": confusion(cases),
            "intent_disagreements": intent_disagreements(first_tools_by_intent(cases)),
            "suite": data.get("suite"),
        },
        "cost": cost(cases, data.get("cache_savings") or {}, data.get("cost_cap"),
                     bool(data.get("capped")), probe_cost),
        "cases": cases,
        "preference": preference,
        "tool_texts": tool_texts(data["records"]),
        **({"lint": data["lint"]} if data.get("lint") else {}),
    }
    if data.get("escalations"):
        # adaptive reps asked some cases again (absent otherwise: older readers see no change)
        document["summary"]["escalations"] = dict(data["escalations"])
    return document


def tool_texts(records: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Every tool description the records carried, by tool fingerprint: one table per run
    (a record carries a text only where its process met it first)."""
    texts: dict[str, str] = {}
    for rec in records:
        texts.update(rec.get("tool_texts") or {})
    return dict(sorted(texts.items()))


def escalations(records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """How many cases were asked again, the calls that cost, and the verdicts they reached."""
    escalated: Sequence[Mapping[str, Any]] = [r for r in records if r.get("escalation")]
    if not escalated:
        return None
    verdicts = Counter(r["verdict"] for r in escalated)
    return {
        "cases": len(escalated),
        "calls": sum(r["escalation"]["extra_reps"] for r in escalated),
        "stopped": sum(1 for r in escalated if r["escalation"].get("stopped")),
        "verdicts": {v: verdicts[v] for v in gate.VERDICT_ORDER if verdicts.get(v)},
    }
