"""What a probe run would cost before it runs: cells, calls and input tokens per group."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_toolselect.inputs.groups import Group

from .preference import (
    CHARS_PER_TOKEN,
    OUTPUT_TOKENS_PER_CALL,
    TOOL_USE_OVERHEAD_TOKENS,
    UNRESOLVED_TOOL_TOKENS,
    cell_plan,
    cells_for,
    filled_system,
)


def _tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_input_tokens(group: Group, cues: Mapping[str, str] | None = None,
                          system: str | None = None) -> list[int]:
    """A rough input-token count for each cell of a group (see :func:`dry_run`)."""
    if not group.resolved:
        # before discovery a reference's description is unknown: count a typical tool's size
        specs = (*group.twins.values(), *group.distractors)
        known = sum(_tokens(json.dumps(s.as_tool().to_dict())) for s in specs if s.resolved)
        unknown = sum(1 for s in specs if not s.resolved)
        per_cell = (TOOL_USE_OVERHEAD_TOKENS + _tokens(filled_system(group, system))
                    + _tokens(group.query) + known + unknown * UNRESOLVED_TOOL_TOKENS)
        return [per_cell for _ in cell_plan(group)]
    out = []
    for cell in cells_for(group, cues, system):
        tools = json.dumps([t.to_dict() for t in cell.tools])
        out.append(TOOL_USE_OVERHEAD_TOKENS + _tokens(cell.system or "") + _tokens(cell.query)
                   + _tokens(tools))
    return out


@dataclass(frozen=True)
class GroupDryRun:
    """One group's share of a dry run: its cells, and its calls and input tokens for the reps."""

    id: str
    control: bool
    cells: int
    calls: int
    input_tokens_estimate: int


@dataclass(frozen=True)
class DryRun:
    """What a probe run would do: cells and calls per group and in total, and its cost."""

    reps: int
    groups: tuple[GroupDryRun, ...]
    input_tokens_estimate: int
    output_tokens_estimate: int
    #: None: no price known for the model
    estimated_cost_usd: float | None
    #: how the cost was estimated, as a sentence
    estimate_basis: str

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    @property
    def n_pair_groups(self) -> int:
        return sum(1 for r in self.groups if not r.control)

    @property
    def n_control_groups(self) -> int:
        return sum(1 for r in self.groups if r.control)

    @property
    def cells(self) -> int:
        return sum(r.cells for r in self.groups)

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.groups)


def dry_run(groups: Sequence[Group], reps: int, price_per_call: float | None = None, *,
            prices: Mapping[str, float] | None = None, cues: Mapping[str, str] | None = None,
            system: str | None = None) -> DryRun:
    """Cells and calls per group and in total for ``reps``, with an estimated cost.

    The cost is an estimate, made one of two ways: ``price_per_call`` (USD) times the
    calls; or, given ``prices`` ({input_per_mtok, output_per_mtok} in USD per million
    tokens), each cell's input tokens estimated from its text (system prompt, request and
    tool definitions as JSON, at 4 characters a token, plus 350 tokens a provider adds for
    tool use) and 80 output tokens for a first turn with one tool call. Real counts
    differ by tokenizer and by how long a model writes; no price, no estimate.
    """
    if reps < 1:
        raise ValueError("reps must be 1 or more")
    rows: list[GroupDryRun] = []
    total_in = 0
    for g in groups:
        per_cell = estimate_input_tokens(g, cues, system)
        tokens_in = sum(per_cell) * reps
        total_in += tokens_in
        rows.append(GroupDryRun(id=g.id, control=g.is_control, cells=len(per_cell),
                                calls=len(per_cell) * reps, input_tokens_estimate=tokens_in))
    calls = sum(r.calls for r in rows)
    total_out = calls * OUTPUT_TOKENS_PER_CALL
    cost: float | None = None
    basis: str
    if price_per_call is not None:
        cost = calls * price_per_call
        basis = f"an estimate: {calls} calls at ${price_per_call:g} a call"
    elif prices and "input_per_mtok" in prices and "output_per_mtok" in prices:
        cost = (total_in * prices["input_per_mtok"] + total_out * prices["output_per_mtok"]) / 1e6
        basis = (f"an estimate from about {total_in} input tokens (request, system prompt and tool "
                 f"definitions at {CHARS_PER_TOKEN:g} characters a token, plus "
                 f"{TOOL_USE_OVERHEAD_TOKENS} a call for tool use) and {total_out} output tokens "
                 f"({OUTPUT_TOKENS_PER_CALL} a call), at ${prices['input_per_mtok']:g} / "
                 f"${prices['output_per_mtok']:g} per million tokens; prompt caching, tokenizers "
                 "and longer replies move the real figure")
    else:
        basis = "no price known for the model: no cost estimate"
    return DryRun(reps=reps, groups=tuple(rows), input_tokens_estimate=total_in,
                  output_tokens_estimate=total_out, estimated_cost_usd=cost, estimate_basis=basis)
