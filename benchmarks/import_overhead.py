"""Import overhead: what the installed plugin costs a pytest run that has no toolselect files.

A generated tree of 200 trivial test files (no toolselect.yaml, no case files) is
collected with ``pytest --collect-only -q``, with the plugin and without it
(``-p no:toolselect``), alternating, several times; the ratio of the medians is
printed. A conftest in the tree writes which heavy modules were imported by the end
of the session, so a run with the plugin can be seen to import none of them.
Target: within 1.05x, and no heavy module imported. The CPU time of each run (user and
system) is printed beside the wall time: on a machine running other work it is the steadier
figure.

    python benchmarks/import_overhead.py [--files 200] [--reps 9]
"""

from __future__ import annotations

import argparse
import json
import resource
from pathlib import Path

from _common import bench_env, check, load_line, median, run_pytest, table, tempdir, verdict

TARGET = 1.05
HEAVY = ("litellm", "anthropic", "openai", "numpy", "mcp", "yaml", "jsonschema", "bm25s", "httpx")

CONFTEST = f"""
import json, os, sys

HEAVY = {HEAVY!r}


def pytest_sessionfinish(session):
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
    tops = sorted({{m.split(".")[0] for m in loaded}})
    with open(os.environ["BENCH_MODULES_OUT"], "w") as f:
        json.dump({{"heavy": tops, "modules": len(sys.modules), "heavy_modules": len(loaded)}}, f)
"""


def make_tree(root: Path, files: int) -> None:
    (root / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    for i in range(files):
        (root / f"test_mod_{i:03d}.py").write_text(
            f"def test_a_{i}():\n    assert 1 + 1 == 2\n\n\ndef test_b_{i}():\n    assert True\n",
            encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--reps", type=int, default=9)
    opts = parser.parse_args()
    arms = {"with the plugin": (), "without (-p no:toolselect)": ("-p", "no:toolselect")}
    walls: dict[str, list[float]] = {k: [] for k in arms}
    cpus: dict[str, list[float]] = {k: [] for k in arms}
    seen: dict[str, dict[str, object]] = {}
    with tempdir("import") as tmp:
        root = Path(tmp)
        make_tree(root, opts.files)
        out = root / "modules.json"
        env = bench_env(BENCH_MODULES_OUT=str(out))
        for rep in range(opts.reps + 1):  # round 0 warms the disk and bytecode caches
            for label, extra in (arms.items() if rep % 2 else reversed(arms.items())):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                run = run_pytest(root, "--collect-only", "-q", *extra, env=env)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                check(run)
                if f"{2 * opts.files} tests collected" not in run.stdout:
                    raise SystemExit(f"{label}: {run.tail()}")
                if rep:
                    walls[label].append(run.wall)
                    # CPU time is steadier than wall time on a machine that runs other work
                    cpus[label].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
                seen[label] = json.loads(out.read_text())
    w = {k: median(v) for k, v in walls.items()}
    with_, without = w["with the plugin"], w["without (-p no:toolselect)"]
    ratio = with_ / without
    c = {k: median(v) for k, v in cpus.items()}
    cpu_ratio = c["with the plugin"] / c["without (-p no:toolselect)"]
    rows = [[label, f"{w[label]:.3f}", f"{min(walls[label]):.3f}", f"{max(walls[label]):.3f}",
             f"{c[label]:.3f}", seen[label]["modules"], ", ".join(seen[label]["heavy"]) or "none"]  # type: ignore[arg-type]
            for label in arms]
    print(f"import overhead: pytest --collect-only -q on {opts.files} trivial test files, "
          f"{opts.reps} runs each, alternating (seconds)")
    print(load_line())
    print(table(rows, ["", "median", "min", "max", "median CPU", "modules", "heavy modules imported"]))
    heavy = seen["with the plugin"]["heavy"]
    print(f"ratio of medians: {ratio:.3f}x  target <= {TARGET:.2f}x  {verdict(ratio <= TARGET)}")
    print(f"ratio of median CPU times (user + system): {cpu_ratio:.3f}x")
    print(f"heavy modules with the plugin ({', '.join(HEAVY)}): {', '.join(heavy) or 'none'}  "  # type: ignore[arg-type]
          f"{verdict(not heavy)}")
    print(json.dumps({"median_with": round(with_, 4), "median_without": round(without, 4),
                      "ratio": round(ratio, 4),
                      "cpu_ratio": round(cpu_ratio, 4), "heavy_with_plugin": heavy}))


if __name__ == "__main__":
    main()
