"""A case's context replayed on each wire, through the real SDKs against the fake API: the
assistant's calls, then their results, after the question; and the cache key holds it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from test_providers import WIRES, api_keys, make  # noqa: F401  (the api_keys fixture)

from pytest_toolselect.exchange.context import GivenCall, GivenResult, GivenTurn
from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.providers import TurnRequest
from pytest_toolselect.providers.local import LocalBM25
from pytest_toolselect.run.cache import request_key

TOOLS = (Tool("find_company", "Search the register by name.",
              {"type": "object", "properties": {"query": {"type": "string"}}}),
         Tool("get officers", "The officers of a company, by number.",
              {"type": "object", "properties": {"company_number": {"type": "string"}}}))
QUESTION = "Who are the directors of Royal Mail Group?"
FOUND = '[{"company_number": "04138203", "title": "ROYAL MAIL GROUP LIMITED"}]'
CONTEXT = (
    GivenTurn((GivenCall("find_company", {"query": "Royal Mail Group"}, GivenResult(FOUND),
                         "toolu_ctx_1_1"),), "Let me search."),
    GivenTurn((GivenCall("get officers", {"company_number": "4138203"},
                         GivenResult([{"type": "text", "text": "no such company"}], is_error=True),
                         "toolu_ctx_2_1"),
               GivenCall("find_company", {"query": "Royal Mail"},
                         GivenResult({"items": [], "total": 0}), "toolu_ctx_2_2"))),
)


def _ask(wire: str, api: FakeAPI, context: tuple[GivenTurn, ...] = CONTEXT) -> Any:
    api.queue(Reply(tool_calls=[("get_officers", {"company_number": "04138203"})]))
    turn = asyncio.run(make(wire, api).first_turn(TurnRequest(QUESTION, TOOLS, context=context)))
    return turn, api.requests[-1].body


def test_anthropic_replays_tool_use_then_tool_result_with_is_error(fake_api: FakeAPI) -> None:
    turn, body = _ask("anthropic", fake_api)
    assert body["messages"] == [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me search."},
            {"type": "tool_use", "id": "toolu_ctx_1_1", "name": "find_company",
             "input": {"query": "Royal Mail Group"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_ctx_1_1", "content": FOUND}]},
        {"role": "assistant", "content": [
            # a name the wire refuses goes out as the tools list names it
            {"type": "tool_use", "id": "toolu_ctx_2_1", "name": "get_officers",
             "input": {"company_number": "4138203"}},
            {"type": "tool_use", "id": "toolu_ctx_2_2", "name": "find_company",
             "input": {"query": "Royal Mail"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_ctx_2_1",
             "content": [{"type": "text", "text": "no such company"}], "is_error": True},
            {"type": "tool_result", "tool_use_id": "toolu_ctx_2_2",
             "content": '{"items":[],"total":0}'}]},
    ]
    assert turn.calls == (ToolCall("get officers", {"company_number": "04138203"}),)


@pytest.mark.parametrize("wire", ["openai", "litellm"])
def test_chat_wires_replay_tool_calls_then_tool_messages(wire: str, fake_api: FakeAPI) -> None:
    turn, body = _ask(wire, fake_api)
    messages = body["messages"]
    assert messages[0] == {"role": "user", "content": QUESTION}
    first, *rest = messages[1:]
    assert first["role"] == "assistant" and first["content"] == "Let me search."
    assert [(c["id"], c["type"], c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in first["tool_calls"]] == [
        ("toolu_ctx_1_1", "function", "find_company", {"query": "Royal Mail Group"})]
    assert rest[0] == {"role": "tool", "tool_call_id": "toolu_ctx_1_1", "content": FOUND}
    second = rest[1]
    assert second["role"] == "assistant" and not second.get("content")
    assert [c["function"]["name"] for c in second["tool_calls"]] == ["get_officers",
                                                                     "find_company"]
    # the wire has no error flag: the failure is said in the tool message's text
    assert rest[2:] == [
        {"role": "tool", "tool_call_id": "toolu_ctx_2_1", "content": "Error: no such company"},
        {"role": "tool", "tool_call_id": "toolu_ctx_2_2", "content": '{"items":[],"total":0}'}]
    assert turn.calls == (ToolCall("get officers", {"company_number": "04138203"}),)


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_a_request_without_context_sends_the_question_alone(wire: str, fake_api: FakeAPI) -> None:
    _, body = _ask(wire, fake_api, ())
    assert [m for m in body["messages"] if m["role"] != "system"] == [
        {"role": "user", "content": QUESTION}]


def test_the_cache_key_holds_the_context_and_first_turns_keep_theirs() -> None:
    subject = {"provider": "anthropic", "model": "m"}
    plain = TurnRequest(QUESTION, TOOLS)
    given = TurnRequest(QUESTION, TOOLS, context=CONTEXT)
    assert request_key(subject, given) != request_key(subject, plain)
    # a first-turn request hashes what it always hashed: caches recorded before still serve
    assert request_key(subject, plain) == request_key(subject, TurnRequest(QUESTION, TOOLS, rep=0))
    changed = (CONTEXT[0], GivenTurn((CONTEXT[1].calls[0],
                                      GivenCall("find_company", {"query": "Royal Mail"},
                                                GivenResult({"items": [], "total": 1}),
                                                "toolu_ctx_2_2"))))
    flag = (GivenTurn((GivenCall("find_company", {"query": "Royal Mail Group"},
                                 GivenResult(FOUND, is_error=True), "toolu_ctx_1_1"),),
                      "Let me search."), CONTEXT[1])
    keys = {request_key(subject, TurnRequest(QUESTION, TOOLS, context=c))
            for c in (CONTEXT, changed, flag)}
    assert len(keys) == 3


def test_local_bm25_scores_the_question_whatever_the_results_say() -> None:
    from pytest_toolselect.providers import ProviderSettings

    local = LocalBM25(ProviderSettings(bm25_threshold=0.1))
    noisy = (GivenTurn((GivenCall("find_company", {}, GivenResult(
        "officers directors officers directors get officers"), "toolu_ctx_1_1"),)),)
    question = "Search the register for Royal Mail by name"
    alone = asyncio.run(local.first_turn(TurnRequest(question, TOOLS)))
    after = asyncio.run(local.first_turn(TurnRequest(question, TOOLS, context=noisy)))
    assert alone.calls == after.calls == (ToolCall("find_company", {}),)


def test_the_cost_cap_reserves_for_the_longer_prompt() -> None:
    from pytest_toolselect.providers import ProviderSettings
    from pytest_toolselect.providers.anthropic_api import AnthropicProvider

    provider = AnthropicProvider("anthropic/claude-test", ProviderSettings(
        prices={"anthropic/claude-test": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}))
    alone = provider.max_cost_usd(TurnRequest(QUESTION, TOOLS))
    after = provider.max_cost_usd(TurnRequest(QUESTION, TOOLS, context=CONTEXT))
    assert alone is not None and after is not None
    # every byte of the given calls and results is input, at $1 per million tokens
    given = len(json.dumps([{"text": t.text, "calls": [
        {"name": c.name, "arguments": c.arguments, "id": c.id, "result": c.result.content,
         "is_error": c.result.is_error} for c in t.calls]} for t in CONTEXT],
        ensure_ascii=False).encode())
    assert after - alone == pytest.approx(given / 1e6)


def test_the_agents_sdk_route_reserves_for_the_longer_prompt() -> None:
    from pytest_toolselect.providers import ProviderSettings, get_provider

    pytest.importorskip("agents")
    provider = get_provider("openai-agents/gpt-test", ProviderSettings(
        prices={"openai-agents/gpt-test": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}))
    alone = provider.max_cost_usd(TurnRequest(QUESTION, TOOLS))
    after = provider.max_cost_usd(TurnRequest(QUESTION, TOOLS, context=CONTEXT))
    assert alone is not None and after is not None and after > alone
