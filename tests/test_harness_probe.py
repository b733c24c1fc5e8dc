"""The preference probe on the claude-code/<model> route: each cell's tools served by a
throwaway stdio MCP server, asked of the real Claude Code CLI against the fake API, and its
effects set beside the direct route's by ``toolselect compare``.

A cell is a CLI process (seconds): one small pair group, one rep.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from harness_support import GROUPS, require_harness

from conftest import Project

claude_agent_sdk = require_harness("claude_agent_sdk", "claude-code")
PRICES = {"input_per_mtok": 1, "output_per_mtok": 2}



def _assertive_else_first(body: dict[str, Any]) -> Reply:
    """Takes the tool that says IMPORTANT, else the first of the tools under test (on the
    harness: the first MCP tool, after its built-ins)."""
    tools = [t for t in body.get("tools", []) if not t["name"][:1].isupper()]
    for tool in tools:
        if "IMPORTANT" in tool.get("description", ""):
            return Reply(tool_calls=[(tool["name"], {"query": "retry backoff"})])
    return Reply(tool_calls=[(tools[0]["name"], {"query": "retry backoff"})])


def test_description_factors_run_on_claude_code_beside_the_direct_route(
        project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "no-key")
    (project.path / "probe.groups.json").write_text(json.dumps(GROUPS))
    fake_api.handler = _assertive_else_first
    runs = {}
    for model in ("anthropic/claude-test", "claude-code/claude-test"):
        project.config({}, model=model, api_base=fake_api.url, retry_backoff=0,
                       prices={"claude-test": PRICES})
        fake_api.requests.clear()
        out = f"{model.split('/')[0]}.json"
        result = project.pytester.runpytest("--toolselect-harness-tool-search=off",
                                            "--toolselect-timeout=300", f"--toolselect-json={out}")
        result.assert_outcomes(passed=1)
        runs[model] = (result, list(fake_api.requests), out)
    result, sent, _ = runs["claude-code/claude-test"]
    bodies = [r.body for r in sent if isinstance(r.body, dict) and r.body.get("stream")]
    assert len(bodies) == 10  # one request a cell: 2 + 4 x (assertive, social_proof)
    served = {"mcp__toolselect__search_docs", "mcp__toolselect__find_documentation",
              "mcp__toolselect__read_file"}
    offered = [[t["name"] for t in b["tools"] if t["name"].startswith("mcp__")] for b in bodies]
    # every cell's tools, by their served names; whatever a cell's order, the harness sorts
    assert all(names == sorted(served) for names in offered)
    out = result.stdout.str()
    assert "first-listed twin share and vendor_name: not measured on claude-code" in out
    assert "mcp__toolselect__<name>" in out
    direct = json.loads((project.path / "anthropic.json").read_text())["preference"]["summary"]
    harness = json.loads((project.path / "claude-code.json").read_text())["preference"]["summary"]
    assert direct["first_twin_share_baseline"]["mean"] == pytest.approx(1.0)
    assert harness["first_twin_share_baseline"] is None
    assert harness["factor_effects"]["assertive"]["mean"] > 0  # the cue still wins
    compared = subprocess.run([sys.executable, "-m", "pytest_toolselect.cli", "compare",
                               "anthropic.json", "claude-code.json"], cwd=project.path,
                              capture_output=True, text=True, timeout=300)
    assert compared.returncode == 0, compared.stderr
    table = compared.stdout[compared.stdout.index("Preference probe"):]
    row = next(line for line in table.splitlines() if line.startswith("assertive"))
    assert row.count("(groups=1)") == 2  # the proxy's effect beside the harness's
    first = next(line for line in table.splitlines() if line.startswith("first-listed"))
    assert "+1.00" in first and "not measured (the harness sorts tools)" in first
