"""Loading the plugin (every pytest run of every user) imports nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("litellm", "anthropic", "numpy", "mcp", "openai", "bm25s", "yaml", "jsonschema", "httpx")


def test_importing_the_plugin_loads_nothing_heavy() -> None:
    code = ("import sys, json, pytest_toolselect.plugin, pytest_toolselect; "
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_a_run_without_toolselect_files_loads_nothing_heavy(pytester) -> None:  # type: ignore[no-untyped-def]
    pytester.makepyfile(test_plain=f"""
import sys
def test_modules():
    heavy = [m for m in {HEAVY!r} if m in sys.modules]
    assert heavy == []
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
