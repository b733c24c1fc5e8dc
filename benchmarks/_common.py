"""Shared by the benchmark scripts: generated projects, pytest subprocesses, tables.

Every script builds its project in a temporary folder, runs a real
``python -m pytest`` subprocess on it (the interpreter running the script, so the
plugin and its dependencies are the ones installed there), and prints a table.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
for _path in (REPO, TESTS):  # the root conftest, and the fakeapi.py and servers/ it uses
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

#: a small registry of tools: the test suite's own
from conftest import REGISTRY_TOOLS as TOOLS  # noqa: E402

#: questions local/bm25 answers with find_company / list_officers / nothing
QUESTIONS = [
    ("Find the company called Acme Widgets {n} in the company register", ["find_company"]),
    ("Who are the directors and officers of company {n:08d}?", ["list_officers"]),
    ("What will the weather be like in Paris on day {n}?", []),
]

FAKE_KEY = "sk-ant-" + "api03-bench-" + "0" * 22  # built, so no key-shaped literal is tracked


def tempdir(prefix: str) -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix=f"toolselect-bench-{prefix}-")


def write_cases(root: Path, n: int, *, name: str = "bench", per_file: int | None = None,
                servers: Sequence[str] | None = None) -> list[Path]:
    """`n` cases in case files of `per_file` cases each (one file when None)."""
    per_file = per_file or n
    paths = []
    for start in range(0, n, per_file):
        lines = ["schema_version: toolselect_cases.v1"]
        if servers is not None:
            lines.append(f"servers: [{', '.join(servers)}]")
        lines.append("cases:")
        for i in range(start, min(n, start + per_file)):
            question, expect = QUESTIONS[i % len(QUESTIONS)]
            lines += [f"  - id: c{i:05d}",
                      f"    question: {json.dumps(question.format(n=i))}",
                      f"    expect_tool: {json.dumps(expect)}",
                      "    why: generated for a benchmark"]
        suffix = "" if per_file >= n else f"_{start // per_file:03d}"
        path = root / f"{name}{suffix}.toolselect.yaml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def write_tools_file(root: Path, name: str = "registry") -> str:
    path = root / f"{name}.tools.json"
    path.write_text(json.dumps({"tools": TOOLS}), encoding="utf-8")
    return path.name


def write_config(root: Path, text: str) -> None:
    (root / "toolselect.yaml").write_text(text, encoding="utf-8")


#: bytecode (and pytest's assertion-rewritten modules) are cached here, not in the repo:
#: a user's machine caches them, and a run that recompiles every module measures the compiler
PYCACHE = Path(tempfile.gettempdir()) / "toolselect-bench-pycache"

#: plugins of this repo's dev environment that a user of the plugin need not have: hypothesis
#: imports itself for its terminal summary (~1-2 s), the same in every arm, which would only
#: blur the ratios
QUIET_PLUGINS = ("-p", "no:hypothesispytest")


def bench_env(**extra: str) -> dict[str, str]:
    """The environment of a benchmark's pytest run: no PYTEST_ADDOPTS or plugin autoload surprises."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_XDIST_AUTO_NUM_WORKERS",
                        "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env.update(extra)
    return env


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    started: float  # time.monotonic() just before the subprocess was started
    ended: float  # time.monotonic() once it exited

    @property
    def wall(self) -> float:
        return self.ended - self.started

    def tail(self, n: int = 3) -> str:
        return "\n".join(self.stdout.strip().splitlines()[-n:])


def run_pytest(cwd: Path, *args: str, env: dict[str, str] | None = None,
               timeout: float = 300) -> Run:
    cmd = [sys.executable, "-m", "pytest", *QUIET_PLUGINS, *args]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, env=env or bench_env(), capture_output=True, text=True,
                          timeout=timeout)
    ended = time.monotonic()
    return Run(cmd, proc.returncode, proc.stdout, proc.stderr, started, ended)


def check(run: Run, expect_rc: Sequence[int] = (0,)) -> None:
    if run.returncode not in expect_rc:
        sys.stderr.write(f"pytest exited {run.returncode}: {' '.join(run.args)}\n"
                         f"{run.stdout[-4000:]}\n{run.stderr[-4000:]}\n")
        raise SystemExit(1)


def load_line() -> str:
    """The load average: other work on the machine shows up in every figure."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return ""
    return f"machine: {os.cpu_count()} cores, load average {one:.2f} (1 min), {five:.2f} (5 min)"


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def fmt(r: Sequence[str]) -> str:
        pairs = enumerate(zip(r, widths, strict=True))
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in pairs)

    out = [fmt(cells[0]), "  ".join("-" * w for w in widths)]
    out += [fmt(r) for r in cells[1:]]
    return "\n".join(out)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def make_tests(root: Path, n: int, per_file: int = 100) -> None:
    """n trivial tests, per_file to a file: the yardstick beside n cases."""
    for start in range(0, n, per_file):
        body = "".join(f"def test_{i:05d}():\n    pass\n\n\n" for i in range(start, min(n, start + per_file)))
        (root / f"test_plain_{start // per_file:03d}.py").write_text(body, encoding="utf-8")
