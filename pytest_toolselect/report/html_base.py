"""What every section of the HTML report shares: clipping, money, verdict colours, safe JSON."""

from __future__ import annotations

import json
from typing import Any

from pytest_toolselect.terms.vocabulary import Outcome, Verdict

from .charts import esc as _e
from .printable import HIDDEN

#: characters of one value shown in the page (the filter still searches all of it)
CLIP = 300
#: characters of an error shown: both ends of it, as its cause is often in its last line
ERROR_CLIP = 1200
#: characters of one tool call shown (a narrow column; arguments can be long)
CALL_CLIP = 160
#: characters of one case's text the filter index keeps
INDEX_CLIP = 5000

_VERDICT_COLOURS = {
    Verdict.DRIFT: "#9a3412", Verdict.REGRESSION: "#b91c1c", Verdict.FAILED: "#b91c1c",
    Verdict.ERROR: "#7e22ce",
    Verdict.SKIPPED: "#6b7280", Verdict.FIXED: "#0f766e", Verdict.NEW_FAILING: "#c2410c",
    Verdict.STILL_FAILING: "#b45309", Verdict.FLAKY: "#a16207", Verdict.NEW: "#1d4ed8",
    Verdict.HELD: "#15803d", Verdict.PASSED: "#15803d",
}
_OUTCOMES = tuple(Outcome)

_NONE = '<span class="none">none</span>'


def _clip(text: str, limit: int = CLIP) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} chars)"


def script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element: nothing in it can end the element."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    # nor can a control or bidirectional character reach the page's source raw (JSON escapes
    # only C0 controls); the script reads them back as they were
    return HIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _money(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"${x:.2f}" if x >= 0.1 or x == 0 else f"${x:.4f}"


def _chip(text: str, verdict: str) -> str:
    known = verdict if verdict in _VERDICT_COLOURS else "other"
    return f'<span class="chip v-{known}">{_e(text)}</span>'
