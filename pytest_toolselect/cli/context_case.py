"""A case past the first call, started from a recorded transcript (``toolselect init
--from-transcript``): the user's question, the calls and results before a chosen call as the
case's ``context``, and that call as its expectation, for its author to review.

Every value is written in YAML's flow style with each string double-quoted and escaped where
YAML would read it otherwise, so any text (every Unicode category, line breaks, quotes)
reads back as the same text. Secrets (keys, tokens, values under credential names) are
masked before anything is written.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.messages.masking import is_secret_name, redact
from pytest_toolselect.messages.plural import plural

from .transcripts import Call, Transcript

MASK = "***"


#: a string written plain: a name that no YAML reader takes for anything but text
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_WORDS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n"})


def yaml_string(text: str) -> str:
    """`text` as a YAML scalar: a plain name as it is, anything else double-quoted with its
    printable characters as they are and the rest escaped (line breaks, controls, C1 controls,
    U+2028/9, the BOM); a character outside the BMP stays one character (PyYAML reads an
    escaped surrogate pair as two). A lone surrogate (a JSON escape can hold one; it is no
    character, and libyaml refuses its escape) is written as U+FFFD."""
    if _PLAIN.fullmatch(text) and text.lower() not in _WORDS:
        return text
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        elif 0x20 <= code <= 0x7E or (0xA0 <= code <= 0xD7FF and code not in (0x2028, 0x2029)) \
                or (0xE000 <= code <= 0xFFFD and code != 0xFEFF) or code >= 0x10000:
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}")
    out.append('"')
    return "".join(out)


def yaml_value(value: Any) -> str:
    """A JSON value in YAML flow style, read back as the same value by the case loader."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, str):
        return yaml_string(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_string(str(k))}: {yaml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(yaml_value(v) for v in value) + "]"
    return yaml_string(str(value))


def masked(value: Any) -> Any:
    """The value with every secret masked: shapes and assignments in any text (masking.py),
    and any value under a key named like a credential (``api_key``, ``token``)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(str(k)): MASK if is_secret_name(str(k)) and isinstance(v, str) and v
                else masked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [masked(v) for v in value]
    return value


def chosen(transcript: Transcript, at: int) -> tuple[str, list[Call], Call]:
    """The question, the calls before the `at`-th call (1-based; negative: from the end) since
    that question was asked, and the call itself."""
    calls = transcript.calls
    if not calls:
        raise ToolselectError("the transcript holds no tool call: there is no next call to expect",
                              file=transcript.file, fix="record a conversation in which a tool was called")
    if at == 0 or not -len(calls) <= at <= len(calls):
        listed = "; ".join(f"{n}: {c.name} (line {c.line})" for n, c in enumerate(calls, 1))
        raise ToolselectError(f"--at {at}: the transcript holds {plural(len(calls), 'tool call')} "
                              f"({listed[:600]})",
                              file=transcript.file, fix=f"give --at 1 to {len(calls)}, or -1 for the last")
    call = calls[at - 1 if at > 0 else at]
    index = next(i for i, (kind, step) in enumerate(transcript.steps) if step is call)
    before: list[Call] = []
    for kind, step in reversed(transcript.steps[:index]):
        if kind == "said":
            return step[0], before[::-1], call
        before.append(step)
    raise ToolselectError(f"no user text before the call to {call.name!r}: the case has no question",
                          file=transcript.file, line=call.line,
                          fix="choose a call the user asked for (--at)")


def _turns(calls: list[Call]) -> list[list[Call]]:
    turns: list[list[Call]] = []
    for call in calls:
        if turns and turns[-1][0].turn == call.turn:
            turns[-1].append(call)
        else:
            turns.append([call])
    return turns


def _given(transcript: Transcript, call: Call, indent: str, first: str) -> list[str]:
    result = transcript.results.get(call.id)
    if result is None:
        raise ToolselectError(f"the call to {call.name!r} has no recorded result", file=transcript.file,
                              line=call.line, fix="choose an earlier call (--at), or a complete transcript")
    lines = [f"{indent}{first}call: {{name: {yaml_string(call.name)}, "
             f"arguments: {yaml_value(masked(call.arguments))}}}",
             f"{indent}  result: {yaml_value(masked(result.content))}"]
    if result.is_error:
        lines.append(f"{indent}  is_error: true")
    return lines


def case_lines(transcript: Transcript, at: int, case_id: str) -> list[str]:
    """One case, as the lines of a case file's `cases:` list."""
    question, before, call = chosen(transcript, at)
    number = transcript.calls.index(call) + 1
    out = [f"  - id: {case_id}",
           "    category: transcript",
           f"    question: {yaml_string(redact(question))}"]
    if before:
        out.append("    context:  # the calls made before it, and what each returned, as recorded")
    for turn in _turns(before):
        text = "\n".join(transcript.texts.get(turn[0].turn, []))
        if len(turn) == 1:
            out += _given(transcript, turn[0], "      ", "- ")
            tail = "        "
        else:
            out.append("      - calls:")
            for given in turn:
                out += _given(transcript, given, "          ", "- ")
            tail = "        "
        if text:
            out.append(f"{tail}text: {yaml_string(redact(text))}")
    out += [f"    # the next call as recorded (call {number}, line {call.line}): review it",
            f"    expect_tool: [{yaml_string(call.name)}]"]
    args = masked(call.arguments)
    paths = [k for k in args if k and k != "any" and "." not in k]
    if paths:
        out.append("    # the values the recorded call passed, exactly: keep those that must hold")
        out.append("    expect_args:")
        out += [f"      - {{path: {yaml_string(k)}, equals: {yaml_value(args[k])}}}" for k in paths]
    skipped = [k for k in args if k not in paths]
    if skipped:
        out.append(f"    # not matched (no path can name them): {yaml_string(', '.join(skipped))}")
    why = (f"Recorded in {Path(transcript.file).name}, call {number}: say why "
           f"{call.name} is the right next step here.")
    out.append(f"    why: {yaml_string(why)}")
    return out


def case_id(file: str, number: int) -> str:
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(file).stem).strip("-")[:40] or "transcript"
    return f"{stem}-call-{number}"


def context_file(transcript: Transcript, points: list[int]) -> str:
    """The case file's text: one case per chosen call."""
    count = len(transcript.calls)
    numbers: list[int] = []
    for at in points:
        chosen(transcript, at)  # an out-of-range point is an error before anything is written
        number = at if at > 0 else count + at + 1
        if number not in numbers:
            numbers.append(number)
    body: list[str] = []
    for number in numbers:
        body += case_lines(transcript, number, case_id(transcript.file, number))
        body.append("")
    # a server's name as the harness spelled it; one a config cannot name is left out
    servers = sorted({c.server for c in transcript.calls
                      if c.server and re.fullmatch(r"[A-Za-z0-9_-]+", c.server)})
    head = [f"# Written by toolselect init --from-transcript {Path(transcript.file).name}: the",
            "# user's question, the calls and results before the chosen call as context, and",
            "# that call as the expectation. Review each expectation (the exact arguments may be",
            "# more than must hold), and say why the case exists. Secrets found in the transcript",
            "# are masked as ***.",
            "schema_version: toolselect_cases.v1"]
    if servers:
        head.append(f"servers: [{', '.join(map(yaml_string, servers))}]  # as the transcript's "
                    "tool names say: check that your config names them so")
    else:
        head.append("# servers: [...]  # the transcript names no MCP server: name the case's servers")
    return "\n".join([*head, "cases:", *body]).rstrip() + "\n"
