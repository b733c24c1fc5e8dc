"""The OpenAI Chat Completions wire format: a request's messages and tools, and a reply read.

Shared by the native ``openai`` route and the litellm route (litellm hands back
the same shape, as pydantic objects or dicts), so both send and read alike.
"""

from __future__ import annotations

from typing import Any

from pytest_toolselect.exchange.clip import clip_text
from pytest_toolselect.exchange.replies import shown
from pytest_toolselect.exchange.tool import ToolCall

from . import ProviderSettings, Turn, TurnRequest
from .replay import chat_messages
from .retry import Fault, FaultError
from .wire import NameMap, as_int, make_usage, read_call, wire_tools

#: finish reasons that mean the reply was cut short (litellm maps Anthropic's max_tokens to length)
CUT = frozenset({"length", "max_tokens"})


def chat_request(model: str, request: TurnRequest, settings: ProviderSettings
                 ) -> tuple[dict[str, Any], NameMap, tuple[str, ...]]:
    """The request body (no key, no transport settings), the tool-name map, the dropped schema keys."""
    functions, names, dropped = wire_tools(request.tools, "parameters")
    tools = [{"type": "function", "function": fn} for fn in functions]
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.append({"role": "user", "content": request.question})
    messages += chat_messages(request.context, names)
    body: dict[str, Any] = {"model": model, "messages": messages, "max_tokens": settings.max_tokens}
    if tools:
        # tool_choice without tools is a 400 on OpenAI, so both go together
        body["tools"] = tools
        body["tool_choice"] = "auto"
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    return body, names, dropped


def _get(obj: Any, name: str) -> Any:
    """An attribute or key: litellm hands back pydantic objects, some providers plain dicts."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def parse_reply(resp: Any, names: NameMap) -> Turn:
    """An OpenAI-shaped ModelResponse as a Turn (real tool names; no cost or attempts yet)."""
    choices = _get(resp, "choices") or []
    if not choices:
        raise FaultError(Fault(f"the reply has no choices: {str(resp)[:200]!r}", retryable=False))
    choice = choices[0]
    message = _get(choice, "message")
    calls: list[ToolCall] = []
    faults: list[str] = []
    for i, tc in enumerate(_get(message, "tool_calls") or [], 1):
        fn = _get(tc, "function")
        if not (isinstance(fn, dict) or hasattr(fn, "name")):
            # a broken proxy's call: nothing names a tool
            calls.append(ToolCall(""))
            faults.append(f"tool call {i} has no function object: {clip_text(repr(tc))}")
            continue
        call, wrong = read_call(i, _get(fn, "name"), _get(fn, "arguments"), names)
        calls.append(call)
        faults += wrong
    refusal = _get(message, "refusal")
    if isinstance(refusal, str) and refusal:
        faults.append(f"the model refused: {shown(refusal)}")
    content = _get(message, "content")
    if isinstance(content, list):  # content parts, from some providers
        content = "".join(str(_get(p, "text") or "") for p in content)
    finish = _get(choice, "finish_reason")
    usage = _get(resp, "usage")
    details = _get(usage, "prompt_tokens_details")
    read = as_int(_get(details, "cached_tokens")) or as_int(_get(usage, "cache_read_input_tokens"))
    write = (as_int(_get(details, "cache_write_tokens"))
             or as_int(_get(usage, "cache_creation_input_tokens")))
    return Turn(
        calls=tuple(calls),
        text=str(content or ""),
        stop_reason=finish if isinstance(finish, str) else None,
        # OpenAI's prompt_tokens (and litellm's, for Anthropic) counts cache reads and writes:
        # take them out so input_tokens means the same for every provider
        usage=make_usage(as_int(_get(usage, "prompt_tokens")) - read - write,
                         as_int(_get(usage, "completion_tokens")), read, write),
        truncated=finish in CUT and bool(calls),
        faults=tuple(faults),
    )


