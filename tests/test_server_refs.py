"""``${NAME}`` in a server's args, url and tools_file, and credentials in a URL's query string.

A token belongs in CI's secrets, wherever the server takes it: an argument, the URL, a header.
A reference is read when the server starts; the config and every message keep ``${NAME}``,
and the value read is masked in the server's messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import HTTP_TOKEN, http_mcp_server
from pytest_toolselect.discovery.servers import clear_cache, discover
from pytest_toolselect.inputs.config import ServerSpec
from pytest_toolselect.messages.errors import ServerError
from pytest_toolselect.messages.masking import redact

ROOT = Path(__file__).resolve().parent.parent
TOOLS_SERVER = "tests/servers/tools_server.py"
SEARCH = {"name": "search", "description": "Search the catalogue.",
          "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}
AUTH = (("Authorization", f"Bearer {HTTP_TOKEN}"),)


@pytest.fixture(autouse=True)
def _fresh() -> None:
    clear_cache()


def stdio(name: str, *args: str) -> ServerSpec:
    return ServerSpec(name=name, command="python",
                      args=(TOOLS_SERVER, "--tools", json.dumps([SEARCH]), *args), timeout=300.0)


def test_an_argument_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_NOTE_TOKEN", "read-from-ci-" + "n" * 8)
    spec = stdio("argref", "--instructions", "note: ${MCP_NOTE_TOKEN}", "--page-size", "$${KEPT}")
    with pytest.raises(ServerError):
        # $${KEPT} is the text ${KEPT}, which the server's int() refuses: the escape holds
        discover(spec, ROOT)
    clear_cache()
    spec = stdio("argref", "--instructions", "note: ${MCP_NOTE_TOKEN}")
    assert discover(spec, ROOT).instructions == "note: read-from-ci-" + "n" * 8
    # the value read is one of the server's secrets; the argument as written is not
    assert "read-from-ci-" + "n" * 8 in spec.secrets
    assert not any("${" in s for s in spec.secrets)


def test_an_unset_variable_in_an_argument_names_its_place(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_NOTE_TOKEN", raising=False)
    with pytest.raises(ServerError) as info:
        discover(stdio("argref", "--instructions", "${MCP_NOTE_TOKEN}"), ROOT)
    assert ("servers.argref.args[4] reads ${MCP_NOTE_TOKEN}, which is not set in the environment"
            in str(info.value))
    assert "set MCP_NOTE_TOKEN (in CI, from a secret)" in str(info.value)


def test_a_tools_file_path_reads_the_environment(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "reg.tools.json").write_text(json.dumps({"tools": [SEARCH]}))
    monkeypatch.setenv("TOOLS_DIR", str(tmp_path))
    spec = ServerSpec(name="static", tools_file="${TOOLS_DIR}/reg.tools.json")
    assert [t.name for t in discover(spec, ROOT).tools] == ["search"]
    monkeypatch.delenv("TOOLS_DIR")
    clear_cache()
    with pytest.raises(ServerError, match=r"servers\.static\.tools_file reads \$\{TOOLS_DIR\}"):
        discover(spec, ROOT)


def test_a_url_reads_its_token_and_messages_mask_it(monkeypatch: pytest.MonkeyPatch) -> None:
    token = "q-" + "z" * 14
    monkeypatch.setenv("REMOTE_QUERY_TOKEN", token)
    with http_mcp_server([SEARCH]) as url:
        spec = ServerSpec(name="remote", url=url + "?token=${REMOTE_QUERY_TOKEN}", headers=AUTH)
        assert [t.name for t in discover(spec, ROOT).tools] == ["search"]
        assert token in spec.secrets
        clear_cache()
        # refused (no Authorization): the message names the URL, never the token in it
        refused = ServerSpec(name="remote", url=url + "?token=${REMOTE_QUERY_TOKEN}")
        with pytest.raises(ServerError) as info:
            discover(refused, ROOT)
        assert "401" in str(info.value) and token not in str(info.value)
        clear_cache()
        # a token written into the URL itself is masked too
        literal = ServerSpec(name="remote", url=url + f"?api_key={token}")
        with pytest.raises(ServerError) as info:
            discover(literal, ROOT)
        assert token not in str(info.value) and "api_key=***" in str(info.value)
    monkeypatch.delenv("REMOTE_QUERY_TOKEN")
    clear_cache()
    with pytest.raises(ServerError, match=r"servers\.remote\.url reads \$\{REMOTE_QUERY_TOKEN\}"):
        discover(ServerSpec(name="remote", url="http://127.0.0.1:9/mcp?t=${REMOTE_QUERY_TOKEN}"),
                 ROOT)


_NAMES = st.sampled_from(["token", "access_token", "api_key", "apikey", "key", "secret",
                          "client_secret", "password", "auth", "sig", "X-Amz-Signature"])
_VALUES = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEF0123456789-_.~%"),
                  min_size=1, max_size=40).filter(
    lambda v: not any(p in v for p in ("sk-", "rk-", "pk-")))  # key-shaped: masked anyway


@given(name=_NAMES, value=_VALUES, upper=st.booleans(), first=st.booleans())
def test_a_credential_in_a_query_string_is_masked_and_the_rest_kept(
        name: str, value: str, upper: bool, first: bool) -> None:
    name = name.upper() if upper else name
    query = f"{name}={value}&page=2" if first else f"page=2&{name}={value}#top"
    shown = redact(f"MCP server 'x' (streamable HTTP: https://mcp.example.com/v1?{query}) failed")
    assert f"{name}=***" in shown
    assert "page=2" in shown and shown.startswith("MCP server 'x' (streamable HTTP: https://")
    assert shown.endswith(") failed")


@given(name=st.sampled_from(["page", "q", "design", "lang", "cursor"]), value=_VALUES)
def test_other_query_parameters_are_left_as_they_are(name: str, value: str) -> None:
    url = f"https://mcp.example.com/v1?{name}={value}"
    assert redact(url) == url


def test_the_whole_url_can_come_from_the_environment(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_toolselect.inputs.config import load_config

    (tmp_path / "toolselect.yaml").write_text(
        "servers:\n  remote:\n    url: ${REMOTE_MCP_URL}\n"
        "    headers: {Authorization: 'Bearer ${REMOTE_MCP_BEARER}'}\n")
    spec = load_config(tmp_path).servers["remote"]
    assert spec.url == "${REMOTE_MCP_URL}"  # kept as written until the server starts
    monkeypatch.setenv("REMOTE_MCP_BEARER", HTTP_TOKEN)
    with http_mcp_server([SEARCH]) as url:
        monkeypatch.setenv("REMOTE_MCP_URL", url)
        assert [t.name for t in discover(spec, ROOT).tools] == ["search"]
    clear_cache()
    monkeypatch.setenv("REMOTE_MCP_URL", "mcp.example.com/" + "s" * 12)
    with pytest.raises(ServerError) as info:
        discover(spec, ROOT)
    assert "servers.remote.url is not an http:// or https:// URL once its ${NAME} is read" in str(
        info.value)
    assert "s" * 12 not in str(info.value)


@pytest.mark.parametrize("where", ["query", "path"])
def test_a_token_in_a_server_url_never_reaches_the_captured_logs(
        project: Any, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    # httpx logs every request's URL at INFO, the MCP SDK the endpoint it connects to
    from conftest import WRONG, case

    token = "tk" + "q" * 18
    monkeypatch.setenv("MCP_URL_SECRET", token)
    with http_mcp_server([SEARCH, {**SEARCH, "name": "list_officers"}]) as url:
        if where == "query":
            written = url + "?token=${MCP_URL_SECRET}"
        else:  # a tenant path segment under a name that does not look secret
            written = url.replace("/mcp", "/mcp/${MCP_URL_SECRET}")
        project.config({"remote": {"url": written, "headers": {"Authorization": f"Bearer {HTTP_TOKEN}"}}})
        project.cases([case(*WRONG)])
        result = project.pytester.runpytest_subprocess("-rA", "--log-level=DEBUG", "-vv",
                                                       "--junitxml=junit.xml")
    out = result.stdout.str() + result.stderr.str()
    assert "HTTP Request: POST" in out, out  # the log is there, with the URL masked
    assert token not in out
    assert token not in (project.path / "junit.xml").read_text()
