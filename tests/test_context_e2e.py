"""Cases past the first call, end to end: a user's project with a real MCP server over stdio,
run by pytest through the real SDKs on both wires against the fake API. The fake model reads
the replayed results off the wire, as a real one would, and answers from them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anthropic  # noqa: F401  (the SDKs are imported once, before pytester snapshots)
import mcp.client.stdio  # noqa: F401
import openai  # noqa: F401
import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from harness_support import require_harness

from conftest import REGISTRY_TOOLS, Project

FOUND = ('[{"company_number": "04138203", "title": "ROYAL MAIL GROUP LIMITED"},\n'
         ' {"company_number": "08680755", "title": "ROYAL MAIL PLC"}]')
SEARCH = {"call": {"name": "find_company", "arguments": {"name": "Royal Mail Group"}},
          "result": FOUND}
HOLDS = "Who are the directors of Royal Mail Group?"
DECOY = "Who are the directors of the Royal Mail group company?"
INVENTED = "Which officers does Royal Mail Group have?"
RETRY = "List the officers of Royal Mail Group."
DECORATED = "And the directors of that Royal Mail company?"


def _results(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The tool results replayed in a request, either wire: (text, is_error)."""
    out: list[tuple[str, bool]] = []
    for m in body["messages"]:
        if m["role"] == "tool":  # OpenAI's wire says a failure in the text
            out.append((m["content"].removeprefix("Error: "), m["content"].startswith("Error: ")))
        elif m["role"] == "user" and isinstance(m["content"], list):
            out += [(b["content"] if isinstance(b["content"], str)
                     else "".join(p["text"] for p in b["content"]), bool(b.get("is_error")))
                    for b in m["content"] if b.get("type") == "tool_result"]
    return out


def _model(body: dict[str, Any]) -> Reply:
    question = next(m["content"] for m in body["messages"] if m["role"] == "user")
    results = _results(body)
    if not results:  # no context reached the model: it can only search
        return Reply(tool_calls=[("find_company", {"name": "Royal Mail Group"})])
    text, failed = results[-1]
    if question == RETRY:
        # the number it sent was refused: it sends it again with its leading zero
        number = "04138203" if failed else "4138203"
    elif question == INVENTED:
        number = "01234567"  # a number from memory, in no source
    else:
        matches = json.loads(text)
        number = matches[1 if question == DECOY else 0]["company_number"]
    return Reply(tool_calls=[("list_officers", {"company_number": number})])


def _case(id: str, question: str, **fields: Any) -> dict[str, Any]:
    return {"id": id, "question": question, "why": "The search returned the number.",
            "context": [SEARCH], "expect_tool": ["list_officers"],
            "expect_args": [{"path": "company_number", "equals": "04138203"}],
            "forbid_ungrounded": True, "decoys": ["08680755"], **fields}


@pytest.mark.parametrize("model", ["anthropic/claude-test", "openai/gpt-test",
                                   "openai-agents/gpt-test"])
