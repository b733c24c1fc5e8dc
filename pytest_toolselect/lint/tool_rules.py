"""The lint rules: each a pure function of the tool set (and the cases) to findings."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_toolselect.messages.plural import noun

from .findings import ERROR, INFO, WARNING, Finding

if TYPE_CHECKING:
    from pytest_toolselect.exchange.tool import Tool
    from pytest_toolselect.inputs.cases import Case, IdentifierSettings

    from .decorated import DecoratedCase
    from .similarity import Similarity

from pytest_toolselect.messages.errors import nearest
from pytest_toolselect.scoring.identifiers import identifier_param

from ..providers.local import rank
from ..providers.pricing import price_per_token
from .similarity import as_written, param_names, terms

#: what Anthropic, OpenAI and Gemini all accept as a tool name (fullmatch: no trailing newline)
VALID_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
#: a description of fewer words says what the tool is called, not what it is for
THIN_WORDS = 8
#: tools per request a provider accepts (documented limits), by model-string prefix
TOOL_LIMITS = {"openai": 128}
#: names of tools that harnesses bring themselves (Claude Code, Anthropic and OpenAI
#: server-side tools); an MCP tool with one of these names is ambiguous in that harness.
#: Kept here, not read from the harness route: that route reads Claude Code's built-ins from
#: a run of the harness (``ClaudeCodeProvider.harness_tools``), which a lint, calling no
#: model and needing no harness installed, does not start; the providers' server-side
#: tools are named by no route at all
BUILTINS = frozenset(n.casefold() for n in (
    "Bash", "Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS", "WebFetch", "WebSearch",
    "Task", "TodoWrite", "NotebookEdit", "NotebookRead", "bash", "computer", "text_editor",
    "str_replace_editor", "str_replace_based_edit_tool", "web_search", "web_fetch",
    "code_execution", "memory", "file_search", "code_interpreter", "image_generation",
))
#: the top two BM25 scores of a case's question within this share of the top one collide
RANKING_MARGIN = 0.10
#: characters per token of a JSON tool list, for the size estimate
CHARS_PER_TOKEN = 4
_EXAMPLE = re.compile(r"\be\.g\.|\bfor example\b|\bsuch as\b|\blike\b|['\"`]\S+['\"`]|\w*\d\w*", re.I)


@dataclass(frozen=True)
class ToolSet:
    """What the linter reads: the servers' tools as discovered, and how they are offered."""

    #: server -> its tools, in the config's order, names as the server gives them
    servers: Mapping[str, tuple[Tool, ...]]
    tool_name_format: str | None = None
    model: str = "local/bm25"
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    cases: Sequence[Case] = ()
    #: decorated cases the `toolselect lint` command read from test files (not collected)
    decorated: Sequence[DecoratedCase] = ()
    #: server -> its MCP ``instructions`` (sent as the system prompt), for those that give any
    instructions: Mapping[str, str] = field(default_factory=dict)

    @property
    def case_count(self) -> int:
        # as pytest counts them: a parametrized decorated test is one case per parameter set
        return len(self.cases) + sum(d.items for d in self.decorated)

    def offered_name(self, server: str, tool: Tool) -> str:
        if self.tool_name_format is None:
            return tool.name
        return self.tool_name_format.format(server=server, tool=tool.name)

    def all_tools(self) -> list[tuple[str, Tool]]:
        return [(server, tool) for server, tools in self.servers.items() for tool in tools]

    def offered(self, servers: Sequence[str] | None = None) -> tuple[Tool, ...]:
        """The tools a model is offered for these servers (default: all), named as offered."""
        from dataclasses import replace

        wanted = self.servers if servers is None else [s for s in servers if s in self.servers]
        return tuple(replace(t, name=self.offered_name(s, t), server=s, original_name=t.name)
                     for s in wanted for t in self.servers[s])


# --- confusable pairs ----------------------------------------------------------------


def _wording(description: str) -> tuple[str, ...] | None:
    """What makes two descriptions one under two names: the same terms, or (all stopwords,
    so no terms) the same words; None for an empty one (a thin description, not a likeness)."""
    own = terms(description)
    if own:
        return ("terms", *own)
    words = " ".join(description.lower().split())
    return ("words", words) if words.strip(" .") else None


