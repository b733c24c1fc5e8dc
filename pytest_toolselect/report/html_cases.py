"""The HTML report's cases card: one row per case, worst first, and the filter's index."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolselect.exchange.clip import clip_middle
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.messages.plural import plural
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.terms.vocabulary import Verdict

from .charts import esc as _e
from .charts import short
from .document import DocumentCase
from .html_base import (
    _NONE,
    _OUTCOMES,
    CALL_CLIP,
    CLIP,
    ERROR_CLIP,
    INDEX_CLIP,
    _chip,
    _clip,
    script_json,
)
from .html_tools import clipped_diff_html
from .notes import note_lines, tool_changes
from .run_report import NOTHING, expected_label


def _rep_calls(rep: Sequence[Mapping[str, Any]]) -> list[str]:
    shown = []
    for call in rep:
        args = call.get("arguments")
        if args is None and call.get("raw_arguments") is not None:
            text = str(call["raw_arguments"])
        elif not args:
            text = ""
        else:
            text = json.dumps(args, ensure_ascii=False, sort_keys=True)
        shown.append(f"{call.get('name', '?')}({text})")
    return shown


def _distinct_reps(calls: Sequence[Sequence[Mapping[str, Any]]]) -> list[tuple[list[str], int]]:
    """Each distinct first turn (its calls with their arguments) with how many reps made it."""
    counts = Counter(tuple(_rep_calls(rep)) for rep in calls)
    # most frequent first, then in the order the reps made them
    order = {key: i for i, key in reversed(list(enumerate(tuple(_rep_calls(rep)) for rep in calls)))}
    return [(list(key), n) for key, n in sorted(counts.items(), key=lambda p: (-p[1], order[p[0]]))]


def _said(rec: CaseRecord) -> str:
    """What the model wrote (each distinct text once, clipped and masked in the record), and
    the reps cut at max_tokens before any tool call."""
    texts = [str(t) for t in rec.texts]
    counts = Counter(t for t in texts if t)
    parts = [f'<span class="said">said: <q>{_e(_clip(text))}</q>'
             + (f'<span class="times">×{n}</span>' if len(texts) > 1 else "") + "</span>"
             for text, n in counts.items()]
    cut = int(rec.inconclusive or 0)
    if cut:
        parts.append(f'<span class="sub">{cut} cut at max_tokens before any tool call '
                     "(inconclusive, billed)</span>")
    return "".join(parts)


def _called_cell(rec: CaseRecord) -> str:
    calls = list(rec.calls)
    if not calls:
        return (f'<span class="none">{"not run" if rec.status is None else "no rep"}</span>'
                + _said(rec))
    parts = []
    for turn, n in _distinct_reps(calls):
        times = f'<span class="times">×{n}</span>' if len(calls) > 1 else ""
        if not turn:
            parts.append(f'<span class="call none">no tool called{times}</span>')
            continue
        shown = "<br>".join(f"<code>{_e(_clip(c, CALL_CLIP))}</code>" for c in turn)
        parts.append(f'<span class="call">{shown}{times}</span>')
    return "".join(parts) + _said(rec)


def _failing_cell(rec: CaseRecord) -> str:
    parts = []
    if rec.error:
        error = clip_middle(str(rec.error), ERROR_CLIP)
        parts.append(f'<span class="fail err"><b>error</b>: {_e(error)}</span>')
    detail = rec.failing_detail
    for name in rec.failing_checks:
        text = detail.get(name)
        parts.append(f'<span class="fail"><b>{_e(name)}</b>' + (f": {_e(_clip(str(text)))}" if text else "")
                     + "</span>")
    return "".join(parts) or '<span class="none">none</span>'


def _expected_text(rec: CaseRecord) -> str:
    expect = rec.expect_tool
    if expect is None:
        return "(any tool)"
    return expected_label(expect, bool(rec.allow_no_tool))


def _verdict_cell(case: DocumentCase) -> str:
    rec = case.record
    v = str(rec.verdict)
    lines = [_chip(v.replace("_", " "), v)]
    outcome = str(case.outcome if case.outcome is not None else "?")
    if rec.reps:
        outcome += f", {int(rec.passes or 0)}/{int(rec.reps)} passed"
    lines.append(f'<span class="sub">{_e(outcome)}</span>')
    base = case.baseline
    if base is not None and base.status:
        lines.append(f'<span class="sub">baseline {_e(base.status)}</span>')
    # a case that holds is not explained by what changed: the tools card names each change
    # once with its cases, so a held row does not say it again
    changes = v != Verdict.HELD
    lines += [f'<span class="tag">{t}</span>' for t, on in (("tools changed", rec.tools_changed),
                                                         ("case changed", rec.case_changed))
              if on and changes]
    # a note may hold a word diff (the attribution's cause): marked as the tools card marks it
    lines += [f'<span class="sub">{clipped_diff_html(text, CLIP)}</span>'
              for text in note_lines(rec, changes=changes)]
    return "".join(f'<span class="line">{x}</span>' for x in lines)


def _node_lines(rec: CaseRecord) -> str:
    nodeid = _clip(str(rec.nodeid))
    # the file part and the case part on their own lines: a long path never hides the case name
    head, sep, tail = nodeid.rpartition("::")
    return (f'<span class="line nodefile mono">{_e(head + sep)}</span>' if sep else "") + (
        f'<span class="line nodecase mono">{_e(tail)}</span>')


def _case_cell(rec: CaseRecord) -> str:
    out = _node_lines(rec)
    out += f'<span class="line question">{_e(_clip(str(rec.question)))}</span>'
    if rec.context and (rec.failing_checks or rec.error):
        # a case past the first call fails on what it was given: show it (clipped lines)
        out += "".join(f'<span class="line context sub">given: {_e(_clip(line))}</span>'
                       for line in rec.context)
    why = rec.why
    if why:
        out += f'<span class="line why">why: {_e(_clip(str(why)))}</span>'
    return out


def _case_row(i: int, case: DocumentCase) -> str:
    rec = case.record
    category = rec.category
    verdict = rec.verdict
    mark = " severe" if verdict in _SEVERE else (" warn" if verdict in _WARN else "")
    return (f'<tr class="case{mark}" data-i="{i}">'
            f'<td>{_case_cell(rec)}</td>'
            f"<td>{_e(_clip(str(category))) if category else _NONE}</td>"
            f"<td>{_verdict_cell(case)}</td>"
            f'<td><code>{_e(_clip(_expected_text(rec)))}</code></td>'
            f"<td>{_called_cell(rec)}</td>"
            f"<td>{_failing_cell(rec)}</td>"
            "</tr>")


#: held cases a page shows in full; past this many, each is one compact row, folded (a run
#: of 20,000 cases is mostly these, and the page shows what needs a look in full)
FOLD_AT = 100


def folded(case: DocumentCase) -> bool:
    """A case that held and that nothing changed under: one compact row in a large run."""
    rec = case.record
    return (rec.verdict in _FOLDED and not rec.tools_changed and not rec.case_changed
            and not rec.error and not rec.failing_checks and not note_lines(rec, changes=False))


def _folded_row(i: int, case: DocumentCase) -> str:
    """A held case's compact row: what it is, what it expected and what was called first;
    hidden until asked for or matched by a filter (the filter's index holds all its text)."""
    rec = case.record
    turns = [turn for turn, _ in _distinct_reps(list(rec.calls))]
    called = "<br>".join(f"<code>{_e(_clip(c, CALL_CLIP))}</code>" for turn in turns for c in turn)
    return (f'<tr class="case held" data-i="{i}" hidden>'
            f'<td>{_node_lines(rec)}<span class="line question">{_e(_clip(str(rec.question)))}'
            "</span></td>"
            f"<td>{_e(_clip(str(rec.category))) if rec.category else ''}</td>"
            f"<td>{_chip(str(rec.verdict), str(rec.verdict))}</td>"
            f"<td><code>{_e(_clip(_expected_text(rec)))}</code></td>"
            f"<td>{called or _NONE}</td><td></td></tr>")


def _options(values: Iterable[str], every: str) -> str:
    return f'<option value="">{_e(every)}</option>' + "".join(
        f'<option value="{_e(v)}">{_e(short(v, 40))}</option>' for v in values)


def _cases_card(page: PageCases) -> Iterator[str]:
    facts = page.facts
    yield '<section class="card" id="cases-card">'
    yield "<h2>Cases</h2>"
    yield ('<p class="sub">The most serious verdict first. A red edge marks a case that blocks, an amber '
           "one a failure that does not block by default.</p>")
    verdicts = sorted({f.verdict for f in facts},
                      key=lambda v: (gate.VERDICT_ORDER.index(v) if v in gate.VERDICT_ORDER else 99, v))
    outcomes = sorted({f.outcome for f in facts},
                      key=lambda o: (_OUTCOMES.index(o) if o in _OUTCOMES else 99, o))
    categories = sorted({f.category for f in facts})
    # the filters exist even with no case, so the script finds every element it wires up
    yield ('<div class="filters">'
           '<input id="f-text" type="search" placeholder="Filter: case id, question, tool, argument…" '
           'aria-label="filter cases by text" autocomplete="off">'
           f'<select id="f-verdict" aria-label="verdict">{_options(verdicts, "every verdict")}</select>'
           f'<select id="f-outcome" aria-label="pytest outcome">'
           f'{_options(outcomes, "every outcome")}</select>'
           f'<select id="f-category" aria-label="category">{_options(categories, "every category")}</select>'
           '<span class="pairing" id="f-pair" hidden><span id="f-pair-text"></span> '
           '<button type="button" id="f-pair-clear">clear</button></span>'
           f'<span class="sub" id="f-count">{plural(len(facts), "case")}</span>'
           "</div>")
    held = sum(1 for f in facts if f.folded) if page.fold else 0
    if held:
        yield (f'<p class="sub" id="held-note"><label><input type="checkbox" id="f-held"> show the '
               f'{plural(held, "held case")}</label> (folded: they held and nothing changed under '
               "them; a filter finds them too)</p>")
    if not facts:
        yield '<p class="note" id="no-cases">No selection case ran in this run.</p>'
    yield ('<div class="chart"><table id="cases"><colgroup><col class="c-case"><col class="c-cat">'
           '<col class="c-verdict"><col class="c-exp"><col class="c-called"><col class="c-fail"></colgroup>'
           "<thead><tr><th>case: question, why</th><th>category</th><th>verdict</th><th>expected</th>"
           "<th>called (distinct turns)</th><th>failing checks</th></tr></thead><tbody>")
    for i, (case, fact) in enumerate(zip(page, facts, strict=True)):
        yield _folded_row(i, case) if page.fold and fact.folded else _case_row(i, case)
        # the case's entry in the filter's index, made while the case is at hand
        page.index.append(script_json(_index_entry(case, page.fold and fact.folded)))
    yield "</tbody></table></div>"
    yield "</section>"


#: verdicts that block whatever the flags, and those that are failures but not blocking by default
_SEVERE = {Verdict.REGRESSION, Verdict.FAILED, Verdict.ERROR}
_WARN = {Verdict.DRIFT, Verdict.NEW_FAILING, Verdict.STILL_FAILING, Verdict.FLAKY, Verdict.SKIPPED}
#: verdicts of a case that may be folded into a compact row
_FOLDED = {Verdict.HELD, Verdict.PASSED}


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the page's order, its filters and its fold need of a case (kept for every case)."""

    verdict: str
    outcome: str
    category: str
    folded: bool
    rank: int


class PageCases:
    """The page's cases, the most serious verdict first, in the document's order within a
    verdict, the folded ones last when the page folds them; each read from the document
    when its row and its index entry are made (a page of 20,000 cases keeps only their
    facts, the tool changes and the index's text). Two passes over the document's cases:
    the facts and the tool changes, then the rows and the index entries."""

    def __init__(self, cases: Sequence[DocumentCase]) -> None:
        rank = {v: i for i, v in enumerate(gate.VERDICT_ORDER)}
        facts: list[_Facts] = []

        def records() -> Iterator[CaseRecord]:
            for c in cases:
                rec = c.record
                facts.append(_Facts(str(rec.verdict), str(c.outcome), _category(rec), folded(c),
                                    rank.get(rec.verdict, len(rank))))
                yield rec

        #: each distinct tool change once, with its cases (the tools card)
        self.tool_changes = tool_changes(records())
        #: whether this page folds its held cases (more of them than FOLD_AT)
        self.fold = sum(1 for f in facts if f.folded) > FOLD_AT
        self._order = sorted(range(len(facts)),
                             key=lambda i: (self.fold and facts[i].folded, facts[i].rank))
        #: each case's facts, in the page's order
        self.facts = [facts[i] for i in self._order]
        self._cases = cases
        #: the filter's index, an entry (its JSON) a case, as the rows are made
        self.index: list[str] = []

    def __iter__(self) -> Iterator[DocumentCase]:
        return (self._cases[i] for i in self._order)


def _category(rec: CaseRecord) -> str:
    return str(rec.category or "(none)")


def _index_entry(case: DocumentCase, held: bool) -> dict[str, Any]:
    """What the filter matches of a case: all its text (lower case) and its confusion cells."""
    rec = case.record
    words = [str(w or "") for w in (rec.nodeid, rec.case_id, rec.category, rec.intent,
                                      rec.question, rec.why, rec.error, rec.verdict,
                                      case.outcome)]
    words.append(_expected_text(rec))
    words += [c for rep in rec.calls for c in _rep_calls(rep)]
    words += [str(t) for t in rec.texts]
    words += [f"{k}: {v}" for k, v in rec.failing_detail.items()]
    text = "\n".join(w for w in words if w).lower()
    pairs: list[str] = []
    if rec.expect_tool is not None and rec.status is not None:
        want = _expected_text(rec)
        for first in rec.first_tools:
            key = f"{want}\u0000{first if first is not None else NOTHING}"
            if key not in pairs:
                pairs.append(key)
    return {"text": text[:INDEX_CLIP], "verdict": str(rec.verdict), "outcome": str(case.outcome),
            "category": _category(rec), "pairs": pairs, "held": held}
