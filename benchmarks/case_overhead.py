"""Per-case overhead: 2,000 local/bm25 cases beside 2,000 trivial pytest tests, in one run.

Both projects are run with a real ``python -m pytest -q`` subprocess, several times,
alternating. `local/bm25` answers in microseconds, so what is left is the plugin's
own cost per item: collecting and validating the case, discovering tools (cached),
scheduling the call, scoring, the verdict, the record and its report.

Printed: the median wall time of each run, the wall time of a one-item run of each
kind (startup: interpreter, pytest, the plugin, bm25s), the marginal time per item
((wall of N - wall of 1) / (N - 1)), and the ratios. Target: a case costs at most 3x a
trivial test (the marginal ratio).

    python benchmarks/case_overhead.py [--items 2000] [--reps 3]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _common import (
    bench_env,
    check,
    load_line,
    make_tests,
    median,
    run_pytest,
    table,
    tempdir,
    verdict,
    write_cases,
    write_config,
    write_tools_file,
)

TARGET = 3.0
PER_FILE = 100


def make_cases(root: Path, n: int) -> None:
    tools = write_tools_file(root)
    # the default model is local/bm25; naming it keeps the run explicit
    write_config(root, f"servers:\n  registry: {{tools_file: {tools}}}\nmodel: local/bm25\n")
    write_cases(root, n, per_file=PER_FILE)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=3)
    # compare each case run with a baseline (the warm-up round records it): the cost of
    # loading, keying and checking the baseline is then part of the figures
    parser.add_argument("--baseline", action="store_true")
    opts = parser.parse_args()
    n = opts.items
    env = bench_env()
    walls: dict[str, list[float]] = {}
    with tempdir("overhead") as tmp:
        base = Path(tmp)
        projects = {}
        for kind, make in (("cases", make_cases), ("tests", make_tests)):
            for size in (1, n):
                root = base / f"{kind}-{size}"
                root.mkdir()
                make(root, size)
                projects[(kind, size)] = root
        for rep in range(opts.reps + 1):  # the first round warms the disk cache; not counted
            for key, root in projects.items():
                extra = (["--toolselect-baseline", "base.json"]
                         if opts.baseline and key[0] == "cases" else [])
                run = run_pytest(root, "-q", "-p", "no:cacheprovider", *extra, env=env)
                check(run)
                kind, size = key
                # every generated case passes with local/bm25 (no baseline: ordinary tests)
                if f"{size} passed" not in run.stdout:
                    raise SystemExit(f"{kind} x{size}: {run.tail()}")
                if rep:
                    walls.setdefault(f"{kind}-{size}", []).append(run.wall)
    w = {k: median(v) for k, v in walls.items()}
    per = {kind: (w[f"{kind}-{n}"] - w[f"{kind}-1"]) / (n - 1) for kind in ("cases", "tests")}
    rows = [
        [f"{n:,} local/bm25 cases", f"{w[f'cases-{n}']:.2f}", f"{w['cases-1']:.2f}",
         f"{per['cases'] * 1000:.2f}"],
        [f"{n:,} trivial tests", f"{w[f'tests-{n}']:.2f}", f"{w['tests-1']:.2f}",
         f"{per['tests'] * 1000:.2f}"],
    ]
    marginal = per["cases"] / per["tests"]
    total = w[f"cases-{n}"] / w[f"tests-{n}"]
    with_baseline = ", cases compared with a baseline" if opts.baseline else ""
    print(f"per-case overhead: {n:,} items, median of {opts.reps} runs each (seconds)"
          f"{with_baseline}")
    print(load_line())
    print(table(rows, ["", f"wall, {n:,} items", "wall, 1 item", "ms per item"]))
    print(f"ratio per item (case / trivial test): {marginal:.2f}x  "
          f"target <= {TARGET:.0f}x  {verdict(marginal <= TARGET)}")
    print(f"ratio of whole runs: {total:.2f}x  (startup included; ideal 1.00x)")
    print(json.dumps({"walls": {k: round(v, 3) for k, v in w.items()},
                      "ms_per_case": round(per["cases"] * 1000, 3),
                      "ms_per_test": round(per["tests"] * 1000, 3),
                      "ratio_per_item": round(marginal, 3), "ratio_total": round(total, 3)}))


if __name__ == "__main__":
    main()
