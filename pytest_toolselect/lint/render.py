"""A lint report as plain text (the terminal) and markdown (a PR comment)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from pytest_toolselect.messages.plural import plural

from .document import Heatmap, LintView
from .findings import SEVERITIES

#: heatmap shades in markdown, from dissimilar to alike
_SHADES = "·░▒▓█"


def counts_line(severities: Iterable[str]) -> str:
    """How many findings of each severity (the findings' severities, in any order)."""
    n = Counter(str(s) for s in severities)
    return ", ".join(plural(n[s], str(s)) for s in SEVERITIES)


def text_lines(view: LintView) -> Iterator[str]:
    findings = view.findings
    servers = view.servers
    yield (f"toolselect lint: {sum(len(t) for t in servers.values())} tools on "
           f"{plural(len(servers), 'server')}, {plural(view.cases, 'case')}: "
           f"{counts_line(f.severity for f in findings)}")
    for f in findings:
        tools = f" [{', '.join(f.tools)}]" if f.tools else ""
        yield f"{f.severity.upper():7} {f.rule}{tools}: {f.message}"
        yield f"        fix: {f.fix}"
    for server, cov in view.coverage.items():
        yield f"coverage {server}: {cov.tested}/{cov.tools} tools named by a case"


def _md(text: Any) -> str:
    # a finding's text is from the servers: keep it from breaking the table or the markup
    return str(text).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def markdown(view: LintView, heading: str = "##") -> str:
    """The lint section of a PR comment (also `toolselect lint --markdown`)."""
    findings = view.findings
    out = [f"{heading} toolselect lint", "",
           f"{counts_line(f.severity for f in findings)} over "
           f"{sum(len(t) for t in view.servers.values())} tools "
           f"(confusable at similarity ≥ {view.threshold:.2f})", ""]
    if findings:
        out += ["| severity | rule | tools | finding | fix |", "|---|---|---|---|---|"]
        out += [f"| {'**new** ' if f.new else ''}{f.severity} | {f.rule} | "
                f"{_md(', '.join(f.tools))} | {_md(f.message)} | {_md(f.fix)} |"
                for f in findings]
        out.append("")
    out += list(heatmap_markdown(view.heatmap))
    cov = view.coverage
    if cov:
        out += ["| server | tools named by a case |", "|---|---|"]
        out += [f"| {_md(s)} | {c.tested}/{c.tools} |" for s, c in cov.items()]
        out.append("")
    return "\n".join(out)


def heatmap_markdown(heat: Heatmap | None) -> Iterator[str]:
    tools = heat.tools if heat is not None else ()
    if heat is None or not tools:
        return
    yield "Similarity of the confusable tools (█ at or above the threshold):"
    yield ""
    yield "| | " + " | ".join(f"`{_md(t)}`" for t in tools) + " |"
    yield "|---|" + "---|" * len(tools)
    for i, (name, row) in enumerate(zip(tools, heat.matrix, strict=True)):
        cells = ("—" if i == j else _cell(v, heat.threshold) for j, v in enumerate(row))
        yield f"| `{_md(name)}` | " + " | ".join(cells) + " |"
    yield ""


def _cell(value: float, threshold: float) -> str:
    shade = _SHADES[-1] if value >= threshold else _SHADES[min(3, int(value / threshold * 4))]
    return f"{shade} {value:.2f}"
