"""The ``tool_selection.v1`` results document: what the run hands it in, one typed document out
(``document.ResultsDocument``, written with its ``to_json()``).

Everything a reader of a run needs (the markdown comment, the HTML report and the
``toolselect`` command all render from this document alone): provenance, the
subject and settings, every case with its calls and checks, its verdict against the
baseline and its pytest outcome, the summary, the cost, and the preference probe's
own ``tool_preference.v1`` document when groups ran.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.gate.decision import Decision, GateSettings, case_outcome, decide
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.records.baseline_entry import CaseEntry
from pytest_toolselect.records.report_input import Escalations, ResultsInput
from pytest_toolselect.records.run_records import CaseRecord

from .document import (
    BaselineInfo,
    DocumentCost,
    DocumentSummary,
    DocumentVerdict,
    Made,
    ResultsDocument,
    Shard,
)
from .run_report import build_report


def case_entry(rec: CaseRecord, base: CaseEntry | None,
               settings: Mapping[str, Any]) -> dict[str, Any]:
    """One case of the document: every key present, whether or not it was scored."""
    priced = [c for c in rec.costs if c is not None]
    # the stored entry as its file holds it: a key it lacks is shown as null
    held = base.to_json() if base is not None else None
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
        "outcome": case_outcome(rec, GateSettings.read(settings)),
        "passes": rec.passes,
        "reps": rec.reps,
        "first_tool": rec.first_tool,
        "first_tools": list(rec.first_tools),
        "calls": list(rec.calls),
        "checks": [[c.to_json() for c in rep] for rep in rec.checks],
        "failing_checks": list(rec.failing_checks),
        "failing_detail": dict(rec.failing_detail),
        "error": rec.error,
        "baseline": (None if held is None else
                     {k: held.get(k) for k in ("status", "passes", "reps", "first_tool",
                                               "failing_checks")}),
        "tools_changed": rec.tools_changed,
        "case_changed": rec.case_changed,
        "model": rec.model,
        "usage": dict(rec.usage),
        "cost_usd": sum(priced) if priced else (None if rec.costs else 0.0),
        # per rep (None: no known price), so a merge counts the unpriced calls as the run did
        "costs": list(rec.costs),
        # per billed call (as costs): the first turn's text, clipped and masked
        "texts": list(rec.texts),
        "cached": list(rec.cached),
        "inconclusive": rec.inconclusive,
        "renamed_from": rec.renamed_from,
        "dropped_from": rec.dropped_from,
        "tools_diff": None if rec.tools_diff is None else [c.to_json() for c in rec.tools_diff],
        # what `toolselect merge` needs to join shards: the item's place in the whole
        # suite, and the fingerprints a baseline entry keeps
        "order": rec.order,
        "case_fingerprint": rec.case_fingerprint,
        "tools_fingerprint": rec.tools_fingerprint,
        # and the tools a baseline keeps for the tools-changed note (texts: the document's)
        "toolset": rec.toolset,
        # the order of the tools offered (their definitions: the document's `tools`)
        "offered": rec.offered,
    }
    if rec.attribution is not None:
        entry["attribution"] = rec.attribution.to_json()
    if rec.escalation is not None:
        entry["escalation"] = rec.escalation.to_json()
    if rec.test_failure:
        # a decorated test whose own assertion failed: scored, and failed by its body
        entry["test_failure"] = rec.test_failure
    if any(f is not None for f in rec.found_by):
        # a harness route: the choice came after the harness's own tool search
        entry["found_by"] = list(rec.found_by)
    if rec.context:
        # a case past the first call: what it was given, a clipped line a call
        entry["context"] = list(rec.context)
    return entry


def verdict(cases: Sequence[CaseRecord], settings: Mapping[str, Any],
            suite: Mapping[str, Any] | None, probe_blocks: bool, capped: bool,
            lint: Mapping[str, Any] | None = None, other_failed: int = 0,
            stopped: str | None = None) -> Decision:
    """The run's one verdict (gate.decision.decide) from what a document holds."""
    return decide(cases, GateSettings.read(settings),
                  suite_blocks=bool(suite is not None and suite.get("blocks")),
                  probe_blocks=probe_blocks, capped=capped,
                  # a lint item lists its findings as new only when they fail it
                  new_lint=len((lint or {}).get("new") or ()), other_failed=other_failed,
                  stopped=stopped)


