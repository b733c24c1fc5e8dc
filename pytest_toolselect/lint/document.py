"""A lint's document as typed values: the heatmap a lint makes, the results document's lint
section built from the items' records, and what the terminal and markdown renderers read
of a lint document (``toolselect lint``'s, or a saved results document's section).

Each is written with ``to_json()`` key for key as the document always held it, or read
once with ``read()`` where a document's JSON enters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from pytest_toolselect.terms.vocabulary import Severity


@dataclass(frozen=True, slots=True)
class Heatmap:
    """The tools of the confusable pairs (and their servers) and their pairwise similarities."""

    tools: tuple[str, ...]
    servers: tuple[str, ...]
    matrix: tuple[tuple[float, ...], ...]
    threshold: float

    def to_json(self) -> dict[str, Any]:
        return {"tools": list(self.tools), "servers": list(self.servers),
                "matrix": [list(row) for row in self.matrix], "threshold": self.threshold}

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> Heatmap:
        return cls(tuple(data.get("tools") or ()), tuple(data.get("servers") or ()),
                   tuple(tuple(row) for row in data.get("matrix") or ()),
                   float(data.get("threshold", 0.0)))


@dataclass(frozen=True, slots=True)
class LintSection:
    """The results document's ``lint``: every server's findings once (each marked new or not,
    as JSON: the results document's shape), the heatmap, coverage and what the baseline keeps."""

    threshold: float
    heatmap: dict[str, Any]
    servers: dict[str, list[str]]
    coverage: dict[str, Any]
    findings: list[dict[str, Any]]
    new: list[str]
    #: what the baseline keeps of each server: `toolselect merge` records it from here
    entries: dict[str, list[str]]
    #: and each server's tools as accepted on --update-baseline (rug pulls)
    snapshots: dict[str, dict[str, dict[str, str]]]

    def to_json(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "heatmap": self.heatmap, "servers": self.servers,
                "coverage": self.coverage, "findings": self.findings, "new": self.new,
                "entries": self.entries, "snapshots": self.snapshots}


class Coverage(NamedTuple):
    """A server's tools, and how many of them a case names."""

    tested: int
    tools: int


@dataclass(frozen=True, slots=True)
class ShownFinding:
    """What a report shows of one finding."""

    severity: Severity
    rule: str
    tools: tuple[str, ...]
    message: str
    fix: str
    #: new against the baseline (a results document's section marks it)
    new: bool = False

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> ShownFinding:
        return cls(Severity(data["severity"]), str(data["rule"]), tuple(data["tools"]),
                   str(data["message"]), str(data["fix"]), bool(data.get("new")))


@dataclass(frozen=True, slots=True)
class LintView:
    """What the terminal and markdown renderers read of a lint document."""

    findings: tuple[ShownFinding, ...]
    #: server -> its tool names
    servers: dict[str, tuple[str, ...]]
    threshold: float
    heatmap: Heatmap | None
    coverage: dict[str, Coverage]
    #: the cases the lint read (``toolselect lint``'s document says; a results section does not)
    cases: int = 0

    @classmethod
    def read(cls, doc: Mapping[str, Any]) -> LintView:
        heat = doc.get("heatmap")
        return cls(tuple(ShownFinding.read(f) for f in doc["findings"]),
                   {s: tuple(t) for s, t in doc["servers"].items()}, float(doc["threshold"]),
                   Heatmap.read(heat) if heat else None,
                   {s: Coverage(c["tested"], c["tools"]) for s, c in doc["coverage"].items()},
                   int(doc.get("cases", 0)))
