"""A case's ``context:``: the turns before the scored one, as case files, decorated cases and
``score_case`` give them. Every mistake is named with its file, line, place and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolselect.exchange.context import GivenCall, GivenResult, GivenTurn
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.inputs.cases import check_offered
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.scoring.contradictions import load_case_file, parse_case

HEAD = """\
schema_version: toolselect_cases.v1
cases:
  - id: officers-after-search
    question: Who are the directors of Royal Mail Group?
    why: The search returned the number; the model must use it.
    expect_tool: [get_officers]
    context:
"""

VALID = HEAD + """\
      - call: {name: find_company, arguments: {query: Royal Mail Group}}
        result: |
          [{"company_number": "04138203", "title": "ROYAL MAIL GROUP LIMITED"}]
        text: Let me search.
      - calls:
          - call: {name: get_company, arguments: {company_number: "4138203"}}
            result: [{type: text, text: "not found"}]
            is_error: true
          - call: {name: get_company}
            result: {company_number: "04138203", officers: 7}
"""

TOOLS = tuple(Tool(n, "", {"type": "object"}) for n in ("find_company", "get_company",
                                                       "get_officers"))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.toolselect.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _error(tmp_path: Path, body: str) -> ToolselectError:
    path = _write(tmp_path, HEAD + body)
    with pytest.raises(ToolselectError) as info:
        load_case_file(path)
    return info.value


def test_context_reads_both_turn_shapes_every_result_kind_and_stable_ids(tmp_path: Path) -> None:
    case = load_case_file(_write(tmp_path, VALID)).cases[0]
    assert case.context == (
        GivenTurn((GivenCall("find_company", {"query": "Royal Mail Group"}, GivenResult(
            '[{"company_number": "04138203", "title": "ROYAL MAIL GROUP LIMITED"}]\n'),
            "toolu_ctx_1_1"),), "Let me search."),
        GivenTurn((
            GivenCall("get_company", {"company_number": "4138203"},
                      GivenResult([{"type": "text", "text": "not found"}], is_error=True),
                      "toolu_ctx_2_1"),
            GivenCall("get_company", {}, GivenResult({"company_number": "04138203",
                                                      "officers": 7}), "toolu_ctx_2_2"))),
    )
    check_offered(case, TOOLS)  # every context tool is offered


@pytest.mark.parametrize(("body", "line", "place", "has", "fix"), [
    ("      - call: {name: find_company}\n", 8, "cases[0].context[0]",
     "a call but no result", "add result:"),
    ("      - calls:\n          - call: {name: a}\n            result: x\n        result: y\n",
     11, "cases[0].context[0].result", "beside calls:", "move result:"),
    ("      - text: hello\n", 8, "cases[0].context[0]",
     "none of call or calls", "add call: with result:"),
    ("      - call: {name: a}\n        result: x\n        calls: [{call: {name: b}, result: y}]\n",
     8, "cases[0].context[0]", "it needs exactly one of call or calls", "keep one"),
    ("      - call: {name: a}\n        reslt: x\n", 9, "cases[0].context[0].reslt",
     "reslt", "result"),
    ("      - call: {arguments: {q: 1}}\n        result: x\n", 8, "cases[0].context[0].call",
     "'name'", "add name:"),
    ("      - call: {name: a, arguments: [1]}\n        result: x\n", 8,
     "cases[0].context[0].call.arguments", "must be a mapping", "arguments"),
    ("      - calls:\n          - call: {name: a}\n", 9, "cases[0].context[0].calls[0]",
     "'result'", "add result:"),
    ("      - call: {name: a}\n        result:\n", 9, "cases[0].context[0].result",
     "empty", "result: ''"),
    ("      - call: {name: a}\n        result: x\n        is_error: yes please\n", 10,
     "cases[0].context[0].is_error", "true or false", "true or false"),
    ("      find_company\n", 7, "cases[0].context", "must be a list", "context"),
])
def test_each_context_mistake_names_file_line_place_and_fix(
        tmp_path: Path, body: str, line: int, place: str, has: str, fix: str) -> None:
    err = _error(tmp_path, body)
    assert err.file == str(tmp_path / "c.toolselect.yaml")
    assert (err.line, err.place) == (line, place), str(err)
    assert has in err.message, str(err)
    assert err.fix and fix in err.fix, str(err)


def test_a_context_call_of_a_tool_no_server_offers_is_an_error_like_expect_tools(
        tmp_path: Path) -> None:
    case = load_case_file(_write(tmp_path, VALID.replace("name: get_company}",
                                                         "name: get_compny}"))).cases[0]
    with pytest.raises(ToolselectError) as info:
        check_offered(case, TOOLS)
    err = info.value
    assert err.place == "case 'officers-after-search', context[1].calls[1]"
    assert "'get_compny', which the case's servers do not offer" in err.message
    assert "did you mean 'get_company'?" in err.message
    assert err.fix and "find_company, get_company, get_officers" in err.fix


def test_the_fingerprint_holds_the_context_and_is_unchanged_without_one(tmp_path: Path) -> None:
    case = load_case_file(_write(tmp_path, VALID)).cases[0]
    bare = parse_case({"id": "officers-after-search", "question": case.question,
                       "why": "w", "expect_tool": ["get_officers"]})
    assert "context" not in bare.fingerprint_data()
    data = case.fingerprint_data()
    assert data["context"][0]["calls"][0]["result"].startswith('[{"company_number": "04138203"')
    changed = load_case_file(_write(tmp_path, VALID.replace('"04138203", "title"',
                                                            '"04138204", "title"'))).cases[0]
    assert changed.fingerprint_data() != data
    flagged = load_case_file(_write(tmp_path, VALID.replace("is_error: true",
                                                            "is_error: false"))).cases[0]
    assert flagged.fingerprint_data() != data


def test_decorated_cases_and_score_case_take_the_same_context() -> None:
    from pytest_toolselect import score_case

    given = [{"call": {"name": "find_company", "arguments": {"query": "Acme"}},
              "result": [{"company_number": "04138203"}]}]
    parsed = parse_case({"id": "d", "question": "Directors of Acme?", "context": given},
                        require_why=False)
    assert parsed.context[0].calls[0].result.content == [{"company_number": "04138203"}]
    with pytest.raises(ToolselectError) as info:
        score_case({"question": "q", "context": [{"call": {"name": "x"}}]}, [])
    assert info.value.place == "context[0]" and "no result" in info.value.message
