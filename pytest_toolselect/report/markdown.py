"""The pull-request comment: a ``tool_selection.v1`` document in, markdown out (no I/O).

The verdict comes first, then what blocks (regressions, failures, errors) in full, then
what a reviewer may want to look at in collapsed sections, then the categories
against the baseline and the cost. The same document gives the same bytes. Text
from the run (questions, tool names, the model's arguments, error messages) is
escaped so it renders as text: it cannot close a ``<details>``, start a code block,
break a table or inject HTML. The comment is capped below GitHub's 65,536
characters, and says what it cut.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pytest_toolselect.exchange.clip import clip_middle
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.gate.attribution import drift_line
from pytest_toolselect.gate.evidence import DROPPED, section
from pytest_toolselect.messages.plural import plural
from pytest_toolselect.probe.values import ProbeSummary
from pytest_toolselect.records.report_input import SuiteChange
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.terms.vocabulary import Verdict

from ..lint.document import LintView
from ..lint.render import markdown as lint_markdown
from .document import BaselineShown, DocumentCase, DocumentCost, ResultsDocument
from .notes import TOOLS_SECTION, notes, tool_changes
from .printable import printable
from .probe_report import lines
from .run_report import NOTHING, CategoryCount, expected_label
from .words import attribution_cost_line, counted, escalation_line, not_run_line, verdict_counts

#: GitHub refuses comments over 65,536 characters; leave room for a wrapper's own text
LIMIT = 60_000
#: the longest piece of run text shown in one place
TEXT_LIMIT = 300
#: an error is what blocks and is read in full: its cause is often in its last line (a server's
#: stderr), after a long command line, so a long one keeps both ends
ERROR_LIMIT = 1_200

#: what starts markup in the middle of a line of GitHub's markdown: a backslash escape, a code
#: span, emphasis, strikethrough, a link or image, a table cell. Nothing else is escaped, so the
#: comment stays readable as a file (an underscore inside a word, a dot, a bracket are left)
_PUNCT = re.compile(r"([\\`*\[\]|~])")
#: what starts a block at the start of a line: a heading, a list item, a rule or setext
#: underline (a sign before a space, the end, or the same sign again; a number before its dot)
_BLOCK_START = re.compile(r"^(([#=+-])(?=\s|$|\2)|\d+(?=[.)](?:\s|$)))")
#: a run of underscores; it opens or closes emphasis unless a letter or digit stands on both sides
_UNDERSCORES = re.compile(r"(?<![^\W_])_+|_+(?![^\W_])")
#: GitHub turns @name into a mention (a notification) and #123 into a reference on that
#: issue, even when escaped; a word joiner after the sign stops both (code spans are exempt)
_REF = re.compile(r"([@#])(?=\w)")

#: sections shown in full, in this order (each blocks the merge; drift when flagged to)
OPEN_SECTIONS = (
    (Verdict.DRIFT, "Drift", "fail with the baseline's own tools now too (not blocking unless "
     "--toolselect-fail-on-drift)"),
    (Verdict.REGRESSION, "Regressions", "held on the baseline, fail now"),
    (Verdict.FAILED, "Failing", "no baseline: ordinary test failures"),
    (Verdict.ERROR, "Errors", "not scored; their baseline entries are kept"),
)
#: sections a reviewer opens when curious
COLLAPSED_SECTIONS = (
    (Verdict.FIXED, "Fixed", "failed on the baseline, hold now"),
    (Verdict.NEW_FAILING, "New failing", "not in the baseline"),
    (Verdict.FLAKY, "Flaky", "reps disagree"),
    (DROPPED, "Dropped, not significant", "held on the baseline at times, fail every rep now; "
     "too little evidence to block"),
    (Verdict.STILL_FAILING, "Still failing", "failed on the baseline too"),
    (Verdict.SKIPPED, "Not run", "the cost cap stopped new calls"),
)


def _inert(value: Any, limit: int, *, keep_end: bool = False) -> str:
    s = " ".join(str(value).split())
    if keep_end:
        s = clip_middle(s, limit)
    elif len(s) > limit:
        s = f"{s[:limit]}… ({len(s):,} characters)"
    s = printable(s)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    s = _UNDERSCORES.sub(lambda m: m.group().replace("_", "\\_"), _PUNCT.sub(r"\\\1", s))
    # a list marker or heading sign is escaped at the line's start; a list number by its dot
    s = _BLOCK_START.sub(lambda m: m.group() + "\\" if m.group().isdigit() else "\\" + m.group(), s,
                         count=1)
    # a byte order mark that starts a document is read away by the renderer: its reference shows
    return "&#xFEFF;" + s[1:] if s.startswith("\ufeff") else s


def text(value: Any, limit: int = TEXT_LIMIT, *, keep_end: bool = False) -> str:
    """Run text as inert markdown: one line, HTML escaped, markdown punctuation escaped, no
    mention or issue reference. ``keep_end`` clips a long text in the middle rather than at the end."""
    return _inert(_REF.sub("\\1\u2060", str(value)), limit, keep_end=keep_end)


def code(value: Any, limit: int = TEXT_LIMIT) -> str:
    """Run text in a code font, as inert as :func:`text` (a code span could be closed by a backtick)."""
    return f"<code>{_inert(value, limit)}</code>"


def _call(call: Mapping[str, Any]) -> str:
    if call.get("raw_arguments") is not None:
        inner = f"<not JSON: {call['raw_arguments']!r}>"
    else:
        inner = ", ".join(f"{k}={v!r}" for k, v in (call.get("arguments") or {}).items())
    return f"{call['name']}({inner})"


def _called(rec: CaseRecord) -> list[str]:
    """The distinct first turns of the reps, with how many reps made each."""
    calls: list[Any] = rec.calls
    distinct: list[Any] = []
    for turn in calls:
        if turn not in distinct:
            distinct.append(turn)
    out = []
    for turn in distinct:
        shown = code("; ".join(_call(c) for c in turn)) if turn else text(NOTHING)
        if len(calls) > 1:
            shown += f" (×{calls.count(turn)} of {len(calls)} reps)"
        out.append(shown)
    return out


def _case_block(case: DocumentCase) -> list[str]:
    """One case in full."""
    rec = case.record
    tag = f" \\[{text(rec.category)}\\]" if rec.category else ""
    out = [f"**{code(rec.nodeid)}**{tag}", "", f"- question: {text(rec.question)}"]
    # a case past the first call: the calls and results it was given, a clipped line each
    out.extend(f"- given: {text(line)}" for line in rec.context)
    expect = rec.expect_tool
    out.append(f"- expected: {code(expected_label(expect, rec.allow_no_tool))}"
               if expect is not None else "- expected: any tool")
    if rec.error:
        out.append(f"- error: {text(rec.error, ERROR_LIMIT, keep_end=True)}")
    out.extend(f"- called: {c}" for c in _called(rec))
    for name, detail in rec.failing_detail.items():
        out.append(f"- failing: {code(name)}: {text(detail)}")
    if rec.status is not None and rec.reps > 1:
        out.append(f"- passes: {rec.passes}/{rec.reps} reps" + _baseline_passes(case.baseline))
    if rec.why:
        out.append(f"- why: {text(rec.why)}")
    for note, details in notes(rec):
        out.append(f"- note: {text(note)}")
        out.extend(f"  - {text(line)}" for line in details)
    return [*out, ""]


def _baseline_passes(base: BaselineShown | None) -> str:
    if base is None or base.reps is None:
        return ""
    return f" (baseline {base.passes}/{base.reps})"


def _flaky_block(rec: CaseRecord) -> list[str]:
    chosen = Counter(t if t is not None else NOTHING for t in rec.first_tools)
    firsts = ", ".join(f"{code(t)} ×{n}" for t, n in _by_count(chosen))
    return [f"- {code(rec.nodeid)}: {rec.passes}/{rec.reps} reps held; first tools: {firsts}"]


def _pct(held: int, scored: int) -> str:
    return f"{held}/{scored} ({held / scored:.0%})" if scored else "–"


def _category_table(categories: Mapping[str, CategoryCount]) -> list[str]:
    out = ["| category | held now | baseline | change |", "|---|---:|---:|---:|"]
    for cat, row in categories.items():
        now, base = row.scored, row.baseline_scored
        change = "–"
        if now and base:
            # rounded first: a change under half a point is +0, never -0
            change = f"{round((row.held / now - row.baseline_held / base) * 100):+d} pts"
        out.append(f"| {text(cat)} | {_pct(row.held, now)} | {_pct(row.baseline_held, base)} "
                   f"| {change} |")
    return [*out, ""]


def _money(x: float) -> str:
    return f"${x:.2f}" if x >= 0.1 else f"${x:.4f}"


def _cost(cost: DocumentCost) -> list[str]:
    models = {m: r for m, r in cost.by_model.items() if r.paid}
    if not models and not cost.probe_usd:
        return []
    cap = f" of a ${cost.cap_usd:g} cap" if cost.cap_usd is not None else ""
    out = ["### Cost", "", f"{_money(cost.total_usd)}{cap}" + (
        " (the cap stopped the run)" if cost.capped else ""), ""]
    for model, r in models.items():
        usage = r.usage
        line = (f"- {code(model)}: {_money(r.priced_usd)} over {plural(r.calls, 'call')}, "
                f"{usage.get('input_tokens', 0):,} tokens in, {usage.get('output_tokens', 0):,} out")
        saved = cost.cache_savings_usd.get(model)
        if saved:
            line += f", prompt-cache reads saved {_money(saved)}"
        if r.unpriced_calls:
            line += f"; {plural(r.unpriced_calls, 'call')} with no known price, not in the total"
        out.append(line)
    if cost.attribution:
        out.append(f"- {text(attribution_cost_line(cost.attribution))}")
    if cost.probe_usd:
        out.append(f"- preference probe: {_money(cost.probe_usd)}")
    return [*out, ""]


def _fence(lines: Sequence[str]) -> list[str]:
    """A fenced block that no line inside can close: the fence is longer than any run of backticks."""
    longest = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *lines, fence]


def _probe(preference: Mapping[str, Any]) -> list[str]:
    summary = ProbeSummary.from_json(preference["summary"])
    # the probe's lines are data the run produced: cut long ones, keep them in a fence
    shown = [line if len(line) <= TEXT_LIMIT else line[:TEXT_LIMIT] + "…" for line in lines(summary)]
    # one line each (a group id could hold a line break), and no reordering control
    shown = [printable(" ".join(line.splitlines())) for line in shown]
    return ["<details><summary>Preference probe</summary>", "", *_fence(shown), "", "</details>", ""]


def _head(doc: ResultsDocument) -> list[str]:
    verdict = doc.verdict
    summary = doc.summary
    if verdict.blocking:
        out = ["## ❌ toolselect: blocking", "", "Blocks the merge: " + "; ".join(
            text(r, 500) for r in verdict.reasons) + "."]
    else:
        out = ["## ✅ toolselect: not blocking", "",
               "Nothing that held on the baseline fails now." if doc.baseline.mode == "compared"
               else "No case fails."]
    drifted = summary.verdicts.get(Verdict.DRIFT)
    if drifted:
        out += ["", f"**{text(drift_line(drifted), 500)}**"]
    if verdict.missing_shards:
        # toolselect merge --partial: this is not the whole suite's verdict
        out += ["", f"Partial: shard {', '.join(code(m) for m in verdict.missing_shards)} "
                "not merged; this verdict is of the other shards' cases only."]
    model = doc.subject.model or "?"
    bits = [f"model {code(model)}", f"reps {doc.settings['reps']}"]
    base = doc.baseline
    if base.path:
        bits.append(f"baseline {base.mode or 'none'}")
    git = doc.provenance.get("git")
    if git:
        bits.append(f"commit {code(git['commit'][:12])}" + (" (uncommitted changes)" if git["dirty"] else ""))
    out += ["", " · ".join(bits), ""]
    counts = verdict_counts(dict(summary.verdicts))
    if summary.total:
        out.append(f"{counted(summary.total, 'case')}: {counts}")
    if summary.suite:
        out.append("")
        out.append(text(gate.suite_line(SuiteChange.from_json(summary.suite)), 500))
    if summary.escalations:
        out.append("")
        out.append(text(escalation_line(summary.escalations), 500))
    narrowed = not_run_line(summary.not_run_in_this_run)
    if narrowed:
        out += ["", text(narrowed, 1000)]
    return [*out, ""]


class _Budget:
    """Adds blocks while they fit under the limit; counts what it had to leave out."""

    def __init__(self, limit: int, reserve: int) -> None:
        self.left = limit - reserve
        self.lines: list[str] = []
        self.cut: dict[str, int] = {}

    def add(self, block: Sequence[str], what: str | None = None, then: int = 0) -> bool:
        """Add a block if it fits with ``then`` characters left for what must follow it."""
        size = sum(len(line) + 1 for line in block) + then
        if size > self.left:
            if what is not None:
                self.cut[what] = self.cut.get(what, 0) + 1
            return False
        self.lines.extend(block)
        self.left -= size
        return True


def _sections(doc: ResultsDocument) -> Iterator[tuple[str, list[list[str]], bool, str]]:
    """(title, item blocks, collapsed, what an item is) for each non-empty section."""
    records = doc.records
    by_verdict: dict[str, list[DocumentCase]] = {}
    for case in doc.shown_cases:
        by_verdict.setdefault(section(case.record), []).append(case)
    for verdict, title, sub in OPEN_SECTIONS:
        cases = by_verdict.get(verdict, [])
        if cases and verdict == Verdict.REGRESSION and doc.settings.get("update_baseline"):
            title, sub = "Regressions accepted", "held on the baseline, fail now; the update records them"
        if cases:
            yield (f"{title} ({len(cases)}): {sub}", [_case_block(c) for c in cases], False,
                   title.lower())
    changes = tool_changes(records)
    if changes:
        n = len(changes)
        yield (f"{TOOLS_SECTION.capitalize()} ({n}): each change once", [
            [f"- {text(c['line'])} ({counted(len(c['cases']), 'case')})"]
            for c in changes], False, "tool changes")
    # a collapsed section is a verdict's, or DROPPED's (gate.evidence.section)
    for shown, title, sub in COLLAPSED_SECTIONS:
        cases = by_verdict.get(shown, [])
        if not cases:
            continue
        if shown == Verdict.FLAKY:
            blocks = [_flaky_block(c.record) for c in cases]
        elif shown == Verdict.SKIPPED:
            blocks = [[f"- {code(c.record.nodeid)}"] for c in cases]
        else:
            blocks = [_case_block(c) for c in cases]
        yield f"{title} ({len(cases)}): {sub}", blocks, True, title.lower()
    disagreements = doc.summary.intent_disagreements
    if disagreements:
        blocks = [[f"- {text(intent)}: " + ", ".join(f"{code(t)} ×{n}" for t, n in _by_count(chosen))]
                  for intent, chosen in disagreements.items()]
        yield (f"Intent disagreements ({len(blocks)}): phrasings or reps of one intent chose "
               "different first tools", blocks, True, "intent disagreements")
    gone = doc.baseline.gone
    if gone:
        yield (f"No longer cases ({len(gone)}): in the baseline, dropped from it",
               [[f"- {code(n)}"] for n in gone], True, "gone cases")


def _by_count(chosen: Mapping[str, int]) -> list[tuple[str, int]]:
    """Most chosen first, ties by name (the same bytes every time)."""
    return sorted(chosen.items(), key=lambda p: (-p[1], p[0]))


def render(doc: ResultsDocument, limit: int = LIMIT) -> str:
    """The comment for a results document, at most ``limit`` characters."""
    closing = ["", "</details>", ""]
    version = doc.provenance.get("plugin_version") or "?"
    footer = f"<sub>pytest-toolselect {text(version, 60)}</sub>"
    budget = _Budget(limit, reserve=400 + len(footer))  # room for the cut line and the footer
    budget.add(_head(doc))
    for title, blocks, collapsed, what in _sections(doc):
        head = ([f"<details><summary>{title}</summary>", ""] if collapsed else [f"### {title}", ""])
        # a collapsed section pays for its closing tag up front: it is always closed
        if not budget.add(head, then=sum(len(line) + 1 for line in closing) if collapsed else 0):
            budget.cut[what] = len(blocks)
            continue
        shown = 0
        for block in blocks:
            if not budget.add(block):
                break
            shown += 1
        if shown < len(blocks):
            budget.cut[what] = len(blocks) - shown
        if collapsed:
            budget.lines.extend(closing)
    if doc.summary.categories:
        budget.add(["### By category", "", *_category_table(doc.summary.categories)], "categories")
    if doc.preference:
        budget.add(_probe(doc.preference), "preference probe")
    if doc.lint:
        budget.add(lint_markdown(LintView.read(doc.lint), heading="###").splitlines(), "lint")
    budget.add(_cost(doc.cost), "cost")
    if budget.cut:
        cut = ", ".join(f"{n} {what}" for what, n in budget.cut.items())
        budget.lines += [f"*Cut to stay under {limit:,} characters: {cut}. "
                         "The JSON and HTML reports hold everything.*", ""]
    budget.lines.append(footer)
    return "\n".join(budget.lines) + "\n"
