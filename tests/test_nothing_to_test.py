"""Where the servers come from, and nothing to test: a `.mcp.json` alone (or beside an empty
config) is read, no servers at all is an error naming where servers are read from, and a case
file's server mistakes are each said once, where they are written, before any call."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIND, OFFICERS, REGISTRY_TOOLS, TOOLS_SERVER, Project, case, dump
from pytest_toolselect.cli import main
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.scoring.contradictions import load_case_file


def mcp_json(folder: Path, name: str = "registry") -> None:
    """Claude Code's project file, naming the suite's real stdio MCP server."""
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {name: {
        "command": sys.executable, "args": [str(TOOLS_SERVER), "--tools", json.dumps(REGISTRY_TOOLS)],
    }}}, indent=2))


@pytest.mark.parametrize("config", [None, "", "# servers come from .mcp.json\n", "{}\n"])
def test_a_mcp_json_is_read_beside_an_empty_config_or_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        config: str | None) -> None:
    mcp_json(tmp_path)
    if config is not None:
        (tmp_path / "toolselect.yaml").write_text(config)
    monkeypatch.chdir(tmp_path)
    assert main(["tools"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("registry: 3 tools (from .mcp.json:3)"), out
    assert "find_company(name*: string)" in out


def test_the_gate_runs_on_a_mcp_json_alone(project: Project) -> None:
    mcp_json(project.path)
    project.cases([case(*FIND), case(*OFFICERS)], servers=["registry"])
    result = project.pytester.runpytest()
    result.assert_outcomes(passed=2)


def test_a_project_without_toolselect_items_never_reads_its_mcp_json(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    # no toolselect option either (the fixture's PYTEST_ADDOPTS gives one): nothing says
    # this run concerns toolselect, so the client file is none of its business
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
    (project.path / ".mcp.json").write_text("{not json")
    project.pytester.makepyfile("def test_plain():\n    assert True\n")
    result = project.pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert ".mcp.json" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("command", ["tools", "init", "lint"])
@pytest.mark.parametrize("config", [None, "", "model: local/bm25\n"])
def test_no_servers_is_an_error_naming_where_servers_are_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        command: str, config: str | None) -> None:
    if config is not None:
        (tmp_path / "toolselect.yaml").write_text(config)
    monkeypatch.chdir(tmp_path)
    assert main([command]) == 2
    err = capsys.readouterr().err
    assert "no servers to take tools from" in err
    assert str(tmp_path / ".mcp.json") in err
    assert ("toolselect.yaml defines no servers" if config is not None else "no toolselect.yaml") in err
    assert list(tmp_path.iterdir()) == ([tmp_path / "toolselect.yaml"] if config is not None else [])


def test_init_writes_no_file_of_no_cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty.tools.json").write_text(json.dumps({"tools": []}))
    servers = {"empty": {"tools_file": "empty.tools.json"}}
    (tmp_path / "toolselect.yaml").write_text(dump({"servers": servers}))
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 2
    assert "offer no tools" in capsys.readouterr().err
    assert not (tmp_path / "starter.toolselect.yaml").exists()


# every mistake once ---------------------------------------------------------------------------

REQUIRED = ("id", "question", "why")


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sets(st.sampled_from(REQUIRED)), min_size=1, max_size=4),
       st.booleans())
def test_every_missing_key_of_every_case_is_said_once(dropped: list[set[str]], typo: bool) -> None:
    cases = []
    for i, gone in enumerate(dropped):
        one = {"id": f"c{i}", "question": "Find Acme", "expect_tool": ["find_company"], "why": "a reason"}
        for key in gone:
            del one[key]
        if typo and "why" in gone:
            one["wyh"] = "a misspelt reason"  # an unknown key beside the missing ones
        cases.append(one)
    text = dump({"schema_version": "toolselect_cases.v1", "servers": ["registry"], "cases": cases})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.toolselect.yaml"
        path.write_text(text)
        if not any(dropped):
            load_case_file(path, None)
            return
        with pytest.raises(ToolselectError) as raised:
            load_case_file(path, None)
    said = str(raised.value)
    for i, gone in enumerate(dropped):
        for key in gone:
            if typo and key == "why":
                # the misspelling is the mistake: said once, as "did you mean"
                assert said.count("unknown key 'wyh'; did you mean 'why'?") == sum(
                    "why" in g for g in dropped)
                continue
            assert f"at cases[{i}]: this case is missing the required key {key!r}" in said, said
    assert said.count("missing the required key") == sum(
        len(g - ({"why"} if typo else set())) for g in dropped), said


def test_an_unknown_server_is_said_once_at_its_line_with_the_nearest_name(project: Project) -> None:
    project.config({"registry": {"tools_file": project.tools_file()}})
    cases = [case(*FIND), case(*OFFICERS), case("own", "Find Acme Widgets", ["find_company"],
                                                servers=["registyr", "registry"])]
    path = project.cases(cases, servers=["regsitry"])
    lines = path.read_text().splitlines()
    result = project.pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error: nothing is asked
    out = result.stdout.str()
    file_line = lines.index("servers:") + 1
    case_line = next(i for i, text in enumerate(lines) if text.startswith("- id: own")) + 1
    assert out.count("unknown server 'regsitry'") == 1, out
    assert f"registry.toolselect.yaml:{file_line}: unknown server 'regsitry' (did you mean 'registry'?" in out
    assert (f"registry.toolselect.yaml:{case_line}: at case own: unknown server 'registyr' "
            "(did you mean 'registry'?") in out
    assert "2 mistakes" in out


def test_toolselect_lint_fails_a_case_that_names_a_server_nobody_defines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "time.tools.json").write_text(json.dumps({"tools": REGISTRY_TOOLS}))
    (tmp_path / "toolselect.yaml").write_text(dump({"servers": {"time": {"tools_file": "time.tools.json"}}}))
    (tmp_path / "t.toolselect.yaml").write_text(dump({
        "schema_version": "toolselect_cases.v1", "servers": ["tiem"],
        "cases": [case(*FIND), case(*OFFICERS)]}))
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "--json", "lint.json"]) == 1
    doc = json.loads((tmp_path / "lint.json").read_text())
    assert doc["coverage"]["time"]["tested"] == 0  # a case offered nothing of time tests none of it
    told = [f for f in doc["findings"] if f["rule"] == "case-names-unknown"]
    assert len(told) == 2 and all("tiem" in f["message"] and "'time'" in f["fix"] for f in told)
