"""Where tools come from, end to end: stdio, streamable HTTP, tools files, several servers."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from conftest import FIND, HTTP_TOKEN, OFFICERS, REGISTRY_TOOLS, Project, case, http_mcp_server

VAT = [t for t in REGISTRY_TOOLS if t["name"] == "lookup_vat"]
COMPANY = [t for t in REGISTRY_TOOLS if t["name"] != "lookup_vat"]


def test_stdio_server(project: Project) -> None:
    project.config({"registry": project.stdio_server(REGISTRY_TOOLS)})
    project.cases([case(*FIND), case(*OFFICERS)])
    result = project.pytester.runpytest()
    result.assert_outcomes(passed=2)


def test_union_of_servers_in_order(project: Project) -> None:
    project.config({"companies": project.stdio_server(COMPANY),
                    "vat": {"tools_file": project.tools_file("vat", VAT)}})
    project.cases([case("vat", "Check the VAT registration number GB 745 9384 21", ["lookup_vat"],
                        servers=["companies", "vat"]),
                   case(*FIND, servers=["companies", "vat"]),
                   case("only_vat", FIND[1], [], servers=["vat"])])
    result = project.pytester.runpytest()
    # only_vat: find_company is not offered, and BM25 finds nothing close enough in the VAT tool
    result.assert_outcomes(passed=3)


def test_name_clash_is_an_error_unless_names_are_formatted(project: Project) -> None:
    project.config({"a": {"tools_file": project.tools_file("a")},
                    "b": {"tools_file": project.tools_file("b")}})
    project.cases([case(*FIND, servers=["a", "b"]), case("alone", FIND[1], FIND[2], servers=["a"])])
    result = project.pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*find_company*tool_name_format*"])

    project.config({"a": {"tools_file": project.tools_file("a")},
                    "b": {"tools_file": project.tools_file("b")}},
                   tool_name_format="mcp__{server}__{tool}")
    project.cases([case("find", FIND[1], ["mcp__a__find_company", "mcp__b__find_company"],
                        servers=["a", "b"])])
    result = project.pytester.runpytest()
    result.assert_outcomes(passed=1)


def test_a_server_that_cannot_start_errors_its_items_only(project: Project) -> None:
    project.config({"broken": {"command": "no-such-mcp-server-command"},
                    "registry": {"tools_file": project.tools_file()}})
    project.cases([case(*FIND, servers=["broken"]), case(*OFFICERS, servers=["registry"])])
    result = project.pytester.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*broken*no-such-mcp-server-command*", "*errors (not scored*"])


def test_a_server_that_exits_at_once_errors_its_items(project: Project) -> None:
    project.config({"dead": {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]},
                    "registry": {"tools_file": project.tools_file()}})
    project.cases([case(*FIND, servers=["dead"]), case("again", FIND[1], FIND[2], servers=["dead"]),
                   case(*OFFICERS, servers=["registry"])])
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    result.assert_outcomes(passed=1, errors=2)
    # errored cases do not enter a recorded baseline
    assert sorted(project.read_baseline()["cases"]) == ["registry.toolselect.yaml::officers"]


def test_unknown_server_name_is_an_error(project: Project) -> None:
    project.config()
    project.cases([case(*FIND, servers=["nope"])])
    result = project.pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*unknown server 'nope'*servers defined in *toolselect.yaml: registry*"])


@pytest.fixture
def http_server() -> Iterator[str]:
    with http_mcp_server(REGISTRY_TOOLS) as url:
        yield url


def test_streamable_http_server(project: Project, http_server: str) -> None:
    # the server answers 401 without the token: passing shows the config's headers are sent
    project.config({"remote": {"url": http_server, "headers": {"Authorization": f"Bearer {HTTP_TOKEN}"}}})
    project.cases([case(*FIND), case(*OFFICERS)])
    result = project.pytester.runpytest()
    result.assert_outcomes(passed=2)


def test_openai_and_anthropic_tool_shapes(project: Project) -> None:
    openai = [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                "parameters": t["inputSchema"]}}
              for t in REGISTRY_TOOLS]
    anthropic = [{"name": t["name"], "description": t["description"],
                  "input_schema": t["inputSchema"]} for t in REGISTRY_TOOLS]
    project.config({"oa": {"tools_file": project.tools_file("oa", openai)},
                    "an": {"tools_file": project.tools_file("an", anthropic)}})
    project.cases([case("oa", FIND[1], FIND[2], servers=["oa"]),
                   case("an", FIND[1], FIND[2], servers=["an"])])
    result = project.pytester.runpytest()
    result.assert_outcomes(passed=2)
