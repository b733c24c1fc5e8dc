"""What a dry run says of the selection cases: their calls, input tokens and cost, no call made.

A case's tools are listed as a run lists them (its servers start, nothing is called), and its
request is counted as the probe's dry run counts a cell: text at 4 characters a token, plus
the tokens a provider adds for tool use, and a first turn's reply. On a harness route that
reports what it sends (``offered()``: Claude Code), its own request is counted as measured.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_toolselect.exchange.context import GivenTurn, context_to_data
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.probe.dry_run import dry_run
from pytest_toolselect.probe.preference import (
    CHARS_PER_TOKEN,
    OUTPUT_TOKENS_PER_CALL,
    TOOL_USE_OVERHEAD_TOKENS,
)
from pytest_toolselect.providers import price_per_token
from pytest_toolselect.records.report_input import CaseDryRun

from .case_run import case_of
from .probe_items import resolve

if TYPE_CHECKING:
    from pytest_toolselect.inputs.cases import Case

    from .case_calls import CaseCalls
    from .settings import Settings


def text_tokens(text: str) -> int:
    """A rough token count of a text: 4 characters a token."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def request_parts(question: str, system: str | None, tools: Sequence[Any],
                  context: tuple[GivenTurn, ...] = ()) -> dict[str, int]:
    """One request's estimated input tokens by part: tool definitions as JSON, the system
    prompt, the question, what the provider adds for tool use, and any context (the given
    calls and results, replayed after the question)."""
    parts = {"tools": text_tokens(json.dumps([t.to_dict() for t in tools], default=str)),
             "system": text_tokens(system or ""), "question": text_tokens(question),
             "overhead": TOOL_USE_OVERHEAD_TOKENS}
    if context:
        parts["context"] = text_tokens(json.dumps(context_to_data(context), ensure_ascii=False,
                                                  default=str))
    return parts


def case_dry_run(parts: Sequence[Mapping[str, int] | None], reps: int, max_extra: int,
                 prices: Mapping[str, float] | None, attribution_max: int = 0) -> CaseDryRun:
    """Calls, tokens and cost of the cases, each given as its request's parts (None: its
    tools could not be listed, so it is counted in calls but not in tokens or cost)."""
    known = [p for p in parts if p is not None]
    keys = dict.fromkeys(["tools", "system", "question", "overhead", *(k for p in known for k in p)])
    totals = {k: sum(p.get(k, 0) for p in known) * reps for k in keys}
    per_call = [sum(p.values()) for p in known]
    calls = len(parts) * reps
    tokens_in = sum(totals.values())
    extra_calls = len(parts) * max_extra
    cost: tuple[float, float] | None = None
    if prices is not None and "input_per_mtok" in prices and "output_per_mtok" in prices:
        def usd(input_tokens: int, n_calls: int) -> float:
            return (input_tokens * prices["input_per_mtok"]
                    + n_calls * OUTPUT_TOKENS_PER_CALL * prices["output_per_mtok"]) / 1e6
        low = usd(tokens_in, len(known) * reps)
        cost = (low, low + usd(sum(per_call) * max_extra, len(known) * max_extra))
    return CaseDryRun(cases=len(parts), unlisted=len(parts) - len(known), reps=reps,
                      calls=calls, extra_calls_max=extra_calls, max_extra_per_case=max_extra,
                      input_tokens=totals, input_tokens_estimate=tokens_in,
                      output_tokens_estimate=len(known) * reps * OUTPUT_TOKENS_PER_CALL,
                      estimated_cost_usd=cost, attribution_calls_max=attribution_max)


def case_parts(calls: CaseCalls, cases: Sequence[Case]) -> list[dict[str, int] | None]:
    """Each case's request parts, its tools listed as the run lists them (None: they could
    not be; the run would report that case's error)."""
    provider = calls.wiring.provider
    offered = getattr(getattr(provider, "inner", provider), "offered", None)
    out: list[dict[str, int] | None] = []
    for case in cases:
        try:
            tools, system = calls.tools_for(case)
            sent = offered() if callable(offered) else None
        except ToolselectError:
            out.append(None)
            continue
        if sent is None:
            out.append(request_parts(case.question, system, tools, case.context))
            continue
        # a harness sends its own request around the case's: measured (its system prompt,
        # built-in tools and framing), with the case's MCP tools and question in it
        parts = request_parts(case.question, system, [t for t in tools if t.server], case.context)
        parts["harness"] = math.ceil(sent.body_bytes / CHARS_PER_TOKEN)
        out.append(parts)
    return out


def dry_run_lines(settings: Settings, calls: CaseCalls, items: Sequence[Any], max_extra: int,
                  attribution_cap: Callable[[int], int] | None) -> list[str]:
    """What a dry run of these items says: the cases' and the groups' calls, tokens and cost
    (estimated where the model is priced); no call made. `max_extra`: the most extra reps
    adaptive reps may ask of a case (0: its reps are fixed); `attribution_cap`: the most
    calls attribution may make over so many cases (None: no baseline is compared). Both are
    the feature objects' (plugin/adaptive_reps.py, plugin/attribution.py)."""
    # reports are imported where one is made, not with the run's parts (run/imports.py)
    from pytest_toolselect.report.dry_run import case_lines
    from pytest_toolselect.report.probe_report import dry_run_lines as group_lines


    groups = [item.group for item in items if getattr(item, "group", None) is not None]
    cases = [case for item in items if (case := case_of(item)) is not None]
    prices = per_mtok_prices(settings)
    dry = case_dry_run(case_parts(calls, cases), settings.reps, max_extra, prices,
                       attribution_cap(len(cases)) if attribution_cap is not None else 0)
    lines = list(case_lines(dry, prices))
    if groups:
        resolved = []
        for group in groups:
            try:
                resolved.append(resolve(settings, group))
            except ToolselectError:
                resolved.append(group)  # its references count at an estimated size
        lines.extend(group_lines(dry_run(resolved, settings.reps, prices=prices)))
    return lines


def per_mtok_prices(settings: Settings) -> dict[str, float] | None:
    """The model's input and output price per million tokens (None: not priced)."""
    model = str(settings.model.value)
    if model.startswith("local/"):
        return {"input_per_mtok": 0.0, "output_per_mtok": 0.0}
    price = price_per_token(model, settings.config.prices)
    if price is None:
        return None
    return {"input_per_mtok": price["input"] * 1e6, "output_per_mtok": price["output"] * 1e6}
