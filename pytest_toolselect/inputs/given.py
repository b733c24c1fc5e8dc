"""A case's ``context:``, the turns before the scored one, read into exchange.context's shape.

The schema checks each turn's keys; here are the mistakes it cannot express (a call with no
result, a result beside ``calls:``), each named with its place and fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_toolselect.exchange.context import GivenCall, GivenResult, GivenTurn, call_id
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.positions.sourced import PathT, Sourced


def read_context(items: Sequence[Any], src: Sourced, path: PathT
                 ) -> tuple[tuple[GivenTurn, ...], list[ToolselectError]]:
    """The turns of a schema-valid ``context:`` list, and every mistake found in it."""
    turns: list[GivenTurn] = []
    problems: list[ToolselectError] = []
    for t, item in enumerate(items):
        at = (*path, t)
        if "call" in item:
            if "result" not in item:
                problems.append(src.error(at, "this context turn has a call but no result",
                                          "add result: with what the tool returned (text, "
                                          "JSON or an MCP content list)"))
                continue
            entries: list[tuple[Mapping[str, Any], PathT]] = [(item, at)]
        else:
            for key in ("result", "is_error"):
                if key in item:
                    problems.append(src.error(
                        (*at, key), f"{key} stands beside calls:, where no call owns it",
                        f"move {key}: into the call of calls: it belongs to"))
            entries = [(c, (*at, "calls", i)) for i, c in enumerate(item["calls"])]
        calls: list[GivenCall] = []
        for i, (entry, place) in enumerate(entries):
            if entry["result"] is None:
                problems.append(src.error((*place, "result"), "the result is empty",
                                          "write what the tool returned, or result: '' for "
                                          "an empty text"))
                continue
            call = entry["call"]
            calls.append(GivenCall(name=call["name"], arguments=dict(call.get("arguments", {})),
                                   result=GivenResult(entry["result"],
                                                      bool(entry.get("is_error", False))),
                                   id=call_id(t + 1, i + 1)))
        turns.append(GivenTurn(tuple(calls), item.get("text", "")))
    return tuple(turns), problems
