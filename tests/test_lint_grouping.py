"""Repeated findings grouped: one rule on one parameter across a server's tools is one
finding naming every tool (repo_path in the 11 tools of mcp-server-git), so a newcomer reads
one line per fix; silencing and errors stay tool by tool."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_lint_corpora import CORPUS

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.inputs.cases import IdentifierSettings
from pytest_toolselect.lint.findings import ERROR
from pytest_toolselect.lint.run import lint
from pytest_toolselect.lint.tool_rules import ToolSet


def git() -> ToolSet:
    [server] = [s for s in CORPUS if s["package"] == "mcp-server-git"]
    return ToolSet({"git": tuple(Tool(t["name"], t["description"], t["inputSchema"])
                                 for t in server["tools"])})


def test_repo_path_of_mcp_server_git_is_one_finding_naming_its_eleven_tools() -> None:
    findings = lint(git(), IdentifierSettings()).findings
    repo = [f for f in findings if f.subject == "repo_path"]
    assert len(repo) == 1
    [f] = repo
    assert f.rule == "parameter-without-description" and len(f.tools) == 11
    assert f.message.startswith("11 tools: parameter 'repo_path' has no description")
    assert f.data["tool_count"] == 11
    # every finding is about another (rule, parameter)
    keys = [(f.rule, f.subject) for f in findings if f.subject]
    assert len(keys) == len(set(keys))


NAMES = st.lists(st.from_regex(r"[a-z]{3,8}", fullmatch=True), min_size=1, max_size=12, unique=True)


@settings(max_examples=40, deadline=None)
@given(NAMES, st.from_regex(r"[a-z]{3,8}_id", fullmatch=True))
def test_a_parameter_shared_by_any_number_of_tools_is_one_finding(names: list[str], shared: str) -> None:
    tools = tuple(Tool(f"t_{n}", f"Does the {n} thing with a record and returns what it found.",
                       {"type": "object", "properties": {shared: {"type": "string"}}})
                  for n in names)
    findings = lint(ToolSet({"s": tools}), IdentifierSettings()).findings
    for rule in ("parameter-without-description", "identifier-without-format"):
        mine = [f for f in findings if f.rule == rule and f.subject == shared]
        assert len(mine) == 1, rule
        assert mine[0].tools == tuple(t.name for t in tools)


def test_silencing_one_tool_leaves_the_others_grouped_and_errors_stay_apart() -> None:
    def tools(n: int, extra: dict[str, object]) -> tuple[Tool, ...]:
        return tuple(Tool(f"get_time_{i}", "Current time in a timezone, as ISO 8601 text.",
                          {"type": "object", "properties": {"zone": {"type": "string"}, **extra}})
                     for i in range(n))

    ts = ToolSet({"s": tools(3, {})})
    allow = {"s": {"get_time_0": ["parameter-without-description"]}}
    [f] = [f for f in lint(ts, IdentifierSettings(), allow=allow).findings if f.subject == "zone"]
    assert f.tools == ("get_time_1", "get_time_2")
    secret = ToolSet({"s": tools(3, {"password": {"type": "string", "description": "Your password."}})})
    errors = [f for f in lint(secret, IdentifierSettings()).findings
              if f.rule == "secret-seeking-parameter"]
    assert [f.tools for f in errors] == [("get_time_0",), ("get_time_1",), ("get_time_2",)]
    assert all(f.severity == ERROR for f in errors)
