"""What the harness routes' tests share: the calls a recording server got, and a suite run
as a user runs it from its parent folder (a subprocess, its own working directory)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

#: one pair group whose twins have no factor fields: the cue factors only (2 + 4 x 2 cells)
GROUPS = {"schema_version": "tool_preference_groups.v1", "groups": [{
    "id": "G01", "query": "Find where the retry backoff is configured in our HTTP client docs.",
    "twins": {"A": {"name": "search_docs", "description": "Search the project documentation."},
              "B": {"name": "find_documentation", "description": "Look up passages in the guides."}},
    "distractors": [{"name": "read_file", "description": "Read the contents of a file."}]}]}


#: a server that starts for discovery, then fails under the harness (after keeping its
#: parent's command line, to show what the harness was started with)
FLAKY_SERVER = """
import os, pathlib, sys
mark, seen, server, tools = sys.argv[1:5]
if pathlib.Path(mark).exists():
    pathlib.Path(seen).write_bytes(pathlib.Path(f"/proc/{os.getppid()}/cmdline").read_bytes())
    sys.stderr.write("flaky: licence check failed for token " + os.environ["FLAKY_TOKEN"] + "\\n")
    sys.exit(3)
pathlib.Path(mark).write_text("started once")
os.execv(sys.executable, [sys.executable, server, "--tools", tools])
"""


def require_harness(module: str, extra: str) -> Any:
    """The harness SDK, imported; its tests skip without the extra, unless
    TOOLSELECT_REQUIRE_HARNESSES=1 (CI installs the extras), where they fail instead."""
    if os.environ.get("TOOLSELECT_REQUIRE_HARNESSES") == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"pip install -e '.[{extra}]' to test this route")


def calls_of(log: Path) -> list[Any]:
    """The tools/call requests the test server (--call-log) answered."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def run_from_parent(suite: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest on `suite` with its baseline base.json, started in the suite's parent folder."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
               f"--rootdir={suite}", str(suite), f"--toolselect-baseline={suite / 'base.json'}", *args]
    # a deadline that only catches a hang: each harness call starts a process
    return subprocess.run(command, cwd=suite.parent, capture_output=True, text=True, timeout=900)
