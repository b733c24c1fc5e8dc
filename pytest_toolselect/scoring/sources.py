"""Where an identifier may come from: the question, or a result the case's context gives.

The rule of grounding.py (verbatim copies, separators, leading zeros) applies to each
source alike. A result is read as the model reads it, its text, and as its JSON values
one by one (each string, each number, at any depth), so a value escaped or packed in
compact JSON grounds as its decoded self. Each value stands apart: two neighbouring
values are never joined into one identifier. Pure functions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pytest_toolselect.exchange.context import GivenCall, GivenTurn, is_content_list
from pytest_toolselect.inputs.cases import Case

from .grounding import QuestionGrounding
from .identifiers import Identifier, grounded_by

QUESTION = "the question"
#: JSON values read from one result: enough for any real listing, bounded for a huge one
MAX_VALUES = 10_000


@dataclass(frozen=True)
class Source:
    """A text an identifier may be copied from, and how a detail names it."""

    label: str
    grounding: QuestionGrounding


def result_label(call: GivenCall, turn: int, index: int, calls: int) -> str:
    """``find_company's result, turn 1`` (and ``call 2`` in a turn of several calls)."""
    return f"{call.name}'s result, turn {turn}" + (f" call {index}" if calls > 1 else "")


def case_sources(case: Case) -> list[Source]:
    """The question, then each given result in order (its text, then its JSON values)."""
    zeros = case.identifiers.leading_zeros
    out = [Source(QUESTION, QuestionGrounding(case.question, leading_zeros=zeros))]
    out += context_sources(case.context, leading_zeros=zeros)
    return out


def context_sources(context: tuple[GivenTurn, ...], *, leading_zeros: bool = True
                    ) -> list[Source]:
    out: list[Source] = []
    for t, turn in enumerate(context, 1):
        for i, call in enumerate(turn.calls, 1):
            label = result_label(call, t, i, len(turn.calls))
            texts = dict.fromkeys([call.result.as_text(), *_values(call.result.content)])
            out += [Source(label, QuestionGrounding(text, leading_zeros=leading_zeros))
                    for text in texts if text.strip()]
    return out


def _values(content: Any) -> Iterator[str]:
    """Every string and number of a result's JSON, at any depth (a text that is JSON is
    read as JSON too; an MCP content list's texts likewise)."""
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except (ValueError, RecursionError):
            return
        if isinstance(content, str):
            yield content
            return
    elif is_content_list(content):
        for item in content:
            yield from _values(str(item.get("text", "")))
        return
    stack = [content]
    seen = 0
    while stack and seen < MAX_VALUES:
        value = stack.pop()
        seen += 1
        if isinstance(value, dict):
            stack += reversed([*value.values(), *value.keys()])
        elif isinstance(value, list):
            stack += reversed(value)
        elif isinstance(value, str):
            yield value
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield json.dumps(value)


def source_of(ident: Identifier, sources: list[Source]) -> tuple[str, str] | None:
    """The first source that grounds the identifier: (the text found there, its label)."""
    for source in sources:
        found = grounded_by(ident, source.grounding)
        if found is not None:
            return found, source.label
    return None
