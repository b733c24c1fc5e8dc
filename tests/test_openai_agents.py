"""The openai-agents/<model> route end to end: a real Agents SDK agent with the case's stdio
MCP server (which records every tools/call it gets), its model an OpenAI-compatible Chat
Completions client pointed at the fake API; the first response is captured before any tool
runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from harness_support import FLAKY_SERVER, GROUPS, calls_of, require_harness, run_from_parent

from conftest import FIND, REGISTRY_TOOLS, Project, case

# imported before pytester snapshots sys.modules
agents = require_harness("agents", "openai-agents")
KEY = "sk-proj-" + "agents-secret-" + "5" * 24  # built: no key-shaped literal
TIMEOUT = "--toolselect-timeout=300"


def picks(name: str, args: dict[str, Any] | None = None) -> Any:
    return lambda body: Reply(tool_calls=[(name, args or {"name": "Acme Widgets"})],
                              input_tokens=1000, output_tokens=100)


@pytest.fixture
def harness(project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch,
            tmp_path: Path) -> tuple[Project, Path]:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    log = tmp_path / "calls.jsonl"
    server = project.stdio_server(REGISTRY_TOOLS, flags={"call-log": str(log)})
    project.config(servers={"registry": server}, model="openai-agents/gpt-test",
                   api_base=fake_api.url + "/v1", retry_backoff=0,
                   prices={"openai-agents/gpt-test": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}})
    return project, log


def test_the_first_response_is_scored_and_no_tool_runs(harness: tuple[Project, Path],
                                                       fake_api: FakeAPI) -> None:
    project, log = harness
    fake_api.handler = picks("find_company")
    project.cases([case(*FIND), case("vat", "Check VAT number GB123456789", ["lookup_vat"])])
    result = project.pytester.runpytest(TIMEOUT, "--toolselect-json=out.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*via the OpenAI Agents SDK*", "*cost: $0.0024*"])
    # one request per case: the run ended at the first response
    assert len(fake_api.requests) == 2
    for sent in fake_api.requests:
        assert [t["function"]["name"] for t in sent.body["tools"]] == [t["name"] for t in REGISTRY_TOOLS]
    asked = " ".join(json.dumps(r.body["messages"]) for r in fake_api.requests)
    assert FIND[1] in asked and "GB123456789" in asked
    assert calls_of(log) == []
    doc = json.loads((project.path / "out.json").read_text())
    assert doc["subject"]["harness"] == {"name": "openai-agents", "version": agents.__version__}
    assert {r["first_tool"] for r in doc["cases"]} == {"find_company"}


def test_an_invented_identifier_is_caught(harness: tuple[Project, Path], fake_api: FakeAPI) -> None:
    project, _ = harness
    fake_api.handler = picks("list_officers", {"company_number": "99887766"})
    project.cases([case("officers", "Who runs Acme Widgets Ltd?", ["list_officers"],
                        forbid_ungrounded=True)])
    result = project.pytester.runpytest(TIMEOUT)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*99887766*"])


def test_keys_are_masked(harness: tuple[Project, Path], fake_api: FakeAPI) -> None:
    project, _ = harness
    fake_api.handler = lambda body: Reply(status=401, error=f"bad key {KEY}")
    project.cases([case(*FIND)])
    result = project.pytester.runpytest(TIMEOUT, "--toolselect-json=out.json")
    result.assert_outcomes(errors=1)
    assert fake_api.requests[0].headers["authorization"] == f"Bearer {KEY}"  # the key was sent
    out = result.stdout.str() + result.stderr.str() + (project.path / "out.json").read_text()
    assert KEY not in out
    assert "bad key" in out  # the error was reported, the key masked in it


def test_records_holds_and_regresses_from_the_parent_folder(harness: tuple[Project, Path],
                                                            fake_api: FakeAPI) -> None:
    project, log = harness
    project.cases([case(*FIND)])

    def run(*more: str) -> subprocess.CompletedProcess[str]:
        return run_from_parent(project.path, TIMEOUT, *more)

    fake_api.handler = picks("find_company")
    assert (first := run()).returncode == 0, first.stdout[-3000:]
    stored = json.loads((project.path / "base.json").read_text())
    assert stored["subject"]["provider"] == "openai-agents"
    assert (held := run()).returncode == 0, held.stdout[-3000:]
    fake_api.handler = picks("lookup_vat", {"vat_number": "x"})
    # fixed reps: the adaptive reps' 30 more calls through the harness would confirm what one
    # call shows; asking again has tests of its own (test_adaptive_reps.py)
    assert (regressed := run("--toolselect-adaptive=off")).returncode == 1, regressed.stdout[-3000:]
    assert "regress" in regressed.stdout.lower()
    assert calls_of(log) == []


def test_the_probe_runs_on_the_agent_with_each_cells_tools_in_their_order(
        project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe cell names no server: its tools are served by a throwaway stdio server, which
    the agent lists in the cell's order, so position is measured on this route."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    (project.path / "probe.groups.json").write_text(json.dumps(GROUPS))
    project.config({}, model="openai-agents/gpt-test", api_base=fake_api.url + "/v1",
                   retry_backoff=0)
    fake_api.handler = lambda body: Reply(tool_calls=[(body["tools"][0]["function"]["name"], {})])
    result = project.pytester.runpytest(TIMEOUT, "--toolselect-json=out.json")
    result.assert_outcomes(passed=1)
    orders = [[t["function"]["name"] for t in r.body["tools"]] for r in fake_api.requests]
    assert len(orders) == 10
    assert {o[0] for o in orders} == {"search_docs", "find_documentation"}  # both orders sent
    summary = json.loads((project.path / "out.json").read_text())["preference"]["summary"]
    assert summary["first_twin_share_baseline"]["mean"] == pytest.approx(1.0)


def test_a_server_that_fails_under_the_agent_is_an_error_naming_it_and_its_stderr(
        harness: tuple[Project, Path], fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    from conftest import TOOLS_SERVER

    project, _ = harness
    token = "flaky-" + "secret-" + "6" * 12
    monkeypatch.setenv("FLAKY_TOKEN", token)
    (tmp_path / "flaky.py").write_text(FLAKY_SERVER)
    flaky = {"command": "python", "env": {"FLAKY_TOKEN": "${FLAKY_TOKEN}"},
             "args": [str(tmp_path / "flaky.py"), str(tmp_path / "mark"), str(tmp_path / "seen"),
                      str(TOOLS_SERVER), json.dumps(REGISTRY_TOOLS[1:2])]}
    project.config(servers={"registry": project.stdio_server(REGISTRY_TOOLS[:1]), "flaky": flaky},
                   model="openai-agents/gpt-test", api_base=fake_api.url + "/v1", retry_backoff=0)
    project.cases([case(*FIND)], servers=["registry", "flaky"])
    result = project.pytester.runpytest(TIMEOUT)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*server 'flaky' did not connect under the harness*"
                                 "flaky: licence check failed for token*"])
    assert token not in result.stdout.str() + result.stderr.str()
    assert fake_api.requests == []  # no model was asked without the server's tools
