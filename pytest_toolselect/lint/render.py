"""A lint report as plain text (the terminal), markdown (a PR comment) and JSON-able data."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pytest_toolselect.messages.plural import plural

from .findings import SEVERITIES

#: heatmap shades in markdown, from dissimilar to alike
_SHADES = "·░▒▓█"


def counts_line(findings: Sequence[Mapping[str, Any]]) -> str:
    n = Counter(str(f["severity"]) for f in findings)
    return ", ".join(f"{n[s]} {s}{'' if n[s] == 1 else 's'}" for s in SEVERITIES)


def text_lines(doc: Mapping[str, Any]) -> Iterator[str]:
    findings = doc["findings"]
    servers = doc["servers"]
    yield (f"toolselect lint: {sum(len(t) for t in servers.values())} tools on "
           f"{plural(len(servers), 'server')}, {plural(doc['cases'], 'case')}: "
           f"{counts_line(findings)}")
    for f in findings:
        tools = f" [{', '.join(f['tools'])}]" if f["tools"] else ""
        yield f"{f['severity'].upper():7} {f['rule']}{tools}: {f['message']}"
        yield f"        fix: {f['fix']}"
    for server, cov in doc["coverage"].items():
        yield f"coverage {server}: {cov['tested']}/{cov['tools']} tools named by a case"


def _md(text: Any) -> str:
    # a finding's text is from the servers: keep it from breaking the table or the markup
    return str(text).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def markdown(doc: Mapping[str, Any], heading: str = "##") -> str:
    """The lint section of a PR comment (also `toolselect lint --markdown`)."""
    findings = doc["findings"]
    out = [f"{heading} toolselect lint", "",
           f"{counts_line(findings)} over {sum(len(t) for t in doc['servers'].values())} tools "
           f"(confusable at similarity ≥ {doc['threshold']:.2f})", ""]
    if findings:
        out += ["| severity | rule | tools | finding | fix |", "|---|---|---|---|---|"]
        out += [f"| {'**new** ' if f.get('new') else ''}{f['severity']} | {f['rule']} | "
                f"{_md(', '.join(f['tools']))} | {_md(f['message'])} | {_md(f['fix'])} |"
                for f in findings]
        out.append("")
    out += list(heatmap_markdown(doc.get("heatmap") or {}))
    cov = doc["coverage"]
    if cov:
        out += ["| server | tools named by a case |", "|---|---|"]
        out += [f"| {_md(s)} | {c['tested']}/{c['tools']} |" for s, c in cov.items()]
        out.append("")
    return "\n".join(out)


def heatmap_markdown(heat: Mapping[str, Any]) -> Iterator[str]:
    tools = heat.get("tools") or []
    if not tools:
        return
    yield "Similarity of the confusable tools (█ at or above the threshold):"
    yield ""
    yield "| | " + " | ".join(f"`{_md(t)}`" for t in tools) + " |"
    yield "|---|" + "---|" * len(tools)
    for i, (name, row) in enumerate(zip(tools, heat["matrix"], strict=True)):
        cells = ("—" if i == j else _cell(v, heat["threshold"]) for j, v in enumerate(row))
        yield f"| `{_md(name)}` | " + " | ".join(cells) + " |"
    yield ""


def _cell(value: float, threshold: float) -> str:
    shade = _SHADES[-1] if value >= threshold else _SHADES[min(3, int(value / threshold * 4))]
    return f"{shade} {value:.2f}"
