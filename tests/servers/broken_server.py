"""Servers that fail in the ways real ones do; stdlib only, so each starts in milliseconds.

    broken_server.py exit      writes to stderr and exits at once (status 3)
    broken_server.py crash     reads the initialize request, then dies with a traceback
    broken_server.py print     prints a non-JSON-RPC line on stdout, then exits
    broken_server.py slow      writes its pid to $PID_FILE and sleeps (never answers)

Each start is appended to $START_LOG when it is set, so tests can count starts.
"""

from __future__ import annotations

import os
import sys
import time

#: how long the slow server sleeps: far past any bound a test sets on a run that must not wait
HANG = 600


def main() -> None:
    log = os.environ.get("START_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    mode = sys.argv[1]
    if mode == "exit":
        print("fatal: COMPANIES_API_KEY is not set", file=sys.stderr)
        sys.exit(3)
    if mode == "crash":
        sys.stdin.readline()
        raise RuntimeError("cannot open the registry database")
    if mode == "print":
        print("Starting companies server v1.2...", flush=True)
        time.sleep(0.5)
        return
    if mode == "slow":
        with open(os.environ["PID_FILE"], "w", encoding="utf-8") as f:
            f.write(str(os.getpid()))
        time.sleep(HANG)
        return
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
