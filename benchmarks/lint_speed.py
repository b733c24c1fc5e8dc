"""``toolselect lint`` on the examples: the servers' start, and the lint once they are up.

Discovery starts the two example MCP servers (real stdio servers built with the mcp SDK);
the lint proper is everything after: loading the case files, every rule, the similarity of
the pairs an index finds. The lint is timed over several runs in one process with the
servers' tools cached, as the gate caches them; a generated set of 200 tools, and one of
5,000 tools on 100 servers (words, names and parameters drawn from the clean corpus of real
servers' tools, tests/clean_corpus.json) show how it grows, each in a fresh interpreter so
that its peak memory is its own. Targets: under 2 s on the examples after the servers have
started; 5,000 tools in under 10 s and 300 MB.

    python benchmarks/lint_speed.py            # ~30 s
    python benchmarks/lint_speed.py --tools N  # one generated set of N tools: seconds, MB
"""

from __future__ import annotations

import json
import random
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
TARGET_S = 2.0
RUNS = 5
#: the large set's size and its targets
BIG, BIG_TARGET_S, BIG_TARGET_MB = 5000, 10.0, 300
#: tools per generated server
PER_SERVER = 50


def generated(n: int, seed: int = 46) -> Any:
    """n tools on n/50 servers, their words drawn from real servers' tool lists: names of
    two or three words, descriptions of one or two sentences, one to three parameters; one
    tool in fifty rewords another's description under a like name (a confusable pair)."""
    from pytest_toolselect.exchange.tool import Tool
    from pytest_toolselect.lint.tool_rules import ToolSet

    corpus = json.loads((REPO / "tests" / "clean_corpus.json").read_text(encoding="utf-8"))
    text = " ".join(t["description"] for s in corpus["servers"] for t in s["tools"])
    words = sorted({w.lower() for w in re.findall(r"[A-Za-z]{3,}", text)})
    names = sorted({p for s in corpus["servers"] for t in s["tools"]
                    for p in (t["inputSchema"] or {}).get("properties", {})})
    rng = random.Random(seed)
    servers: dict[str, list[Tool]] = {}
    made: list[Tool] = []
    for i in range(n):
        if made and i % 50 == 49:  # one in fifty: another server's tool reworded, a true twin
            twin = rng.choice(made)
            said = twin.description.rstrip(".").split()
            rng.shuffle(said)
            tool = Tool(twin.name.rsplit("_", 1)[0] + f"_v{i}", " ".join(said) + ".", twin.input_schema)
        else:
            name = "_".join(rng.sample(words, rng.choice((2, 3)))) + f"_{i}"
            sentences = [" ".join(rng.sample(words, rng.randint(6, 14))).capitalize() + "."
                         for _ in range(rng.choice((1, 2)))]
            params = {p: {"type": "string", "description": " ".join(rng.sample(words, 5)) + "."}
                      for p in rng.sample(names, rng.randint(1, 3))}
            tool = Tool(name, " ".join(sentences), {"type": "object", "properties": params})
        made.append(tool)
        servers.setdefault(f"server{i // PER_SERVER}", []).append(tool)
    return ToolSet({s: tuple(t) for s, t in servers.items()})


def one_set(n: int) -> dict[str, Any]:
    """Lint one generated set of n tools in this process: seconds, peak MB, findings."""
    from pytest_toolselect.inputs.cases import IdentifierSettings
    from pytest_toolselect.lint.run import lint

    toolset = generated(n)
    t0 = time.perf_counter()
    report = lint(toolset, IdentifierSettings())
    seconds = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"tools": n, "seconds": round(seconds, 2), "peak_mb": round(peak_mb, 1),
            "findings": len(report.findings),
            "confusable_pairs": sum(1 for f in report.findings if f.rule == "confusable-pair")}


def in_fresh_interpreter(n: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--tools", str(n)], capture_output=True,
                         text=True, check=True, timeout=600)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    from pytest_toolselect.inputs.config import load_config
    from pytest_toolselect.lint.run import discover_all, find_case_files, lint, load_cases, toolset_of

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

    small, big = in_fresh_interpreter(200), in_fresh_interpreter(BIG)

    n_tools = sum(len(t) for t in tools.values())
    print(f"{'measure':<44} {'seconds':>8}")
    print(f"{'servers start (discovery, 2 stdio servers)':<44} {start_s:>8.2f}")
    print(f"{f'lint on the examples, first of {RUNS}':<44} {first:>8.3f}")
    print(f"{f'lint on the examples, median of {RUNS}':<44} {median:>8.3f}")
    print(f"{'lint on 200 generated tools':<44} {small['seconds']:>8.3f}")
    print(f"{f'lint on {BIG:,} generated tools (100 servers)':<44} {big['seconds']:>8.3f}"
          f"   peak {big['peak_mb']:.0f} MB, {big['confusable_pairs']} confusable pairs")
    print(f"examples: {n_tools} tools, {len(cases)} cases, {len(report.findings)} findings; "
          f"target < {TARGET_S:.0f} s after the servers started: "
          f"{'met' if first < TARGET_S else 'NOT met'}; {BIG:,} tools in < {BIG_TARGET_S:.0f} s "
          f"and {BIG_TARGET_MB} MB: "
          f"{'met' if big['seconds'] < BIG_TARGET_S and big['peak_mb'] < BIG_TARGET_MB else 'NOT met'}")
    print(json.dumps({"start_s": round(start_s, 3), "lint_first_s": round(first, 4),
                      "lint_median_s": round(median, 4), "lint_200_tools_s": small["seconds"],
                      "lint_5000_tools_s": big["seconds"], "lint_5000_tools_peak_mb": big["peak_mb"]}))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--tools"]:
        print(json.dumps(one_set(int(sys.argv[2]))))
        sys.exit(0)
    sys.exit(main())
