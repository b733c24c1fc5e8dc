"""The dry run's lines for the selection cases (run/dry_run.py's figures)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from pytest_toolselect.messages.plural import plural
from pytest_toolselect.probe.preference import (
    CHARS_PER_TOKEN,
    OUTPUT_TOKENS_PER_CALL,
    TOOL_USE_OVERHEAD_TOKENS,
)
from pytest_toolselect.records.report_input import CaseDryRun

#: how far the 4-characters-a-token count was from real tokenizers on the repository's
#: examples (benchmarks/dry_run_tokens.py measures it)
MEASURED_ERROR = ("on the repository's examples 4-8% fewer than tiktoken's and Anthropic's "
                  "tokenizers count")


def _money(x: float) -> str:
    return f"${x:.2f}" if x >= 0.1 else f"${x:.4f}"




def case_lines(dry: CaseDryRun, prices: Mapping[str, float] | None) -> Iterator[str]:
    """What the cases would cost: calls, input tokens by part, and the cost as a range when
    adaptive reps may ask again."""
    line = (f"selection cases: {plural(dry.cases, 'item')}, {plural(dry.calls, 'call')} "
            f"({plural(dry.reps, 'rep')})")
    if dry.extra_calls_max:
        line += (f", and up to {dry.extra_calls_max} more if adaptive reps ask again "
                 f"(at most {dry.max_extra_per_case} a case: --toolselect-max-extra-reps)")
    yield line
    if dry.attribution_calls_max:
        yield (f"  and up to {plural(dry.attribution_calls_max, 'call')} if a case would block: "
               "attribution asks it again with the baseline's tools (--toolselect-attribution-max-calls, "
               "or --toolselect-attribution off)")
    if not dry.cases:
        return
    parts = dry.input_tokens
    given = (f", context {parts['context']:,} (the given calls and results)"
             if parts.get("context") else "")
    harness = (f", the harness's own request {parts['harness']:,} (measured: its system prompt, "
               "built-in tools and framing)" if parts.get("harness") else "")
    yield (f"  input: about {dry.input_tokens_estimate:,} tokens (tools {parts['tools']:,}, "
           f"system {parts['system']:,}, question {parts['question']:,}, tool use "
           f"{parts['overhead']:,}{given}{harness}); output: about {dry.output_tokens_estimate:,} tokens")
    if dry.unlisted:
        yield (f"  {plural(dry.unlisted, 'case')} whose tools could not be listed: "
               "counted in calls, not in tokens or cost")
    cost = dry.estimated_cost_usd
    if cost is None or prices is None:
        yield "cost: no price known for the model: no cost estimate (set `prices` in toolselect.yaml)"
        return
    low, high = cost
    spread = f" to {_money(high)} if every extra rep is asked" if high > low else ""
    yield (f"cost: about {_money(low)}{spread}, an estimate: text at {CHARS_PER_TOKEN:g} characters "
           f"a token ({MEASURED_ERROR}), plus {TOOL_USE_OVERHEAD_TOKENS} a call for tool use, and "
           f"{OUTPUT_TOKENS_PER_CALL} output tokens a call, at ${prices['input_per_mtok']:g} / "
           f"${prices['output_per_mtok']:g} per million tokens")
