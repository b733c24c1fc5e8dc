"""Servers declared once, for the MCP client: toolselect.yaml takes them from the client's file.

Real files of each client's shape (Claude Code's .mcp.json, VS Code's .vscode/mcp.json,
Cursor's .cursor/mcp.json, Claude Desktop's claude_desktop_config.json) name a real stdio
server and a real streamable HTTP server; the suite runs against them end to end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import (
    FIND,
    HTTP_TOKEN,
    OFFICERS,
    REGISTRY_TOOLS,
    TOOLS_SERVER,
    Project,
    case,
    dump,
    http_mcp_server,
)
from pytest_toolselect.inputs.client_servers import strip_jsonc
from pytest_toolselect.inputs.config import load_config
from pytest_toolselect.messages.errors import ToolselectError


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    with http_mcp_server(REGISTRY_TOOLS) as url:
        yield url


def stdio_args(folder: str) -> list[str]:
    """The test server's arguments with its script given relative to the project folder, as a
    client file in a repository names it."""
    return [f"{folder}server.py", "--tools", json.dumps(REGISTRY_TOOLS)]


def claude_code(url: str) -> tuple[str, str]:
    return ".mcp.json", json.dumps({"mcpServers": {
        "git": {"command": sys.executable, "args": stdio_args("${SERVER_DIR:-./}")},
        "remote": {"type": "http", "url": url,
                   "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}},
    }}, indent=2)


def vscode(url: str) -> tuple[str, str]:
    # VS Code's file is JSON with comments and trailing commas
    return ".vscode/mcp.json", """{
  // the servers this workspace uses
  "servers": {
    "git": {
      "type": "stdio",
      "command": "COMMAND",
      "args": ARGS, /* started in the workspace */
    },
    "remote": {"type": "http", "url": "URL",
               "headers": {"Authorization": "Bearer ${env:REMOTE_TOKEN}"},},
  },
}
""".replace("COMMAND", sys.executable).replace(
        "ARGS", json.dumps(stdio_args("${workspaceFolder}/"))).replace("URL", url)


def cursor(url: str) -> tuple[str, str]:
    return ".cursor/mcp.json", json.dumps({"mcpServers": {
        "git": {"command": sys.executable, "args": stdio_args("${workspaceFolder}/")},
        "remote": {"url": url, "headers": {"Authorization": "Bearer ${env:REMOTE_TOKEN}"}},
    }})


def desktop(url: str) -> tuple[str, str]:
    # Claude Desktop starts stdio servers only, and expands no variables
    return "claude_desktop_config.json", json.dumps({"mcpServers": {
        "git": {"command": sys.executable, "args": stdio_args("./")},
    }})


CLIENTS = {"claude-code": claude_code, "vscode": vscode, "cursor": cursor, "desktop": desktop}


def write_project(project: Project, client: str, url: str, *, named: bool) -> tuple[str, list[str]]:
    """The client's file, a config that takes its servers (named, or found), one case a
    server; the file's path and the servers it declares."""
    (project.path / "server.py").write_text(TOOLS_SERVER.read_text())
    written, text = CLIENTS[client](url)
    path = project.path / written
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    servers = ["git"] if client == "desktop" else ["git", "remote"]
    (project.path / "toolselect.yaml").write_text(
        dump({"servers_from": written}) if named else "model: local/bm25\n")
    project.cases([case(f"{s}_{name}", question, expect, servers=[s])
                   for s in servers for name, question, expect in (FIND, OFFICERS)])
    return written, servers


@pytest.mark.parametrize("named", [True, False], ids=["named", "found"])
@pytest.mark.parametrize("client", list(CLIENTS))
def test_a_client_files_servers_run_the_suite(project: Project, http_server: str,
                                              monkeypatch: pytest.MonkeyPatch, client: str,
                                              named: bool) -> None:
    if not named and client == "desktop":
        pytest.skip("Claude Desktop's file lives in the user's settings: it is only ever named")
    written, servers = write_project(project, client, http_server, named=named)
    monkeypatch.setenv("REMOTE_TOKEN", HTTP_TOKEN)
    # from a subfolder, as CI may run it
    sub = project.path / "sub"
    sub.mkdir()
    monkeypatch.chdir(sub)
    result = project.pytester.runpytest_subprocess("-p", "no:cacheprovider", "--rootdir",
                                                   str(project.path), str(project.path))
    out = result.stdout.str()
    assert result.parseoutcomes().get("passed") == 2 * len(servers), out
    assert result.ret == 0 and HTTP_TOKEN not in out, out
    # toolselect tools says where each server came from
    listing = subprocess.run([sys.executable, "-m", "pytest_toolselect.cli", "tools"],
                             cwd=project.path, capture_output=True, text=True, timeout=300)
    assert listing.returncode == 0, listing.stderr
    for server in servers:
        assert f"{server}: 3 tools (from {written}:" in listing.stdout, listing.stdout
    assert HTTP_TOKEN not in listing.stdout + listing.stderr


