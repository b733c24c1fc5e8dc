"""MCP discovery against real servers: stdio (tests/servers/, examples/), streamable HTTP,
and static tools files."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import HTTP_TOKEN, free_port, http_mcp_server
from pytest_toolselect.discovery import servers
from pytest_toolselect.discovery.servers import (
    ServerTools,
    clear_cache,
    discover,
    load_tools_file,
    offered_tools,
)
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.inputs.config import ServerSpec
from pytest_toolselect.messages.errors import ServerError

ROOT = Path(__file__).resolve().parent.parent
TOOLS_SERVER = "tests/servers/tools_server.py"
BROKEN_SERVER = "tests/servers/broken_server.py"

SEARCH = {
    "name": "search",
    "description": "Search the catalogue.",
    "inputSchema": {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
    },
}
FETCH = {"name": "fetch", "description": "Fetch one item by its id."}


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


def tools_server(
    name: str,
    tools: list[dict[str, Any]],
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 300.0,
) -> ServerSpec:
    return ServerSpec(
        name=name,
        command="python",
        args=(TOOLS_SERVER, "--tools", json.dumps(tools), *args),
        env=tuple((env or {}).items()),
        timeout=timeout,
    )


def broken_server(
    name: str, mode: str, env: dict[str, str] | None = None, timeout: float = 300.0
) -> ServerSpec:
    return ServerSpec(
        name=name,
        command="python",
        args=(BROKEN_SERVER, mode),
        env=tuple((env or {}).items()),
        timeout=timeout,
    )


def tools_file(tmp_path: Path, name: str, data: Any) -> ServerSpec:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return ServerSpec(name=name, tools_file=str(path))


def starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


# --- stdio -------------------------------------------------------------------------------


def test_discovers_tools_and_instructions() -> None:
    spec = tools_server("catalogue", [SEARCH, FETCH], "--instructions", "Search before fetch.")
    found = discover(spec, ROOT)
    assert found == ServerTools(
        server="catalogue",
        tools=(
            Tool("search", "Search the catalogue.", SEARCH["inputSchema"], server="catalogue"),
            Tool(
                "fetch",
                "Fetch one item by its id.",
                {"type": "object", "properties": {}},
                server="catalogue",
            ),
        ),
        instructions="Search before fetch.",
    )


def test_follows_every_page_of_tools_list() -> None:
    many = [{"name": f"tool_{i}", "description": f"Tool number {i}."} for i in range(7)]
    found = discover(tools_server("paged", many, "--page-size", "3"), ROOT)
    assert [t.name for t in found.tools] == [f"tool_{i}" for i in range(7)]
    assert found.instructions is None


def test_a_repeated_cursor_is_an_error_not_a_hang() -> None:
    spec = tools_server("loops", [SEARCH, FETCH], "--page-size", "1", "--bad-cursor")
    with pytest.raises(ServerError, match=r"'loops'.*repeated the tools/list cursor 'again'"):
        discover(spec, ROOT)


def test_server_sees_only_declared_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSELECT_TEST_SECRET", "must-not-leak")
    spec = tools_server("envs", [], "--report-env", env={"COMPANIES_API_KEY": "declared"})
    (report,) = discover(spec, ROOT).tools
    seen = json.loads(report.description)
    assert seen["COMPANIES_API_KEY"] == "declared"
    assert "TOOLSELECT_TEST_SECRET" not in seen
    assert seen["PATH"] == os.environ["PATH"]  # the SDK's safe default set still applies


def test_env_values_read_the_environment_where_they_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI_COMPANIES_KEY", "from-ci-" + "k" * 8)
    env = {"COMPANIES_API_KEY": "${CI_COMPANIES_KEY}", "PRICE": "$${CI_COMPANIES_KEY} costs $5"}
    (report,) = discover(tools_server("envs", [], "--report-env", env=env), ROOT).tools
    seen = json.loads(report.description)
    assert seen["COMPANIES_API_KEY"] == "from-ci-" + "k" * 8
    assert seen["PRICE"] == "${CI_COMPANIES_KEY} costs $5"  # $${...} is the text itself
    assert "CI_COMPANIES_KEY" not in seen  # the variable was read, not passed on

    monkeypatch.delenv("CI_COMPANIES_KEY")
    servers.clear_cache()
    with pytest.raises(ServerError) as info:
        discover(tools_server("envs", [], "--report-env", env=env), ROOT)
    assert str(info.value).endswith(
        "servers.envs.env.COMPANIES_API_KEY reads ${CI_COMPANIES_KEY}, which is not set in the environment"
        " (set CI_COMPANIES_KEY (in CI, from a secret), or write the value itself)")


def test_each_server_starts_once_per_process(tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    spec = tools_server("counted", [SEARCH], env={"TOOLS_SERVER_START_LOG": str(log)})
    # Concurrent first users wait for one start rather than starting one each.
    results: list[ServerTools] = []
    threads = [threading.Thread(target=lambda: results.append(discover(spec, ROOT))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(r is results[0] for r in results)
    offered_tools([spec], ROOT)
    offered_tools([spec], ROOT, "mcp__{server}__{tool}")
    assert starts(log) == 1

    clear_cache()
    discover(spec, ROOT)
    assert starts(log) == 2


def test_a_failure_is_cached_too(tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    spec = broken_server("flaky", "exit", env={"START_LOG": str(log)})
    with pytest.raises(ServerError) as first:
        discover(spec, ROOT)
    with pytest.raises(ServerError) as second:
        offered_tools([spec], ROOT)
    assert str(first.value) == str(second.value)
    assert starts(log) == 1


def test_command_not_found() -> None:
    spec = ServerSpec(name="ghost", command="toolselect-no-such-server", args=("--stdio",))
    with pytest.raises(ServerError, match=r"'ghost'.*command 'toolselect-no-such-server' not found"):
        discover(spec, ROOT)


def test_cwd_that_does_not_exist() -> None:
    spec = ServerSpec(name="lost", command="python", args=(TOOLS_SERVER,), cwd="no/such/dir")
    with pytest.raises(ServerError, match=r"'lost'.*cwd .*no/such/dir.* is not a directory"):
        discover(spec, ROOT)


def test_server_that_exits_at_once_shows_its_stderr() -> None:
    with pytest.raises(ServerError) as err:
        discover(broken_server("registry", "exit"), ROOT)
    message = str(err.value)
    assert "MCP server 'registry'" in message
    assert "exited or closed its stdout during initialize" in message
    assert "fatal: COMPANIES_API_KEY is not set" in message


def test_server_that_crashes_in_initialize() -> None:
    with pytest.raises(ServerError) as err:
        discover(broken_server("registry", "crash"), ROOT)
    message = str(err.value)
    assert "during initialize" in message
    assert "RuntimeError: cannot open the registry database" in message


def test_server_that_prints_to_stdout() -> None:
    with pytest.raises(ServerError, match=r"not JSON-RPC: 'Starting companies server v1.2...'"):
        discover(broken_server("chatty", "print"), ROOT)


def test_timeout_names_server_and_limit_and_leaves_no_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    spec = broken_server("sleepy", "slow", env={"PID_FILE": str(pid_file)}, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(ServerError, match=r"'sleepy'.*within 1 s \(timeout"):
        discover(spec, ROOT)
    # the timeout and the SDK's bounded shutdown, not the server's 600 s sleep (a bound that
    # only catches a hang: a loaded machine may take far longer than the usual few seconds)
    assert time.monotonic() - started < 300
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_duplicate_tool_within_one_server() -> None:
    with pytest.raises(ServerError, match=r"server 'twice' lists the tool 'search' twice"):
        discover(tools_server("twice", [SEARCH, FETCH, SEARCH]), ROOT)


def test_discover_works_inside_a_running_event_loop() -> None:
    import anyio

    async def from_async_code() -> ServerTools:
        return discover(tools_server("inloop", [SEARCH]), ROOT)

    assert [t.name for t in anyio.run(from_async_code).tools] == ["search"]


def test_unexpected_errors_become_server_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(spec: ServerSpec, root: Path) -> ServerTools:
        raise KeyError("internal")

    monkeypatch.setattr(servers, "_run_async", boom)
    with pytest.raises(ServerError, match=r"'odd'.*KeyError"):
        discover(ServerSpec(name="odd", command="python"), ROOT)


def test_the_module_does_not_import_mcp_when_loaded() -> None:
    code = "import sys, pytest_toolselect.discovery.servers; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- the example servers -----------------------------------------------------------------


def test_example_servers_offered_together() -> None:
    companies = ServerSpec(name="companies", command="python", args=("examples/companies/server.py",))
    finance = ServerSpec(name="finance", command="python", args=("examples/finance/server.py",))
    tools, instructions = offered_tools([companies, finance], ROOT, "mcp__{server}__{tool}")
    assert [t.name for t in tools] == [
        "mcp__companies__find_company",
        "mcp__companies__get_company",
        "mcp__companies__list_officers",
        "mcp__companies__list_filings",
        "mcp__companies__list_charges",
        "mcp__companies__lookup_vat",
        "mcp__companies__search_officers",
        "mcp__finance__company_lookup",
        "mcp__finance__credit_report",
        "mcp__finance__vat_check",
        "mcp__finance__exchange_rate",
        "mcp__finance__invoice_status",
        "mcp__finance__payment_history",
    ]
    get_company = tools[1]
    assert get_company.original_name == "get_company" and get_company.server == "companies"
    assert get_company.input_schema["required"] == ["company_number"]
    assert get_company.description.startswith("Get a company's profile")
    assert instructions is not None
    assert instructions.startswith("## companies\nCompanies registry")
    assert "\n\n## finance\nBusiness credit data" in instructions


# --- streamable HTTP ---------------------------------------------------------------------


#: the module's HTTP MCP server is shared: these tests run on one worker (--dist loadgroup),
#: so it is started once
SHARES_HTTP_SERVER = pytest.mark.xdist_group("test_servers.http_server")


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    # one server for the module's tests (it keeps no state between them): a start is seconds
    with http_mcp_server([SEARCH, FETCH], "--instructions", "Over HTTP.", "--page-size", "1") as url:
        yield url


AUTH = (("Authorization", f"Bearer {HTTP_TOKEN}"),)


@SHARES_HTTP_SERVER
def test_streamable_http(http_server: str) -> None:
    spec = ServerSpec(name="remote", url=http_server, headers=AUTH)
    found = discover(spec, ROOT)
    assert [t.name for t in found.tools] == ["search", "fetch"]
    assert found.tools[0].input_schema == SEARCH["inputSchema"]
    assert found.instructions == "Over HTTP."

    wrong_path = ServerSpec(name="remote", url=http_server.replace("/mcp", "/sse"), headers=AUTH)
    with pytest.raises(ServerError, match=r"'remote'.*404 Not Found"):
        discover(wrong_path, ROOT)


@SHARES_HTTP_SERVER
@pytest.mark.parametrize("headers", [(), (("Authorization", "Bearer expired-token-123"),)])
def test_a_refused_token_is_a_401_that_points_at_the_headers(http_server: str,
                                                              headers: tuple[tuple[str, str], ...]) -> None:
    spec = ServerSpec(name="remote", url=http_server, headers=headers)
    with pytest.raises(ServerError) as info:
        discover(spec, ROOT)
    message = str(info.value)
    assert "'remote'" in message and "answered 401 Unauthorized during initialize" in message
    assert "check the credentials in servers.remote.headers" in message
    assert "expired-token-123" not in message


#: what each path of the faulty endpoint answers: status, content type, body
_RPC_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad protocol version"}}
_ANSWERS: dict[str, tuple[int, str, bytes]] = {
    "/html500": (500, "text/html", b"<html><body>Internal Server Error</body></html>"),
    "/gateway": (502, "text/plain", b"upstream connect error"),
    "/garbage": (200, "application/json", b"this is not json"),
    "/page": (200, "text/html", b"<html>a login page</html>"),
    "/rpc-error": (400, "application/json", json.dumps(_RPC_ERROR).encode()),
}


@SHARES_HTTP_SERVER
def test_a_header_reads_its_token_from_the_environment(http_server: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REMOTE_MCP_BEARER", HTTP_TOKEN)
    headers = (("Authorization", "Bearer ${REMOTE_MCP_BEARER}"),)
    spec = ServerSpec(name="remote", url=http_server, headers=headers)
    assert [t.name for t in discover(spec, ROOT).tools] == ["search", "fetch"]
    # the value read is one of the server's secrets, masked in its messages
    assert "Bearer " + HTTP_TOKEN in spec.secrets and HTTP_TOKEN in spec.secrets


class _Faulty(BaseHTTPRequestHandler):
    """An endpoint that is not a working MCP server: a gateway, a proxy, a web page."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        status, kind, body = _ANSWERS[self.path]
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_DELETE = do_POST


