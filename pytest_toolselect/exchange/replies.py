"""What makes a model's reply unreadable as a tool choice, said before anything is scored.

A reply the plugin cannot read (a call with no usable tool name, arguments that are not a
JSON object, a reply a content filter stopped or the model refused) says nothing about the
model's choice: scored, it would be a failure, and recorded in a baseline it would turn the
next real regression into "still failing". It is an error of its item instead, and a
baseline keeps its entry.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection

from .clip import clip_text
from .turns import Turn

#: Unicode categories no character of a tool name is ever in: controls, formats (zero-width
#: and direction marks, the byte-order mark), surrogates, line and paragraph separators
_NEVER_IN_A_NAME = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
#: stop reasons that mean the reply was withheld, not chosen: OpenAI's finish_reason
#: content_filter, Anthropic's stop_reason refusal
WITHHELD = {"content_filter": "a content filter stopped the reply",
            "refusal": "the model refused to answer"}


def shown(name: str) -> str:
    """A name as an error message shows it: bounded, with every odd character escaped."""
    return repr(clip_text(name))


def name_fault(name: object) -> str | None:
    """What is wrong with a tool name from a reply, or None when it can name a tool."""
    if name is None:
        return "has no tool name (null or missing)"
    if not isinstance(name, str):
        return f"has a tool name that is not a string: {clip_text(repr(name))}"
    if not name:
        return "has an empty tool name"
    odd = next((c for c in name if unicodedata.category(c) in _NEVER_IN_A_NAME), None)
    if odd is not None:
        kind = unicodedata.category(odd)
        return (f"has the tool name {shown(name)}, which holds the {kind} character "
                f"U+{ord(odd):04X}")
    if name != name.strip() or _blank(name[0]) or _blank(name[-1]):
        return f"has the tool name {shown(name)}, with whitespace around it"
    return None


def _blank(c: str) -> bool:
    return c.isspace() or unicodedata.category(c) == "Zs"


def call_faults(index: int, name: object, raw_arguments: str | None, *,
                offered: Collection[str] = ()) -> list[str]:
    """What is wrong with the reply's tool call number `index` (1-based), named so.

    A name in `offered` (a real tool's name, mapped back from the wire) is readable
    whatever it holds: the server named the tool so.
    """
    where = f"tool call {index}"
    faults = []
    bad_name = None if isinstance(name, str) and name in offered else name_fault(name)
    if bad_name is not None:
        faults.append(f"{where} {bad_name}")
    if raw_arguments is not None:
        label = f"{where} ({shown(str(name))})" if bad_name is None else where
        faults.append(f"{label} sent arguments that are not a JSON object: {shown(raw_arguments)}")
    return faults


def withheld_fault(stop_reason: str | None) -> str | None:
    """A stop reason that means the reply was withheld (a filter, a refusal), said as such."""
    withheld = WITHHELD.get(stop_reason or "")
    return None if withheld is None else f"{withheld} (stop reason {stop_reason!r})"


def read_faults(turn: Turn) -> list[str]:
    """The faults of a turn whose calls its provider checked reading the wire (turn.faults),
    and a stop reason that withheld the reply."""
    withheld = withheld_fault(turn.stop_reason)
    return [*turn.faults, *([withheld] if withheld is not None else [])]


def reply_faults(turn: Turn, offered: Collection[str] = ()) -> list[str]:
    """Every reason `turn` cannot be scored, in reply order (empty: it can be).

    The faults a provider found reading the wire are its full account of the calls;
    without any (a hook's turn, a cached one), each call is checked here.
    """
    if turn.faults:
        return read_faults(turn)
    faults = [f for i, call in enumerate(turn.calls, 1)
              for f in call_faults(i, call.name, call.raw_arguments, offered=offered)]
    return faults + read_faults(turn)


def unreadable_message(model: str, faults: list[str], *, truncated: bool = False) -> str:
    """The item's error: the model, and every fault of its reply."""
    cut = " (the reply was cut at max_tokens)" if truncated else ""
    return f"{model}: the reply cannot be read as a tool choice{cut}: {'; '.join(faults)}"
