"""The real-model providers, through the real SDKs, against a fake API on loopback.

Every test that calls runs for both wire formats: Anthropic's Messages API
(anthropic/<model> through the anthropic SDK) and OpenAI's Chat Completions
(openai/<model> through the openai SDK, and through litellm, which serves the
providers no native route does). No network: the SDKs talk to `fake_api`.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from typing import Any

import pytest
from fakeapi import ANTHROPIC_PATH, OPENAI_PATH, FakeAPI, Reply, fake_api_fixture  # noqa: F401

from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.messages.errors import ProviderError, ToolselectError
from pytest_toolselect.providers import (
    ProviderCallError,
    ProviderSettings,
    TruncatedError,
    Turn,
    TurnRequest,
    UnreadableReplyError,
    get_provider,
    pricing,
)
from pytest_toolselect.providers.anthropic_api import AnthropicProvider
from pytest_toolselect.providers.api_keys import redact
from pytest_toolselect.providers.litellm_api import LiteLLMProvider
from pytest_toolselect.providers.openai_api import OpenAIProvider
from pytest_toolselect.providers.retry import backoff, retry_after
from pytest_toolselect.providers.wire import SAFE_NAME, NameMap, parse_arguments

ANTHROPIC_KEY = "sk-ant-test-000"
OPENAI_KEY = "sk-test-000"

SCHEMA_FIND = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
SCHEMA_OFFICERS = {"type": "object", "properties": {"company_number": {"type": "string"}}}
TOOLS = (
    # a zod-built MCP server sends $schema: it must not reach the provider
    Tool("find_company", "Search the register by company name.",
         {"$schema": "http://json-schema.org/draft-07/schema#", **SCHEMA_FIND}),
    Tool("list_officers", "List a company's officers by company number.", SCHEMA_OFFICERS),
)
QUESTION = "Who are the officers of company 01234567?"

# (model, api_base from the fake's url, the path the SDK posts to)
WIRES = {
    "anthropic": ("anthropic/claude-haiku-4-5", "", ANTHROPIC_PATH),
    "openai": ("openai/gpt-4o", "/v1", OPENAI_PATH),
    # the same wire format through litellm (get_provider sends gemini/, bedrock/, ... there)
    "litellm": ("openai/gpt-4o", "/v1", OPENAI_PATH),
}
Made = AnthropicProvider | OpenAIProvider | LiteLLMProvider
CLASSES: dict[str, type[Made]] = {"anthropic": AnthropicProvider, "openai": OpenAIProvider,
                                  "litellm": LiteLLMProvider}


@pytest.fixture(autouse=True)
def api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    for var in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(params=sorted(WIRES))
def wire(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Sleeps:
    """An injected sleep: records each wait and spends none of it."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def make(wire: str, api: FakeAPI, model: str | None = None, sleep: Sleeps | None = None,
         **settings: Any) -> Made:
    default_model, suffix, _ = WIRES[wire]
    settings.setdefault("backoff_base", 0.001)
    s = ProviderSettings(api_base=api.url + suffix, **settings)
    return CLASSES[wire](model or default_model, s, sleep=sleep)


def ask(provider: Made, tools: tuple[Tool, ...] = TOOLS, question: str = QUESTION,
        system: str | None = None) -> Turn:
    # as the session does: one asyncio.run per call (so clients must survive loop changes)
    return asyncio.run(provider.first_turn(TurnRequest(question, tools, system)))