@pytest.fixture(scope="module")
def faulty_endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Faulty)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("path", "expected"), [
    ("/html500", r"answered 500 Internal Server Error during initialize \(the server failed: see its logs\)"),
    ("/gateway", r"answered 502 Bad Gateway during initialize"),
    ("/garbage", r"answered initialize with a body that is not JSON-RPC: Invalid JSON: .*'this is not json'"),
    ("/page", r"Unexpected content type: text/html"),
    ("/rpc-error", r"answered 400 Bad Request during initialize: bad protocol version"),
])
def test_an_endpoint_that_is_not_an_mcp_server_says_what_it_answered(
        faulty_endpoint: str, path: str, expected: str, caplog: pytest.LogCaptureFixture) -> None:
    spec = ServerSpec(name="gw", url=faulty_endpoint + path, timeout=300)
    with caplog.at_level(logging.DEBUG), pytest.raises(ServerError) as info:
        discover(spec, ROOT)
    assert re.search(r"'gw' \(streamable HTTP: .*" + expected, str(info.value)), str(info.value)
    # the error says it all: no traceback of the SDK's follows it in the captured log
    assert not [r for r in caplog.records if r.exc_info and r.name.startswith("mcp.")]


def test_connection_refused() -> None:
    spec = ServerSpec(name="down", url=f"http://127.0.0.1:{free_port()}/mcp", timeout=10)
    with pytest.raises(ServerError, match=r"'down'.*cannot connect"):
        discover(spec, ROOT)


