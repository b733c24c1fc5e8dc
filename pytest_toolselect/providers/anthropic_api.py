"""``anthropic/<model>``: the Anthropic Messages API through the official SDK.

Named anthropic_api so it never shadows the ``anthropic`` package. The SDK is
imported on the first call (it costs ~3 s), never when the plugin loads. The
SDK's own retries are off: the shared loop in ``providers.retry`` retries, so every
provider retries the same way and every attempt is counted.
"""

from __future__ import annotations

import os
from typing import Any

from pytest_toolselect.exchange.tool import ToolCall

from . import Turn, TurnRequest, finish_turn
from .api_keys import key_from_env
from .preflight import placeholder_key
from .preload import import_sdk
from .replay import anthropic_messages
from .retry import (
    Fault,
    FaultError,
    connection_fault,
    reply_data,
    retry_after,
    should_retry_header,
    status_retryable,
    with_retries,
)
from .sdk import SDKProvider
from .wire import NameMap, as_int, make_usage, read_call, wire_tools

_API_FIX = "check that api_base points at an Anthropic Messages API"
#: stop reasons that mean the reply was cut short, not finished
_CUT = frozenset({"max_tokens", "model_context_window_exceeded"})


class AnthropicProvider(SDKProvider):
    provider = "anthropic"

    def default_base_url(self) -> str | None:
        return os.environ.get("ANTHROPIC_BASE_URL") or None

    def prepare(self) -> None:
        """Import the SDK now (the garbage collector paused), unless it is already."""
        import_sdk("anthropic")

    # request --------------------------------------------------------------------------
    def build_request(self, request: TurnRequest) -> tuple[dict[str, Any], NameMap, tuple[str, ...]]:
        """The Messages API body for one request, the tool-name map, and the dropped schema keys."""
        tools, names, dropped = wire_tools(request.tools, "input_schema")
        if tools and self.settings.prompt_caching:
            # tools come first in Anthropic's cache prefix and repeat across every case:
            # marking the last one caches the whole tool list
            tools[-1]["cache_control"] = {"type": "ephemeral"}
        body: dict[str, Any] = {
            "model": self.api_model,
            "max_tokens": self.settings.max_tokens,
            "messages": [{"role": "user", "content": request.question},
                         *anthropic_messages(request.context, names)],
        }
        if tools:
            # tool_choice without tools is a 400, so both go together
            body["tools"] = tools
            body["tool_choice"] = {"type": "auto"}
        if request.system:
            body["system"] = request.system
        if self.settings.temperature is not None:
            body["temperature"] = self.settings.temperature
        return body, names, dropped

    def _make_client(self) -> Any:
        self.prepare()  # waits for the import begun at configure time, if it is still running
        import anthropic

        # a local server with no key set gets a placeholder, as on every route: without one
        # the SDK refuses every request ("Could not resolve authentication method")
        self._key = (key_from_env(self.settings.api_key_env, self.model)
                     or placeholder_key(self.model, self.settings, "ANTHROPIC_AUTH_TOKEN"))
        return anthropic.AsyncAnthropic(**self.client_options(self.settings.api_base))

    # the call -------------------------------------------------------------------------
    async def first_turn(self, request: TurnRequest) -> Turn:
        body, names, dropped = self.build_request(request)
        client = await self._clients.get()

        # Recent SDKs dropped `temperature` from create()'s parameters (current models take
        # only their default); the API still reads it for models that accept it, so it rides
        # in extra_body, which every SDK version passes through as-is.
        params = {k: v for k, v in body.items() if k != "temperature"}
        if "temperature" in body:
            params["extra_body"] = {"temperature": body["temperature"]}

        async def attempt() -> dict[str, Any]:
            raw = await client.messages.with_raw_response.create(**params)
            return _reply_json(raw.http_response)

        data, attempts = await with_retries(
            attempt, _classify, self.settings, model=self.model, sleep=self.sleep,
            secrets=(self._key, getattr(client, "api_key", None)),
        )
        return finish_turn(parse_reply(data, names), model=self.model, settings=self.settings,
                           dropped=dropped, attempts=attempts, cut=_CUT, reason="stop_reason")


def _reply_json(http: Any) -> dict[str, Any]:
    """The reply body as a Messages API message; an error body or garbage raises FaultError."""
    data = reply_data(http, _API_FIX)
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        raise FaultError(Fault(
            f"HTTP {http.status_code} reply is not a Messages API message: {str(data)[:200]!r}",
            retryable=False, status=http.status_code,
            fix=_API_FIX,
        ))
    return data


def parse_reply(data: dict[str, Any], names: NameMap) -> Turn:
    """A Messages API reply as a Turn (calls under their real names; no cost or attempts yet)."""
    calls: list[ToolCall] = []
    faults: list[str] = []
    texts: list[str] = []
    for block in data.get("content") or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            call, wrong = read_call(len(calls) + 1, block.get("name"), block.get("input"), names)
            calls.append(call)
            faults += wrong
    usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
    stop = data.get("stop_reason")
    stop = stop if isinstance(stop, str) else None
    return Turn(
        calls=tuple(calls),
        text="\n".join(t for t in texts if t),
        stop_reason=stop,
        # Anthropic's input_tokens already excludes cache reads and writes
        usage=make_usage(as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens")),
                         as_int(usage.get("cache_read_input_tokens")),
                         as_int(usage.get("cache_creation_input_tokens"))),
        truncated=stop in _CUT and bool(calls),
        faults=tuple(faults),
    )


def _classify(e: BaseException) -> Fault:
    import anthropic

    if isinstance(e, anthropic.APIStatusError):
        status = e.status_code
        headers = e.response.headers
        body: dict[str, Any] = e.body if isinstance(e.body, dict) else {}
        err: dict[str, Any] = body["error"] if isinstance(body.get("error"), dict) else {}
        kind = err.get("type")
        message = err.get("message") or e.message
        says = should_retry_header(headers)
        fix = None
        if status in (401, 403):
            fix = "check the API key (api_key_env names the variable; default ANTHROPIC_API_KEY)"
        elif status == 404:
            fix = "check the model name after anthropic/, and api_base"
        label = f"HTTP {status}" + (f" {kind}" if kind else "")
        return Fault(f"{label}: {message}",
                     retryable=status_retryable(status) if says is None else says,
                     status=status, retry_after=retry_after(headers), fix=fix)
    if isinstance(e, anthropic.APITimeoutError):
        return Fault("the request timed out", retryable=True)
    if isinstance(e, anthropic.APIConnectionError):
        return connection_fault(e)
    # anything else (a credential the SDK could not resolve, a bad argument) will not mend itself
    fix = None
    if "authentication" in str(e).lower():
        fix = "set ANTHROPIC_API_KEY, or api_key_env to the variable that holds the key"
    return Fault(f"{type(e).__name__}: {e}", retryable=False, fix=fix)