def _same_wordings(tools: Sequence[Tool]) -> set[tuple[int, int]]:
    """(i, j), i < j, of the tools that share a description's wording."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, tool in enumerate(tools):
        key = _wording(tool.description)
        if key is not None:
            groups.setdefault(key, []).append(i)
    return {(a, b) for group in groups.values() for k, a in enumerate(group) for b in group[k + 1:]}


def confusable_pairs(toolset: ToolSet, sim: Similarity, threshold: float) -> list[Finding]:
    pairs = toolset.all_tools()
    # one description under two names is confusable however short it is
    same = _same_wordings([t for _, t in pairs])
    found = []
    for i, j in sorted(same.union(sim.candidates)):
        (si, a), (sj, b) = pairs[i], pairs[j]
        score = sim.score(i, j)
        if score < threshold and (i, j) not in same:
            continue
        # the words as the descriptions write them, not their stems
        text = {t.name: f"{t.name} {t.description} {' '.join(param_names(t))}" for t in (a, b)}
        shared = as_written(sim.shared_terms(i, j), text[a.name])
        apart = {a.name: as_written(sim.own_terms(a, b), text[a.name]),
                 b.name: as_written(sim.own_terms(b, a), text[b.name])}
        tell = "; ".join(f"{name}: {', '.join(t) or 'nothing of its own'}" for name, t in apart.items())
        found.append(Finding(
            "confusable-pair", ERROR, tuple(dict.fromkeys((si, sj))), (a.name, b.name),
            f"{a.name} ({si}) and {b.name} ({sj}) read alike: similarity {score:.2f} "
            f"(threshold {threshold:.2f}), sharing {', '.join(shared)}",
            f"open each description with what only it does ({tell}), and say in each "
            f"when to use the other; or merge them if they do the same",
            {"similarity": score, "threshold": threshold, "shared_terms": shared, "apart": apart}))
    return found


# --- descriptions and parameters ------------------------------------------------------


def descriptions(toolset: ToolSet) -> list[Finding]:
    found = []
    for server, tool in toolset.all_tools():
        words = len(tool.description.split())
        if words == 0:
            found.append(Finding(
                "missing-description", ERROR, (server,), (tool.name,),
                f"{tool.name} has no description: a model has only its name to go on",
                "describe what it does, what it returns and when to use it"))
        elif words < THIN_WORDS:
            found.append(Finding(
                "thin-description", WARNING, (server,), (tool.name,),
                f"{tool.name}'s description has {words} words ({tool.description.strip()!r})",
                f"say in {THIN_WORDS} words or more what it returns and when to use it "
                "rather than its neighbours"))
    return found


def _properties(schema: Any, prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
    """(dotted name, schema) of every named parameter, nested objects included."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    out: list[tuple[str, dict[str, Any]]] = []
    if not isinstance(props, dict):
        return out
    for name, sub in props.items():
        if not isinstance(sub, dict):
            continue
        path = f"{prefix}{name}"
        out.append((path, sub))
        out.extend(_properties(sub, path + "."))
        items = sub.get("items")
        if isinstance(items, dict):
            out.extend(_properties(items, path + "."))
    return out


def parameters(toolset: ToolSet, settings: IdentifierSettings) -> list[Finding]:
    found = []
    for server, tool in toolset.all_tools():
        for path, schema in _properties(tool.input_schema):
            described = str(schema.get("description") or "").strip()
            if not described:
                found.append(Finding(
                    "parameter-without-description", WARNING, (server,), (tool.name,),
                    f"{tool.name}: parameter {path!r} has no description",
                    "say what it holds and in which form (with an example)", subject=path))
            if (identifier_param(path, schema, settings)
                    and not any(k in schema for k in ("pattern", "format", "enum", "const", "examples"))
                    and not _EXAMPLE.search(described)):
                found.append(Finding(
                    "identifier-without-format", WARNING, (server,), (tool.name,),
                    f"{tool.name}: identifier parameter {path!r} says nothing of its form",
                    "add a schema `pattern` or `format`, or an example in its description "
                    "(e.g. 'GB123456789'), so a model copies the value rather than shapes one",
                    subject=path))
    return found


