"""A case's context on the wire: the earlier turns as each API's messages, after the question.

Nothing is executed: each given call goes out as the assistant's tool call, and its given
result as the tool's answer, under the call's stable id (exchange.context.call_id) and the
tool's wire name (a name the wire refuses is renamed alike in the tools and the replay).
"""

from __future__ import annotations

import json
from typing import Any

from pytest_toolselect.exchange.context import GivenResult, GivenTurn, is_content_list

from .wire import NameMap

#: what an OpenAI-style tool message says first when the tool failed: that wire has no
#: error flag, so the flag rides in the text, as the Agents SDK and litellm write it
ERROR_PREFIX = "Error: "


def tool_text(result: GivenResult) -> str:
    """A result as an OpenAI-style tool message says it: a failure's text starts with
    ERROR_PREFIX, the one place that wire can carry it."""
    return (ERROR_PREFIX if result.is_error else "") + result.as_text()


def anthropic_messages(context: tuple[GivenTurn, ...], names: NameMap) -> list[dict[str, Any]]:
    """The Messages API's turns: each an assistant message of text and tool_use blocks,
    then a user message of their tool_result blocks (is_error set on a failed call)."""
    out: list[dict[str, Any]] = []
    for turn in context:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
        blocks += [{"type": "tool_use", "id": c.id, "name": names.wire(c.name),
                    "input": c.arguments} for c in turn.calls]
        out.append({"role": "assistant", "content": blocks})
        out.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": c.id, "content": _anthropic_content(c.result),
             **({"is_error": True} if c.result.is_error else {})} for c in turn.calls]})
    return out


def _anthropic_content(result: GivenResult) -> str | list[dict[str, Any]]:
    # an MCP content list is already the blocks the Messages API takes
    if is_content_list(result.content):
        return [{"type": "text", "text": str(item.get("text", ""))} for item in result.content]
    return result.as_text()


def chat_messages(context: tuple[GivenTurn, ...], names: NameMap) -> list[dict[str, Any]]:
    """The Chat Completions turns: each an assistant message with tool_calls (arguments as a
    JSON string), then one tool message per call."""
    out: list[dict[str, Any]] = []
    for turn in context:
        out.append({"role": "assistant", "content": turn.text or None, "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": names.wire(c.name),
                          "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
            for c in turn.calls]})
        out += [{"role": "tool", "tool_call_id": c.id,
                 "content": tool_text(c.result)} for c in turn.calls]
    return out
