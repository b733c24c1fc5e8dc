"""A case's earlier turns (``TurnRequest.context``) as a Claude Code session the CLI resumes.

The CLI takes no prefilled history on its command line; what it replays is a session file,
``<config dir>/projects/<project key of its cwd>/<session id>.jsonl``, one JSON entry a
line: the user's question, each given turn's assistant message (its text and ``tool_use``
blocks, the MCP tools under the names the harness gives them, ``mcp__<server>__<tool>``)
and the user message with their ``tool_result`` blocks (``is_error`` kept). A session that
ends on tool results is a turn cut off before the model answered them; with
``CLAUDE_CODE_RESUME_INTERRUPTED_TURN`` set and no new prompt, the resumed CLI asks the
model for that turn again, and that reply is the choice scored: one request, with the
harness's own system prompt and tools, and no user message added after the results.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_toolselect.exchange.context import GivenCall, GivenTurn
from pytest_toolselect.exchange.tool import Tool

from .harness import normalized, write_private

#: the CLI re-runs a session's cut-off turn on resume when this is set (no prompt sent)
RESUME_ENV = {"CLAUDE_CODE_RESUME_INTERRUPTED_TURN": "1"}


def harness_names(tools: Iterable[Tool]) -> dict[str, str]:
    """The case's tool names -> the names the harness gives them (``mcp__server__tool``);
    a tool of no server (a built-in such as Bash) keeps its name."""
    return {t.name: f"mcp__{normalized(t.server)}__{normalized(t.original_name or t.name)}"
            for t in tools if t.server}


def result_content(call: GivenCall) -> Any:
    """A result as a ``tool_result`` block's content: an MCP content list as its text blocks
    (the Messages API's own shape), anything else as the text a wire carries."""
    content = call.result.content
    if isinstance(content, list) and content and all(
            isinstance(item, dict) and item.get("type") == "text" for item in content):
        return [{"type": "text", "text": str(item.get("text", ""))} for item in content]
    return call.result.as_text()


def session_entries(question: str, context: tuple[GivenTurn, ...], names: Mapping[str, str],
                    *, session_id: str, cwd: str, version: str | None,
                    now: datetime) -> list[dict[str, Any]]:
    """The session file's entries, in order, each linked to the one before (``parentUuid``):
    the question, then per given turn its assistant message and its results."""
    stamp = now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
    common = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session_id,
              "version": version or "", "timestamp": stamp}
    entries: list[dict[str, Any]] = []

    def add(kind: str, message: dict[str, Any]) -> None:
        parent = entries[-1]["uuid"] if entries else None
        entries.append({"parentUuid": parent, "type": kind, "message": message,
                        "uuid": str(uuid.uuid4()), **common})

    add("user", {"role": "user", "content": question})
    for n, turn in enumerate(context, 1):
        blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
        blocks += [{"type": "tool_use", "id": call.id, "name": names.get(call.name, call.name),
                    "input": call.arguments} for call in turn.calls]
        add("assistant", {"id": f"msg_ctx_{n}", "type": "message", "role": "assistant",
                          "model": "", "content": blocks, "stop_reason": "tool_use",
                          "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}})
        add("user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": result_content(call),
             "is_error": call.result.is_error} for call in turn.calls]})
    return entries


def write_session(config_dir: Path, cwd: str, question: str, context: tuple[GivenTurn, ...],
                  tools: Iterable[Tool], version: str | None) -> tuple[str, Path]:
    """The context written as a new session the CLI can resume from `cwd` (a file only its
    owner can read: results may hold what a user would not share); its id and path."""
    from claude_agent_sdk import project_key_for_directory

    session_id = str(uuid.uuid4())
    folder = config_dir / "projects" / project_key_for_directory(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    entries = session_entries(question, context, harness_names(tools), session_id=session_id,
                              cwd=cwd, version=version, now=datetime.now(timezone.utc))
    text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)
    return session_id, write_private(folder / f"{session_id}.jsonl", text)
