"""The confusable tools' similarities as a small inline SVG heatmap, drawn like report/charts.py."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

from ..lint.render import counts_line
from .charts import _MONO_PX, _mix, _num, esc, tool_label
from .html_tools import diff_html

_ALIKE = ((0xF3, 0xF4, 0xF6), (0xB9, 0x1C, 0x1C))


def heatmap_svg(heat: Mapping[str, Any]) -> str:
    """Cells darker as the tools read more alike; pairs at or over the threshold outlined."""
    tools = [str(t) for t in heat.get("tools") or []]
    if not tools:
        return ""
    servers = [str(s) for s in heat.get("servers") or [""] * len(tools)]
    matrix, threshold = heat["matrix"], float(heat["threshold"])
    size = 34.0
    chars = max(len(tool_label(t)) for t in tools)
    extent = chars * _MONO_PX
    left = extent + 14
    top = extent * math.sin(math.radians(45)) + 14
    width = left + size * len(tools) + extent * math.cos(math.radians(45)) + 8
    height = top + size * len(tools) + 8
    out = [f'<svg id="lint-heatmap" xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
           f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" role="img" '
           f'aria-label="similarity of the confusable tools">']
    for j, name in enumerate(tools):
        x = left + size * (j + 0.5)
        out.append(f'<text class="mono" x="{_num(x)}" y="{_num(top - 6)}" '
                   f'transform="rotate(-45 {_num(x)} {_num(top - 6)})">'
                   f"<title>{esc(servers[j])}: {esc(name)}</title>{html.escape(tool_label(name))}</text>")
    for i, name in enumerate(tools):
        y = top + size * i
        out.append(f'<text class="mono" x="{_num(left - 8)}" y="{_num(y + size / 2 + 4)}" '
                   f'text-anchor="end"><title>{esc(servers[i])}: {esc(name)}</title>'
                   f"{html.escape(tool_label(name))}</text>")
        for j, other in enumerate(tools):
            x = left + size * j
            rect = (f'x="{_num(x + 1)}" y="{_num(y + 1)}" width="{_num(size - 2)}" '
                    f'height="{_num(size - 2)}" rx="3"')
            if i == j:
                out.append(f'<rect {rect} fill="#ffffff" stroke="#e5e7eb"/>')
                continue
            value = float(matrix[i][j])
            t = max(0.0, min(1.0, value))
            over = value >= threshold
            stroke = ' stroke="#1f2933" stroke-width="1.5"' if over else ""
            ink = "#ffffff" if t > 0.45 else "#1f2933"
            out.append(f'<g class="lint-cell"><title>{esc(name)} / {esc(other)}: similarity '
                       f'{value:.2f}{" (confusable)" if over else ""}</title>'
                       f'<rect {rect} fill="{_mix(_ALIKE, t)}"{stroke}/>'
                       f'<text x="{_num(x + size / 2)}" y="{_num(y + size / 2 + 4)}" '
                       f'text-anchor="middle" fill="{ink}">{value:.2f}</text></g>')
    out.append("</svg>")
    return "".join(out)


#: findings shown before the table folds
FOLD_FINDINGS = 3


def _findings_table(findings: list[Mapping[str, Any]], table_id: str) -> list[str]:
    out = [f'<div class="chart"><table id="{table_id}"><thead><tr><th>severity</th>'
           "<th>rule</th><th>tools</th><th>finding</th><th>fix</th></tr></thead><tbody>"]
    for f in findings:
        sev = ("new " if f.get("new") else "") + str(f["severity"])
        out.append(f"<tr><td>{esc(sev)}</td><td>{esc(f['rule'])}</td>"
                   f"<td class=\"mono\">{esc(', '.join(f['tools']))}</td>"
                   f"<td>{diff_html(str(f['message']))}</td><td>{esc(f['fix'])}</td></tr>")
    out.append("</tbody></table></div>")
    return out


def lint_card(lint: Mapping[str, Any] | None) -> list[str]:
    """The HTML report's lint section (nothing when the run linted nothing)."""
    if not lint:
        return []

    findings = lint.get("findings") or []
    out = ['<section class="card" id="lint-card">', "<h2>Lint: the tool set alone</h2>",
           f'<p class="sub">{esc(counts_line(f["severity"] for f in findings))}; confusable at similarity ≥ '
           f'{float(lint["threshold"]):.2f}; {len(lint.get("new") or [])} new against the baseline</p>']
    svg = heatmap_svg(lint.get("heatmap") or {})
    if svg:
        out.append('<div class="chart">' + svg + "</div>")
        out.append('<p class="note">Similarity (TF-IDF cosine of name, purpose and parameter names) '
                   "of the tools in confusable pairs; outlined cells are at or over the threshold.</p>")
    if findings:
        # a long table folds (the new findings, which block, stay in view above it)
        new = [f for f in findings if f.get("new")]
        if len(findings) > FOLD_FINDINGS and new:
            out += _findings_table(new, "lint-new")
        fold = len(findings) > FOLD_FINDINGS
        if fold:
            out.append(f'<details id="lint-all"><summary>all {len(findings)} findings</summary>')
        out += _findings_table(findings, "lint-findings")
        if fold:
            out.append("</details>")
    coverage = lint.get("coverage") or {}
    if coverage:
        out.append("<p>" + esc("; ".join(f"{s}: {c['tested']}/{c['tools']} tools named by a case"
                                         for s, c in coverage.items())) + "</p>")
    out.append("</section>")
    return out
