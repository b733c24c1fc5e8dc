"""MCP server starts: 300 items on 2 stdio servers, serial and ``-n 2``.

Both servers are tests/servers/tools_server.py over stdio, each with its own
TOOLS_SERVER_START_LOG (the server appends a line per start). A small launcher in
the generated project also notes the parent process of each start, so a start can
be charged to the pytest process (serial) or the xdist worker that made it.
Items: 100 cases on server alpha, 100 on beta, 100 on both. Target: exactly one
start per server per process: 2 serial, 4 with ``-n 2``.

    python benchmarks/mcp_starts.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from _common import (
    TESTS,
    TOOLS,
    bench_env,
    check,
    load_line,
    run_pytest,
    table,
    tempdir,
    verdict,
    write_cases,
)

SERVER = TESTS / "servers" / "tools_server.py"
ITEMS_PER_FILE = 100

#: runs the test server after noting which process started it
LAUNCHER = f"""
import os, runpy, sys
with open(os.environ["PARENT_LOG"], "a", encoding="utf-8") as f:
    f.write(f"{{os.getppid()}}\\n")
sys.argv = [{str(SERVER)!r}, *sys.argv[1:]]
runpy.run_path({str(SERVER)!r}, run_name="__main__")
"""


def make_project(root: Path) -> None:
    (root / "launch_server.py").write_text(LAUNCHER, encoding="utf-8")
    servers = []
    halves = {"alpha": TOOLS[:2], "beta": TOOLS[2:]}
    for name, tools in halves.items():
        env = {"TOOLS_SERVER_START_LOG": str(root / f"{name}.starts"),
               "PARENT_LOG": str(root / f"{name}.parents")}
        args = [str(root / "launch_server.py"), "--tools", json.dumps(tools)]
        servers.append(f"  {name}:\n"
                       f"    command: {json.dumps(sys.executable)}\n"
                       f"    args: {json.dumps(args)}\n"
                       f"    env: {json.dumps(env)}\n")
    (root / "toolselect.yaml").write_text("servers:\n" + "".join(servers) + "model: local/bm25\n",
                                          encoding="utf-8")
    write_cases(root, ITEMS_PER_FILE, name="on_alpha", servers=["alpha"])
    write_cases(root, ITEMS_PER_FILE, name="on_beta", servers=["beta"])
    write_cases(root, ITEMS_PER_FILE, name="on_both", servers=["alpha", "beta"])


def lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def main() -> None:
    rows = []
    ok_all = True
    results = {}
    for label, args, processes in [("serial", (), 1), ("-n 2", ("-n", "2"), 2)]:
        with tempdir("mcp") as tmp:
            root = Path(tmp)
            make_project(root)
            # local/bm25 answers some generated questions wrongly on the half-registries:
            # no baseline, so those are ordinary failures (exit 1); only starts are counted here
            run = run_pytest(root, "-q", "-p", "no:cacheprovider", *args, env=bench_env())
            check(run, expect_rc=(0, 1))
            if "error" in run.stdout.splitlines()[-1]:
                raise SystemExit(f"{label}: {run.tail()}")
            starts = {name: len(lines(root / f"{name}.starts")) for name in ("alpha", "beta")}
            parents = {name: Counter(lines(root / f"{name}.parents")) for name in ("alpha", "beta")}
            total = sum(starts.values())
            per_process = max(max(c.values(), default=0) for c in parents.values())
            procs = len(set().union(*parents.values()))
            expected = 2 * processes
            ok = total == expected and per_process == 1
            ok_all &= ok
            results[label] = {"starts": starts, "total": total, "expected": expected,
                              "processes_that_started": procs, "max_per_server_per_process": per_process}
            rows.append([label, starts["alpha"], starts["beta"], total, expected, procs, per_process,
                         verdict(ok)])
    print("MCP starts: 300 items (100 on alpha, 100 on beta, 100 on both), stdio test servers")
    print(load_line())
    print(table(rows, ["run", "alpha", "beta", "total", "target", "processes", "max/server/process",
                       ""]))
    print(json.dumps(results))
    if not ok_all:
        print("FAIL: a server started more than once in a process, or the total is off")


if __name__ == "__main__":
    main()
