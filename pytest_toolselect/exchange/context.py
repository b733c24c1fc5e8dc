"""The turns a case gives before the one that is scored: calls and their results, as data.

Nothing here is executed: a case says which calls were made and what each returned, and
every route replays them to the model as its wire expects before asking for the next turn.
Here, beside the turn, so the providers, the scoring and the cache read one shape.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .json_value import JSONDict


@dataclass(frozen=True)
class GivenResult:
    """A tool's result as the case gives it: text, a JSON value or an MCP content list."""

    content: Any
    #: the tool failed: the model must handle it (retry with a fixed argument, ask, or stop)
    is_error: bool = False

    def as_text(self) -> str:
        """The result as a wire's text carries it.

        A string as it is; an MCP content list (items with ``type: text``) as its texts,
        one per line; any other JSON value as compact JSON, non-ASCII kept.
        """
        if isinstance(self.content, str):
            return self.content
        if is_content_list(self.content):
            return "\n".join(str(item.get("text", "")) for item in self.content)
        return json.dumps(self.content, ensure_ascii=False, separators=(",", ":"))


def is_content_list(value: Any) -> bool:
    """An MCP content list of text items (``[{type: text, text: ...}]``)."""
    return (isinstance(value, list) and bool(value)
            and all(isinstance(item, dict) and item.get("type") == "text" for item in value))


@dataclass(frozen=True)
class GivenCall:
    """One call of an earlier turn and its result."""

    name: str
    arguments: dict[str, Any]
    result: GivenResult
    #: the call's id on the wire, the same in the call and its result; stable, so a
    #: replayed request is the same request (cache keys, fingerprints)
    id: str


@dataclass(frozen=True)
class GivenTurn:
    """An earlier assistant turn: its calls in order (at least one), and any text beside them."""

    calls: tuple[GivenCall, ...]
    text: str = ""


def call_id(turn: int, index: int) -> str:
    """The id of the ``index``-th call of the ``turn``-th given turn (both from 1).

    Letters, digits and underscores only: every wire accepts it.
    """
    return f"toolu_ctx_{turn}_{index}"


def context_to_data(context: tuple[GivenTurn, ...]) -> list[JSONDict]:
    """The context as plain JSON data: what cache keys and fingerprints hash."""
    return [{"text": turn.text,
             "calls": [{"name": call.name, "arguments": call.arguments, "id": call.id,
                        "result": call.result.content, "is_error": call.result.is_error}
                       for call in turn.calls]}
            for turn in context]


#: the given calls a report shows of a case (the rest are counted), and each result's length
SHOWN_CALLS = 6
SHOWN_RESULT = 160


def context_lines(context: tuple[GivenTurn, ...],
                  mask: Callable[[str], str] = str) -> list[str]:
    """The context as a report shows it, one line a call, clipped: ``turn 1:
    find_company(query='Royal Mail Group') returned [{"company_number": ...``. ``mask``
    hides credentials in each part before it is clipped, so none is left half."""
    from .clip import clip_text

    lines: list[str] = []
    for t, turn in enumerate(context, 1):
        for call in turn.calls:
            args = mask(", ".join(f"{k}={v!r}" for k, v in call.arguments.items()))
            said = "failed with" if call.result.is_error else "returned"
            result = mask(call.result.as_text())
            lines.append(f"turn {t}: {clip_text(call.name, 60)}({clip_text(args, 80)}) {said} "
                         f"{clip_text(result, SHOWN_RESULT)}")
    if len(lines) > SHOWN_CALLS:
        lines[SHOWN_CALLS:] = [f"and {len(lines) - SHOWN_CALLS} more given calls"]
    return lines
