"""``score_case``: what scoring one candidate first turn costs, as the public API runs it.

Each case is scored on the candidates a function-calling comparison draws: the right
call, a wrong function, an argument changed, dropped or made up, a number passed as a
string, a zero-width character inside an identifier, the call made twice, no call. The
cases use every check: ``expect_args`` with each matcher (``optional``, ``equals_text``,
``by_value``), ``expect_calls``, grounding with decoys, ``valid_arguments`` and
``no_undeclared_arguments`` against schemas with ``$ref``, ``anyOf`` and ``enum``.
Target: under 1 ms per candidate at the median (the case parsed and validated each time,
as ``score_case`` does).

    python benchmarks/score_case_speed.py   # ~5 s
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

TARGET_MS = 1.0
ROUNDS = 300

TOOLS: list[dict[str, Any]] = [
    {"name": "get_weather", "description": "The weather now. unit: c or f.",
     "input_schema": {"type": "object", "required": ["city"], "properties": {
         "city": {"type": "string", "description": "City name"},
         "unit": {"enum": ["celsius", "fahrenheit"]},
         "days": {"type": "integer", "minimum": 1}}}},
    {"name": "list_officers", "description": "Officers of a company by its number.",
     "input_schema": {"type": "object", "required": ["company_number"], "properties": {
         "company_number": {"type": "string", "pattern": "^[0-9A-Z]{8}$"},
         "filters": {"$ref": "#/$defs/filters"}},
         "$defs": {"filters": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {
             "active": {"type": "boolean"}}}]}}}},
    {"name": "find_company", "description": "Search the register by name.",
     "input_schema": {"type": "object", "required": ["query"], "properties": {
         "query": {"type": "string"}, "limit": {"type": "integer"}}}},
]

CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"question": "What is the weather in New York in fahrenheit?", "expect_tool": ["get_weather"],
      "expect_calls": 1, "expect_args": [
          {"path": "city", "equals_text": "New York"},
          {"path": "unit", "equals": "fahrenheit", "optional": True},
          {"path": "days", "equals": 1, "by_value": True, "optional": True}]},
     {"city": "New York", "unit": "fahrenheit"}),
    ({"question": "Who are the officers of company 04138203?", "expect_tool": ["list_officers"],
      "forbid_tools": ["find_company"], "decoys": ["GB745938421"],
      "expect_args": [{"path": "company_number", "equals": "04138203"}]},
     {"company_number": "04138203", "filters": {"active": True}}),
    ({"question": "Find the company Royal Mail Group", "expect_tool": ["find_company"],
      "forbid_ungrounded": True, "expect_args": [{"path": "query", "contains": "royal mail"}]},
     {"query": "Royal Mail Group", "limit": 5}),
]


def candidates(tool: str, right: dict[str, Any]) -> list[list[dict[str, Any]]]:
    first = next(iter(right))
    value = right[first]
    changed = (value + "X") if isinstance(value, str) else value
    spoilt = (value[:3] + "\u200b" + value[3:]) if isinstance(value, str) else value
    other = next(t["name"] for t in TOOLS if t["name"] != tool)
    return [
        [{"name": tool, "arguments": right}],
        [{"name": other, "arguments": right}],
        [{"name": tool, "arguments": {**right, first: changed}}],
        [{"name": tool, "arguments": {k: v for k, v in right.items() if k != first}}],
        [{"name": tool, "arguments": {**right, "made_up": 1}}],
        [{"name": tool, "arguments": {k: json.dumps(v) if not isinstance(v, str) else v
                                      for k, v in right.items()}}],
        [{"name": tool, "arguments": {**right, first: spoilt}}],
        [{"name": tool, "arguments": right}] * 2,
        [],
    ]


def main() -> int:
    from pytest_toolselect import score_case

    times: list[float] = []
    runs = [(case, turn) for case, right in CASES
            for turn in candidates(case["expect_tool"][0], right)]
    for case, turn in runs:  # warm: validators built, regexes compiled, as after a first run
        score_case(case, turn, TOOLS)
    for _ in range(ROUNDS):
        for case, turn in runs:
            t0 = time.perf_counter()
            score_case(case, turn, TOOLS)
            times.append((time.perf_counter() - t0) * 1000)
    median = statistics.median(times)
    p90 = statistics.quantiles(times, n=10)[-1]
    print(f"{'measure':<48}{'ms':>8}")
    print(f"{'score_case per candidate, median':<48}{median:>8.3f}")
    print(f"{'score_case per candidate, 90th percentile':<48}{p90:>8.3f}")
    print(f"{'candidates scored':<48}{len(times):>8,}")
    met = median < TARGET_MS
    print(f"target: under {TARGET_MS} ms per candidate at the median: {'met' if met else 'MISSED'}")
    print(json.dumps({"median_ms": round(median, 4), "p90_ms": round(p90, 4),
                      "candidates": len(times)}))
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
