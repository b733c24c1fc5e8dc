"""``toolselect lint`` on the examples: the servers' start, and the lint once they are up.

Discovery starts the two example MCP servers (real stdio servers built with the mcp SDK);
the lint proper is everything after: loading the case files, every rule, the similarity of
every pair. The lint is timed over several runs in one process with the servers' tools
cached, as the gate caches them, and a bigger generated tool set shows how it grows
(the similarity is quadratic in the tool count). Target: under 2 s on the examples after
the servers have started.

    python benchmarks/lint_speed.py            # ~15 s
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
TARGET_S = 2.0
RUNS = 5


def main() -> int:
    from pytest_toolselect.exchange.tool import Tool
    from pytest_toolselect.inputs.config import load_config
    from pytest_toolselect.lint.run import discover_all, find_case_files, lint, load_cases, toolset_of
    from pytest_toolselect.lint.tool_rules import ToolSet

    config = load_config(EXAMPLES)
    t0 = time.perf_counter()
    tools = discover_all(config)
    start_s = time.perf_counter() - t0

    runs = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        cases = load_cases(find_case_files(config.root), config)
        report = lint(toolset_of(config, tools, cases, "local/bm25"), config.identifiers)
        runs.append(time.perf_counter() - t0)
    first, median = runs[0], statistics.median(runs)

    # a larger set: 200 generated tools on 4 servers (20,000 pairs)
    words = "account order invoice refund shipment ticket user project report file".split()
    big = {f"s{k}": tuple(Tool(f"{a}_{b}_{k}_{i}", f"Manage the {a} of a {b}: create, read and "
                               f"list {a} records for one {b} at a time.",
                               {"type": "object", "properties": {
                                   "id": {"type": "string", "description": "e.g. A-1"}}})
                          for i, (a, b) in enumerate((a, b) for a in words for b in words[:5]))
           for k in range(4)}
    t0 = time.perf_counter()
    lint(ToolSet(big), config.identifiers)
    big_s = time.perf_counter() - t0

    n_tools = sum(len(t) for t in tools.values())
    print(f"{'measure':<44} {'seconds':>8}")
    print(f"{'servers start (discovery, 2 stdio servers)':<44} {start_s:>8.2f}")
    print(f"{f'lint on the examples, first of {RUNS}':<44} {first:>8.3f}")
    print(f"{f'lint on the examples, median of {RUNS}':<44} {median:>8.3f}")
    print(f"{'lint on 200 generated tools (20,000 pairs)':<44} {big_s:>8.3f}")
    print(f"examples: {n_tools} tools, {len(cases)} cases, {len(report.findings)} findings; "
          f"target < {TARGET_S:.0f} s after the servers started: "
          f"{'met' if first < TARGET_S else 'NOT met'}")
    print(json.dumps({"start_s": round(start_s, 3), "lint_first_s": round(first, 4),
                      "lint_median_s": round(median, 4), "lint_200_tools_s": round(big_s, 4)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