# --- names -----------------------------------------------------------------------------


def names(toolset: ToolSet) -> list[Finding]:
    found = []
    owners: dict[str, list[tuple[str, Tool]]] = {}
    for server, tool in toolset.all_tools():
        offered = toolset.offered_name(server, tool)
        owners.setdefault(offered, []).append((server, tool))
        if not VALID_NAME.fullmatch(offered):
            found.append(Finding(
                "invalid-name", ERROR, (server,), (tool.name,),
                f"the tool name {offered!r} is not accepted by the major providers "
                f"(^[a-zA-Z0-9_-]{{1,64}}$); it reaches them as is",
                "rename it: letters, digits, _ and - only, at most 64 characters, no spaces or "
                "newlines" + (" (tool_name_format makes it longer)" if offered != tool.name else "")))
        if offered.casefold() in BUILTINS:
            found.append(Finding(
                "shadows-builtin", WARNING, (server,), (tool.name,),
                f"{offered!r} is the name of a tool harnesses bring themselves",
                "give it a name of its own, or set tool_name_format (e.g. 'mcp__{server}__{tool}')"))
    for offered, owned in owners.items():
        if len(owned) > 1:
            fmt = toolset.tool_name_format
            how = f"tool_name_format {fmt!r} gives" if fmt else "are both named"
            found.append(Finding(
                "name-collision", ERROR, tuple(dict.fromkeys(s for s, _ in owned)),
                tuple(t.name for _, t in owned),
                f"tools of servers {', '.join(s for s, _ in owned)} {how} {offered!r}",
                "set tool_name_format with both {server} and {tool}, e.g. 'mcp__{server}__{tool}'",
                subject=offered))
    return found


# --- size --------------------------------------------------------------------------------


def size(toolset: ToolSet) -> tuple[list[Finding], dict[str, Any]]:
    """Findings on the size of the whole tool list, and its figures."""
    tools = toolset.offered()
    servers = tuple(toolset.servers)
    blob = json.dumps([t.to_dict() for t in tools], separators=(",", ":"), ensure_ascii=False)
    tokens = len(blob) // CHARS_PER_TOKEN
    cost = _cost(toolset, tokens)
    figures = {"tools": len(tools), "tokens": tokens, "cost_usd": cost, "model": toolset.model}
    found = []
    provider = toolset.model.split("/", 1)[0] if "/" in toolset.model else ""
    for name, limit in TOOL_LIMITS.items():
        if len(tools) > limit:
            found.append(Finding(
                "too-many-tools", ERROR if provider == name else WARNING, servers, (),
                f"{len(tools)} tools: {name} accepts at most {limit} per request",
                "offer fewer servers per call, or split the tool set by task", subject=name))
    if toolset.model.startswith("local/"):
        priced = f"{toolset.model} is free"
    elif cost is None:
        priced = f"no price known for {toolset.model}"
    else:
        priced = f"${cost:.4f} at {toolset.model}'s input price"
    found.append(Finding(
        "tool-list-size", INFO, servers, (),
        f"{len(tools)} tools, about {tokens} tokens of tool list per call ({priced})",
        "shorter descriptions cost less on every call; prompt caching makes a repeated tool "
        "list cheaper", figures))
    return found, figures


def _cost(toolset: ToolSet, tokens: int) -> float | None:
    if toolset.model.startswith("local/"):
        return 0.0

    price = price_per_token(toolset.model, toolset.prices)
    return None if price is None else round(price["input"] * tokens, 6)


# --- the cases: coverage and ranking collisions -----------------------------------------


def _case_servers(toolset: ToolSet, case: Case) -> list[str]:
    return list(case.servers) if case.servers is not None else list(toolset.servers)


