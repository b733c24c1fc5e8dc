"""The HTML report: one self-contained page for looking at a run (data in, text out).

Rendered from the ``tool_selection.v1`` document alone. Everything is inline (CSS, one
script, the SVG charts of :mod:`.charts`): the page loads nothing, and its
Content-Security-Policy forbids it to, so it can be attached to a CI run and opened
anywhere.

Every string from the document (tool names, questions, model-produced arguments, check
details, errors) is untrusted: it is escaped where it is written into markup, and the
filter's index is JSON with ``<``, ``>``, ``&`` and the JavaScript line separators
escaped, so no value can close the script tag. The script only reads strings and sets
``hidden`` and ``textContent``. Same document, same bytes.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.messages.plural import plural

from .charts import categories_svg, confusion_svg, forest_svg, pct
from .charts import esc as _e
from .document import DocumentCost, DocumentSummary, ResultsDocument
from .html_base import _NONE, _VERDICT_COLOURS, _chip, _clip, _money
from .html_base import script_json as script_json  # the page's escaping, read where it is drawn
from .html_cases import PageCases, _cases_card
from .html_tools import tools_card
from .lint_heatmap import lint_card
from .words import escalation_line, not_run_line

# -- page ------------------------------------------------------------------------------------

_CSS = """
:root{--ink:#1f2933;--muted:#5f6b7a;--line:#e3e6ea;--bg:#f5f6f8;--card:#fff}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",
Roboto,"DejaVu Sans",sans-serif}
main{max-width:1280px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:20px;margin:0}
h2{font-size:16px;margin:0 0 4px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin:0 0 16px}
.sub,.note{color:var(--muted);font-size:13px}
.note{margin:6px 0 0}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px}
.banner{display:flex;align-items:center;gap:14px;flex-wrap:wrap;margin:0 0 10px}
.badge{display:inline-block;padding:4px 12px;border-radius:999px;color:#fff;font-weight:700;font-size:13px;
letter-spacing:.03em}
.blocking{background:#b91c1c}.clear{background:#15803d}
ul.reasons{margin:6px 0 0;padding-left:20px;color:#b91c1c;font-weight:600}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;margin:12px 0 0;font-size:13px}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
.chips{display:flex;flex-wrap:wrap;gap:6px;margin:10px 0 0}
.chip{display:inline-block;padding:1px 8px;border-radius:999px;color:#fff;font-size:12px;font-weight:600;
white-space:nowrap}
.tag{display:inline-block;padding:0 6px;border-radius:4px;background:#eef0f3;color:var(--muted);
font-size:11px}
.grid{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:16px;margin:0 0 16px;
align-items:start}
@media (max-width:1000px){.grid{grid-template-columns:1fr}}
.grid .card{margin:0}
.chart{overflow-x:auto;margin-top:8px}
svg{display:block;max-width:100%;height:auto}
svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;font-size:12px;
fill:#1f2933}
svg text.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:11px}
svg text.muted{fill:#5f6b7a}
svg .cm-cell{cursor:pointer}
svg .cm-cell:hover rect,svg .cm-cell:focus rect{stroke:#111827;stroke-width:2}
.legend{display:flex;flex-wrap:wrap;gap:14px;font-size:12px;color:var(--muted);margin-top:6px}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.sw-ok{background:#3f9a67}.sw-bad{background:#d9692e}.sw-now{background:#2563eb}.sw-base{background:#a3aab5}
.sw-acc{border:1.5px dashed #167a45;background:#fff}
.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:10px 0}
.filters input,.filters select,.filters button{font:inherit;font-size:13px;padding:5px 8px;
border:1px solid #c8cdd3;border-radius:6px;background:#fff}
.filters input{min-width:340px}
.pairing{font-size:13px;color:var(--ink);background:#fff7ed;border:1px solid #fed7aa;border-radius:6px;
padding:3px 8px}
table{border-collapse:collapse;width:100%;font-size:13px;table-layout:fixed}
col.c-case{width:29%}col.c-cat{width:8%}col.c-verdict{width:16%}col.c-exp{width:11%}
col.c-called{width:15%}col.c-fail{width:21%}
th{background:#f0f2f5;text-align:left;font-weight:600;padding:6px 8px;border-bottom:1px solid var(--line)}
td{padding:7px 8px;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
tr.case:hover td{background:#fafbfc}
tr.case td:first-child{border-left:3px solid transparent}
tr.severe td:first-child{border-left-color:#b91c1c}tr.warn td:first-child{border-left-color:#e0a13a}
.line{display:block}
.nodefile{color:var(--muted);font-size:11px}
.nodecase{font-weight:700}
.question{margin-top:2px}
.why{color:var(--muted);font-size:12px;margin-top:2px}
.call{display:block;margin:0 0 3px}
.said{display:block;margin:0 0 3px;color:var(--muted)}
.times{color:var(--muted);font-size:11px;margin-left:4px;white-space:nowrap}
.fail{display:block;margin:0 0 3px}
.fail b{color:#b91c1c;font-weight:600}
.err{color:#7e22ce}
.none{color:var(--muted);font-style:italic}
.v-other{background:#6b7280}
del{background:#fde2e2;color:#8a1c1c}ins{background:#dcfce7;color:#14532d;text-decoration:none}
ul.tool-changes{margin:6px 0 0;padding-left:18px}li.tool-change{margin:0 0 8px}
.diff{font-size:13px;margin-top:2px;overflow-wrap:anywhere}
details>summary{cursor:pointer;color:var(--muted);font-size:13px;margin:6px 0}
""" + "".join(f".v-{v}{{background:{c}}}" for v, c in _VERDICT_COLOURS.items()) + "\n"

_SCRIPT = """
(function () {
  "use strict";
  var index = JSON.parse(document.getElementById("ts-index").textContent);
  var rows = document.querySelectorAll("#cases tbody tr.case");
  var text = document.getElementById("f-text");
  var verdict = document.getElementById("f-verdict");
  var outcome = document.getElementById("f-outcome");
  var category = document.getElementById("f-category");
  var count = document.getElementById("f-count");
  var pairing = document.getElementById("f-pair");
  var pairText = document.getElementById("f-pair-text");
  var held = document.getElementById("f-held");
  var pair = null;
  function apply() {
    var words = text.value.toLowerCase().split(/\\s+/).filter(function (w) { return w; });
    // a folded (held) case shows when asked for, or when any filter is set
    var unfold = (held !== null && held.checked) || words.length > 0 || !!verdict.value ||
      !!outcome.value || !!category.value || pair !== null;
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = index[i];
      var ok = (unfold || !row.held) && words.every(function (w) { return row.text.indexOf(w) !== -1; }) &&
        (!verdict.value || row.verdict === verdict.value) &&
        (!outcome.value || row.outcome === outcome.value) &&
        (!category.value || row.category === category.value) &&
        (pair === null || row.pairs.indexOf(pair) !== -1);
      rows[i].hidden = !ok;
      if (ok) { shown++; }
    }
    count.textContent = shown + " of " + rows.length + " cases";
  }
  function choosePair(cell) {
    var expected = cell.getAttribute("data-expected"), chosen = cell.getAttribute("data-chosen");
    pair = expected + "\\u0000" + chosen;
    pairText.textContent = "expected " + expected + ", chose " + chosen;
    pairing.hidden = false;
    apply();
    document.getElementById("cases-card").scrollIntoView();
  }
  [text, verdict, outcome, category].concat(held === null ? [] : [held]).forEach(function (el) {
    el.addEventListener("input", apply);
    el.addEventListener("change", apply);
  });
  document.getElementById("f-pair-clear").addEventListener("click", function () {
    pair = null;
    pairing.hidden = true;
    apply();
  });
  document.querySelectorAll("svg .cm-cell").forEach(function (cell) {
    cell.addEventListener("click", function () { choosePair(cell); });
    cell.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); choosePair(cell); }
    });
  });
  apply();
})();
"""


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


#: nothing may be fetched; only this page's own style and script run (by hash, not by
#: 'unsafe-inline', so markup that slipped through escaping still could not run a script)
CSP = (f"default-src 'none'; script-src '{_sha256(_SCRIPT)}'; style-src '{_sha256(_CSS)}'; "
       "img-src data:; base-uri 'none'; form-action 'none'")


def render(document: ResultsDocument) -> str:
    """The page for one results document."""
    return "".join(pieces(document))


def pieces(document: ResultsDocument) -> Iterator[str]:
    """The page in pieces, as render() joins them (a large run's page is written as it comes)."""
    page = PageCases(document.shown_cases)
    subject = document.subject
    blocking = document.verdict.blocking
    title = f"toolselect: {subject.model or 'run'} ({'blocking' if blocking else 'not blocking'})"
    parts: list[str | Iterable[str]] = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(CSP)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        '<link rel="icon" href="data:,">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<main>",
        _header(document),
        # the verdict's evidence first: what changed, then the cases, blocking ones on top
        tools_card(page.tool_changes),
        _cases_card(page),
        '<div class="grid">',
        _confusion_card(document.summary),
        _categories_card(document.summary),
        "</div>",
        _preference_card(document.preference),
        _lint_card(document.lint),
        "</main>",
    ]
    # each part is a line, or the lines of a section made as it is written
    for part in parts:
        for line in ((part,) if isinstance(part, str) else part):
            yield line + "\n"
    # the filter's index, made with the rows (a compact JSON array is its items joined by
    # commas: the same text as the whole list's script_json)
    yield '<script type="application/json" id="ts-index">['
    yield ",".join(page.index)
    page.index.clear()
    yield "]</script>\n"
    for line in (f"<script>{_SCRIPT}</script>", "</body>", "</html>"):
        yield line + "\n"


# -- header ----------------------------------------------------------------------------------


def _header(doc: ResultsDocument) -> Iterator[str]:
    verdict = doc.verdict
    summary = doc.summary
    blocking = verdict.blocking
    yield '<header class="card" id="summary">'
    yield '<div class="banner">'
    yield "<h1>Tool selection report</h1>"
    yield (f'<span class="badge {"blocking" if blocking else "clear"}" id="verdict">'
           f'{"BLOCKING" if blocking else "NOT BLOCKING"}</span>')
    yield f'<span class="sub">{_e(_counts_line(summary))}</span>'
    yield "</div>"
    reasons = list(verdict.reasons)
    if reasons:
        yield '<ul class="reasons">' + "".join(f"<li>{_e(_clip(str(r)))}</li>" for r in reasons) + "</ul>"
    else:
        yield '<p class="note">No regression, error or other blocking finding.</p>'
    verdicts = summary.verdicts
    ordered = [v for v in gate.VERDICT_ORDER if verdicts.get(v)] + sorted(
        v for v in verdicts if v not in gate.VERDICT_ORDER and verdicts.get(v))
    if ordered:
        yield '<div class="chips" id="verdict-counts">' + "".join(
            _chip(f"{verdicts[v]} {v.replace('_', ' ')}", v)
            for v in ordered) + "</div>"
    yield '<dl class="facts">'
    for label, value in _facts(doc, doc.subject, doc.provenance):
        yield f"<dt>{_e(label)}</dt><dd>{value}</dd>"
    yield "</dl>"
    yield "</header>"


def _counts_line(summary: DocumentSummary) -> str:
    total = int(summary.total or 0)
    suite = summary.suite or {}
    line = plural(total, "selection case")
    if suite.get("cases"):
        line += f", {suite.get('held_now', 0)} held ({_rate(suite.get('rate_now'))})"
    return line


def _rate(x: Any) -> str:
    return "n/a" if x is None else f"{100 * float(x):.1f}%"


def _facts(doc: ResultsDocument, subject: Subject,
           prov: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    model = subject.model
    # the run's own name for its route (the terminal's); subject.provider is a baseline's key
    route = doc.settings.get("route")
    shown = f"<code>{_e(_clip(str(model)))}</code>" if model else _NONE
    yield "model", shown + (f' <span class="sub">via {_e(route)}</span>' if route else "")
    git = prov.get("git")
    if git:
        commit = str(git.get("commit", ""))
        dirty = ' <span class="tag">uncommitted changes</span>' if git.get("dirty") else ""
        yield "commit", f'<code title="{_e(commit)}">{_e(commit[:10])}</code>{dirty}'
    else:
        yield "commit", '<span class="none">not a git repository</span>'
    yield "created", _e(prov.get("created", "n/a"))
    versions = [f"pytest-toolselect {prov.get('plugin_version') or '?'}"]
    if prov.get("pytest_version"):
        versions.append(f"pytest {prov['pytest_version']}")
    if prov.get("python_version"):
        versions.append(f"Python {prov['python_version']}")
    yield "versions", _e(", ".join(versions))
    settings = doc.settings
    yield "settings", _e(f"{settings.get('reps', '?')} rep(s) per case, "
                         f"gate rule {settings.get('rule', '?')}")
    base = doc.baseline
    if base.path:
        what = f"{base.mode or 'read'}{', written' if base.written else ''}"
        yield "baseline", f"<code>{_e(_clip(str(base.path)))}</code> ({_e(what)})"
    else:
        yield "baseline", '<span class="none">none (cases are plain tests)</span>'
    gone = list(base.gone)
    if gone:
        yield "gone", (_e(_clip(", ".join(map(str, gone))))
                       + ' <span class="sub">(on the baseline, no longer cases)</span>')
    suite = doc.summary.suite or {}
    if suite.get("cases") and suite.get("rate_baseline") is not None:
        yield "suite", _e(_suite_line(suite))
    escalations = doc.summary.escalations
    if escalations:
        yield "adaptive reps", _e(escalation_line(escalations))
    narrowed = not_run_line(doc.summary.not_run_in_this_run)
    if narrowed:
        yield "not run", _e(_clip(narrowed))
    yield "cost", _e(_cost_line(doc.cost))


def _suite_line(suite: Mapping[str, Any]) -> str:
    change, low, high = suite.get("change"), suite.get("low"), suite.get("high")
    line = f"{_rate(suite.get('rate_now'))} held now, {_rate(suite.get('rate_baseline'))} on the baseline"
    if change is not None and low is not None and high is not None:
        level = suite.get("level")
        level_text = f"{100 * float(level):.0f}% CI " if level is not None else "CI "
        line += (f"; change {100 * change:+.1f} pts ({level_text}{100 * low:+.1f} to {100 * high:+.1f})")
    if suite.get("dropped"):
        line += "; the pass rate fell"
    return line


def _cost_line(cost: DocumentCost) -> str:
    line = f"{_money(cost.total_usd)} in total"
    if cost.probe_usd:
        line += f" ({_money(cost.cases_usd)} cases, {_money(cost.probe_usd)} preference probe)"
    models = cost.by_model
    if models:
        line += "; " + ", ".join(
            f"{m}: {plural(r.calls, 'call')}"
            + (f", {r.unpriced_calls} unpriced" if r.unpriced_calls else "")
            for m, r in models.items())
    saved = sum(float(v) for v in cost.cache_savings_usd.values())
    if saved:
        line += f"; {_money(saved)} saved by the response cache"
    if cost.cap_usd is not None:
        line += f"; cap {_money(cost.cap_usd)}"
    if cost.capped:
        line += " (reached: some calls were not made)"
    return line


# -- confusion matrix ------------------------------------------------------------------------


def _confusion_card(summary: DocumentSummary) -> Iterator[str]:
    cells = list(summary.confusion)
    yield '<section class="card" id="confusion-card">'
    yield "<h2>Expected tool vs chosen tool</h2>"
    if not cells:
        yield '<p class="note">No selection case was scored, so there is no matrix.</p>'
        yield "</section>"
        return
    total = sum(int(c.count) for c in cells)
    wrong = sum(int(c.count) for c in cells if not c.correct)
    yield (f'<p class="sub">First tool called, one count per rep: {plural(total, "rep")}, {wrong} off target '
           f"({pct(wrong, total)}). Rows: acceptable first tools; columns: what was called. "
           "Click a cell to list its cases.</p>")
    yield '<div class="chart">' + confusion_svg(cells) + "</div>"
    yield ('<div class="legend"><span><i class="sw sw-ok"></i>acceptable choice</span>'
           '<span><i class="sw sw-bad"></i>off target</span>'
           '<span><i class="sw sw-acc"></i>acceptable, never chosen</span>'
           "<span>darker = more reps</span></div>")
    disagree = summary.intent_disagreements
    if disagree:
        items = "".join(
            f"<li><b>{_e(_clip(str(intent)))}</b>: "
            + ", ".join(f"<code>{_e(_clip(str(t)))}</code> ×{int(n)}" for t, n in tools.items()) + "</li>"
            for intent, tools in disagree.items())
        yield (f'<p class="note">Phrasings of one intent that chose different tools:</p>'
               f'<ul class="note" id="intents">{items}</ul>')
    yield "</section>"


# -- pass rate by category -------------------------------------------------------------------


def _categories_card(summary: DocumentSummary) -> Iterator[str]:
    cats = summary.categories
    yield '<section class="card" id="categories-card">'
    yield "<h2>Held by category, now vs baseline</h2>"
    if not cats:
        yield '<p class="note">No selection case ran, so there are no categories.</p>'
        yield "</section>"
        return
    yield '<p class="sub">Share of scored cases that held (every rep passed).</p>'
    yield '<div class="chart">' + categories_svg(cats) + "</div>"
    yield ('<div class="legend"><span><i class="sw sw-now"></i>this run</span>'
           '<span><i class="sw sw-base"></i>baseline</span></div>')
    yield "</section>"


# -- preference probe ------------------------------------------------------------------------


def _lint_card(lint: Mapping[str, Any] | None) -> list[str]:
    if not lint:
        return []

    return lint_card(lint)


def _preference_card(pref: Mapping[str, Any] | None) -> Iterator[str]:
    summary = (pref or {}).get("summary") if pref else None
    if not summary:
        return  # no probe ran: no card (an empty one reads as a failed probe)
    yield '<section class="card" id="preference-card">'
    yield "<h2>Preference probe: what moves the choice between twin tools</h2>"
    effects = summary.get("factor_effects") or {}
    first = summary.get("first_twin_share_baseline")
    yield f'<p class="sub">{_e(_probe_line(summary))}</p>'
    if not effects and not first:
        yield '<p class="note">No pair group was scored, so no effect was measured.</p>'
    else:
        yield '<div class="chart">' + forest_svg(effects, first) + "</div>"
        yield ('<p class="note">Effect of a factor: the treated twin\'s share of calls minus the same '
               "tool's share at the same position on the baseline, averaged over pair groups; lines are "
               "95% bootstrap intervals over groups. Position bias is drawn on its own axis: the share "
               "of baseline calls that went to the twin listed first (0.5 = no preference; a call of "
               "neither twin counts 0).</p>")
    yield "</section>"


def _probe_line(summary: Mapping[str, Any]) -> str:
    line = (f"{plural(summary.get('n_pair_groups', 0), 'pair group')}, "
            f"{plural(summary.get('n_control_groups', 0), 'control group')}, "
            f"{plural(summary.get('reps', 0), 'rep')}, {plural(summary.get('n_calls', 0), 'call')}")
    po = summary.get("pair_outcomes") or {}
    if summary.get("n_pair_calls") and po.get("none") is not None:
        line += f"; pair calls with no tool called: {100 * float(po['none']):.0f}%"
    over = summary.get("control_over_call") or {}
    if over:
        worst = max(float(v) for v in over.values() if v is not None) if any(
            v is not None for v in over.values()) else None
        if worst is not None:
            line += f"; controls calling a tool: at most {100 * worst:.0f}% per factor"
    left_out = sum(int(summary.get(k) or 0) for k in ("n_errors", "n_skipped", "n_inconclusive"))
    if left_out:
        line += f"; {left_out} calls left out (errors, inconclusive or not run)"
    return line