# --- the offered set ---------------------------------------------------------------------


def test_union_keeps_server_order_then_tool_order(tmp_path: Path) -> None:
    a = tools_file(tmp_path, "a", [{"name": "a2"}, {"name": "a1"}])
    b = tools_file(tmp_path, "b", [{"name": "b1"}])
    tools, instructions = offered_tools([b, a], ROOT)
    assert [(t.server, t.name) for t in tools] == [("b", "b1"), ("a", "a2"), ("a", "a1")]
    assert all(t.original_name == "" for t in tools)
    assert instructions is None
    assert offered_tools([], ROOT) == ((), None)


def test_name_clash_names_both_servers_and_suggests_a_format(tmp_path: Path) -> None:
    a = tools_file(tmp_path, "registry", [{"name": "lookup"}])
    b = tools_file(tmp_path, "credit", [{"name": "other"}, {"name": "lookup"}])
    with pytest.raises(ServerError) as err:
        offered_tools([a, b], ROOT)
    message = str(err.value)
    assert "servers 'registry' and 'credit' both offer a tool named 'lookup'" in message
    assert "mcp__{server}__{tool}" in message


def test_tool_name_format_renames_every_tool(tmp_path: Path) -> None:
    a = tools_file(tmp_path, "registry", [{"name": "lookup", "description": "R"}])
    b = tools_file(tmp_path, "credit", [{"name": "lookup", "description": "C"}])
    tools, _ = offered_tools([a, b], ROOT, "mcp__{server}__{tool}")
    assert [(t.name, t.original_name, t.server, t.description) for t in tools] == [
        ("mcp__registry__lookup", "lookup", "registry", "R"),
        ("mcp__credit__lookup", "lookup", "credit", "C"),
    ]


