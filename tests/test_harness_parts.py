"""The harness routes' shared parts, without starting a harness: the bound on processes at
once, the MCP config built from the case's servers, the names mapped back, and the request a
harness cannot be asked (no servers: the preference probe's cells)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import FIND, Project, case
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.inputs.config import ServerSpec
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.providers import TurnRequest
from pytest_toolselect.providers.harness import (
    SERVED,
    Slots,
    builtin_tools,
    is_served,
    mcp_config,
    normalized,
    not_connected,
    served,
    stderr_file,
    wire_name_map,
    write_private,
)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_slots_let_at_most_n_calls_run_at_once(n: int) -> None:
    async def main() -> int:
        slots = Slots(n)
        running, most = 0, 0
        release = asyncio.Event()

        async def call() -> None:
            nonlocal running, most
            async with slots.get():
                running += 1
                most = max(most, running)
                await release.wait()
                running -= 1

        tasks = [asyncio.create_task(call()) for _ in range(n + 3)]
        while running < n:  # the first n are in; the rest wait for a slot
            await asyncio.sleep(0)
        for _ in range(20):
            await asyncio.sleep(0)
        assert running == n
        release.set()
        await asyncio.gather(*tasks)
        return most

    assert asyncio.run(main()) == n


@given(names=st.lists(st.text(min_size=1, max_size=16), min_size=1, max_size=5, unique=True))
def test_a_request_without_servers_gets_its_tools_served_under_their_names(
        tmp_path_factory: pytest.TempPathFactory, names: list[str]) -> None:
    """The probe's cells name no server: a throwaway server serves their tools, and each
    name the harness gives one maps back to the tool."""
    folder = tmp_path_factory.mktemp("served")
    request = TurnRequest(question="q", tools=tuple(Tool(n, f"twin {n}") for n in names))
    asked = served(request, folder)
    assert is_served(asked) and [t.name for t in asked.tools] == names
    assert wire_name_map(asked.tools) == {f"mcp__{SERVED}__{normalized(n)}": n for n in names}
    (spec,) = asked.servers
    listed = json.loads(Path(spec.args[-1]).read_text())
    assert [d["name"] for d in listed] == names
    assert Path(spec.args[-1]).stat().st_mode & 0o777 == 0o600
    own = TurnRequest(question="q", tools=request.tools, servers=(ServerSpec(name="s", command="x"),))
    assert served(own, folder) is own  # a case's own servers are used as they are


def test_a_tools_file_server_is_refused_by_name() -> None:
    with pytest.raises(ToolselectError, match="'static' is a tools file"):
        mcp_config([ServerSpec(name="static", tools_file="x.tools.json")], ".")


def test_a_stdio_server_starts_in_its_cwd_with_its_declared_env(tmp_path: Path) -> None:
    (tmp_path / "srv").mkdir()
    spec = ServerSpec(name="s", command="python", cwd="srv", env=(("MODE", "x"),),
                      args=("-c", "import os, json; print(json.dumps([os.getcwd(), os.environ['MODE']]))"))
    entry = mcp_config([spec], str(tmp_path))["s"]
    assert entry["type"] == "stdio" and entry["env"] == {"MODE": "x"}
    out = subprocess.run([entry["command"], *entry["args"]], env={**entry["env"]},
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert json.loads(out) == [str(tmp_path / "srv"), "x"]


def test_an_http_server_keeps_its_url_and_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN_FOR_TEST", "t0k")
    spec = ServerSpec(name="h", url="http://127.0.0.1:1/mcp",
                      headers=(("Authorization", "Bearer ${TOKEN_FOR_TEST}"),))
    assert mcp_config([spec], ".")["h"] == {"type": "http", "url": "http://127.0.0.1:1/mcp",
                                            "headers": {"Authorization": "Bearer t0k"}}


names = st.text(min_size=1, max_size=20)


def test_a_stdio_servers_stderr_is_kept_in_its_file(tmp_path: Path) -> None:
    spec = ServerSpec(name="s/1", command="python",
                      args=("-c", "import sys; sys.stderr.write('refused: no licence'); print('up')"))
    entry = mcp_config([spec], str(tmp_path), stderr_to=tmp_path)["s/1"]
    run = subprocess.run([entry["command"], *entry["args"]], capture_output=True, text=True,
                         timeout=120, check=True)
    assert run.stdout == "up\n" and run.stderr == ""
    assert stderr_file(tmp_path, "s/1").read_text() == "refused: no licence"
    assert stderr_file(tmp_path, "s/1").stat().st_mode & 0o777 == 0o600


def test_a_private_file_is_its_owners_alone_and_never_overwritten(tmp_path: Path) -> None:
    path = write_private(tmp_path / "mcp.json", '{"token": "t0k"}')
    assert path.stat().st_mode & 0o777 == 0o600 and path.read_text() == '{"token": "t0k"}'
    with pytest.raises(FileExistsError):
        write_private(path, "{}")


statuses = st.lists(st.fixed_dictionaries({
    "name": st.text(min_size=1, max_size=12),
    "status": st.sampled_from(["connected", "failed", "pending", "needs-auth", "disabled"])
    | st.text(max_size=8)}), max_size=5)


@given(entries=statuses, stderr=st.text(max_size=200))
def test_every_server_not_connected_is_named_and_no_connected_one(
        tmp_path_factory: pytest.TempPathFactory, entries: list[dict[str, str]], stderr: str) -> None:
    folder = tmp_path_factory.mktemp("logs")
    for entry in entries:
        stderr_file(folder, entry["name"]).write_text(stderr + " secret-123")
    said = not_connected(entries, folder, ("secret-123",))
    down = [e for e in entries if e["status"] != "connected"]
    assert (said is None) == (not down)
    if said is not None:
        assert said.count("did not connect under the harness") == len(down)
        assert all(repr(e["name"]) in said for e in down)
        assert "secret-123" not in said


@given(server=names, tool=names)
def test_a_wire_name_maps_back_to_the_cases_tool(server: str, tool: str) -> None:
    case_tool = Tool(f"renamed-{tool}", "d", server=server, original_name=tool)
    wire = f"mcp__{normalized(server)}__{normalized(tool)}"
    assert wire_name_map([case_tool]) == {wire: case_tool.name}
    assert all(c.isascii() and (c.isalnum() or c in "_-") for c in normalized(tool))
    assert len(normalized(tool)) == len(tool)


def test_a_servers_tool_keeps_a_name_a_builtin_also_has() -> None:
    mine = (Tool("Bash", "my own shell tool", server="ops"),)
    added = builtin_tools(["Bash", "Read"], "Claude Code", mine)
    assert [t.name for t in added] == ["Read"]


def test_the_harness_modules_are_not_imported_by_the_routes() -> None:
    code = ("import sys; from pytest_toolselect.providers import get_provider, ProviderSettings;"
            "get_provider('claude-code/x', ProviderSettings()); get_provider('openai-agents/x', "
            "ProviderSettings()); print(sorted(m for m in ('claude_agent_sdk', 'agents', 'openai')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(("model", "module", "extra"), [
    ("claude-code/claude-test", "claude_agent_sdk", "claude-code"),
    ("openai-agents/gpt-test", "agents", "openai-agents"),
])
def test_a_missing_extra_is_one_usage_error(project: Project, model: str, module: str,
                                            extra: str) -> None:
    project.config(model=model, api_base="http://127.0.0.1:9")
    project.cases([case(*FIND), case("two", "another", ["find_company"])])
    # the harness hidden from this run, as when its extra is not installed
    (project.path / "conftest.py").write_text(
        "import importlib.util\n"
        "_find = importlib.util.find_spec\n"
        f"importlib.util.find_spec = lambda name, *a: None if name == {module!r} else _find(name, *a)\n")
    result = project.pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.count(f"the {extra} harness is not installed") == 1
    assert f"pip install 'pytest-toolselect[{extra}]'" in err


tool_names = st.lists(st.text(min_size=1, max_size=12) | st.sampled_from(["Task", "Agent", "mcp__s__t"]),
                      max_size=8, unique=True)


@given(sent=tool_names, init=tool_names)
def test_the_probe_reads_the_requests_tools_in_order_then_the_deferred_ones(
        sent: list[str], init: list[str]) -> None:
    from pytest_toolselect.providers.claude_code_probe import read_request

    body = {"tools": [{"name": n} for n in sent], "system": [{"text": "ab"}, {"text": "cde"}],
            "max_tokens": 32000, "thinking": {"type": "adaptive"}}
    got = read_request(body, init)
    mine = [n for n in sent if not n.startswith("mcp__")]
    assert list(got.tools[:len(mine)]) == mine  # the request's order
    assert not any(n.startswith("mcp__") for n in got.tools)
    assert len(set(got.tools)) == len(got.tools)
    renamed = {"Agent" if n == "Task" else n for n in init if not n.startswith("mcp__")}
    assert set(got.tools) == set(mine) | renamed
    assert (got.system_chars, got.max_tokens) == (5, 32000)
    assert got.thinking == '{"type": "adaptive"}'