def coverage(toolset: ToolSet) -> tuple[list[Finding], dict[str, dict[str, Any]]]:
    """Tools no selection case expects or forbids; per server, how many are tested. A case
    credits only the servers it is offered, and one that names a server nobody defines or a
    tool none of its servers offers is told: it tests nothing."""
    named: dict[str, set[str]] = {server: set() for server in toolset.servers}
    found = []
    for where, servers, expect, forbid in _what_cases_name(toolset):
        missing = [s for s in servers if s not in toolset.servers]
        if missing:
            found.append(Finding(
                "case-names-unknown", ERROR, (), (),
                f"{where} names {noun(len(missing), 'server')} {', '.join(missing)}, "
                "which the config does not define: it is offered no tool of "
                f"{'them' if len(missing) > 1 else 'it'}",
                "fix the spelling, or define the server in toolselect.yaml"
                + (f" (did you mean {near}?)" if (near := _nearest_each(missing, toolset.servers)) else ""),
                subject=where))
        offered = {toolset.offered_name(s, t): s for s in servers if s in toolset.servers
                   for t in toolset.servers[s]}
        unoffered = [n for n in (*expect, *forbid) if n not in offered]
        if unoffered and not missing:
            found.append(Finding(
                "case-names-unknown", ERROR, tuple(servers), tuple(unoffered),
                f"{where} names {', '.join(unoffered)}, which none of its servers "
                f"({', '.join(servers) or 'none'}) offers: it can never be chosen",
                "name a tool the servers offer (toolselect tools lists them)", subject=where))
        for name in (*expect, *forbid):
            if name in offered:
                named[offered[name]].add(name)
    per_server: dict[str, dict[str, Any]] = {}
    for server, tools in toolset.servers.items():
        untested = [t.name for t in tools if toolset.offered_name(server, t) not in named[server]]
        per_server[server] = {"tools": len(tools), "tested": len(tools) - len(untested),
                              "untested": untested}
        if not toolset.case_count:
            continue
        for name in untested:
            found.append(Finding(
                "untested-tool", WARNING, (server,), (name,),
                f"no selection case expects or forbids {name}: its choice is never tested",
                f"write a case whose question {name} answers (expect_tool), or one it must not "
                "take (forbid_tools)"))
    return found, per_server


def _what_cases_name(toolset: ToolSet) -> list[tuple[str, list[str], tuple[str, ...], tuple[str, ...]]]:
    """Each case (file and decorated): where it is, its servers, the tools it expects and forbids."""
    out = [(f"case {c.id}", _case_servers(toolset, c), tuple(c.expect_tool or ()), tuple(c.forbid_tools))
           for c in toolset.cases]
    out += [(f"{d.file.name}::{d.function}",
             list(d.servers) if d.servers is not None else list(toolset.servers),
             tuple(d.expect_tool or ()), tuple(d.forbid_tools)) for d in toolset.decorated]
    return out


def _nearest_each(names: list[str], known: Mapping[str, Any]) -> str:
    return ", ".join(f"{near!r}" for n in names if (near := nearest(n, list(known))))


def ranking_collisions(toolset: ToolSet, margin: float = RANKING_MARGIN) -> list[Finding]:
    found = []
    for case in toolset.cases:
        if not case.expect_tool:
            continue
        servers = _case_servers(toolset, case)
        tools = toolset.offered(servers)
        ranked = rank(case.question, tools)
        if len(ranked) < 2 or ranked[0][0] <= 0:
            continue
        (top, i), (second, j) = ranked[0], ranked[1]
        a, b = tools[i], tools[j]
        if {a.name, b.name} <= set(case.expect_tool) or second < top * (1 - margin):
            continue  # either is right, or the top one is clear
        found.append(Finding(
            "ranking-collision", WARNING, tuple(dict.fromkeys((a.server, b.server))),
            (a.original_name, b.original_name),
            f"case {case.id}: {a.name} and {b.name} score {top:.2f} and {second:.2f} (BM25) "
            f"against its question: any change of wording may swap them",
            f"make the description of the tool the case expects ({', '.join(case.expect_tool)}) "
            "use the words of such questions, and the other's say when not to use it",
            {"case": case.id, "scores": [round(top, 3), round(second, 3)]}, subject=case.id))
    return found