def test_a_format_that_still_clashes_or_is_malformed(tmp_path: Path) -> None:
    a = tools_file(tmp_path, "registry", [{"name": "lookup"}])
    b = tools_file(tmp_path, "credit", [{"name": "lookup"}])
    with pytest.raises(ServerError, match=r"gives the name 'x_lookup' to tools of servers"):
        offered_tools([a, b], ROOT, "x_{tool}")
    with pytest.raises(ServerError, match=r"tool_name_format '\{srv\}_\{tool\}' cannot be applied"):
        offered_tools([a], ROOT, "{srv}_{tool}")


def test_instructions_of_one_server_are_passed_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    given = {
        "one": ServerTools("one", (Tool("t1", ""),), "Use t1."),
        "two": ServerTools("two", (Tool("t2", ""),), None),
        "three": ServerTools("three", (Tool("t3", ""),), "Use t3."),
    }
    monkeypatch.setattr(servers, "discover", lambda spec, root: given[spec.name])
    specs = {name: ServerSpec(name=name, tools_file="x") for name in given}
    assert offered_tools([specs["one"], specs["two"]], ROOT)[1] == "Use t1."
    assert offered_tools([specs["two"]], ROOT)[1] is None
    joined = offered_tools([specs["three"], specs["two"], specs["one"]], ROOT)[1]
    assert joined == "## three\nUse t3.\n\n## one\nUse t1."