def sent_tools(wire: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools of a recorded request as (name, description, schema) dicts, either format."""
    if wire == "anthropic":
        return [{"name": t["name"], "description": t.get("description"), "schema": t["input_schema"]}
                for t in body.get("tools", [])]
    return [{"name": t["function"]["name"], "description": t["function"].get("description"),
             "schema": t["function"]["parameters"]} for t in body.get("tools", [])]


def user_and_system(wire: str, body: dict[str, Any]) -> tuple[list[Any], Any]:
    if wire == "anthropic":
        return body["messages"], body.get("system")
    msgs = body["messages"]
    system = [m["content"] for m in msgs if m["role"] == "system"]
    return [m for m in msgs if m["role"] != "system"], (system[0] if system else None)


# --- what is sent ---------------------------------------------------------------------
def test_the_request_carries_exactly_the_tools_and_nothing_else(wire: str, fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(tool_calls=[("list_officers", {"company_number": "01234567"})]))
    turn = ask(make(wire, fake_api))

    [req] = fake_api.requests
    assert req.path == WIRES[wire][2]
    body = req.body
    assert sent_tools(wire, body) == [
        {"name": "find_company", "description": "Search the register by company name.",
         "schema": SCHEMA_FIND},
        {"name": "list_officers", "description": "List a company's officers by company number.",
         "schema": SCHEMA_OFFICERS},
    ]
    assert body["tool_choice"] == ({"type": "auto"} if wire == "anthropic" else "auto")
    messages, system = user_and_system(wire, body)
    assert messages == [{"role": "user", "content": QUESTION}]
    assert system is None
    assert body["max_tokens"] == 1024
    assert "temperature" not in body  # the provider's default sampling
    assert turn.dropped_schema_keys == ("find_company/$schema",)
    assert turn.calls == (ToolCall("list_officers", {"company_number": "01234567"}),)


def test_system_prompt_temperature_and_max_tokens_are_sent_when_set(wire: str, fake_api: FakeAPI) -> None:
    ask(make(wire, fake_api, temperature=0.3, max_tokens=77), system="Use the register tools.")
    body = fake_api.requests[0].body
    messages, system = user_and_system(wire, body)
    assert system == "Use the register tools."
    assert messages == [{"role": "user", "content": QUESTION}]
    assert body["temperature"] == 0.3
    assert body["max_tokens"] == 77


def test_an_empty_system_prompt_sends_none(wire: str, fake_api: FakeAPI) -> None:
    ask(make(wire, fake_api), system="")
    assert user_and_system(wire, fake_api.requests[0].body)[1] is None


def test_no_tools_means_no_tool_choice(wire: str, fake_api: FakeAPI) -> None:
    # tool_choice without tools is a 400 on both APIs
    turn = ask(make(wire, fake_api), tools=())
    body = fake_api.requests[0].body
    assert "tools" not in body and "tool_choice" not in body
    assert turn.calls == () and turn.text == "ok"


def test_key_comes_from_the_named_env_var(wire: str, fake_api: FakeAPI,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY_KEY", "gw-key-123456")
    ask(make(wire, fake_api, api_key_env="GATEWAY_KEY"))
    headers = fake_api.requests[0].headers
    assert "gw-key-123456" in (headers.get("x-api-key", "") + headers.get("authorization", ""))


def test_a_missing_key_env_var_fails_before_any_request(wire: str, fake_api: FakeAPI) -> None:
    with pytest.raises(ProviderCallError, match="NO_SUCH_KEY_VAR is not set") as info:
        ask(make(wire, fake_api, api_key_env="NO_SUCH_KEY_VAR"))
    assert info.value.attempts == 0
    assert fake_api.requests == []


# --- what is parsed -------------------------------------------------------------------
def test_parallel_tool_calls_are_all_parsed_in_order(wire: str, fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(text="Looking both up.", tool_calls=[
        ("find_company", {"name": "Acme"}),
        ("list_officers", {"company_number": "01234567"}),
        ("find_company", {"name": "Beta"}),
    ]))
    turn = ask(make(wire, fake_api))
    assert [c.name for c in turn.calls] == ["find_company", "list_officers", "find_company"]
    assert [c.arguments for c in turn.calls] == [
        {"name": "Acme"}, {"company_number": "01234567"}, {"name": "Beta"}]
    assert turn.text == "Looking both up."
    assert turn.stop_reason == ("tool_use" if wire == "anthropic" else "tool_calls")
    assert turn.truncated is False and turn.attempts == 1


def test_arguments_that_are_not_a_json_object_make_the_reply_an_error(wire: str,
                                                                     fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(tool_calls=[("find_company", '{"name": "Acme"'),
                                     ("list_officers", "[1, 2]"),
                                     ("find_company", '{"name": "ok"}')]))
    with pytest.raises(UnreadableReplyError) as info:
        ask(make(wire, fake_api))
    assert str(info.value) == (
        f"{WIRES[wire][0]}: the reply cannot be read as a tool choice: tool call 1 "
        """('find_company') sent arguments that are not a JSON object: '{"name": "Acme"'; """
        "tool call 2 ('list_officers') sent arguments that are not a JSON object: '[1, 2]'")
    assert len(fake_api.requests) == 1  # not retried: it was billed
    assert info.value.turn.usage["output_tokens"] == 5


def test_cut_before_any_tool_call_is_an_error_that_keeps_its_cost(wire: str, fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(text="Let me think about which", stop_reason="max_tokens", output_tokens=16))
    with pytest.raises(TruncatedError, match=r"truncated .* before any tool call") as info:
        ask(make(wire, fake_api, max_tokens=16))
    assert isinstance(info.value, ProviderError)
    assert len(fake_api.requests) == 1  # a cut reply is not retried: it was billed
    assert info.value.turn.usage["output_tokens"] == 16
    assert info.value.turn.cost_usd is not None and info.value.turn.cost_usd > 0


def test_cut_after_a_tool_call_is_returned_flagged(wire: str, fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(tool_calls=[("find_company", {"name": "Acme"})], stop_reason="max_tokens"))
    turn = ask(make(wire, fake_api))
    assert turn.truncated is True
    assert turn.calls == (ToolCall("find_company", {"name": "Acme"}),)
    assert turn.to_dict()["truncated"] is True


def test_cut_inside_a_tool_calls_arguments_is_an_error_that_says_so(wire: str,
                                                                    fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(tool_calls=[("find_company", {"name": "Acme"}), ("list_officers", '{"comp')],
                         stop_reason="max_tokens"))
    with pytest.raises(UnreadableReplyError, match=r"cut at max_tokens.*tool call 2 \('list_officers'\) "
                                                   r"sent arguments that are not a JSON object: "
                                                   r"'\{\"comp' \(raise max_tokens\)$"):
        ask(make(wire, fake_api))


def test_tool_names_a_provider_refuses_are_mapped_and_mapped_back(wire: str, fake_api: FakeAPI) -> None:
    long_name = "registry__" + "x" * 70
    tools = (Tool("registry.find_company", "Find."), Tool("registry_find_company", "Clash."),
             Tool(long_name, "Long."), Tool("officers list", "Space."))

    def call_every_tool(body: dict[str, Any]) -> Reply:
        return Reply(tool_calls=[(t["name"], {}) for t in sent_tools(wire, body)])

    fake_api.handler = call_every_tool
    turn = ask(make(wire, fake_api), tools=tools)
    wire_names = [t["name"] for t in sent_tools(wire, fake_api.requests[0].body)]
    assert all(SAFE_NAME.match(n) for n in wire_names)
    assert len(set(wire_names)) == len(tools)
    assert wire_names[1] == "registry_find_company"  # a name that fits is sent as it is
    # the reports see the real names
    assert [c.name for c in turn.calls] == [t.name for t in tools]


def test_cache_tokens_are_parsed(wire: str, fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(text="x", input_tokens=12, output_tokens=7, cache_read_tokens=900,
                         cache_write_tokens=300))
    turn = ask(make(wire, fake_api))
    # input_tokens means uncached input for both (OpenAI counts the cache inside prompt_tokens)
    assert turn.usage == {"input_tokens": 12, "output_tokens": 7, "cache_read_tokens": 900,
                          "cache_write_tokens": 300}


# --- prompt caching ---------------------------------------------------------------------
def test_anthropic_caches_the_tool_list_by_default_and_not_when_off(fake_api: FakeAPI) -> None:
    ask(make("anthropic", fake_api))
    ask(make("anthropic", fake_api, prompt_caching=False))
    on, off = (r.body["tools"] for r in fake_api.requests)
    assert on[-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in t for t in on[:-1])
    assert all("cache_control" not in t for t in off)


@pytest.mark.parametrize("route", ["openai", "litellm"])
def test_the_openai_format_sends_no_cache_control(route: str, fake_api: FakeAPI) -> None:
    ask(make(route, fake_api))
    assert "cache_control" not in json.dumps(fake_api.requests[0].body)


# --- faults -------------------------------------------------------------------------------
RETRIED = {
    "408": Reply(status=408, error="request timeout"),
    "409": Reply(status=409, error="conflict"),
    "429": Reply(status=429, error="rate limited"),
    "500": Reply(status=500, error="internal"),
    "503": Reply(status=503, error="unavailable"),
    "529": Reply(status=529, error="Overloaded"),
    "dropped connection": Reply(drop=True),
}


@pytest.mark.parametrize("fault", sorted(RETRIED))
def test_transient_faults_are_retried(wire: str, fault: str, fake_api: FakeAPI) -> None:
    fake_api.queue(RETRIED[fault], Reply(tool_calls=[("find_company", {"name": "Acme"})]))
    sleeps = Sleeps()
    turn = ask(make(wire, fake_api, sleep=sleeps))
    assert len(fake_api.requests) == 2  # ours is the only retry loop: the SDKs' are off
    assert turn.attempts == 2
    assert len(sleeps.waits) == 1
    assert turn.calls == (ToolCall("find_company", {"name": "Acme"}),)


@pytest.mark.parametrize("status", [400, 401])
def test_client_errors_are_not_retried(wire: str, status: int, fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(status=status, error="your request is wrong"))
    with pytest.raises(ProviderCallError, match="your request is wrong") as info:
        ask(make(wire, fake_api))
    assert len(fake_api.requests) == 1
    assert info.value.attempts == 1 and info.value.status == status
    assert "not retried" in str(info.value)


@pytest.mark.parametrize(("header", "value", "wait"),
                         [("retry-after", "2", 2.0), ("retry-after-ms", "1500", 1.5)])
def test_retry_after_is_honoured(wire: str, header: str, value: str, wait: float,
                                 fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(status=429, error="slow down", headers={header: value}))
    sleeps = Sleeps()
    ask(make(wire, fake_api, sleep=sleeps))
    assert sleeps.waits == [wait]


def test_retry_after_is_waited_in_real_time(wire: str, fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(status=529, error="Overloaded", headers={"retry-after-ms": "300"}))
    start = time.monotonic()
    turn = ask(make(wire, fake_api, backoff_base=0.0))
    assert time.monotonic() - start >= 0.3
    assert turn.attempts == 2


def test_backoff_grows_exponentially_with_jitter(wire: str, fake_api: FakeAPI) -> None:
    fake_api.queue(*[Reply(status=503, error="down")] * 3)
    sleeps = Sleeps()
    turn = ask(make(wire, fake_api, sleep=sleeps, backoff_base=0.1))
    assert turn.attempts == 4
    for n, w in enumerate(sleeps.waits):
        assert 0.1 * 2**n * 0.5 <= w <= 0.1 * 2**n * 1.5


def test_backoff_is_capped_and_retry_after_bounded() -> None:
    assert all(backoff(12, 1.0, None) <= 30.0 for _ in range(20))
    assert backoff(0, 1.0, 3600.0) == 60.0
    assert backoff(5, 1.0, 0.0) == 0.0


def test_an_error_body_in_a_200_reply_is_an_error(wire: str, fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(status=200, error="invalid tool schema"))
    with pytest.raises(ProviderCallError, match="invalid tool schema"):
        ask(make(wire, fake_api))
    assert len(fake_api.requests) == 1


def test_a_transient_error_body_in_a_200_reply_is_retried(wire: str, fake_api: FakeAPI) -> None:
    # what OpenRouter sends when the upstream fails after the 200 went out
    fake_api.queue(Reply(body={"error": {"message": "upstream error", "code": 502}}))
    turn = ask(make(wire, fake_api, sleep=Sleeps()))
    assert turn.attempts == 2 and len(fake_api.requests) == 2


def test_a_body_that_is_not_the_api_is_not_retried(wire: str, fake_api: FakeAPI) -> None:
    fake_api.queue(Reply(raw="<html><body>Welcome to nginx</body></html>"))
    with pytest.raises(ProviderCallError) as info:
        ask(make(wire, fake_api))
    assert len(fake_api.requests) == 1
    assert "api_base" in str(info.value)


@pytest.mark.parametrize(("route", "said"), [
    # litellm raises a "500" whose message holds its traceback: one line, naming the cause
    ("litellm", "HTTP 200 reply is not a Chat Completions response (AttributeError: "),
    ("openai", "HTTP 200 reply is not a Chat Completions response: "),
])
def test_a_reply_with_no_message_is_one_line_and_not_retried(route: str, said: str,
                                                             fake_api: FakeAPI) -> None:
    # a proxy's 200 with a null message
    body = {"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
            "choices": [{"index": 0, "message": None, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
    fake_api.handler = lambda request: Reply(body=body)
    with pytest.raises(ProviderCallError) as info:
        ask(make(route, fake_api, sleep=Sleeps()))
    message = str(info.value)
    assert len(fake_api.requests) == 1
    assert said in message
    assert "'message': None" in message and "api_base" in message
    assert "Traceback" not in message and "site-packages" not in message and "\n" not in message


def test_a_tool_call_with_no_name_is_an_error_not_a_call(wire: str, fake_api: FakeAPI) -> None:
    if wire == "anthropic":
        body = {"id": "m", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
                "content": [{"type": "tool_use", "id": "t", "name": "", "input": {}}],
                "stop_reason": "tool_use", "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5}}
    else:
        body = {"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4o",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": None, "tool_calls": [
                        {"id": "x", "type": "function", "function": {"name": None, "arguments": "{}"}}]}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
    fake_api.handler = lambda request: Reply(body=body)
    fault = "an empty tool name" if wire == "anthropic" else "no tool name (null or missing)"
    with pytest.raises(UnreadableReplyError, match=rf"tool call 1 has {re.escape(fault)}$"):
        ask(make(wire, fake_api))


def test_a_slow_reply_times_out_and_is_retried(wire: str, fake_api: FakeAPI) -> None:
    # the server never answers: only a deadline ends each attempt, and the message says it
    # was the call's own (0.2 s), not the SDK's per-read timeout (5 s later)
    fake_api.default = Reply(hang=True)
    with pytest.raises(ProviderCallError) as info:
        ask(make(wire, fake_api, timeout=0.2, retries=1))
    assert str(info.value).endswith(": no complete reply within 0.2 s (timeout) (gave up after 2 attempts)")
    assert info.value.attempts == 2 and len(fake_api.requests) == 2


def test_after_the_last_retry_the_error_names_the_cause_and_attempts_but_not_the_key(
        wire: str, fake_api: FakeAPI) -> None:
    key = ANTHROPIC_KEY if wire == "anthropic" else OPENAI_KEY
    # some APIs quote the key back in their message; it must not reach a CI log
    fake_api.default = Reply(status=503, error=f"backend sick for key {key}")
    with pytest.raises(ProviderCallError) as info:
        ask(make(wire, fake_api, retries=2, sleep=Sleeps()))
    message = str(info.value)
    assert "backend sick" in message
    assert "3 attempts" in message
    assert key not in message
    assert info.value.attempts == 3 and len(fake_api.requests) == 3


def test_concurrent_calls_run_concurrently(wire: str, fake_api: FakeAPI) -> None:
    def answer(body: Any) -> Reply:
        # each reply waits until all eight calls are in flight: only concurrent calls get there
        fake_api.wait_in_flight(8)
        return Reply(text="x")

    fake_api.handler = answer
    provider = make(wire, fake_api)

    async def many() -> list[Turn]:
        return await asyncio.gather(*(provider.first_turn(TurnRequest(QUESTION, TOOLS)) for _ in range(8)))

    asyncio.run(many())  # warm: the first call of a process imports the SDK
    fake_api.max_in_flight = 0
    turns = asyncio.run(many())
    assert len(turns) == 8
    assert fake_api.max_in_flight == 8


# --- cost -----------------------------------------------------------------------------------
@pytest.mark.parametrize("key_form", ["with prefix", "without prefix"])
def test_cost_is_usage_times_an_override_price(wire: str, key_form: str, fake_api: FakeAPI) -> None:
    model = "anthropic/house-model" if wire == "anthropic" else "openai/house-model"
    key = model if key_form == "with prefix" else "house-model"
    prices = {key: {"input_per_mtok": 2.0, "output_per_mtok": 10.0,
                    "cache_read_per_mtok": 0.2, "cache_write_per_mtok": 2.5}}
    fake_api.queue(Reply(text="x", input_tokens=1000, output_tokens=200, cache_read_tokens=3000,
                         cache_write_tokens=400))
    turn = ask(make(wire, fake_api, model=model, prices=prices))
    expected = (1000 * 2.0 + 200 * 10.0 + 3000 * 0.2 + 400 * 2.5) / 1e6
    assert turn.cost_usd == pytest.approx(expected)


def test_an_override_beats_the_price_map(wire: str, fake_api: FakeAPI) -> None:
    model = WIRES[wire][0]
    prices = {model: {"input_per_mtok": 1000.0, "output_per_mtok": 0.0}}
    fake_api.queue(Reply(text="x", input_tokens=1000, output_tokens=50))
    assert ask(make(wire, fake_api, prices=prices)).cost_usd == pytest.approx(1.0)


def test_cost_comes_from_litellms_price_map(wire: str, fake_api: FakeAPI) -> None:
    from pytest_toolselect.providers.pricing import _read_bundled_map

    model = WIRES[wire][0]
    entry = _read_bundled_map()[model.split("/", 1)[1]]
    fake_api.queue(Reply(text="x", input_tokens=1000, output_tokens=100, cache_read_tokens=500))
    turn = ask(make(wire, fake_api))
    expected = (1000 * entry["input_cost_per_token"] + 100 * entry["output_cost_per_token"]
                + 500 * entry["cache_read_input_token_cost"])
    assert turn.cost_usd == pytest.approx(expected)


def test_cost_is_none_for_a_model_without_a_price(wire: str, fake_api: FakeAPI) -> None:
    model = "anthropic/claude-nobody-knows" if wire == "anthropic" else "openai/gpt-nobody-knows"
    turn = ask(make(wire, fake_api, model=model))
    assert turn.cost_usd is None
    assert turn.usage["input_tokens"] == 10


def test_a_malformed_prices_table_is_refused_with_the_nearest_key() -> None:
    settings = ProviderSettings(prices={"m": {"input_per_mtok": 1.0, "output_per_mtoks": 2.0}})
    with pytest.raises(ToolselectError, match="output_per_mtok'\\?"):
        get_provider("anthropic/m", settings)
    with pytest.raises(ToolselectError, match="lacks 'output_per_mtok'"):
        get_provider("openai/m", ProviderSettings(prices={"m": {"input_per_mtok": 1.0}}))


def test_an_anthropic_run_never_imports_litellm(fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    # litellm costs 5-6 s to import: an Anthropic run prices its calls from the JSON map
    # litellm ships, read without importing it. (Other tests here did import it: hide it.)
    monkeypatch.delitem(sys.modules, "litellm", raising=False)
    monkeypatch.setattr(pricing, "_BUNDLED", None)
    turn = ask(make("anthropic", fake_api))
    assert turn.cost_usd is not None and turn.cost_usd > 0
    assert "litellm" not in sys.modules


# --- dispatch, subject, result ----------------------------------------------------------------
def test_get_provider_dispatches_on_the_model_string() -> None:
    settings = ProviderSettings(max_tokens=300, temperature=0.0, api_base="http://proxy")
    anthropic = get_provider("anthropic/claude-haiku-4-5", settings)
    other = get_provider("openrouter/openai/gpt-4.1-mini", settings)
    assert isinstance(anthropic, AnthropicProvider) and isinstance(other, OpenAIProvider)
    assert other.api_model == "openai/gpt-4.1-mini"
    for model in ("openai/gpt-4o", "groq/llama-3.3-70b", "together_ai/x", "deepseek/deepseek-chat",
                  "fireworks_ai/x", "mistral/mistral-large"):
        assert isinstance(get_provider(model, settings), OpenAIProvider), model
    for model in ("gemini/gemini-2.5-flash", "bedrock/x", "vertex_ai/x", "cohere/command-r"):
        assert isinstance(get_provider(model, settings), LiteLLMProvider), model
    # caching and the proxy do not change answers, so they are not part of the subject
    assert anthropic.subject() == {"provider": "anthropic", "model": "anthropic/claude-haiku-4-5",
                                   "settings": {"max_tokens": 300, "temperature": 0.0}}
    assert other.subject() == {"provider": "litellm", "model": "openrouter/openai/gpt-4.1-mini",
                               "settings": {"max_tokens": 300, "temperature": 0.0}}
    with pytest.raises(ToolselectError, match="<provider>/<model>"):
        get_provider("gpt-4o", settings)


def test_constructing_a_provider_imports_no_sdk() -> None:
    code = ("import sys; from pytest_toolselect.providers import ProviderSettings, get_provider; "
            "get_provider('anthropic/x', ProviderSettings()); get_provider('openai/x', ProviderSettings()); "
            "print([m for m in ('anthropic', 'litellm', 'openai', 'httpx') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("model", "env", "base"), [
    ("openrouter/openai/gpt-4.1-mini", "OPENROUTER_API_KEY", "https://openrouter.ai/api/v1"),
    ("groq/llama-3.3-70b", "GROQ_API_KEY", "https://api.groq.com/openai/v1"),
    ("deepseek/deepseek-chat", "DEEPSEEK_API_KEY", "https://api.deepseek.com/v1"),
])
def test_a_compatible_provider_reads_its_own_key_and_base(model: str, env: str, base: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    provider = get_provider(model, ProviderSettings())
    assert isinstance(provider, OpenAIProvider)
    monkeypatch.delenv(env, raising=False)
    with pytest.raises(ProviderCallError, match=f"{env} is not set \\(no request sent\\)"):
        provider.api_key()
    monkeypatch.setenv(env, "sk-compatible-000")
    assert provider.api_key() == "sk-compatible-000"
    assert str(provider._make_client().base_url).rstrip("/") == base


def test_a_local_server_needs_no_key(fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    turn = ask(make("openai", fake_api, model="openai/llama3.2"))
    assert turn.text == "ok" and fake_api.requests[0].body["model"] == "llama3.2"


def test_turn_to_dict_is_complete() -> None:
    turn = Turn(calls=(ToolCall("a", {"x": 1}),), text="t", stop_reason="tool_use",
                usage={"input_tokens": 1}, cost_usd=0.5, truncated=True,
                dropped_schema_keys=("a/$schema",), attempts=3)
    assert turn.to_dict() == {"calls": [{"name": "a", "arguments": {"x": 1}}], "text": "t",
                              "stop_reason": "tool_use", "usage": {"input_tokens": 1}, "cost_usd": 0.5,
                              "truncated": True, "dropped_schema_keys": ["a/$schema"], "attempts": 3}


# --- the pieces, directly ------------------------------------------------------------------------
def test_name_map_is_unique_safe_and_reversible() -> None:
    names = ["a.b", "a_b", "a b", "x" * 80, "x" * 81, "ok-name", "", "é"]
    m = NameMap(names)
    wires = [m.wire(n) for n in names]
    assert len(set(wires)) == len(names)
    assert all(SAFE_NAME.match(w) for w in wires)
    assert m.wire("a_b") == "a_b" and m.wire("ok-name") == "ok-name"
    assert [m.real(w) for w in wires] == names
    assert m.real("made_up_by_the_model") == "made_up_by_the_model"


def test_parse_arguments() -> None:
    assert parse_arguments('{"a": 1}') == ({"a": 1}, None)
    assert parse_arguments({"a": 1}) == ({"a": 1}, None)
    assert parse_arguments("") == ({}, None)  # a call without arguments, as some servers send it
    assert parse_arguments("null") == ({}, "null")
    assert parse_arguments("{oops") == ({}, "{oops")
    assert parse_arguments([1]) == ({}, "[1]")


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_redact_masks_known_keys_and_key_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_VENDOR_API_KEY", "vendor-secret-value")
    text = redact("bad key vendor-secret-value, sk-proj-abcdef123456, Bearer abc.def.ghi.jkl, plain")
    assert "vendor-secret-value" not in text and "abcdef123456" not in text and "abc.def" not in text
    assert text.endswith("plain")