def build(data: ResultsInput, mask: Callable[[Any], Any] | None = None) -> ResultsDocument:
    """The document from what the session hands it (SessionSummary.results_input).

    Its cases are made from the records when read (``document.Made``), each passed
    through ``mask`` (the run's masking of secrets) as it is made."""
    settings = data.settings
    records = data.records
    baseline_cases = data.baseline_cases

    def case(i: int) -> dict[str, Any]:
        rec = records[i]
        entry = case_entry(rec, baseline_cases.get(rec.renamed_from or rec.key), settings)
        if mask is None:
            return entry
        masked: dict[str, Any] = mask(entry)
        return masked

    suite = data.suite.to_json() if data.suite is not None else None
    preference = data.preference
    probe_cost = None
    if preference is not None:
        probe_cost = sum(r["cost_usd"] or 0.0 for r in preference["results"])
    decision = verdict(records, settings, suite, data.probe_blocks, data.capped, data.lint,
                       data.other_failed, data.provenance.get("stopped"))
    # each case's baseline status as its entry shows it (case_entry)
    report = build_report(records, {
        r.nodeid: base.to_json().get("status") for r in records
        if (base := baseline_cases.get(r.renamed_from or r.key)) is not None})
    return ResultsDocument(
        provenance=dict(data.provenance),
        subject=Subject.from_json(data.subject),
        settings=dict(settings),
        baseline=BaselineInfo(data.baseline_path, data.baseline_mode, data.baseline_written,
                              tuple(data.gone)),
        verdict=DocumentVerdict.of(decision),
        # adaptive reps asked some cases again (absent otherwise: older readers see no change)
        summary=DocumentSummary.of(report, suite, data.escalations, sorted(
            set(data.not_run_in_this_run) - {r.key for r in records})),
        cost=DocumentCost.of(report, data.cache_savings, data.cost_cap, data.capped, probe_cost),
        cases=Made(len(records), case),
        preference=preference,
        tool_texts=tool_texts(records),
        tools=tool_defs(records) or None,
        lint=data.lint or None,
        shard=(Shard(data.shard["index"], data.shard["count"], tuple(data.shard["keys"]))
               if data.shard is not None else None),
    )


def build_masked(data: ResultsInput, mask: Callable[[Any], Any]) -> ResultsDocument:
    """The document with every string passed through ``mask`` (the run's masking of secrets,
    which goes string by string, dict keys too): the sections at once, each case as it is
    made, so the text is what masking the whole document gives, and no whole copy is made."""
    whole = build(data, mask)
    sections = ResultsDocument.from_json(mask(whole.to_json(cases=False)))
    return replace(sections, cases=whole.cases)


def tool_texts(records: Iterable[CaseRecord]) -> dict[str, str]:
    """Every tool description the records carried, by tool fingerprint: one table per run
    (a record carries a text only where its process met it first)."""
    texts: dict[str, str] = {}
    for rec in records:
        texts.update(rec.tool_texts)
    return dict(sorted(texts.items()))


def tool_defs(records: Iterable[CaseRecord]) -> dict[str, dict[str, Any]]:
    """Every tool whole the records carried, by tool fingerprint (as tool_texts)."""
    defs: dict[str, dict[str, Any]] = {}
    for rec in records:
        defs.update(rec.tool_defs)
    return dict(sorted(defs.items()))


def escalations(records: Iterable[CaseRecord]) -> Escalations | None:
    """How many cases were asked again, the calls that cost, and the verdicts they reached
    (run records, or a merged document's cases)."""
    escalated = [(r, r.escalation) for r in records if r.escalation]
    if not escalated:
        return None
    verdicts = Counter(r.verdict for r, _ in escalated)
    return Escalations(
        cases=len(escalated),
        calls=sum(e.extra_reps for _, e in escalated),
        stopped=sum(1 for _, e in escalated if e.stopped),
        verdicts={v: verdicts[v] for v in gate.VERDICT_ORDER if verdicts.get(v)},
    )