# --- static tools files ------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}


def test_tools_file_shapes(tmp_path: Path) -> None:
    path = tmp_path / "tools.yaml"
    path.write_text(
        """
tools:
  - name: mcp_camel           # MCP, as tools/list sends it
    description: MCP shape.
    inputSchema: {type: object, properties: {id: {type: string}}, required: [id]}
  - name: mcp_snake           # MCP, as the Python SDK spells it; also Anthropic's shape
    description: Anthropic shape.
    input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
  - type: function            # OpenAI Chat Completions
    function:
      name: openai_nested
      description: OpenAI shape.
      parameters: {type: object, properties: {id: {type: string}}, required: [id]}
  - {type: function, name: openai_flat, description: Responses shape., parameters: null}
  - name: bare
""",
        encoding="utf-8",
    )
    tools = load_tools_file(path)
    assert [(t.name, t.description) for t in tools] == [
        ("mcp_camel", "MCP shape."),
        ("mcp_snake", "Anthropic shape."),
        ("openai_nested", "OpenAI shape."),
        ("openai_flat", "Responses shape."),
        ("bare", ""),
    ]
    assert [t.input_schema for t in tools[:3]] == [SCHEMA] * 3
    assert tools[3].input_schema == tools[4].input_schema == {"type": "object", "properties": {}}


def test_tools_file_as_a_server_resolves_against_root(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "builtins.json").write_text(
        json.dumps([{"name": "Read", "description": "Read a file.", "input_schema": SCHEMA}])
    )
    found = discover(ServerSpec(name="builtins", tools_file="tools/builtins.json"), tmp_path)
    assert found == ServerTools("builtins", (Tool("Read", "Read a file.", SCHEMA, server="builtins"),), None)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"name": "x"}', r"a mapping needs a 'tools' list"),
        ('"just text"', r"expected a list of tools.*got the string 'just text'"),
        ('{"tools": {"name": "x"}}', r"at tools: expected a list of tools"),
        ('[{"name": "a"}, "b"]', r"at entry 1: a tool must be a mapping, got the string 'b'"),
        ('{"tools": [{"description": "d"}]}', r"at tools\[0\]: missing 'name'"),
        ('[{"name": ""}]', r"at entry 0: 'name' must be a non-empty string"),
        ('[{"name": "a", "description": 3}]', r"tool 'a': 'description' must be a string"),
        ('[{"name": "a", "inputSchema": []}]', r"'inputSchema' must be a mapping"),
        ('[{"name": "a", "input_schema": {"type": "array"}}]', r"type must be 'object'"),
        ('[{"name": "a", "inputSchema": {}, "input_schema": {}}]', r"give only one of"),
        ('[{"name": "a", "input_shema": {}}]', r"unknown key 'input_shema' \(did you mean"),
        ('[{"type": "tool", "function": {"name": "a"}}]', r"type must be 'function'"),
        ('[{"type": "function", "function": "a"}]', r"'function' must be a mapping"),
        ('[{"name": "a"}, {"name": "b"}, {"name": "a"}]', r"entry 2: duplicate tool name 'a'.*0"),
        ('[{"name": "a"},\n {"name": ]', r":2: invalid JSON"),
    ],
)
def test_bad_tools_file(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ServerError, match=expected) as err:
        load_tools_file(path)
    assert str(path) in str(err.value)


def test_bad_yaml_and_missing_file_through_a_server(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text("tools:\n  - name: a\n  - name: [b\n", encoding="utf-8")
    with pytest.raises(ServerError, match=r"tools.yaml:\d+: server 'builtins': invalid YAML"):
        discover(ServerSpec(name="builtins", tools_file="tools.yaml"), tmp_path)
    with pytest.raises(ServerError, match=r"missing.yaml: server 'gone': tools file not found"):
        discover(ServerSpec(name="gone", tools_file="missing.yaml"), tmp_path)
