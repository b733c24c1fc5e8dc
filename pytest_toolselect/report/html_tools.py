"""The HTML report's tools-diff card: each tool change of the run once, its word diff
marked as deletions and insertions (data in, markup out)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .charts import esc as _e
from .notes import TOOLS_SECTION
from .words import counted

#: a word diff's removed ``[-...-]`` and added ``{+...+}`` runs (gate/toolsdiff.word_diff)
_MARKED = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}", re.S)
#: changes shown before the rest fold away
OPEN_CHANGES = 5


def diff_html(text: str) -> str:
    """A word diff as escaped text with <del> and <ins> where words went and came."""
    out, at = [], 0
    for m in _MARKED.finditer(text):
        out.append(_e(text[at:m.start()]))
        out.append(f"<del>{_e(m.group(1))}</del>" if m.group(1) is not None
                   else f"<ins>{_e(m.group(2))}</ins>")
        at = m.end()
    out.append(_e(text[at:]))
    return "".join(out)


def clipped_diff_html(text: str, limit: int) -> str:
    """diff_html of a text clipped to ``limit`` characters: a removed or added run the clip
    cuts is closed where it is cut, so no half of its markup is left as text."""
    if len(text) <= limit:
        return diff_html(text)
    head = text[:limit]
    opened = head.rfind("[-"), head.rfind("{+")
    closed = head.rfind("-]"), head.rfind("+}")
    if opened[0] > closed[0]:
        head += "-]"
    if opened[1] > closed[1]:
        head += "+}"
    return f"{diff_html(head)}… ({len(text)} chars)"


def _change(c: Mapping[str, Any]) -> str:
    head = f'<b>{_e(c["change"])} <code>{_e(c["tool"])}</code></b>'
    diff = f'<div class="diff">{diff_html(c["diff"])}</div>' if c.get("diff") else ""
    return (f'<li class="tool-change">{head} <span class="sub">offered to '
            f'{counted(len(c["cases"]), "case")}</span>{diff}</li>')


def tools_card(changes: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    """The card, when any tool changed since the baseline (the cases' notes point here):
    ``changes`` as ``notes.tool_changes`` gives them."""
    if not changes:
        return
    yield '<section class="card" id="tools-card">'
    yield f"<h2>{_e(TOOLS_SECTION.capitalize())}: {len(changes)}</h2>"
    yield '<ul class="tool-changes">'
    yield from (_change(c) for c in changes[:OPEN_CHANGES])
    yield "</ul>"
    if len(changes) > OPEN_CHANGES:
        yield f"<details><summary>{len(changes) - OPEN_CHANGES} more</summary>"
        yield '<ul class="tool-changes">'
        yield from (_change(c) for c in changes[OPEN_CHANGES:])
        yield "</ul></details>"
    yield "</section>"
