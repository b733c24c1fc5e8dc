"""One lint: discover the servers as the gate does, run every rule, gather the report."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_toolselect.discovery.servers import discover
from pytest_toolselect.inputs import CASE_SUFFIXES
from pytest_toolselect.scoring.contradictions import load_case_file

from . import poisoning
from . import tool_rules as rules
from .document import Heatmap
from .findings import Finding, grouped, ordered, unsilenced
from .similarity import THRESHOLD, Similarity, similarity
from .unsatisfiable import unsatisfiable

if TYPE_CHECKING:
    from pytest_toolselect.discovery.found import ServerTools
    from pytest_toolselect.inputs.cases import Case, IdentifierSettings
    from pytest_toolselect.inputs.config import Config

    from .decorated import DecoratedCase

#: a document holds every pair's similarity up to this many tools
MATRIX_TOOLS = 300
#: folders a case-file search never enters
SKIP_DIRS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox"})


@dataclass(frozen=True)
class LintReport:
    findings: tuple[Finding, ...]
    #: server -> tool names (as the server gives them), the similarities' order
    servers: dict[str, tuple[str, ...]]
    sim: Similarity
    threshold: float
    coverage: dict[str, dict[str, Any]]
    size: dict[str, Any]
    cases: int

    def for_server(self, server: str) -> list[Finding]:
        return [f for f in self.findings if server in f.servers]

    def heatmap(self) -> Heatmap:
        """The tools of the confusable pairs and their pairwise similarities (small by design)."""
        flat = [(s, t) for s, tools in self.servers.items() for t in tools]
        wanted = {(s, t) for f in self.findings if f.rule == "confusable-pair"
                  for s in f.servers for t in f.tools}
        index = [i for i, st in enumerate(flat) if st in wanted]
        return Heatmap(tuple(flat[i][1] for i in index), tuple(flat[i][0] for i in index),
                       tuple(tuple(self.sim.score(i, j) for j in index) for i in index),
                       self.threshold)

    @property
    def similarity(self) -> tuple[tuple[float, ...], ...]:
        """Every pair's similarity, in the servers' order (quadratic: for small sets)."""
        return self.sim.matrix

    def to_dict(self) -> dict[str, Any]:
        tools = sum(len(t) for t in self.servers.values())
        # every pair of a large set is a large document: past MATRIX_TOOLS it holds the
        # confusable pairs' (the heatmap) only
        matrix = [list(r) for r in self.similarity] if tools <= MATRIX_TOOLS else None
        return {"schema_version": "toolselect_lint.v1", "threshold": self.threshold,
                "heatmap": self.heatmap().to_json(),
                "servers": {s: list(t) for s, t in self.servers.items()},
                "similarity": matrix,
                "coverage": self.coverage, "size": self.size, "cases": self.cases,
                "findings": [f.to_dict() for f in self.findings]}


def lint(toolset: rules.ToolSet, settings: IdentifierSettings, threshold: float = THRESHOLD,
         allow: Mapping[str, Mapping[str, Iterable[str]]] | None = None,
         progress: Callable[[str], None] | None = None) -> LintReport:
    """Every rule over one tool set (pure: discovery is done), but what ``allow`` (the
    config's lint_allow) silences. ``progress`` is told each step as it starts (the command
    shows them on stderr when a lint takes a while)."""
    say = progress or (lambda _step: None)
    everything = [tool for _, tool in toolset.all_tools()]
    say(f"indexing {len(everything)} tools for confusable pairs")
    sim = similarity(everything, threshold)
    say(f"scoring {len(sim.candidates)} candidate pairs")
    pairs = rules.confusable_pairs(toolset, sim, threshold)
    say("checking names, descriptions, parameters and cases")
    size_findings, size = rules.size(toolset)
    coverage_findings, coverage = rules.coverage(toolset)
    findings = [*pairs, *rules.names(toolset),
                *rules.descriptions(toolset), *rules.parameters(toolset, settings),
                *(f for server, tool in toolset.all_tools()
                  for f in unsatisfiable(server, tool.name, tool.input_schema)),
                *rules.ranking_collisions(toolset), *coverage_findings, *size_findings]
    say("reading every text for hidden characters and instructions to the model")
    findings += [*poisoning.hidden_text(toolset), *poisoning.model_instructions(toolset),
                 *poisoning.secret_seeking_parameters(toolset),
                 *poisoning.cross_server_shadowing(toolset)]
    return LintReport(tuple(ordered(grouped(unsilenced(findings, allow or {})))),
                      {s: tuple(t.name for t in tools) for s, tools in toolset.servers.items()},
                      sim, threshold, coverage, size, toolset.case_count)


def discover_servers(config: Config, timeout: float | None = None,
                     only: Sequence[str] | None = None) -> dict[str, ServerTools]:
    """Every server of the config (or those named), discovered as the gate does (cached):
    its tools and its instructions."""
    found = {}
    for name, spec in config.servers.items():
        if only is not None and name not in only:
            continue
        if spec.timeout is None and timeout is not None:
            spec = replace(spec, timeout=timeout)
        found[name] = discover(spec, config.root)
    return found


def discover_all(config: Config, timeout: float | None = None,
                 only: Sequence[str] | None = None) -> dict[str, tuple[Any, ...]]:
    """Every server's tools (or those named), discovered as the gate does (cached)."""
    return {name: found.tools for name, found in discover_servers(config, timeout, only).items()}


def instructions_of(config: Config, timeout: float | None = None,
                    only: Sequence[str] | None = None) -> dict[str, str]:
    """The servers' instructions (their system prompt), of those that give any (cached)."""
    return {name: found.instructions for name, found in discover_servers(config, timeout, only).items()
            if found.instructions}


def project_files(root: Path) -> list[Path]:
    """The files under root, in a stable order (hidden and virtualenv folders skipped)."""
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).parts
        if any(p in SKIP_DIRS or p.startswith(".") for p in rel[:-1]):
            continue
        if path.is_file():
            out.append(path)
    return out


def find_case_files(root: Path) -> list[Path]:
    """The case files under root, in a stable order (hidden and virtualenv folders skipped)."""
    return [path for path in project_files(root) if path.name.endswith(CASE_SUFFIXES)]


def load_cases(paths: Iterable[Path], config: Config) -> list[Case]:
    return [case for p in paths for case in load_case_file(p, config.identifiers).cases]


def toolset_of(config: Config, tools: dict[str, tuple[Any, ...]], cases: Sequence[Case],
               model: str, decorated: Sequence[DecoratedCase] = (),
               instructions: Mapping[str, str] | None = None) -> rules.ToolSet:
    return rules.ToolSet(tools, config.tool_name_format, model, config.prices, tuple(cases),
                         tuple(decorated), dict(instructions or {}))
