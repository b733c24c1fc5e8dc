"""A suite with a stdio and a streamable HTTP server: both discovered at once, every run.

Discovery runs in worker threads; the first import of the MCP SDK's two transports in two
threads at once deadlocked in Python's import locks, nearly every run. Each run here is a
fresh interpreter (a subprocess), as a user's is: only there is the SDK's import a first one.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest

from conftest import FIND, HTTP_TOKEN, NESTED_XDIST, OFFICERS, REGISTRY_TOOLS, Project, case, http_mcp_server
from pytest_toolselect.discovery.failures import _fail, _Probe
from pytest_toolselect.inputs.config import ServerSpec
from pytest_toolselect.messages.errors import ServerError

#: runs of the serial suite: the deadlock came in nearly every run, so six fresh
#: interpreters miss it only if it came in fewer than about one run in three
RUNS = 6


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    with http_mcp_server(REGISTRY_TOOLS) as url:
        yield url


def _two_transports(project: Project, url: str, per_server: int) -> None:
    project.config({"git": project.stdio_server(REGISTRY_TOOLS),
                    "remote": {"url": url, "headers": {"Authorization": f"Bearer {HTTP_TOKEN}"}}})
    cases = [case(f"{server}_{name}{i}", question, expect, servers=[server])
             for i in range(per_server) for server in ("git", "remote")
             for name, question, expect in [FIND if i % 2 == 0 else OFFICERS]]
    project.cases(cases)


def _every_run_passes(project: Project, runs: int, cases: int, *args: str) -> None:
    for run in range(runs):
        result = project.pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
        outcomes = result.parseoutcomes()
        # stops at the first bad run: the rest would only repeat it
        assert (result.ret, outcomes.get("passed"), outcomes.get("errors", 0)) == (0, cases, 0), (
            f"run {run + 1} of {runs}:\n" + "\n".join(result.outlines[-30:]))


def test_a_stdio_and_an_http_server_every_run(project: Project, http_server: str) -> None:
    _two_transports(project, http_server, per_server=1)
    _every_run_passes(project, RUNS, 2)


@NESTED_XDIST
def test_a_stdio_and_an_http_server_under_xdist(project: Project, http_server: str) -> None:
    # two cases per server, so each worker process discovers both servers
    _two_transports(project, http_server, per_server=2)
    _every_run_passes(project, 2, 4, "-n", "2")


@pytest.mark.parametrize("fault", [
    importlib._bootstrap._DeadlockError(  # type: ignore[attr-defined]
        "deadlock detected by _ModuleLock('mcp.client.streamable_http')"),
    ImportError("cannot import name 'x' from partially initialized module 'mcp.client'"),
])
def test_a_fault_of_this_process_is_not_blamed_on_the_config(fault: Exception) -> None:
    spec = ServerSpec(name="git", url="http://127.0.0.1:1/mcp")
    with pytest.raises(ServerError) as info:
        _fail(spec, _Probe(), fault)
    message = str(info.value)
    assert "check servers.git" not in message
    assert "internal error of pytest-toolselect" in message and type(fault).__name__ in message


def test_a_servers_own_fault_still_points_at_its_entry() -> None:
    spec = ServerSpec(name="git", url="http://127.0.0.1:1/mcp")
    with pytest.raises(ServerError) as info:
        _fail(spec, _Probe(), ValueError("the server sent nonsense"))
    assert "check servers.git in the config" in str(info.value)
