"""The verdicts of the example suite's cases on a fixed set of first turns, one line each.

Run it on two commits and diff the output to see which verdicts a change to the checks
moves. ``local/bm25`` fills no arguments, so besides its own turn each case is scored on
recorded-style turns that do pass arguments:

- ``bm25``: the embedded provider's turn (a tool, no arguments), as the example run sees it;
- ``copy``: the expected tool with each identifier-named parameter set to the question's
  first identifier (``GB 745 9384 21``), copied verbatim;
- ``changed``: the same with that word's last digit changed (a derived identifier);
- ``recalled``: the expected tool with a company number from memory (``04138203``);
- ``search``: ``find_company`` (when offered) with the question as its search text;
- ``glued``, ``glued-cjk``: the ``copy`` turn, on the question with that identifier glued
  to its text (``GB 745 9384 21's``, ``番号「GB 745 9384 21」の``), which must still pass;
- ``glued-chg``: the ``changed`` turn on the glued question, which must still fail.

Usage: python benchmarks/grounding_verdicts.py  (prints ``case turn verdict failing``)
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
ID_NAME = re.compile(r"(?:^|_)(?:id|number|ref|code)$")
IDENT = re.compile(r"(?:\b[A-Z]{2,3} )?\b[\w-]*\d[\w-]*(?: \d[\w-]*)*")


def _first_word_with_digit(question: str) -> str | None:
    # the whole identifier as written: "GB 745 9384 21", "INV-2024-000123", "04138203"
    found = IDENT.search(question)
    return found.group() if found else None


def _changed(value: str) -> str:
    i = max(i for i, c in enumerate(value) if c.isdigit())
    return value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1:]


def _id_params(tool: Any) -> list[str]:
    props = (tool.input_schema or {}).get("properties") or {}
    return [name for name in props if ID_NAME.search(name)]


GLUES = {"glued": "{}'s", "glued-cjk": "番号「{}」の"}


def _glued(case: Any, turns: dict[str, list[Any]]) -> dict[str, tuple[Any, list[Any]]]:
    """The copy and changed turns again, on the question with its identifier glued."""
    word = _first_word_with_digit(case.question)
    out: dict[str, tuple[Any, list[Any]]] = {}
    if word is None or "copy" not in turns:
        return out
    for label, glue in GLUES.items():
        glued = dataclasses.replace(case, question=case.question.replace(word, glue.format(word)))
        out[label] = (glued, turns["copy"])
        if label == "glued":
            out["glued-chg"] = (glued, turns["changed"])
    return out


def _turns(case: Any, tools: dict[str, Any], bm25_call: str | None) -> dict[str, list[Any]]:
    from pytest_toolselect.exchange.tool import ToolCall

    turns: dict[str, list[Any]] = {"bm25": [ToolCall(bm25_call, {})] if bm25_call else []}
    expected = [t for t in case.expect_tool or () if t in tools]
    word = _first_word_with_digit(case.question)
    if expected:
        tool = tools[expected[0]]
        params = _id_params(tool)
        if params and word:
            turns["copy"] = [ToolCall(tool.name, {p: word for p in params})]
            turns["changed"] = [ToolCall(tool.name, {p: _changed(word) for p in params})]
        if params:
            turns["recalled"] = [ToolCall(tool.name, {p: "04138203" for p in params})]
    if "find_company" in tools:
        turns["search"] = [ToolCall("find_company", {"query": case.question})]
    return turns


def main() -> int:
    from pytest_toolselect.discovery.servers import discover
    from pytest_toolselect.inputs.config import load_config
    from pytest_toolselect.providers.local import rank
    from pytest_toolselect.scoring.checks import score
    from pytest_toolselect.scoring.contradictions import load_case_file

    config = load_config(EXAMPLES)
    offered = {name: discover(spec, EXAMPLES).tools for name, spec in config.servers.items()}
    for path in sorted(EXAMPLES.glob("*.toolselect.yaml")):
        for case in load_case_file(path, config.identifiers).cases:
            tools = tuple(t for s in case.servers or offered for t in offered[s])
            ranked = rank(case.question, tools)
            bm25 = tools[ranked[0][1]].name if ranked and ranked[0][0] >= 1.0 else None
            turns = _turns(case, {t.name: t for t in tools}, bm25)
            scored = {label: (case, calls) for label, calls in turns.items()}
            scored.update(_glued(case, turns))
            for label, (scored_case, calls) in scored.items():
                result = score(scored_case, calls, tools)
                verdict = "pass" if result.passed else "FAIL"
                print(f"{case.id:32} {label:9} {verdict} {','.join(result.failing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