def test_a_case_past_the_first_call_through_a_real_server_and_sdk(
        project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    if model.startswith("openai-agents/"):  # the harness route: a real Agents SDK agent
        require_harness("agents", "openai-agents")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-" + "e2e-context-" + "0" * 16)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-e2e-context-" + "1" * 24)
    fake_api.handler = _model
    base = fake_api.url if model.startswith("anthropic/") else fake_api.url + "/v1"
    project.config(servers={"registry": project.stdio_server(REGISTRY_TOOLS)},
                   model=model, api_base=base, retry_backoff=0)
    refused = {"call": {"name": "list_officers", "arguments": {"company_number": "4138203"}},
               "result": [{"type": "text", "text": "company_number must have 8 digits"}],
               "is_error": True}
    # the decoy's search found many: a report shows its result clipped
    many = json.loads(FOUND) + [{"company_number": f"{n:08d}", "title": f"ROYAL MAIL {n}"}
                                for n in range(9000000, 9000030)]
    project.cases([_case("holds", HOLDS),
                   _case("decoy", DECOY, context=[{**SEARCH, "result": json.dumps(many)}]),
                   _case("invented", INVENTED),
                   _case("retry", RETRY, context=[SEARCH, refused])])
    project.pytester.makepyfile(test_context_decorated=f'''
from pytest_toolselect import case

@case(question={DECORATED!r}, context=[{SEARCH!r}], expect_tool=["list_officers"],
      forbid_ungrounded=True, why="the search returned it")
def test_after_search(toolselect_result):
    pass
''')
    result = project.pytester.runpytest("--toolselect-json=out.json", "-p", "no:randomly",
                                        "--toolselect-html=out.html",
                                        "--toolselect-markdown=out.md")
    result.assert_outcomes(passed=3, failed=2)
    cases = {c["case_id"]: c for c in json.loads((project.path / "out.json").read_text())["cases"]}
    assert {k: c["status"] for k, c in cases.items() if k in ("holds", "retry")} == {
        "holds": "held", "retry": "held"}
    assert cases["decoy"]["failing_checks"] == ["arguments", "no_decoy_identifier"]
    assert cases["invented"]["failing_checks"] == ["arguments", "no_identifier_invented"]
    out = result.stdout.str()
    # the terminal shows what a failing case was given, under its question
    result.stdout.fnmatch_lines(["question: Which officers does Royal Mail Group have?",
                                 "given:    turn 1: find_company(name='Royal Mail Group') "
                                 'returned [[]{"company_number": "04138203", *',
                                 "expected: list_officers"])
    assert re.search(r"no_decoy_identifier: decoy used as an identifier: list_officers \(call 1\) "
                     r'company_number="08680755" matches decoy "08680755", found in '
                     r"find_company's result, turn 1", out), out
    assert re.search(r"no_identifier_invented: identifier in no source \(not in the question "
                     r'nor in any given result\): list_officers \(call 1\) '
                     r'company_number="01234567"', out), out
    # the held case's grounding names the result it came from
    checks = {k: {c["name"]: c for c in cases[k]["checks"][0]} for k in ("holds", "retry")}
    assert checks["holds"]["no_identifier_invented"]["detail"] == (
        "all 1 identifier(s) are grounded: 04138203 from find_company's result, turn 1")
    # the corrected call is the one scored: the refused one was given, not asked for
    assert checks["retry"]["arguments"]["detail"] == (
        'list_officers (call 1): company_number equal "04138203"')
    assert len(fake_api.requests) == 5
    # the reports show what a failing case was given, clipped; a held case's is not repeated
    given = "turn 1: find_company(name='Royal Mail Group') returned \\[{"
    comment = (project.path / "out.md").read_text()
    lines = [line for line in comment.splitlines() if line.startswith("- given: ")]
    assert len(lines) == 2 and all(given in line for line in lines), comment
    assert any(re.search(r"… \(\+[\d,]+ chars\)$", line) for line in lines), lines
    html = (project.path / "out.html").read_text()
    shown = re.findall(r'<span class="line context sub">given: ([^<]*)</span>', html)
    assert len(shown) == 2 and all("find_company(name=" in x for x in shown), shown
    assert max(len(x) for x in shown) < 400


def test_a_changed_context_is_a_change_of_the_case(project: Project, fake_api: FakeAPI,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-e2e-context-" + "2" * 24)
    fake_api.handler = _model
    project.config(servers={"registry": project.stdio_server(REGISTRY_TOOLS)},
                   model="openai/gpt-test", api_base=fake_api.url + "/v1", retry_backoff=0)
    project.cases([_case("holds", HOLDS)])
    project.pytester.runpytest("--toolselect-baseline=base.json").assert_outcomes(passed=1)
    # the same search, but its result lists the matches the other way round
    swapped = {**SEARCH, "result": json.dumps(list(reversed(json.loads(FOUND))))}
    project.cases([_case("holds", HOLDS, context=[swapped])])
    result = project.pytester.runpytest("--toolselect-baseline=base.json",
                                        "--toolselect-json=out.json")
    [record] = json.loads((project.path / "out.json").read_text())["cases"]
    assert record["case_changed"] and not record["tools_changed"]
    # the model took the first match, now the decoy: a regression the case's change explains
    assert record["failing_checks"] == ["arguments", "no_decoy_identifier"]
    result.stdout.fnmatch_lines(["*the case itself*"])


def test_the_dry_run_counts_the_context_in_the_prompt(project: Project,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    model = "anthropic/claude-haiku-4-5"
    project.config(prices={model: {"input_per_mtok": 1, "output_per_mtok": 5}})
    long = {**SEARCH, "result": [{"company_number": f"{n:08d}", "title": "X" * 40}
                                 for n in range(100)]}
    project.cases([_case("short", HOLDS), _case("long", HOLDS, context=[long])])
    result = project.pytester.runpytest("--toolselect-dry-run", f"--toolselect-model={model}")
    assert result.ret == 0, result.stdout.str()
    found = re.search(r"input: about ([\d,]+) tokens \(tools ([\d,]+), system ([\d,]+), "
                      r"question ([\d,]+), tool use ([\d,]+), context ([\d,]+) \(the given "
                      r"calls and results\)\)", result.stdout.str())
    assert found is not None, result.stdout.str()
    total, *parts = (int(g.replace(",", "")) for g in found.groups())
    assert total == sum(parts)
    # the hundred matches of the one case with context, at four characters a token
    assert parts[-1] > 100 * 60 // 4
