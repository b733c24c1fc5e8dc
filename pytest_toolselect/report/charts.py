"""The HTML report's charts: SVG markup from plain data (no I/O, no browser needed).

Labels are laid out from character counts (a monospace font for tool names). A tool name
is drawn whole up to the providers' 64 characters, and expected labels wrap at their " | "
alternatives; longer names, categories and factors are cut with their full text as a
tooltip. Every string from the document is escaped.
Colours are computed here, so the same data draws the same bytes.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_toolselect.messages.plural import plural

from .printable import printable
from .run_report import NOTHING, CategoryCount, Confusion

#: characters of a category or factor name drawn in a chart (the full name is its tooltip)
LABEL_CLIP = 30
#: characters of a tool name drawn whole: the providers' own limit on a tool name is 64
TOOL_CLIP = 64
#: lines an expected label (alternatives joined by " | ") wraps onto at most
ROW_LINES = 4
_LINE_PX = 12.0  # line height of a wrapped 11px label

# chart colours: correct vs off-diagonal cells, now vs baseline, effect directions
_CORRECT = ((0xDC, 0xF2, 0xE4), (0x16, 0x7A, 0x45))
_WRONG = ((0xFD, 0xE6, 0xD5), (0xC2, 0x41, 0x0C))
_NOW, _BASE = "#2563eb", "#a3aab5"
_UP, _DOWN, _FLAT = "#1d4ed8", "#c2410c", "#6b7280"
_MONO_PX = 6.7  # width of one 11px monospace character: enough to lay out labels without a browser


def esc(value: Any) -> str:
    """Text for markup: escaped, and its control characters shown, not applied."""
    return html.escape(printable(str(value)), quote=True)


def short(name: str, limit: int = LABEL_CLIP) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def tool_label(name: str, limit: int = TOOL_CLIP) -> str:
    """A tool name as drawn: shown whole up to ``limit`` characters (control characters
    as code points, counted as drawn). A longer one keeps its head and its tail, where
    names that share a prefix (mcp__server__...) differ; the tooltip has it all."""
    shown = printable(name)
    if len(shown) <= limit:
        return shown
    head = (limit - 1) // 2
    return shown[:head] + "…" + shown[len(shown) - (limit - 1 - head):]


def wrapped_label(label: str, limit: int = TOOL_CLIP, most: int = ROW_LINES) -> list[str]:
    """An expected label's lines: its alternatives (" | ") packed into lines of ``limit``
    characters, each tool whole (or cut as in :func:`tool_label`), at most ``most`` lines."""
    lines: list[str] = []
    names = [tool_label(part, limit) for part in label.split(" | ")]
    for name in names:
        if lines and len(lines[-1]) + 3 + len(name) <= limit:
            lines[-1] += " | " + name
        else:
            lines.append(name)
    if len(lines) > most:
        rest = sum(line.count(" | ") + 1 for line in lines[most - 1:])
        lines = [*lines[:most - 1], f"… and {rest} more"]
    return lines


def pct(n: int, d: int) -> str:
    return f"{100 * n / d:.0f}%" if d else "n/a"


def _num(x: float) -> str:
    # SVG coordinates: short and stable (no 1e-17 noise)
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _mix(pair: tuple[tuple[int, int, int], tuple[int, int, int]], t: float) -> str:
    lo, hi = pair
    return "#" + "".join(f"{round(a + (b - a) * t):02x}" for a, b in zip(lo, hi, strict=True))


# -- confusion matrix ------------------------------------------------------------------------


def confusion_axes(cells: Sequence[Confusion]) -> tuple[list[str], list[str]]:
    """Rows (expected labels) and columns (chosen tools), ordered so correct cells run down
    the diagonal: columns follow the tools of the rows in row order, no call last."""
    rows = sorted({str(c.expected) for c in cells}, key=lambda r: (r.startswith("("), r))
    chosen = {str(c.chosen) for c in cells}
    cols: list[str] = []
    for r in rows:
        for tool in r.split(" | "):
            if tool in chosen and tool not in cols and tool != NOTHING:
                cols.append(tool)
    cols += sorted(chosen - set(cols) - {NOTHING})
    if NOTHING in chosen:
        cols.append(NOTHING)
    return rows, cols


def confusion_svg(cells: Sequence[Confusion]) -> str:
    """A heatmap of expected against chosen: acceptable cells green, off-target orange,
    darker with more reps; an acceptable tool never chosen is a dashed outline."""
    rows, cols = confusion_axes(cells)
    counts = {(str(c.expected), str(c.chosen)): (int(c.count), bool(c.correct)) for c in cells}
    peak = max(n for n, _ in counts.values())
    # labels are drawn whole (wrapped onto lines), never cut to fit: the chart grows instead
    row_lines = {r: wrapped_label(r) for r in rows}
    most_lines = max(len(lines) for lines in row_lines.values())
    size = max(22.0, min(40.0, 760.0 / max(len(cols), 1)), most_lines * _LINE_PX + 4)
    row_chars = max(len(line) for lines in row_lines.values() for line in lines)
    col_chars = max(len(tool_label(c)) for c in cols)
    angle = math.radians(45)
    col_extent = col_chars * _MONO_PX
    left = max(row_chars * _MONO_PX + 14, col_extent * math.cos(angle) - size / 2 + 8, 90.0)
    top = col_extent * math.sin(angle) + 26
    # a rotated label reaches right of its column by its length times cos(45°)
    width = left + size * (len(cols) - 0.5) + max(col_extent * math.cos(angle), size / 2) + 12
    height = top + size * len(rows) + 8
    out = [f'<svg id="confusion" xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
           f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" role="img" '
           f'aria-label="confusion matrix of expected and chosen tools">']
    # axis names at the corner where the labels of both axes meet
    out.append(f'<text x="{_num(left - 8)}" y="{_num(top - 24)}" text-anchor="end" class="muted">'
               "chosen →</text>")
    out.append(f'<text x="{_num(left - 8)}" y="{_num(top - 6)}" text-anchor="end" class="muted">'
               "expected ↓</text>")
    for j, col in enumerate(cols):
        x = left + size * (j + 0.5)
        out.append(f'<text class="mono" x="{_num(x)}" y="{_num(top - 6)}" '
                   f'transform="rotate(-45 {_num(x)} {_num(top - 6)})">'
                   f"<title>{esc(col)}</title>{html.escape(tool_label(col))}</text>")
    # the empty cells as one tiled rectangle: a rect per empty cell grows as rows times
    # columns (200 tools: 40,000 elements), this stays one element
    out.append(f'<defs><pattern id="cm-empty" patternUnits="userSpaceOnUse" x="{_num(left)}" '
               f'y="{_num(top)}" width="{_num(size)}" height="{_num(size)}"><rect x="1" y="1" '
               f'width="{_num(size - 2)}" height="{_num(size - 2)}" rx="3" fill="#f3f4f6"/></pattern></defs>')
    out.append(f'<rect class="cm-empty" x="{_num(left)}" y="{_num(top)}" width="{_num(size * len(cols))}" '
               f'height="{_num(size * len(rows))}" fill="url(#cm-empty)"/>')
    for i, row in enumerate(rows):
        y = top + size * i
        lines = row_lines[row]
        first = y + size / 2 + 4 - (len(lines) - 1) * _LINE_PX / 2
        spans = "".join(f'<tspan x="{_num(left - 8)}" y="{_num(first + k * _LINE_PX)}">'
                        f"{html.escape(line)}</tspan>" for k, line in enumerate(lines))
        out.append(f'<text class="mono" text-anchor="end"><title>{esc(row)}</title>{spans}</text>')
        acceptable = set(row.split(" | "))
        for j, col in enumerate(cols):
            x = left + size * j
            rect = (f'x="{_num(x + 1)}" y="{_num(y + 1)}" width="{_num(size - 2)}" '
                    f'height="{_num(size - 2)}" rx="3"')
            got = counts.get((row, col))
            if got is None:
                if col in acceptable:
                    out.append(f'<rect {rect} fill="#ffffff" stroke="#167a45" stroke-width="1.5" '
                               f'stroke-dasharray="3 2"><title>{esc(row)} → {esc(col)}: acceptable, '
                               "never chosen</title></rect>")
                continue
            n, correct = got
            t = 0.25 + 0.75 * (n / peak)
            fill = _mix(_CORRECT if correct else _WRONG, t)
            ink = "#ffffff" if t > 0.6 else "#1f2933"
            verdict = "acceptable" if correct else "off target"
            out.append(f'<g class="cm-cell" tabindex="0" role="button" data-expected="{esc(row)}" '
                       f'data-chosen="{esc(col)}" data-correct="{"true" if correct else "false"}">'
                       f"<title>expected {esc(row)}\nchose {esc(col)}\n{plural(n, 'rep')}"
                       f" ({verdict})</title>"
                       f'<rect {rect} fill="{fill}"/>'
                       f'<text x="{_num(x + size / 2)}" y="{_num(y + size / 2 + 4)}" text-anchor="middle" '
                       f'fill="{ink}" font-weight="600">{n}</text></g>')
    out.append("</svg>")
    return "".join(out)


# -- pass rate by category -------------------------------------------------------------------


def categories_svg(cats: Mapping[str, CategoryCount]) -> str:
    """Per category, two bars (held now, held on the baseline) and the change in points."""
    label_w = max(len(short(str(c), 22)) for c in cats) * 7.0 + 12
    plot_w, bar_h, gap, group_gap = 240.0, 13.0, 3.0, 14.0
    left, top = label_w, 22.0
    group_h = 2 * bar_h + gap
    width = left + plot_w + 150
    height = top + len(cats) * (group_h + group_gap) + 4
    out = [f'<svg id="categories" xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
           f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" role="img" '
           f'aria-label="held share by category, this run and baseline">']
    for tick in (0, 25, 50, 75, 100):
        x = left + plot_w * tick / 100
        out.append(f'<line x1="{_num(x)}" y1="{_num(top - 4)}" x2="{_num(x)}" y2="{_num(height - 4)}" '
                   f'stroke="{"#9aa3ad" if tick == 0 else "#e5e7eb"}"/>')
        out.append(f'<text x="{_num(x)}" y="{_num(top - 8)}" text-anchor="middle" '
                   f'class="muted">{tick}%</text>')
    for i, (name, row) in enumerate(cats.items()):
        y = top + i * (group_h + group_gap)
        out.append(f'<text x="{_num(left - 8)}" y="{_num(y + group_h / 2 + 4)}" text-anchor="end">'
                   f"<title>{esc(name)}</title>{esc(short(str(name), 22))}</text>")
        held, scored = int(row.held), int(row.scored)
        b_held, b_scored = int(row.baseline_held), int(row.baseline_scored)
        for k, (n, d, colour, what) in enumerate(((held, scored, _NOW, "this run"),
                                                  (b_held, b_scored, _BASE, "baseline"))):
            by = y + k * (bar_h + gap)
            if not d:
                out.append(f'<text x="{_num(left + 4)}" y="{_num(by + bar_h - 2)}" class="muted">'
                           f"{'not scored' if k == 0 else 'no baseline'}</text>")
                continue
            w = plot_w * n / d
            out.append(f'<rect class="bar" x="{_num(left)}" y="{_num(by)}" width="{_num(max(w, 1.5))}" '
                       f'height="{_num(bar_h)}" rx="2" fill="{colour}"><title>{esc(name)}, {what}: '
                       f"{n}/{d} held</title></rect>")
            out.append(f'<text x="{_num(left + max(w, 1.5) + 5)}" y="{_num(by + bar_h - 2)}" '
                       f'class="muted">{pct(n, d)} ({n}/{d})</text>')
        if scored and b_scored:
            delta = 100 * (held / scored - b_held / b_scored)
            if abs(delta) < 0.5:
                out.append(f'<text x="{_num(width - 4)}" y="{_num(y + group_h / 2 + 4)}" text-anchor="end" '
                           'class="muted">same</text>')
            else:
                out.append(f'<text x="{_num(width - 4)}" y="{_num(y + group_h / 2 + 4)}" text-anchor="end" '
                           f'fill="{_DOWN if delta < 0 else _UP}" font-weight="600">{delta:+.0f} pts</text>')
    out.append("</svg>")
    return "".join(out)


# -- forest plot -----------------------------------------------------------------------------


#: half-widths of the effects' axis and their tick steps (effects are share differences, within ±1)
_EXTENTS = ((0.1, 0.05), (0.2, 0.1), (0.3, 0.1), (0.4, 0.2), (0.6, 0.2), (0.8, 0.2), (1.0, 0.25))


def _nice_extent(values: Iterable[float]) -> tuple[float, float]:
    peak = max((abs(v) for v in values), default=0.0)
    for extent, step in _EXTENTS:
        if peak <= extent + 1e-9:
            return extent, step
    extent = float(math.ceil(peak))
    return extent, extent / 4


def _gridline(x: float, y1: float, y2: float, centre: bool) -> str:
    if centre:
        return (f'<line class="ref" x1="{_num(x)}" y1="{_num(y1)}" x2="{_num(x)}" y2="{_num(y2)}" '
                'stroke="#6b7280" stroke-dasharray="4 3"/>')
    return f'<line x1="{_num(x)}" y1="{_num(y1)}" x2="{_num(x)}" y2="{_num(y2)}" stroke="#eceef1"/>'


def forest_svg(effects: Mapping[str, Mapping[str, Any]], first: Mapping[str, Any] | None) -> str:
    """Two panels on one picture: factor effects around 0, and position bias on its own
    0-1 axis around 0.5 (a share, not a difference, so it does not share the effects' axis)."""
    label_w = max([len(short(str(f), 24)) for f in effects] + [13]) * 7.0 + 16
    plot_w, row_h, text_w = 460.0, 26.0, 250.0
    left = label_w
    width = left + plot_w + text_w
    extent, step = _nice_extent(float(v) for s in effects.values() for v in (s["mean"], *s["ci"]))
    y = 0.0
    out: list[str] = []

    def sx(v: float) -> float:
        return left + plot_w * (v + extent) / (2 * extent)

    def px(v: float) -> float:
        return left + plot_w * v

    if effects:
        out.append('<text x="4" y="16" font-weight="600">Factor effects on the treated twin\'s share</text>')
        top = 34.0
        axis_y = top + len(effects) * row_h + 4
        n_ticks = round(extent / step)
        for k in range(-n_ticks, n_ticks + 1):
            t = step * k
            out.append(_gridline(sx(t), top - 6, axis_y, k == 0))
            out.append(f'<text x="{_num(sx(t))}" y="{_num(axis_y + 14)}" text-anchor="middle" class="muted">'
                       f"{t:+.2f}</text>")
        out.append(f'<text x="{_num(sx(-extent))}" y="{_num(axis_y + 30)}" class="muted">'
                   "← away from the treated twin</text>")
        out.append(f'<text x="{_num(sx(extent))}" y="{_num(axis_y + 30)}" text-anchor="end" class="muted">'
                   "towards the treated twin →</text>")
        for i, (factor, stat) in enumerate(effects.items()):
            out.append(_interval_row(str(factor), stat, top + row_h * (i + 0.5), sx, left + plot_w + 14,
                                     left, signed=True, centre=0.0))
        y = axis_y + 44
    if first:
        out.append(f'<text x="4" y="{_num(y + 16)}" font-weight="600">Position bias, on its own axis: share '
                   "of baseline calls to the first-listed twin</text>")
        top = y + 34
        axis_y = top + row_h + 4
        for k in range(5):
            out.append(_gridline(px(k / 4), top - 6, axis_y, k == 2))
            out.append(f'<text x="{_num(px(k / 4))}" y="{_num(axis_y + 14)}" text-anchor="middle" '
                       f'class="muted">{k / 4:.2f}</text>')
        out.append(f'<text x="{_num(px(0.5))}" y="{_num(axis_y + 30)}" text-anchor="middle" class="muted">'
                   "0.5 = no position preference</text>")
        out.append(_interval_row("first listed", first, top + row_h / 2, px, left + plot_w + 14, left,
                                 signed=False, centre=0.5))
        y = axis_y + 36
    height = y + 4
    return (f'<svg id="forest" xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
            f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" role="img" '
            'aria-label="forest plot of factor effects and position bias with 95% intervals">'
            + "".join(out) + "</svg>")


def _interval_row(label: str, stat: Mapping[str, Any], y: float, scale: Any, text_x: float,
                  label_x: float, *, signed: bool, centre: float) -> str:
    """One estimate: its interval as a line with end ticks, its mean as a dot, coloured by
    whether the interval leaves out the no-effect value."""
    mean = float(stat["mean"])
    lo, hi = (float(v) for v in stat["ci"])
    colour = _UP if lo > centre else (_DOWN if hi < centre else _FLAT)
    fmt = "{:+.2f}" if signed else "{:.2f}"
    text = f"{fmt.format(mean)} [{fmt.format(lo)}, {fmt.format(hi)}]  groups={stat.get('groups', '?')}"
    x_lo, x_hi, x_m = scale(lo), scale(hi), scale(mean)
    ticks = "".join(f'<line x1="{_num(x)}" y1="{_num(y - 5)}" x2="{_num(x)}" y2="{_num(y + 5)}" '
                    f'stroke="{colour}" stroke-width="1.5"/>' for x in (x_lo, x_hi))
    return (f'<g class="effect" data-factor="{esc(label)}"><title>{esc(label)}: {esc(text)}</title>'
            f'<text x="{_num(label_x - 10)}" y="{_num(y + 4)}" text-anchor="end">'
            f"{esc(short(label, 24))}</text>"
            f'<line x1="{_num(x_lo)}" y1="{_num(y)}" x2="{_num(x_hi)}" y2="{_num(y)}" stroke="{colour}" '
            f'stroke-width="2.5" stroke-linecap="round"/>{ticks}'
            f'<circle cx="{_num(x_m)}" cy="{_num(y)}" r="5" fill="{colour}" stroke="#ffffff" '
            f'stroke-width="1.5"/>'
            f'<text class="mono" x="{_num(text_x)}" y="{_num(y + 4)}">{esc(text)}</text></g>')
