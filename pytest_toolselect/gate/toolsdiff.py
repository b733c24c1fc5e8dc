"""What changed in the tools a case is offered since the baseline: pure functions.

A baseline keeps, per tools fingerprint, the fingerprint of each tool offered (the
system prompt among them) and, bounded, each tool's description. A run whose tools
fingerprint moved can then name the tools added, removed or changed, with a short
word-level diff of a changed description: what a reviewer needs first.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_toolselect.exchange.json_value import JSONDict
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.messages.masking import redact, redact_data
from pytest_toolselect.records.fingerprint import fingerprint
from pytest_toolselect.records.tool_changes import ADDED, CHANGED, REMOVED, ToolChange

if TYPE_CHECKING:
    from pytest_toolselect.exchange.tool import Tool

#: the system prompt's name among the tools (brackets and spaces make it no valid MCP
#: tool name, so it never clashes with one)
SYSTEM = "(system prompt)"
#: characters of a description a baseline keeps per tool (a diff is shown from these)
TEXT_LIMIT = 2_000
#: characters of one word diff shown in a report
DIFF_LIMIT = 400
#: unchanged words kept around each change
CONTEXT = 3


def _fingerprint(data: Any) -> str:
    return fingerprint(data)


@functools.lru_cache(maxsize=4096)
def _tool_fingerprint(tool: Tool) -> str:
    # the same servers offer the same Tool objects to case after case: hash each once
    return _fingerprint(tool.to_dict())


def toolset(tools: Sequence[Tool], system: str | None) -> dict[str, str]:
    """Each offered tool's fingerprint by name, the system prompt as SYSTEM (read only:
    cases offered the same tools share one mapping)."""
    return _toolset(tuple(tools), system)


@functools.lru_cache(maxsize=256)
def _toolset(tools: tuple[Tool, ...], system: str | None) -> dict[str, str]:
    out = {t.name: _tool_fingerprint(t) for t in tools}
    if system is not None:
        out[SYSTEM] = _fingerprint(system)
    return dict(sorted(out.items()))


def texts(tools: Sequence[Tool], system: str | None, skip: Collection[str] = (),
          secrets: Sequence[str] = ()) -> dict[str, str]:
    """The bounded text of each tool (its description; the system prompt's own text), by
    the tool's fingerprint, but those in skip. A key-shaped string or a server's declared
    secret is masked: the text is written to the baseline and shown in reports."""
    if skip and all(fp in skip for fp in toolset(tools, system).values()):
        return {}  # the common case: every text already travelled

    named = [(_tool_fingerprint(t), t.description) for t in tools]
    if system is not None:
        named.append((_fingerprint(system), system))
    return {fp: redact(text[:TEXT_LIMIT], secrets) for fp, text in named if fp not in skip}


def definitions(tools: Sequence[Tool], system: str | None, skip: Collection[str] = (),
                secrets: Sequence[str] = ()) -> dict[str, JSONDict]:
    """Each tool exactly as offered (name, description, input schema), by the tool's
    fingerprint, but those in skip; the system prompt as the tool named SYSTEM holding its
    text. The baseline keeps these whole, so a case's tool set can be offered again as it
    was recorded (attribution); key-shaped strings and declared secrets are masked."""
    if skip and all(fp in skip for fp in toolset(tools, system).values()):
        return {}

    out = {_tool_fingerprint(t): {"name": t.name, "description": redact(t.description, secrets),
                                  "input_schema": redact_data(t.input_schema, secrets)}
           for t in tools}
    if system is not None:
        out[_fingerprint(system)] = {"name": SYSTEM, "description": redact(system, secrets),
                                     "input_schema": {}}
    return {fp: d for fp, d in out.items() if fp not in skip}


def offered(tools: Sequence[Tool], system: str | None) -> list[str]:
    """The fingerprints of the tools in the order they were offered, the system prompt's
    last: with definitions(), what rebuilds the request (order can sway a model)."""
    out = [_tool_fingerprint(t) for t in tools]
    if system is not None:
        out.append(_fingerprint(system))
    return out


def rebuild(order: Sequence[str], defs: Mapping[str, Mapping[str, Any]]
            ) -> tuple[tuple[Tool, ...], str | None] | None:
    """The tools and system prompt a baseline recorded (offered() over definitions()), or
    None when a definition is missing (a file written before the tools were kept)."""
    tools: list[Tool] = []
    system: str | None = None
    for fp in order:
        d = defs.get(fp)
        if d is None:
            return None
        if d["name"] == SYSTEM:
            system = d["description"]
        else:
            tools.append(Tool(d["name"], d["description"], dict(d.get("input_schema") or {})))
    return tuple(tools), system


def word_diff(before: str, after: str, limit: int = DIFF_LIMIT) -> str:
    """The words removed ``[-...-]`` and added ``{+...+}``, with a little context."""
    a, b = before.split(), after.split()
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    parts: list[str] = []
    for n, (op, i1, i2, j1, j2) in enumerate(ops):
        if op == "equal":
            words = a[i1:i2]
            head = words[:CONTEXT] if n > 0 else []
            tail = words[-CONTEXT:] if n < len(ops) - 1 else []
            if len(words) > len(head) + len(tail):
                parts += [*head, "…", *tail]
            else:
                parts += words
            continue
        if i2 > i1:
            parts.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            parts.append("{+" + " ".join(b[j1:j2]) + "+}")
    text = " ".join(parts)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def diff(old_set: Mapping[str, str], new_set: Mapping[str, str], old_texts: Mapping[str, str],
         new_texts: Mapping[str, str]) -> list[ToolChange]:
    """The tools added, removed or changed from old_set to new_set, by name.

    A changed tool carries a word diff of its text when both texts are known; when the
    kept texts are equal, what changed is the input schema (or text past TEXT_LIMIT).
    """
    changes: list[ToolChange] = []
    for name in sorted(set(old_set) | set(new_set)):
        before, after = old_set.get(name), new_set.get(name)
        if before == after:
            continue
        if before is None or after is None:
            changes.append(ToolChange(name, ADDED if before is None else REMOVED))
            continue
        old_text, new_text = old_texts.get(before), new_texts.get(after)
        shown = None
        if old_text is not None and new_text is not None:
            shown = (word_diff(old_text, new_text) if old_text != new_text else
                     f"same text in its first {TEXT_LIMIT:,} characters: the input schema or "
                     "later text changed")
        changes.append(ToolChange(name, CHANGED, shown))
    return changes


def lines(changes: Sequence[ToolChange]) -> list[str]:
    """One line per change, for any report (each renderer escapes it its own way)."""
    out = []
    for c in changes:
        line = f"{c.change} {c.tool}"
        if c.diff:
            line += f": {c.diff}"
        out.append(line)
    return out
