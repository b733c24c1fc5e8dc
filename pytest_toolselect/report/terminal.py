"""The terminal summary: the run's SummaryInput in, lines out (no I/O, no pytest)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolselect.exchange.clip import clip_text
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.gate.attribution import drift_line
from pytest_toolselect.gate.evidence import DROPPED, history_lines, section
from pytest_toolselect.messages.plural import plural
from pytest_toolselect.records.report_input import Escalations, SuiteChange, SummaryInput
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.terms.vocabulary import Verdict

from .notes import TOOLS_SECTION, notes, tool_changes
from .run_report import NOTHING, CategoryCount, Confusion, ModelCost, build_report
from .words import attribution_calls_line, attribution_cost_line, counted, escalation_line, verdict_counts

#: the regressions' title when --toolselect-update-baseline accepts them
#: a check's detail names values already clipped; this bounds the sentence around them
CLIP_DETAIL = 600
ACCEPTED = ("regressions accepted (held on the baseline, fail now; --toolselect-update-baseline "
            "records the new behaviour)")

SECTIONS = (
    (Verdict.DRIFT, "drift (fail with the baseline's own tools now too: the model moved, not this "
                 "change; re-record main)"),
    (Verdict.REGRESSION, "regressions (held on the baseline, fail now: these block)"),
    (Verdict.FAILED, "failing (no baseline: an ordinary test failure)"),
    (Verdict.ERROR, "errors (not scored; baseline entries kept)"),
    (Verdict.SKIPPED, "not run (cost cap; baseline entries kept)"),
    (Verdict.FIXED, "fixed (failed on the baseline, hold now)"),
    (Verdict.NEW_FAILING, "new failing (not in the baseline)"),
    (DROPPED, "dropped, not significant (held on the baseline at times, fail every rep now; "
              "too little evidence to block)"),
    (Verdict.STILL_FAILING, "still failing (failed on the baseline too)"),
    (Verdict.FLAKY, "flaky (reps disagree)"),
)


def _call_text(call: Mapping[str, Any]) -> str:
    args = call.get("arguments") or {}
    inner = ", ".join(f"{k}={v!r}" for k, v in args.items())
    if call.get("raw_arguments") is not None:
        inner = f"<not JSON: {call['raw_arguments']!r}>"
    return f"{call['name']}({inner})"


def _expected_text(rec: CaseRecord) -> str:
    expect = rec.expect_tool
    if expect is None:
        return "(any tool)"
    text = " or ".join(expect) if expect else NOTHING
    if rec.allow_no_tool and expect:
        text += ", or nothing"
    return text


def describe(rec: CaseRecord, *, error_above: bool = False,
             verbose: bool = False) -> list[str]:
    """One case in full: what was asked, expected, called, which check failed, and why
    (``error_above``: the error's message is printed above, under ERRORS, and not again;
    ``verbose``: what the model wrote on each rep, too)."""
    # the record keeps the whole text (the HTML search covers it); what is printed is clipped
    out = [f"question: {clip_text(str(rec.question))}"]
    # a case past the first call: the calls and results it was given (clipped lines)
    out += [f"given:    {line}" for line in rec.context]
    out.append(f"expected: {_expected_text(rec)}")
    if rec.error and error_above:
        out.append("error:    (in full under ERRORS above)")
    elif rec.error:
        # a server's stderr tail spans lines: keep them under the first, not at the margin
        first, *rest = str(rec.error).splitlines() or [""]
        out.append(f"error:    {first}")
        out.extend(f"          {line}" for line in rest)
    calls = rec.calls
    distinct: list[list[Any]] = []
    for turn in calls:
        if turn not in distinct:
            distinct.append(turn)
    for turn in distinct:
        text = "; ".join(_call_text(c) for c in turn) or NOTHING
        count = calls.count(turn)
        suffix = f"   (x{count} of {len(calls)} reps)" if len(calls) > 1 else ""
        out.append(f"called:   {text}{suffix}")
    found = sorted({f for f in rec.found_by if f})
    if found:
        out.append(f"found by: {clip_text('; '.join(found))}")
    if verbose:
        out.extend(_said(rec.texts))
    for name, detail in rec.failing_detail.items():
        out.append(f"failing:  {name}: {clip_text(str(detail), CLIP_DETAIL)}")
    if rec.status is not None and rec.reps > 1:
        out.append(f"passes:   {rec.passes}/{rec.reps} reps")
    if rec.inconclusive:
        out.append(f"cut:      {rec.inconclusive} of {rec.reps + rec.inconclusive} reps "
                   "inconclusive (cut at max_tokens before any tool call: billed, not scored; "
                   "raise max_tokens)")
    if rec.test_failure:
        out.append(f"test:     {rec.test_failure}")
    if rec.why is not None:  # None: a case known by its key alone (gate.expected.key_record)
        out.append(f"why:      {clip_text(str(rec.why))}")
    for note, details in notes(rec):
        out.append(f"note:     {note}")
        out.extend(f"            {line}" for line in details)
    return out


def _said(texts: Sequence[str]) -> Iterator[str]:
    """Each distinct text the model wrote (the record's, already clipped and masked), on one
    line: a reason to call nothing, or the start of a reply max_tokens cut."""
    counts = Counter(t for t in texts if t)
    for text, n in counts.items():
        suffix = f"   (x{n} of {len(texts)} calls)" if len(texts) > 1 else ""
        out = " ".join(text.split())
        yield f"said:     {clip_text(out)!r}{suffix}"


@dataclass(frozen=True)
class TerminalSummary:
    """What the terminal summary prints, counted once (``summarize``) and read by ``lines``."""

    model_line: str
    baseline: str | None
    baseline_mode: str | None
    baseline_written: bool
    total: int
    #: cases by the section they are printed under
    verdicts: Mapping[str, int]
    sections: Mapping[str, tuple[CaseRecord, ...]]
    intent_disagreements: Mapping[str, Mapping[str, int]]
    #: a category with no scored case has nothing held to say, and is left out
    categories: Mapping[str, CategoryCount]
    #: the ten most frequent wrong first choices
    confusions: tuple[Confusion, ...]
    gone: tuple[str, ...]
    intents: int
    costs: Mapping[str, ModelCost]
    attribution: Mapping[str, Any]
    cache_savings: Mapping[str, float]
    cost_cap: float | None
    #: the preference probe's priced calls (USD, count)
    probe_cost: tuple[float, int]
    verbose: bool
    #: the response cache's lookups (None: no cache, or none counted)
    cache: Mapping[str, Any] | None
    dropped_schema_keys: tuple[str, ...]
    #: the share of cases held against the baseline, with its Newcombe interval (gate.measure_suite)
    suite: SuiteChange | None
    #: what an update did to the histories (restarts, replays not counted)
    history: tuple[str, ...]
    #: adaptive reps: cases asked again, their extra calls and verdicts (results.escalations)
    escalations: Escalations | None
    #: cases whose failing checks their baseline entries were never evaluated with
    unevaluated: Mapping[str, Any] | None
    #: node ids whose block (or error message) pytest's FAILURES or ERRORS already shows
    shown_above: frozenset[str]
    #: each tool change once, however many cases were offered it (the cases point here)
    tool_changes: tuple[Mapping[str, Any], ...]


def summarize(data: SummaryInput) -> TerminalSummary:
    """The summary's counts, sections, intents, categories and confusions."""
    records = data.records
    verdicts = Counter(section(r) for r in records)
    by_verdict: dict[str, list[CaseRecord]] = defaultdict(list)
    for r in records:
        by_verdict[section(r)].append(r)

    # the counts every report shows, made as the results document and merge make them
    report = build_report(records)
    return TerminalSummary(
        model_line=data.model_line,
        baseline=data.baseline_path,
        baseline_mode=data.baseline_mode,
        baseline_written=data.baseline_written,
        total=len(records),
        verdicts=dict(verdicts),
        sections={k: tuple(v) for k, v in by_verdict.items()},
        intent_disagreements=report.intent_disagreements,
        categories={k: c for k, c in report.categories.items() if c.scored},
        confusions=tuple(report.wrong_choices[:10]),
        gone=tuple(data.gone),
        intents=report.intents,
        costs=report.costs,
        attribution=report.attribution,
        cache_savings=dict(data.cache_savings),
        cost_cap=data.cost_cap,
        probe_cost=data.probe_cost,
        verbose=data.verbose,
        cache=dict(data.cache_counts) if data.cache and data.cache_counts is not None else None,
        dropped_schema_keys=tuple(sorted({k for r in records for k in r.dropped_schema_keys})),
        suite=data.suite,
        history=tuple(history_lines(records) if data.baseline_mode == "updated"
                      and data.baseline_written else ()),
        escalations=data.escalations,
        unevaluated=unevaluated_summary(records),
        shown_above=frozenset(data.shown_above),
        tool_changes=tuple(tool_changes(records)),
    )


def unevaluated_summary(records: Sequence[CaseRecord]) -> dict[str, Any] | None:
    """The checks set aside by the upgrade rule (gate.judge) and in how many cases."""
    hit = [r for r in records if r.unevaluated_checks]
    if not hit:
        return None
    return {"cases": len(hit), "checks": sorted({c for r in hit for c in r.unevaluated_checks})}


def unevaluated_line(found: Mapping[str, Any], *, updated: bool = False) -> str:
    """Said once for the run: checks an upgrade added failed where the baseline never ran them."""
    names = ", ".join(found["checks"])
    line = (f"new checks: {names} failed in {counted(found['cases'], 'case')} whose baseline "
            "entries were not evaluated with them; they do not block those cases")
    if updated:
        return line + " (the updated baseline evaluates them from now on)"
    return line + " (new failing) until the baseline is updated (--toolselect-update-baseline)"


def _counts_line(summary: TerminalSummary) -> str:
    v = summary.verdicts
    order = [Verdict.DRIFT, Verdict.REGRESSION, Verdict.FAILED, Verdict.ERROR, Verdict.HELD,
             Verdict.PASSED, Verdict.NEW, Verdict.FIXED, Verdict.NEW_FAILING, DROPPED,
             Verdict.STILL_FAILING, Verdict.FLAKY]
    parts = verdict_counts([(k, v[k]) for k in order if v.get(k)])
    return f"{counted(summary.total, 'case')}: " + (parts or "none run")


def lines(summary: TerminalSummary) -> Iterator[str]:
    drifted = summary.verdicts.get(Verdict.DRIFT)
    if drifted:
        yield drift_line(drifted)  # first: it explains every other red of this run
    yield summary.model_line
    if summary.baseline:
        mode = summary.baseline_mode
        what = {
            "compared": "compared with",
            "recorded": "recorded to" if summary.baseline_written else "none yet at",
            "replaced": ("re-recorded for this model (it belonged to another) at"
                         if summary.baseline_written else "not re-recorded at"),
            "updated": "updated at" if summary.baseline_written else "not updated at",
        }.get(mode or "", "at")
        yield f"baseline: {what} {summary.baseline}"
    else:
        yield "baseline: none (every failing case fails; --toolselect-baseline gates on regressions)"
    yield _counts_line(summary)
    if summary.suite:
        yield gate.suite_line(summary.suite)
    yield from summary.history
    if summary.unevaluated:
        yield unevaluated_line(summary.unevaluated, updated=summary.baseline_mode
                               in ("updated", "replaced") and summary.baseline_written)
    if summary.escalations:
        yield escalation_line(summary.escalations)
    if summary.attribution:
        yield attribution_calls_line(summary.attribution)
    yield from tools_section(summary.tool_changes)
    for verdict, title in SECTIONS:
        recs = summary.sections.get(verdict)
        if not recs:
            continue
        if verdict == Verdict.REGRESSION and summary.baseline_mode in ("updated", "replaced"):
            title = ACCEPTED
        yield ""
        yield f"{title}: {len(recs)}"
        if verdict == Verdict.SKIPPED:
            yield f"  {recs[0].error}"
        for rec in recs:
            tag = f" [{rec.category}]" if rec.category else ""
            shown = rec.nodeid in summary.shown_above
            if shown and not rec.error:
                # printed once: the block is under FAILURES, where pytest users look
                checks = ", ".join(rec.failing_checks) or "failed"
                yield f"  {rec.nodeid}{tag}: {checks} (in full under FAILURES above)"
                continue
            yield f"  {rec.nodeid}{tag}"
            if verdict == Verdict.FLAKY:
                yield f"    passes:   {rec.passes}/{rec.reps} reps"
                continue
            if verdict == Verdict.SKIPPED:
                continue
            for line in describe(rec, error_above=shown, verbose=summary.verbose):
                yield f"    {line}"
    if summary.gone:
        yield ""
        yield f"in the baseline, no longer a case: {len(summary.gone)}"
        for nodeid in summary.gone:
            yield f"  {nodeid}"
    if summary.intent_disagreements:
        yield ""
        yield (f"intents whose phrasings or reps chose different first tools: "
               f"{len(summary.intent_disagreements)} of {summary.intents}")
        for intent, counts in sorted(summary.intent_disagreements.items()):
            chosen = ", ".join(f"{t} x{n}" for t, n in sorted(counts.items(), key=lambda p: -p[1]))
            yield f"  {intent}: {chosen}"
    if summary.categories:
        yield ""
        yield "held by category: " + ", ".join(
            f"{cat} {c.held}/{c.scored}" for cat, c in sorted(summary.categories.items())
        )
    if summary.confusions:
        yield "top confusions (expected -> chosen): " + ", ".join(
            f"{c.expected} -> {c.chosen} x{c.count}" for c in summary.confusions
        )
    yield from _cost_lines(summary)
    cache = summary.cache
    if cache:
        yield (f"response cache: {cache['hits']} hits, {cache['misses']} misses, "
               f"hits saved ${cache['saved_usd']:.4f}")
    if summary.verbose and summary.dropped_schema_keys:
        yield ("schema keys dropped before sending (the provider rejects them): "
               + ", ".join(summary.dropped_schema_keys))


def tools_section(changes: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """Each tool change once, with how many cases were offered it."""
    if not changes:
        return
    yield ""
    yield f"{TOOLS_SECTION}: {len(changes)}"
    for c in changes:
        yield f"  {c['line']}   ({counted(len(c['cases']), 'case')})"


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else str(n)


def _cost_lines(summary: TerminalSummary) -> Iterator[str]:
    costs = summary.costs
    paid = {m: c for m, c in costs.items() if c.paid}
    probe_usd, probe_calls = summary.probe_cost
    if not paid and not probe_usd:
        return
    # the cap's own count: every billed call, the cases' and the probe's
    total = sum(c.priced_usd for c in costs.values()) + probe_usd
    cap = summary.cost_cap
    yield ""
    yield f"cost: ${total:.4f}" + (f" of a ${cap:g} cap" if cap is not None else "")
    if probe_usd:
        yield f"  tool preference probe: ${probe_usd:.4f} over {probe_calls} calls"
    for model, c in paid.items():
        u = c.usage
        line = (f"  {model}: ${c.priced_usd:.4f} over {plural(c.calls, 'call')}, "
                f"{_tokens(u.get('input_tokens', 0))} in / {_tokens(u.get('output_tokens', 0))} out")
        if u.get("cache_read_tokens") or u.get("cache_write_tokens"):
            line += (f", cache read {_tokens(u.get('cache_read_tokens', 0))}"
                     f" / written {_tokens(u.get('cache_write_tokens', 0))}")
            saved = summary.cache_savings.get(model)
            if saved:
                line += f" (reads saved ${saved:.4f})"
        if c.truncated:
            line += f", {c.truncated} cut at max_tokens after a tool call"
        if c.inconclusive:
            line += f", {c.inconclusive} inconclusive (cut at max_tokens before any tool call)"
        yield line
        if c.unpriced_calls:
            yield (f"  {model}: {plural(c.unpriced_calls, 'call')} with no known price, not in the total "
                   "(add the model under `prices:` in toolselect.yaml)")
    spent = summary.attribution
    if spent:
        yield "  " + attribution_cost_line(spent)
