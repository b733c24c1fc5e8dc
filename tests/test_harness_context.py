"""A case's earlier turns (TurnRequest.context) on the harness routes: the real Claude Code CLI
and a real Agents SDK agent against the fake API, with a stdio MCP server that records every
tools/call it gets. What the fake receives holds the question, the replayed calls and their
results (is_error too, where the wire has it), and the model's next turn is the turn scored.

Each call starts a harness (seconds): one call per route."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from harness_support import calls_of, require_harness
from hypothesis import given
from hypothesis import strategies as st

from conftest import REGISTRY_TOOLS, TOOLS_SERVER
from pytest_toolselect.exchange.context import GivenCall, GivenResult, GivenTurn, call_id
from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.inputs.config import ServerSpec
from pytest_toolselect.providers import ProviderSettings, TurnRequest, get_provider

QUESTION = "Who are the directors of Royal Mail Group?"
SEARCH = ('[{"company_number": "04138203", "title": "ROYAL MAIL GROUP LIMITED"}, '
          '{"company_number": "08680755", "title": "ROYAL MAIL PLC"}]')
#: two earlier turns: a search with text beside it, then two calls, one an error result and
#: one an MCP content list
CONTEXT = (
    GivenTurn(calls=(GivenCall("find_company", {"name": "Royal Mail Group"}, GivenResult(SEARCH),
                               call_id(1, 1)),), text="Let me search the register."),
    GivenTurn(calls=(
        GivenCall("list_officers", {"company_number": "4138203"},
                  GivenResult("company_number must have 8 digits", is_error=True), call_id(2, 1)),
        GivenCall("lookup_vat", {"vat_number": "GB745938421"},
                  GivenResult([{"type": "text", "text": "ROYAL MAIL GROUP LIMITED"},
                               {"type": "text", "text": "VAT registered"}]), call_id(2, 2)),
    )),
)
NEXT = {"company_number": "04138203"}


def _request(log: Path) -> TurnRequest:
    spec = ServerSpec(name="registry", command=sys.executable,
                      args=(str(TOOLS_SERVER), "--tools", json.dumps(REGISTRY_TOOLS),
                            "--call-log", str(log)))
    tools = tuple(Tool(t["name"], t["description"], t["inputSchema"], server="registry")
                  for t in REGISTRY_TOOLS)
    return TurnRequest(question=QUESTION, tools=tools, servers=(spec,), root=str(log.parent),
                       context=CONTEXT)


def _streamed(fake_api: FakeAPI) -> list[Any]:
    return [r.body for r in fake_api.requests if isinstance(r.body, dict) and r.body.get("stream")]


def test_claude_code_resumes_the_given_turns_and_scores_the_next_call(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_harness("claude_agent_sdk", "claude-code")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    log = tmp_path / "calls.jsonl"
    fake_api.handler = lambda body: Reply(tool_calls=[("mcp__registry__list_officers", NEXT)])
    provider = get_provider("claude-code/claude-test", ProviderSettings(
        api_base=fake_api.url, harness_tool_search="off", timeout=300, retries=0))
    turn = asyncio.run(provider.first_turn(_request(log)))

    assert turn.calls == (ToolCall("list_officers", NEXT),)  # the next call is the turn
    sent = _streamed(fake_api)
    assert len(sent) == 1  # still one turn: the replayed ones are not asked again
    system = " ".join(b.get("text", "") for b in sent[0]["system"])
    assert len(system) > 4000 and "Claude Agent SDK" in system  # the harness's own prompt
    turns = [m for m in sent[0]["messages"] if m["role"] in ("user", "assistant")]
    first, asked1, results1, asked2, results2 = turns
    assert QUESTION in json.dumps(first["content"])
    assert asked1["role"] == "assistant" and asked1["content"] == [
        {"type": "text", "text": "Let me search the register."},
        {"type": "tool_use", "id": "toolu_ctx_1_1", "name": "mcp__registry__find_company",
         "input": {"name": "Royal Mail Group"}}]
    assert results1["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_ctx_1_1",
                                      "content": SEARCH, "is_error": False}
    assert [(b["name"], b["id"], b["input"]) for b in asked2["content"]] == [
        ("mcp__registry__list_officers", "toolu_ctx_2_1", {"company_number": "4138203"}),
        ("mcp__registry__lookup_vat", "toolu_ctx_2_2", {"vat_number": "GB745938421"})]
    given = [b for b in results2["content"] if b["type"] == "tool_result"]
    assert given == [
        {"type": "tool_result", "tool_use_id": "toolu_ctx_2_1",
         "content": "company_number must have 8 digits", "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_ctx_2_2", "is_error": False,
         "content": [{"type": "text", "text": "ROYAL MAIL GROUP LIMITED"},
                     {"type": "text", "text": "VAT registered"}]}]
    # nothing asked after the results: beside them ride only the harness's own reminders and
    # the note it adds when it resumes a cut-off turn
    said = [b["text"] for b in results2["content"] if b["type"] == "text"
            and not b["text"].lstrip().startswith("<system-reminder>")]
    assert said == ["Continue from where you left off."]
    assert calls_of(log) == []  # no replayed or new call ran on the server


def test_the_agents_sdk_replays_the_given_turns_as_prior_items(
        fake_api: FakeAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_harness("agents", "openai-agents")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-test-key")
    log = tmp_path / "calls.jsonl"
    fake_api.handler = lambda body: Reply(tool_calls=[("list_officers", NEXT)])
    provider = get_provider("openai-agents/gpt-test", ProviderSettings(
        api_base=fake_api.url + "/v1", timeout=300, retries=0))
    turn = asyncio.run(provider.first_turn(_request(log)))

    assert turn.calls == (ToolCall("list_officers", NEXT),)
    (sent,) = [r.body for r in fake_api.requests]
    messages = [m for m in sent["messages"] if m["role"] != "system"]
    user, asked1, result1, asked2, result2a, result2b = messages
    assert user == {"role": "user", "content": QUESTION}
    assert asked1["role"] == "assistant" and asked1["content"] == "Let me search the register."
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in asked1["tool_calls"]] == [
        ("toolu_ctx_1_1", "find_company", {"name": "Royal Mail Group"})]
    assert result1 == {"role": "tool", "tool_call_id": "toolu_ctx_1_1", "content": SEARCH}
    assert [(c["id"], c["function"]["name"]) for c in asked2["tool_calls"]] == [
        ("toolu_ctx_2_1", "list_officers"), ("toolu_ctx_2_2", "lookup_vat")]
    # the Chat Completions wire has no error flag: an error result's text says it, as the
    # openai/ route's does
    assert result2a == {"role": "tool", "tool_call_id": "toolu_ctx_2_1",
                        "content": "Error: company_number must have 8 digits"}
    assert result2b == {"role": "tool", "tool_call_id": "toolu_ctx_2_2",
                        "content": "ROYAL MAIL GROUP LIMITED\nVAT registered"}
    assert calls_of(log) == []


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                           | st.text(), lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
given_calls = st.builds(GivenCall, name=st.sampled_from(["find_company", "Bash", "other"]),
                        arguments=st.dictionaries(st.text(max_size=8), json_values, max_size=3),
                        result=st.builds(GivenResult, content=json_values, is_error=st.booleans()),
                        id=st.just(""))
given_turns = st.lists(st.builds(GivenTurn, calls=st.lists(given_calls, min_size=1, max_size=3)
                                 .map(tuple), text=st.text(max_size=20)), min_size=1, max_size=3)


@given(question=st.text(min_size=1), turns=given_turns)
def test_a_session_holds_every_given_turn_linked_in_order(question: str,
                                                          turns: list[GivenTurn]) -> None:
    """Whatever the text, arguments and results: the question, then per turn its assistant
    message and its results, each entry linked to the one before, every call answered by
    its own id, the MCP tools under the harness's names, and it survives JSON lines."""
    from dataclasses import replace

    from pytest_toolselect.providers.claude_code_session import harness_names, session_entries

    context = tuple(replace(t, calls=tuple(replace(c, id=call_id(n, i))
                                           for i, c in enumerate(t.calls, 1)))
                    for n, t in enumerate(turns, 1))
    tools = (Tool("find_company", "d", server="my server"),)
    entries = session_entries(question, context, harness_names(tools), session_id="s", cwd="/w",
                              version="1", now=datetime.now(timezone.utc))
    assert [json.loads(json.dumps(e, ensure_ascii=False)) for e in entries] == entries
    assert [e["parentUuid"] for e in entries] == [None] + [e["uuid"] for e in entries[:-1]]
    assert [e["type"] for e in entries] == ["user"] + ["assistant", "user"] * len(context)
    assert entries[0]["message"]["content"] == question
    for turn, asked, answered in zip(context, entries[1::2], entries[2::2], strict=True):
        uses = [b for b in asked["message"]["content"] if b["type"] == "tool_use"]
        assert [b["id"] for b in uses] == [c.id for c in turn.calls]
        assert [b["input"] for b in uses] == [c.arguments for c in turn.calls]
        assert [b["name"] for b in uses] == [
            "mcp__my_server__find_company" if c.name == "find_company" else c.name for c in turn.calls]
        texts = [b["text"] for b in asked["message"]["content"] if b["type"] == "text"]
        assert texts == ([turn.text] if turn.text else [])
        results = answered["message"]["content"]
        assert [(r["tool_use_id"], r["is_error"]) for r in results] == [
            (c.id, c.result.is_error) for c in turn.calls]
