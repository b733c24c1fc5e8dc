"""``openai-agents/<model>``: the question asked of an OpenAI Agents SDK agent.

The agent gets the case's servers as its MCP servers (the SDK starts and lists them, as an
app built on it does) and an OpenAI-compatible Chat Completions client (api_base honoured).
The model is wrapped so that its first response is captured and the run ends right there,
before the SDK runs any tool: no ``tools/call`` reaches a server. Tracing is off (it would
upload the run to OpenAI).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pytest_toolselect.exchange.json_value import JSONDict
from pytest_toolselect.exchange.tool import ToolCall

from . import ProviderCallError, Turn, TurnRequest
from .api_keys import key_from_env
from .harness import HarnessProvider, mcp_config, not_connected, secrets_of, version
from .preflight import placeholder_key
from .pricing import cost_usd, request_bytes, reservation_usd
from .replay import tool_text
from .wire import make_usage


def replayed(request: TurnRequest) -> str | list[Any]:
    """The agent's input: the question, then each given turn (exchange.context) as the items
    a run of the SDK leaves in its history, its text as an assistant message, its calls as
    ``function_call`` items (the tools under the names the SDK lists them by) and their
    results as ``function_call_output`` items, which the Chat Completions model sends as the
    assistant's ``tool_calls`` and ``tool`` messages. That wire has no error flag: an error
    result's text starts with "Error: ", as on the ``openai/`` route (providers.replay)."""
    if not request.context:
        return request.question
    names = {t.name: t.original_name or t.name for t in request.tools if t.server}
    items: list[Any] = [{"role": "user", "content": request.question}]
    for n, turn in enumerate(request.context, 1):
        if turn.text:
            items.append({"type": "message", "role": "assistant", "id": f"msg_ctx_{n}",
                          "status": "completed",
                          "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})
        items += [{"type": "function_call", "call_id": call.id, "name": names.get(call.name, call.name),
                   "arguments": json.dumps(call.arguments, ensure_ascii=False)}
                  for call in turn.calls]
        items += [{"type": "function_call_output", "call_id": call.id, "output": tool_text(call.result)}
                  for call in turn.calls]
    return items


class _Captured(Exception):  # a signal, not an error: the run ends with it
    def __init__(self, response: Any) -> None:
        super().__init__("first response captured")
        self.response = response


class OpenAIAgentsProvider(HarnessProvider):
    """An Agents SDK agent offers only the tools it is given: no built-ins of its own."""

    provider = "openai-agents"
    label = "the Agents SDK agent"

    def subject(self) -> JSONDict:
        s = self.settings
        return {"provider": self.provider, "model": self.model,
                "harness": {"name": "openai-agents", "version": version("openai-agents")},
                "settings": {"max_tokens": s.max_tokens, "temperature": s.temperature}}

    def endpoint(self) -> str | None:
        return self.settings.api_base or os.environ.get("OPENAI_BASE_URL") or None

    def max_cost_usd(self, request: TurnRequest) -> float | None:
        """The most a call can cost (None: no price known), what the cost cap reserves: the
        agent sends the case's system prompt, tools and question, and its max_tokens."""
        return reservation_usd(self.model, self.settings.prices, max_tokens=self.settings.max_tokens,
                               size=request_bytes(request.question, request.system, request.tools,
                                                 request.context))

    async def first_turn(self, request: TurnRequest) -> Turn:
        s = self.settings
        key = (key_from_env(s.api_key_env, self.model) or os.environ.get("OPENAI_API_KEY")
               or placeholder_key(self.model, s) or "")
        turn: Turn = await self.call(request, lambda asked: self._ask(asked, key),
                                     (key, *secrets_of(request.servers)))
        return turn

    async def _ask(self, request: TurnRequest, key: str) -> Turn:
        from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, RunConfig, Runner
        from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
        from openai import AsyncOpenAI

        s = self.settings
        client = AsyncOpenAI(api_key=key, base_url=s.api_base, max_retries=0, timeout=s.timeout + 5)

        class FirstResponse(OpenAIChatCompletionsModel):
            async def get_response(self, *args: Any, **kwargs: Any) -> Any:
                raise _Captured(await super().get_response(*args, **kwargs))

        limits = {spec.name: spec.limit for spec in request.servers}
        servers: list[Any] = []
        logs = Path(tempfile.mkdtemp(prefix="toolselect-agents-"))  # the servers' stderr
        for name, entry in mcp_config(request.servers, request.root, stderr_to=logs).items():
            if entry["type"] == "stdio":
                params = {k: entry[k] for k in ("command", "args", "env")}
                servers.append(MCPServerStdio(params=params, name=name,  # type: ignore[arg-type]
                                              client_session_timeout_seconds=limits[name]))
            else:
                servers.append(MCPServerStreamableHttp(
                    params={"url": entry["url"], "headers": entry["headers"]}, name=name,
                    client_session_timeout_seconds=limits[name]))
        settings = ModelSettings(max_tokens=s.max_tokens, temperature=s.temperature)
        response: Any = None
        try:
            async with contextlib.AsyncExitStack() as stack:
                for server in servers:
                    try:
                        await stack.enter_async_context(server)
                    except Exception as e:
                        # its tools would be missing: an error of the case, with its stderr
                        failed = not_connected([{"name": server.name, "status": "failed"}],
                                               logs, secrets_of(request.servers))
                        raise ProviderCallError(f"{self.model}: {failed} ({type(e).__name__})",
                                                attempts=1) from None
                agent = Agent(name="toolselect", instructions=request.system or None,
                              mcp_servers=servers, model_settings=settings,
                              model=FirstResponse(model=self.api_model, openai_client=client))
                await Runner.run(agent, replayed(request), max_turns=1,
                                 run_config=RunConfig(tracing_disabled=True))
        except _Captured as captured:
            response = captured.response
        finally:
            await client.close()
            shutil.rmtree(logs, ignore_errors=True)
        if response is None:
            raise ProviderCallError(f"{self.model}: the agent ended without a model response",
                                    attempts=1)
        return self._turn(response, request)

    def _turn(self, response: Any, request: TurnRequest) -> Turn:
        names = {(t.original_name or t.name): t.name for t in request.tools if t.server}
        calls: list[ToolCall] = []
        texts: list[str] = []
        for item in response.output:
            kind = getattr(item, "type", None)
            if kind == "function_call":
                raw = item.arguments or "{}"
                try:
                    args = json.loads(raw)
                except ValueError:
                    args = None
                ok = isinstance(args, dict)
                calls.append(ToolCall(names.get(item.name, item.name), args if ok else {},
                                      raw_arguments=None if ok else raw))
            elif kind == "message":
                texts += [getattr(c, "text", "") for c in item.content or []]
        u = response.usage
        cached = getattr(getattr(u, "input_tokens_details", None), "cached_tokens", 0) or 0
        usage = make_usage(int(u.input_tokens or 0) - cached, int(u.output_tokens or 0), cached, 0)
        return Turn(calls=tuple(calls), text="\n".join(t for t in texts if t),
                    stop_reason="tool_use" if calls else "end_turn", usage=usage,
                    cost_usd=cost_usd(self.model, usage, self.settings.prices))
