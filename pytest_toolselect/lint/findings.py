"""A lint finding: the rule, its severity, the tools it names, what is wrong and the fix."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_toolselect.terms.vocabulary import Severity

from .document import LintSection

if TYPE_CHECKING:
    from pytest_toolselect.records.run_records import LintRecord

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
#: most severe first
SEVERITIES = tuple(Severity)
_RANK = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    #: the servers whose tools it names (a cross-server pair names two)
    servers: tuple[str, ...]
    #: tool names as the servers give them (empty: about the whole tool set)
    tools: tuple[str, ...]
    message: str
    fix: str
    #: rule-specific figures (similarity, shared terms, counts, ...), plain JSON data
    data: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    #: what makes the finding itself, beyond its rule and tools (a case id, a parameter)
    subject: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity(self.severity))

    @property
    def id(self) -> str:
        """Stable across runs and wording changes: the baseline keys findings by it."""
        parts = [self.rule, "+".join(self.tools)]
        if self.subject:
            parts.append(self.subject)
        return ":".join(parts)

    def at_least(self, severity: Severity) -> bool:
        return _RANK[self.severity] <= _RANK[severity]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "rule": self.rule, "severity": str(self.severity),
                "servers": list(self.servers), "tools": list(self.tools),
                "message": self.message, "fix": self.fix, "data": dict(self.data)}


def ordered(findings: Iterable[Finding]) -> list[Finding]:
    """Most severe first, then by rule and id: the same findings always print alike."""
    return sorted(findings, key=lambda f: (_RANK[f.severity], f.rule, f.id))


def unsilenced(findings: Iterable[Finding],
               allow: Mapping[str, Mapping[str, Iterable[str]]]) -> list[Finding]:
    """The findings the config's ``lint_allow`` does not silence: a finding is silenced when
    a tool it names allows its rule on one of the finding's servers."""
    return [f for f in findings
            if not any(f.rule in allow.get(s, {}).get(t, ()) for s in f.servers for t in f.tools)]


#: rules whose findings name one parameter of one tool: the same parameter across a server's
#: tools (``repo_path`` in every tool of a git server) is one finding naming them all
BY_PARAMETER = frozenset({"parameter-without-description", "identifier-without-format"})


def grouped(findings: Iterable[Finding]) -> list[Finding]:
    """The findings with those of one rule on one parameter of several tools of the same
    servers made one, naming every tool (in the order first found); the others as they are.
    Only warnings are grouped: an error's id is what a baseline holds, tool by tool."""
    groups: dict[tuple[str, Severity, tuple[str, ...], str], list[Finding]] = {}
    out: list[Finding | tuple[str, Severity, tuple[str, ...], str]] = []
    for f in findings:
        if f.rule not in BY_PARAMETER or f.severity == ERROR or not f.subject:
            out.append(f)
            continue
        key = (f.rule, f.severity, f.servers, f.subject)
        if key not in groups:
            groups[key] = []
            out.append(key)
        groups[key].append(f)
    return [item if isinstance(item, Finding) else _one(groups[item]) for item in out]


def _one(same: list[Finding]) -> Finding:
    if len(same) == 1:
        return same[0]
    first = same[0]
    tools = tuple(dict.fromkeys(t for f in same for t in f.tools))
    said = first.message.split(": ", 1)[-1]  # "<tool>: parameter 'x' has no description"
    shown = ", ".join(tools[:8]) + (f" and {len(tools) - 8} more" if len(tools) > 8 else "")
    return Finding(first.rule, first.severity, first.servers, tools,
                   f"{len(tools)} tools: {said} in each ({shown})", first.fix,
                   {**first.data, "parameter": first.subject, "tool_count": len(tools)},
                   subject=first.subject)


def blocking(findings: Iterable[Finding], fail_on: Severity) -> list[Finding]:
    return [f for f in findings if f.at_least(fail_on)]


def merged_document(records: Mapping[str, LintRecord]) -> LintSection | None:
    """The lint section of the results document, from the items' records (by server name,
    so the section does not depend on the order the items ran in, under xdist or in shards)."""
    if not records:
        return None
    findings: dict[str, dict[str, Any]] = {}
    new: set[str] = set()
    for _, rec in sorted(records.items()):
        for f in rec.findings:
            findings.setdefault(f["id"], f)
        new.update(rec.new)
    first = next(iter(records.values()))
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    ordered = sorted(findings.values(), key=lambda f: (rank[f["severity"]], f["rule"], f["id"]))
    return LintSection(
        threshold=first.threshold, heatmap=first.heatmap,
        servers={s: r.tools for s, r in sorted(records.items())},
        coverage={s: r.coverage for s, r in sorted(records.items()) if r.coverage},
        findings=[{**f, "new": f["id"] in new} for f in ordered], new=sorted(new),
        entries={s: list(r.entry) for s, r in sorted(records.items())},
        snapshots={s: dict(r.snapshot) for s, r in sorted(records.items())})