def test_a_server_in_both_places_is_refused_naming_both(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "git": {"command": "git-mcp"}}}, indent=2))
    (tmp_path / "toolselect.yaml").write_text(dump({
        "servers_from": ".mcp.json", "servers": {"git": {"tools_file": "git.tools.json"}}}))
    with pytest.raises(ToolselectError) as info:
        load_config(tmp_path)
    message = str(info.value)
    assert "toolselect.yaml:" in message and ".mcp.json:3" in message and "'git'" in message


def test_a_server_in_two_client_files_is_refused_naming_both(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"git": {"command": "a"}}}))
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"git": {"command": "b"}}}))
    (tmp_path / "toolselect.yaml").write_text("model: local/bm25\n")
    with pytest.raises(ToolselectError) as info:
        load_config(tmp_path)
    assert ".mcp.json:1" in str(info.value) and ".cursor/mcp.json:1" in str(info.value)


def test_every_mistake_of_a_client_file_is_said_at_once_with_its_line(tmp_path: Path) -> None:
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "mcp.json").write_text(json.dumps({"servers": {
        "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
        "asks": {"type": "stdio", "command": "x", "args": ["${input:api-key}"]},
        "none": {"type": "stdio"},
        "fine": {"type": "stdio", "command": "y"},
    }}, indent=2))
    (tmp_path / "toolselect.yaml").write_text(dump({"servers_from": ".vscode/mcp.json"}))
    with pytest.raises(ToolselectError) as info:
        load_config(tmp_path)
    message = str(info.value)
    for said in ("an SSE server", "${input:api-key}", "needs a command"):
        assert message.count(said) == 1, message
    assert "fine" not in message
    assert ".vscode/mcp.json:4: at servers.old.type" in message  # its type, on its own line
    assert "servers.asks.args[0]" in message


def test_a_file_servers_from_names_must_exist(tmp_path: Path) -> None:
    (tmp_path / "toolselect.yaml").write_text(dump({"servers_from": [".mcp.json"]}))
    with pytest.raises(ToolselectError) as info:
        load_config(tmp_path)
    assert "toolselect.yaml:2: at servers_from[0]" in str(info.value)
    assert "'.mcp.json' is not a file" in str(info.value)


def test_a_config_that_names_servers_takes_no_client_file_unasked(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "a"}}}))
    (tmp_path / "toolselect.yaml").write_text(dump({"servers": {"git": {"tools_file": "g.json"}}}))
    assert list(load_config(tmp_path).servers) == ["git"]


@pytest.mark.parametrize("client,written,expect", [
    ("claude-code", "${HOME_DIR:-/opt}/x ${TOKEN} $5 ${EMPTY:-}", "/opt/x ${TOKEN} $5 "),
    ("desktop", "${TOKEN} ${HOME_DIR:-/opt}", "$${TOKEN} $${HOME_DIR:-/opt}"),
    ("cursor", "${env:TOKEN} ${workspaceFolderBasename}", "${TOKEN} proj"),
])
def test_variables_are_read_as_the_client_reads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     client: str, written: str, expect: str) -> None:
    monkeypatch.delenv("HOME_DIR", raising=False)
    root = tmp_path / "proj"
    files = {"claude-code": ".mcp.json", "desktop": "claude_desktop_config.json",
             "cursor": ".cursor/mcp.json"}
    path = root / files[client]
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"s": {"command": "c", "args": [written]}}}))
    (root / "toolselect.yaml").write_text(dump({"servers_from": files[client]}))
    (arg,) = load_config(root).servers["s"].args
    # an environment variable stays a reference, read when the server starts (and masked)
    assert arg == expect


def test_a_dollar_right_before_a_reference_is_refused_not_misread(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "$${X}"}}}))
    (tmp_path / "toolselect.yaml").write_text(dump({"servers_from": ".mcp.json"}))
    with pytest.raises(ToolselectError, match=r"at mcpServers\.s\.command: .* a '\$' right before"):
        load_config(tmp_path)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet=st.characters(codec="utf-8")),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12)


@given(json_values)
def test_plain_json_is_read_unchanged_whatever_its_strings_hold(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert strip_jsonc(text) == text


@given(json_values, st.lists(st.sampled_from(["// note, ]\n", "/* a, ] } */", " ", "\n"]), min_size=1))
def test_comments_and_trailing_commas_are_read_away_keeping_every_line(value: Any,
                                                                      extras: list[str]) -> None:
    text = json.dumps(value, indent=1, ensure_ascii=False)
    # a raw line break is only ever between tokens (strings escape theirs): a trailing comma
    # before every closing bracket on its own line, then a comment or blank after every break
    noisy = text.replace("\n]", ",\n]").replace("\n}", ",\n}")
    parts = noisy.split("\n")
    noisy = "".join(part + ("\n" + extras[i % len(extras)] if i < len(parts) - 1 else "")
                    for i, part in enumerate(parts))
    stripped = strip_jsonc(noisy)
    assert json.loads(stripped) == value
    assert stripped.count("\n") == noisy.count("\n") and len(stripped) == len(noisy)
