"""Grounding past the first call: an identifier may come from the question or from a result
the case's context gives, and the checks' details name which.

Properties, over results of every format (text, a JSON string, a JSON number, nested arrays,
an MCP content list) with noise of every JSON type and Unicode category around the value:
a verbatim copy grounds; a copy with one digit changed does not.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pytest_toolselect import score_case
from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.scoring.checks import score
from pytest_toolselect.scoring.contradictions import parse_case

EXAMPLES = int(os.environ.get("TOOLSELECT_GROUNDING_EXAMPLES", "200"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

TOOLS = (Tool("find_company", "", {"type": "object", "properties": {"query": {"type": "string"}}}),
         Tool("get_officers", "", {"type": "object",
                                   "properties": {"company_number": {"type": "string"}}}))
FOUND = ('[{"company_number": "04138203", "title": "ROYAL MAIL GROUP LIMITED"},\n'
         ' {"company_number": "08680755", "title": "ROYAL MAIL PLC"}]\n')
CASE: dict[str, Any] = {
    "id": "officers-after-search", "question": "Who are the directors of Royal Mail Group?",
    "why": "The search returned the number.",
    "context": [{"call": {"name": "find_company", "arguments": {"query": "Royal Mail Group"}},
                 "result": FOUND}],
    "expect_tool": ["get_officers"],
    "expect_args": [{"path": "company_number", "equals": "04138203"}],
    "forbid_ungrounded": True, "decoys": ["08680755"],
}


def _score(number: str, **changes: Any) -> Any:
    case = parse_case({**CASE, **changes})
    return score(case, [ToolCall("get_officers", {"company_number": number})], TOOLS)


def test_the_number_the_search_returned_grounds_and_the_detail_names_the_result() -> None:
    result = _score("04138203")
    assert result.passed, result.checks
    assert result.checks["no_identifier_invented"].detail == (
        "all 1 identifier(s) are grounded: 04138203 from find_company's result, turn 1")


def test_the_decoy_match_fails_naming_the_check_and_where_it_was_found() -> None:
    result = _score("08680755")
    assert result.failing == ["arguments", "no_decoy_identifier"]
    assert result.checks["no_decoy_identifier"].detail == (
        'decoy used as an identifier: get_officers (call 1) company_number="08680755" matches '
        "decoy \"08680755\", found in find_company's result, turn 1")


def test_a_number_in_no_source_is_invented() -> None:
    result = _score("04138208")
    assert "no_identifier_invented" in result.failing
    assert result.checks["no_identifier_invented"].detail == (
        "identifier in no source (not in the question nor in any given result): "
        'get_officers (call 1) company_number="04138208"')


def test_the_question_is_a_source_too_and_a_turn_of_several_calls_names_the_call() -> None:
    context = [{"calls": [
        {"call": {"name": "find_company", "arguments": {"query": "a"}}, "result": "none",
         "is_error": True},
        {"call": {"name": "find_company", "arguments": {"query": "b"}},
         "result": {"items": [{"number": 8680755}]}}]}]
    result = score(parse_case({**CASE, "question": "Officers of 04138203 and its sister?",
                               "context": context, "decoys": []}),
                   [ToolCall("get_officers", {"company_number": "04138203"}),
                    ToolCall("get_officers", {"company_number": "08680755"})], TOOLS)
    assert result.checks["no_identifier_invented"].detail == (
        "all 2 identifier(s) are grounded: 04138203 from the question; "
        "08680755 from find_company's result, turn 1 call 2")


def test_neighbouring_values_of_a_result_are_never_joined_into_one_identifier() -> None:
    context = [{"call": {"name": "find_company", "arguments": {}},
                "result": {"prefix": "745", "rest": "9384", "list": ["0413", "8203"]}}]
    for joined in ("7459384", "04138203", "0413 8203"):
        result = _score(joined, context=context, decoys=[], expect_args=[])
        assert result.failing == ["no_identifier_invented"], (joined, result.checks)


def test_score_case_grounds_in_the_context_it_is_given() -> None:
    data = {k: v for k, v in CASE.items() if k != "id"}
    call = [{"name": "get_officers", "arguments": {"company_number": "04138203"}}]
    assert score_case(data, call).passed
    assert not score_case({**data, "context": []}, call).passed


# --- properties ---------------------------------------------------------------------------

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.text(max_size=12))
noise = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8)
identifiers = st.from_regex(r"[A-Z]{0,2}[0-9]{6,12}", fullmatch=True)
FORMATS = ("text", "json string", "json text", "json number", "nested arrays", "content list")


def _digits(text: str) -> str:
    """Every decimal digit of the text, of any script, as ASCII: grounding reads them so."""
    return "".join(str(int(c)) for c in text if c.isdecimal())


def _result(fmt: str, ident: str, before: Any, after: Any, depth: int) -> Any:
    if fmt == "text":
        return f"{_text(before)} {ident} {_text(after)}"
    leaf: Any = int(ident) if fmt == "json number" else ident
    for _ in range(depth if fmt == "nested arrays" else 1):
        leaf = [leaf]
    value = {"before": before, "found": [before, leaf, after], "after": after}
    if fmt == "json text":
        return json.dumps(value, ensure_ascii=False)
    if fmt == "content list":
        return [{"type": "text", "text": json.dumps(value)}]
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _grounds(ident: str, result: Any) -> bool:
    case = parse_case({**CASE, "question": "Who are the directors of that company?",
                       "context": [{"call": {"name": "find_company", "arguments": {}},
                                    "result": result}],
                       "decoys": [], "expect_args": []})
    checked = score(case, [ToolCall("get_officers", {"company_number": ident})], TOOLS)
    return "no_identifier_invented" not in checked.failing


@SETTINGS
@given(ident=identifiers, fmt=st.sampled_from(FORMATS), before=noise, after=noise,
       depth=st.integers(1, 4))
def test_a_verbatim_copy_from_any_result_grounds(ident: str, fmt: str, before: Any, after: Any,
                                                 depth: int) -> None:
    if fmt == "json number":
        ident = ident.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ").lstrip("0") or "1"
        assume(len(ident) >= 6)
    assert _grounds(ident, _result(fmt, ident, before, after, depth))


@SETTINGS
@given(ident=identifiers, fmt=st.sampled_from(FORMATS), before=noise, after=noise,
       depth=st.integers(1, 4), data=st.data())
def test_a_copy_with_a_changed_digit_does_not_ground(ident: str, fmt: str, before: Any,
                                                     after: Any, depth: int,
                                                     data: st.DataObject) -> None:
    if fmt == "json number":
        ident = ident.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ").lstrip("0") or "1"
        assume(len(ident) >= 6)
    result = _result(fmt, ident, before, after, depth)
    at = data.draw(st.sampled_from([i for i, c in enumerate(ident) if c.isdigit()]))
    digit = data.draw(st.sampled_from([d for d in "0123456789" if d != ident[at]]))
    changed = ident[:at] + digit + ident[at + 1:]
    # the changed digits (less padding zeros) occur nowhere in the noise, in any script
    core = re.sub(r"^0+", "", _digits(changed))
    assume(core not in _digits(_text(before) + _text(after)))
    assert not _grounds(changed, result)


def test_the_docs_worked_example_loads_and_says_what_the_page_says(tmp_path: Any) -> None:
    from pathlib import Path

    from pytest_toolselect.inputs.cases import check_offered
    from pytest_toolselect.scoring.contradictions import load_case_file

    page = (Path(__file__).resolve().parent.parent / "docs" /
            "cases-past-the-first-call.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", page, flags=re.S)
    path = tmp_path / "c.toolselect.yaml"
    path.write_text(blocks[0], encoding="utf-8")
    [case] = load_case_file(path).cases
    offered = (Tool("find_company", "", {"type": "object"}),
               Tool("list_officers", "", {"type": "object"}))
    check_offered(case, offered)
    said = re.findall(r"^  `(no_\w+): (.*)`\.?$", page, flags=re.M)
    assert len(said) == 3
    for number, (check, detail) in zip(("04138203", "08680755", "01234567"), said, strict=True):
        scored = score(case, [ToolCall("list_officers", {"company_number": number})], offered)
        assert scored.checks[check].detail == detail
    # the other examples load too, as a case's context
    retry = load_case_file(_file(tmp_path, blocks[-1])).cases[0]
    assert retry.context[-1].calls[0].result.is_error
    for block in blocks[1:3]:
        given = load_case_file(_file(tmp_path, "  - id: x\n    question: q\n    why: w\n"
                                     + "".join("    " + line + "\n"
                                               for line in block.splitlines()))).cases[0]
        assert given.context


def _file(tmp_path: Any, cases: str) -> Any:
    path = tmp_path / "more.toolselect.yaml"
    path.write_text("schema_version: toolselect_cases.v1\ncases:\n" + cases, encoding="utf-8")
    return path
