"""Recorded conversations read as steps: what the user said, and each tool call with its result.

Two formats: a Claude Code session file (``~/.claude/projects/*/*.jsonl``: one JSON entry a
line, ``type`` user or assistant, ``message.content`` blocks text / tool_use / tool_result),
and an OpenAI-style messages JSON (a list of ``{role, content, tool_calls, tool_call_id}``,
or an object holding it under ``messages``). Anything else in them (thinking, the harness's
own entries and reminders, sub-agents' side chains, system messages) is not a step.
A file that cannot be read is a ToolselectError naming the file and the line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.positions.sourced import PathT

#: the harness's own step before a choice (it loads tool definitions, runs nothing)
HARNESS_STEPS = frozenset({"ToolSearch"})
#: user text the harness writes itself, not the user: reminders, slash commands and their output
_NOT_SAID = ("<system-reminder>", "<command-", "<local-command-", "[Request interrupted",
             "Caveat: The messages below")
#: a transcript is read whole: a bound on what that may take
MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Call:
    """One tool call as recorded: its tool (a server's tool by its own name), its arguments,
    the server it came from when the name says so, and where it is in the file."""

    name: str
    arguments: dict[str, Any]
    id: str
    line: int
    server: str | None = None
    #: the assistant turn it was made in: calls of one turn share it
    turn: int = 0


@dataclass(frozen=True)
class Result:
    content: Any
    is_error: bool = False


@dataclass
class Transcript:
    """The steps in order: ("said", (text, line)) and ("call", Call); results by call id;
    the assistant's text beside its calls, by turn."""

    file: str
    steps: list[tuple[str, Any]] = field(default_factory=list)
    results: dict[str, Result] = field(default_factory=dict)
    texts: dict[int, list[str]] = field(default_factory=dict)

    @property
    def calls(self) -> list[Call]:
        return [step for kind, step in self.steps if kind == "call"]


def read_transcript(path: Path) -> Transcript:
    """The transcript in `path`, its format told by its content (JSON lines or one JSON value)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ToolselectError(f"the transcript is over {MAX_BYTES // 2**20} MB", file=path,
                                  fix="cut it to the conversation the case is made from")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ToolselectError(f"not UTF-8 text ({e.reason} at byte {e.start})", file=path,
                              fix="give a Claude Code session file (.jsonl) or a messages JSON") from None
    except OSError as e:
        raise ToolselectError(f"cannot read the transcript: {e.strerror or e}", file=path,
                              fix="check the path") from None
    body = text.lstrip("\ufeff \t\r\n")
    if not body:
        raise ToolselectError("the transcript is empty", file=path,
                              fix="give a Claude Code session file (.jsonl) or a messages JSON")
    if body.startswith("[") or (body.startswith("{") and _messages_object(body)):
        return _messages(path, text)
    return _session(path, text)


def _messages_object(text: str) -> bool:
    """Whether the text is one JSON object holding messages (not a session's one entry)."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "type" not in value


def _json(path: Path, text: str, line: int) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        at = line + getattr(e, "lineno", 1) - 1
        raise ToolselectError(f"not JSON: {getattr(e, 'msg', e)}", file=path, line=at,
                              fix="a Claude Code session file holds one JSON object a line; a "
                                  "messages file is one JSON list") from None


def _bad(path: Path, line: int, what: str) -> ToolselectError:
    return ToolselectError(what, file=path, line=line,
                           fix="is this a Claude Code session file or an OpenAI-style messages list?")


def _said(text: str) -> bool:
    return bool(text.strip()) and not text.lstrip().startswith(_NOT_SAID)


def _split_name(name: str) -> tuple[str, str | None]:
    """``mcp__server__tool`` -> (tool, server); any other name as it is."""
    if name.startswith("mcp__"):
        server, sep, tool = name[5:].partition("__")
        if sep and server and tool:
            return tool, server
    return name, None


def _arguments(path: Path, line: int, value: Any, name: str) -> dict[str, Any]:
    if isinstance(value, str):  # the OpenAI wire: the arguments as JSON text
        try:
            value = json.loads(value or "{}")
        except ValueError:
            raise _bad(path, line, f"the arguments of the call to {name!r} are not JSON: "
                                   f"{value[:80]!r}") from None
    if not isinstance(value, dict):
        raise _bad(path, line, f"the arguments of the call to {name!r} are not an object")
    return value


def _result_content(content: Any) -> Any:
    """A recorded result's content: text as it is, a list of blocks as an MCP content list
    of its text blocks (an image or other block is not text a case can give)."""
    if isinstance(content, list):
        texts = [{"type": "text", "text": str(b.get("text", ""))} for b in content
                 if isinstance(b, dict) and b.get("type") in ("text", "input_text", "output_text")]
        return texts if texts else ""
    return "" if content is None else content


# -- Claude Code session files ------------------------------------------------------------------


def _session(path: Path, text: str) -> Transcript:
    out = Transcript(str(path))
    turn, last_message = 0, None
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        entry = _json(path, raw, n)
        if not isinstance(entry, dict):
            raise _bad(path, n, "a session entry is not a JSON object")
        kind = entry.get("type")
        if kind not in ("user", "assistant") or entry.get("isSidechain") or entry.get("isMeta") \
                or entry.get("isCompactSummary"):
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            raise _bad(path, n, f"a {kind} entry has no message object")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise _bad(path, n, f"a {kind} message's content is neither text nor a list of blocks")
        if kind == "assistant":
            # the CLI writes each block of a streamed message as an entry of its own
            message_id = message.get("id")
            if message_id is None or message_id != last_message:
                turn += 1
            last_message = message_id
        _session_blocks(path, n, kind, blocks, turn, out)
    return out


def _session_blocks(path: Path, n: int, kind: str, blocks: list[Any], turn: int,
                    out: Transcript) -> None:
    texts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            raise _bad(path, n, f"a content block of a {kind} message is not an object")
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif btype == "tool_use" and kind == "assistant":
            name = block.get("name")
            if not isinstance(name, str) or not name:
                raise _bad(path, n, "a tool_use block has no name")
            if name in HARNESS_STEPS:
                continue
            tool, server = _split_name(name)
            out.steps.append(("call", Call(tool, _arguments(path, n, block.get("input", {}), name),
                                           str(block.get("id", "")), n, server, turn)))
        elif btype == "tool_result" and kind == "user":
            out.results[str(block.get("tool_use_id", ""))] = Result(
                _result_content(block.get("content")), bool(block.get("is_error")))
    if kind == "user":
        out.steps += [("said", (t, n)) for t in texts if _said(t)]
    else:
        out.texts.setdefault(turn, []).extend(t for t in texts if t.strip())


# -- OpenAI-style messages ------------------------------------------------------------------------


def _messages(path: Path, text: str) -> Transcript:
    from pytest_toolselect.positions.jsonmap import parse_json

    src = parse_json(text.lstrip("\ufeff"), str(path))  # a syntax error names its line
    data, top = src.data, cast(PathT, ())
    if isinstance(data, dict):
        data, top = data.get("messages"), ("messages",)
    if not isinstance(data, list):
        raise _bad(path, src.line_of(top) or 1, "no list of messages (a JSON list, or an object "
                                                "with one under 'messages')")
    out = Transcript(str(path))
    for i, message in enumerate(data):
        line = src.line_of((*top, i)) or 1
        if not isinstance(message, dict):
            raise _bad(path, line, f"message {i} is not an object")
        role, content = message.get("role"), message.get("content")
        if role == "user":
            for part in [content] if isinstance(content, str) else content or []:
                said = part if isinstance(part, str) else (
                    part.get("text") if isinstance(part, dict) else None)
                if isinstance(said, str) and _said(said):
                    out.steps.append(("said", (said, line)))
        elif role == "assistant":
            said = content if isinstance(content, str) else " ".join(
                str(p.get("text", "")) for p in content or [] if isinstance(p, dict))
            if said.strip():
                out.texts[i] = [said]
            calls = message.get("tool_calls") or []
            if not isinstance(calls, list):
                raise _bad(path, line, f"message {i}'s tool_calls is not a list")
            for call in calls:
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                    raise _bad(path, line, f"a tool call of message {i} has no function name")
                tool, server = _split_name(function["name"])
                out.steps.append(("call", Call(
                    tool, _arguments(path, line, function.get("arguments", "{}"), function["name"]),
                    str(call.get("id", "")), line, server, i)))
        elif role == "tool":
            out.results[str(message.get("tool_call_id", ""))] = Result(_result_content(content))
    return out
