"""pytest-toolselect: a merge gate for LLM tool selection.

Public API: ``case`` (decorator), ``score_case``, the result types, the
``Provider`` protocol of the ``pytest_toolselect_provider`` hook with the values it
takes and returns (``TurnRequest``, ``Tool``, ``Turn``, ``ToolCall``) and the
plugin's error type. Names load on first use, so the plugin stays cheap to
import in every pytest run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_toolselect.exchange.json_value import JSONObject
    from pytest_toolselect.exchange.tool import Tool, ToolCall
    from pytest_toolselect.exchange.turns import Turn, TurnRequest
    from pytest_toolselect.messages.errors import ToolselectError
    from pytest_toolselect.plugin.decorator import case
    from pytest_toolselect.providers import Provider
    from pytest_toolselect.run.case_run import CaseRun
    from pytest_toolselect.scoring.checks import CheckResult, ScoreResult

__all__ = ["CaseRun", "CheckResult", "Provider", "ScoreResult", "Tool", "ToolCall",
           "ToolselectError", "Turn", "TurnRequest", "case", "score_case"]

_LAZY = {
    "case": ".plugin.decorator",
    "CheckResult": ".scoring.checks",
    "ScoreResult": ".scoring.checks",
    "ToolselectError": ".messages.errors",
    "CaseRun": ".run.case_run",
    "Provider": ".providers",
    "Tool": ".exchange.tool",
    "ToolCall": ".exchange.tool",
    "Turn": ".exchange.turns",
    "TurnRequest": ".exchange.turns",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_toolselect' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module, __name__), name)


def score_case(case: JSONObject, calls: Sequence[JSONObject],
               tools: Sequence[JSONObject] = ()) -> ScoreResult:
    """Score one captured first turn against a case in the case-file format.

    ``calls`` is a list of ``{"name": str, "arguments": dict}`` in first-turn order;
    ``tools`` (optional) are the offered tools with their ``input_schema``, which
    tells number-typed and identifier parameters apart and which the calls are validated
    against (``valid_arguments``). ``why`` may be left out here. A turn after earlier
    calls is scored with them under ``case["context"]`` (the case-file shape: each turn a
    ``call`` and its ``result``, or ``calls``), its identifiers grounded in the question
    or those results.
    """
    from pytest_toolselect.exchange.tool import Tool, ToolCall
    from pytest_toolselect.scoring.checks import score
    from pytest_toolselect.scoring.contradictions import parse_case

    data = dict(case)
    data.setdefault("id", "case")
    parsed = parse_case(data, source="score_case()", require_why=False)
    turn = tuple(
        ToolCall(str(c["name"]), dict(c.get("arguments") or {})) for c in calls
    )
    offered = tuple(
        Tool(str(t["name"]), str(t.get("description", "")),
             dict(t.get("input_schema") or t.get("inputSchema") or {}))
        for t in tools
    )
    return score(parsed, turn, offered)
