"""Memory: peak RSS of the pytest process for 5,000 local/bm25 cases, and a run at scale.

Each run is a real ``python -m pytest -q`` subprocess, started from a small
intermediate process that reports ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``
once it has exited (so each figure is that run's own peak, not the largest so
far). For scale, the same is measured for 5,000 trivial pytest tests and for a
one-case run. Target: under 400 MB for the 5,000 cases.

``--scale`` measures what a large suite costs with its reports: 20,000 cases (or
``--cases``) recorded to a baseline, then run against it with ``--toolselect-json``
and ``--toolselect-html``; it prints each run's peak RSS and wall time and the
sizes of the two documents. Target: under 300 MB.

    python benchmarks/memory.py [--cases 5000]
    python benchmarks/memory.py --scale [--cases 20000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from _common import (
    QUIET_PLUGINS,
    bench_env,
    load_line,
    make_tests,
    table,
    tempdir,
    verdict,
    write_cases,
    write_config,
    write_tools_file,
)

TARGET_MB = 400.0
SCALE_TARGET_MB = 300.0
PER_FILE = 250

#: runs pytest and prints its peak RSS in KiB (ru_maxrss is KiB on Linux, bytes on macOS)
#: and its CPU time (user + system: unlike the wall time, barely moved by other work)
PEAK = """
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
peak = usage.ru_maxrss
if sys.platform == "darwin":
    peak //= 1024
sys.stderr.write(proc.stdout[-3000:] if proc.returncode else "")
print(proc.returncode, peak, f"{usage.ru_utime + usage.ru_stime:.1f}",
      proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "")
"""


def peak_mb(root: Path, *args: str) -> tuple[float, str, float, float]:
    """Peak RSS (MB) of one pytest run in `root`, its last line, its wall time and its CPU
    time (s)."""
    cmd = [sys.executable, "-c", PEAK, sys.executable, "-m", "pytest", *QUIET_PLUGINS, "-q",
           "-p", "no:cacheprovider", *args]
    started = time.monotonic()
    out = subprocess.run(cmd, cwd=root, env=bench_env(), capture_output=True, text=True, check=True)
    wall = time.monotonic() - started
    rc, kib, cpu, last = out.stdout.strip().split(" ", 3)
    if rc != "0":
        raise SystemExit(f"pytest exited {rc} in {root}: {last}\n{out.stderr}")
    return int(kib) / 1024, last, wall, float(cpu)


def make_cases(root: Path, n: int) -> None:
    tools = write_tools_file(root)
    write_config(root, f"servers:\n  registry: {{tools_file: {tools}}}\nmodel: local/bm25\n")
    write_cases(root, n, per_file=min(n, PER_FILE))


def make_trivial(root: Path, n: int) -> None:
    make_tests(root, n, per_file=PER_FILE)


def scale(n: int) -> None:
    """`n` cases recorded to a baseline, then run against it writing the JSON and HTML reports."""
    with tempdir("memory-scale") as tmp:
        root = Path(tmp)
        make_cases(root, n)
        record = peak_mb(root, "--toolselect-baseline", "baseline.json",
                         "--toolselect-update-baseline")
        compare = peak_mb(root, "--toolselect-baseline", "baseline.json",
                          "--toolselect-json", "results.json", "--toolselect-html", "report.html")
        sizes = {name: (root / name).stat().st_size / 1e6
                 for name in ("baseline.json", "results.json", "report.html")}
    rows = [["record the baseline", f"{record[0]:.0f}", f"{record[2]:.1f}", f"{record[3]:.1f}",
             record[1]],
            ["compare, JSON + HTML", f"{compare[0]:.0f}", f"{compare[2]:.1f}", f"{compare[3]:.1f}",
             compare[1]]]
    print(f"memory at scale: {n:,} local/bm25 cases, peak RSS of the pytest process (MB = MiB)")
    print(load_line())
    print(table(rows, ["run", "peak RSS MB", "wall s", "CPU s", "pytest's last line"]))
    print("files: " + ", ".join(f"{name} {mb:.1f} MB" for name, mb in sizes.items()))
    peak = max(record[0], compare[0])
    print(f"{n:,} cases: {peak:.0f} MB  target < {SCALE_TARGET_MB:.0f} MB  "
          f"{verdict(peak < SCALE_TARGET_MB)}")
    print(json.dumps({"cases": n, "record_mb": round(record[0], 1), "record_s": round(record[2], 1),
                      "record_cpu_s": record[3], "compare_mb": round(compare[0], 1),
                      "compare_s": round(compare[2], 1), "compare_cpu_s": compare[3],
                      **{f"{k}_mb": round(v, 2) for k, v in sizes.items()}}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=None)
    parser.add_argument("--scale", action="store_true",
                        help="record a baseline, then compare with the JSON and HTML reports")
    opts = parser.parse_args()
    if opts.scale:
        scale(opts.cases or 20000)
        return
    n = opts.cases or 5000
    rows = []
    figures = {}
    with tempdir("memory") as tmp:
        base = Path(tmp)
        for label, make, size in [("1 local/bm25 case", make_cases, 1),
                                  (f"{n:,} local/bm25 cases", make_cases, n),
                                  (f"{n:,} trivial tests", make_trivial, n)]:
            root = base / label.replace(" ", "_").replace(",", "").replace("/", "_")
            root.mkdir()
            make(root, size)
            mb, last, _, _ = peak_mb(root)
            figures[label] = round(mb, 1)
            rows.append([label, f"{mb:.0f}", last])
    main_mb = figures[f"{n:,} local/bm25 cases"]
    print(f"memory: peak RSS of the pytest process (MB = MiB), {n:,} cases with local/bm25")
    print(load_line())
    print(table(rows, ["run", "peak RSS MB", "pytest's last line"]))
    print(f"{n:,} cases: {main_mb:.0f} MB  target < {TARGET_MB:.0f} MB  {verdict(main_mb < TARGET_MB)}")
    per_case_kb = (main_mb - figures["1 local/bm25 case"]) * 1024 / (n - 1)
    print(f"growth per case beyond the one-case run: {per_case_kb:.1f} KB")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
