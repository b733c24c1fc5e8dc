"""Which arguments the identifier checks guard, grounding on by default, decoys naming
their parameters, and cases that contradict themselves refused at load."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_toolselect import score_case
from pytest_toolselect.exchange.tool import ToolCall
from pytest_toolselect.inputs.cases import Case, Decoy, IdentifierSettings
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.scoring.checks import score
from pytest_toolselect.scoring.contradictions import load_case_file, parse_case

VERBATIM = [
    ("Which boards does officer xY7_kQ2pLm9 sit on?", "officer_id", "xY7_kQ2pLm9"),
    ("Ship SHP:4410:B today", "shipment_id", "SHP:4410:B"),
    ("Disable ann.lee77@corp.example", "user_id", "ann.lee77@corp.example"),
    ("Rotate key k-77#A1 now", "key_id", "k-77#A1"),
    ("Track https://shop.example/orders/4419021/track", "order_id", "4419021"),
    ("Track https://shop.example/track?order=4419021&lang=en", "order_id", "4419021"),
    ("filings of company 09118273 2021", "company_number", "09118273"),
    ("add item 5520198 4 units", "item_id", "5520198"),
    ("merge 661203 990145", "customer_id", "990145"),
    ("see 7731022.Thanks", "ticket_id", "7731022"),
    ("company \u0660\u0664\u0661\u0663\u0668\u0662\u0660\u0663", "company_number", "04138203"),
    ("company \u06f0\u06f4\u06f1\u06f3\u06f8\u06f2\u06f0\u06f3", "company_number", "04138203"),
    ("company \u0966\u096a\u0967\u0969\u096e\u0968\u0966\u0969", "company_number", "04138203"),
    ("company \uff10\uff14\uff11\uff13\uff18\uff12\uff10\uff13", "company_number", "04138203"),
    ("company 04138203", "company_number", "\u0660\u0664\u0661\u0663\u0668\u0662\u0660\u0663"),
]

DERIVED = [
    ("Ping host 172.16.4.21", "host_id", "172.16.42.1"),
    ("Account aB3dE5fG7hJ", "account_id", "AB3DE5FG7HJ"),
    ("VAT number GB 745 9384 21", "company_number", "9384"),
    ("Which boards does officer xY7_kQ2pLm9 sit on?", "officer_id", "xY7_kQ2pLm8"),
    ("Ship SHP:4410:B today", "shipment_id", "SHP:4410:C"),
    # a count before its noun is a quantity, not the last group of a spaced identifier
    ("add item 5520198 4 units", "item_id", "55201984"),
    ("Which boards does officer 0000005 4 units today?", "officer_id", "00000054"),
]


def invented(question: str, name: str, value: Any, **case: Any) -> bool | None:
    """Whether no_identifier_invented passed (None: it did not run)."""
    result = score_case({"question": question, **case}, [{"name": "t", "arguments": {name: value}}])
    check = result.checks.get("no_identifier_invented")
    return None if check is None else check.passed


@pytest.mark.parametrize(("question", "name", "value"), VERBATIM)
@pytest.mark.parametrize("param", ["named", "value"])
def test_a_verbatim_copy_grounds_under_an_id_name_and_under_value(question, name, value, param):
    if param == "value":
        assert invented(question, "value", value, forbid_ungrounded=True)
    else:
        assert invented(question, name, value, forbid_ungrounded=True)


@pytest.mark.parametrize(("question", "name", "value"), DERIVED)
def test_a_derived_value_does_not_ground(question, name, value):
    assert invented(question, name, value, forbid_ungrounded=True) is False


# --- grounding on by default -------------------------------------------------------------


def test_grounding_is_on_by_default_for_identifier_parameters():
    assert invented("Officers of company 04138203", "company_number", "04138208") is False
    assert invented("Officers of company 04138203", "company_number", "04138203") is True


def test_by_default_a_search_text_or_a_value_without_digits_is_not_checked():
    assert invented("Find Royal Mail", "query", "Royal Mail 04138203") is None
    assert invented("Find Royal Mail", "company_number", "ROYALMAIL") is None


def test_forbid_ungrounded_false_opts_out():
    assert invented("Officers of 04138203", "company_number", "04138208",
                    forbid_ungrounded=False) is None


def test_the_suite_default_is_a_setting_a_case_can_override():
    off = IdentifierSettings(ground_params=False)
    case = parse_case({"id": "c", "question": "Officers of 04138203"}, require_why=False,
                      config_identifiers=off)
    turn = [ToolCall("t", {"company_number": "04138208"})]
    assert "no_identifier_invented" not in score(case, turn).checks
    on = parse_case({"id": "c", "question": "Officers of 04138203", "forbid_ungrounded": True},
                    require_why=False, config_identifiers=off)
    assert not score(on, turn).checks["no_identifier_invented"].passed


def test_default_grounding_keeps_the_fingerprint_of_a_case_written_before_it():
    before = Case(id="c", question="q", forbid_ungrounded=False).fingerprint_data()
    assert before["identifiers"].get("ground_params") is False
    unset = Case(id="c", question="q").fingerprint_data()
    assert unset["forbid_ungrounded"] is False and "ground_params" not in unset["identifiers"]


# --- scope of decoys and forbid_any_identifier -------------------------------------------


def test_a_decoy_in_a_search_text_is_no_identifier_use():
    result = score_case({"question": "Companies at SW1A 2AA", "decoys": ["SW1A 2AA"]},
                        [{"name": "find_company", "arguments": {"query": "SW1A 2AA"}}])
    assert result.passed


def test_a_decoy_naming_its_params_guards_only_those():
    case = {"question": "Which boards does officer OF123456 sit on?",
            "decoys": [{"value": "OF123456", "params": ["company_number"]}]}
    as_company = score_case(case, [{"name": "t", "arguments": {"company_number": "OF123456"}}])
    assert not as_company.checks["no_decoy_identifier"].passed
    assert "OF123456" in as_company.checks["no_decoy_identifier"].detail
    as_officer = score_case(case, [{"name": "t", "arguments": {"officer_id": "OF123456"}}])
    assert as_officer.checks["no_decoy_identifier"].passed


def test_forbid_any_identifier_guards_identifier_parameters():
    case = {"question": "Companies near SW1A 2AA", "forbid_any_identifier": True}
    search = score_case(case, [{"name": "t", "arguments": {"query": "SW1A 2AA"}}])
    assert search.checks["no_any_identifier"].passed
    used = score_case(case, [{"name": "t", "arguments": {"company_number": "SW1A2AA"}}])
    assert not used.checks["no_any_identifier"].passed


def test_identifiers_params_still_make_a_free_parameter_guarded():
    case = {"question": "Companies near SW1A 2AA", "decoys": ["SW1A 2AA"],
            "identifiers": {"params": ["query"]}}
    result = score_case(case, [{"name": "t", "arguments": {"query": "SW1A 2AA"}}])
    assert not result.checks["no_decoy_identifier"].passed


def test_decoy_forms_load():
    case = parse_case({"id": "c", "question": "q",
                       "decoys": ["GB1", {"value": "OF1", "params": ["company_number"]}]},
                      require_why=False)
    assert [Decoy.of(d) for d in case.decoys] == [Decoy("GB1"), Decoy("OF1", ("company_number",))]
    assert case.fingerprint_data()["decoys"] == [
        "GB1", {"value": "OF1", "params": ["company_number"]}]


# --- contradictions refused at load ------------------------------------------------------

HEAD = "schema_version: toolselect_cases.v1\ncases:\n"


def load_error(tmp_path: Path, body: str) -> ToolselectError:
    path = tmp_path / "c.toolselect.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    with pytest.raises(ToolselectError) as info:
        load_case_file(path)
    err = info.value
    assert err.file == str(path)
    return err


def test_a_decoy_the_expected_arguments_require_is_refused(tmp_path: Path) -> None:
    err = load_error(tmp_path, """\
  - id: officers
    question: Officers of company 04138203
    why: x
    expect_args:
      - {path: company_number, equals: "04138203"}
    decoys: ["4138203"]
""")
    text = str(err)
    assert err.line == 8 and err.place == "cases[0].decoys[0]", text
    assert "'officers'" in text and "decoys[0]" in text and "expect_args[0]" in text
    assert "can never pass" in text and "line 7" in (err.fix or "")


def test_a_one_of_with_another_accepted_value_is_no_contradiction(tmp_path: Path) -> None:
    path = tmp_path / "c.toolselect.yaml"
    path.write_text(HEAD + """\
  - id: officers
    question: Officers of company 04138203, or is it SC123456?
    why: x
    expect_args:
      - {path: company_number, one_of: ["04138203", "SC123456"]}
    decoys: ["04138203"]
""", encoding="utf-8")
    assert load_case_file(path).cases[0].id == "officers"


def test_a_decoy_that_is_the_question_s_only_identifier_is_refused(tmp_path: Path) -> None:
    err = load_error(tmp_path, """\
  - id: vat
    question: List the officers of GB 745 9384 21
    why: x
    forbid_ungrounded: true
    expect_args:
      - {path: company_number, matches: "^[0-9]{8}$"}
    decoys: ["GB745938421"]
""")
    text = str(err)
    assert err.place == "cases[0].decoys[0]", text
    assert "'vat'" in text and "only identifier in the question" in text
    assert "expect_args[0]" in text


def test_a_decoy_guarding_another_parameter_is_no_contradiction(tmp_path: Path) -> None:
    path = tmp_path / "c.toolselect.yaml"
    path.write_text(HEAD + """\
  - id: officer
    question: Boards of officer OF123456
    why: x
    expect_args:
      - {path: officer_id, equals: OF123456}
    decoys: [{value: OF123456, params: [company_number]}]
""", encoding="utf-8")
    assert load_case_file(path).cases[0].id == "officer"


# --- the rule's table in docs/checks.md holds ------------------------------------------------

CHECKS_DOC = Path(__file__).resolve().parent.parent / "docs" / "checks.md"


def _rule_rows() -> list[tuple[str, str, bool]]:
    rows = []
    for line in CHECKS_DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[2] in ("yes", "no"):
            for value in re.findall(r"`([^`]+)`", cells[1]):
                rows.append((cells[0], value, cells[2] == "yes"))
    return rows


def test_the_rule_table_is_read() -> None:
    assert len(_rule_rows()) >= 20


@pytest.mark.parametrize(("question", "value", "expected"), _rule_rows())
def test_the_rule_table_in_the_docs_holds(question: str, value: str, expected: bool) -> None:
    assert invented(question, "some_id", value, forbid_ungrounded=True) is expected


# --- a parameter that is an identifier by its schema alone: refused once the tools are known


PATTERNED = [{"name": "ship", "description": "Ship an order by its reference.",
              "inputSchema": {"type": "object", "required": ["target"], "properties": {
                  "target": {"type": "string", "pattern": "^[A-Z]{2}[0-9]+$"}}}},
             {"name": "track", "description": "Track a parcel.",
              "inputSchema": {"type": "object", "properties": {"target": {"type": "string"}}}}]
SCHEMA_ONLY = """\
  - id: ship
    question: Ship order AB12345 today
    why: x
    expect_tool: [ship]
    expect_args:
      - {path: target, equals: AB12345}
    decoys: ["AB12345"]
"""


def test_a_decoy_required_under_a_schema_declared_identifier_is_refused_with_the_tools(
        tmp_path: Path) -> None:
    from pytest_toolselect.exchange.tool import Tool
    from pytest_toolselect.scoring.contradictions import check_with_tools

    path = tmp_path / "c.toolselect.yaml"
    path.write_text(HEAD + SCHEMA_ONLY, encoding="utf-8")
    (case,) = load_case_file(path).cases  # the name says nothing: not known at load
    tools = [Tool(t["name"], t["description"], t["inputSchema"]) for t in PATTERNED]
    with pytest.raises(ToolselectError) as info:
        check_with_tools(case, tools)
    err = info.value
    assert err.file == str(path) and err.line == 3, str(err)  # the case's line
    assert "decoys[0]" in str(err) and "expect_args[0]" in str(err) and "can never pass" in str(err)
    # expected under a tool whose schema does not declare it: the decoy does not guard it
    check_with_tools(replace(case, expect_tool=("track",)), tools)
    # one expected tool that leaves it free: the case can pass through that one
    check_with_tools(replace(case, expect_tool=("ship", "track")), tools)


def test_the_schema_declared_contradiction_is_the_case_s_error_in_a_run(project: Any) -> None:
    project.config({"shop": {"tools_file": project.tools_file("shop", PATTERNED)}})
    (project.path / "shop.toolselect.yaml").write_text(HEAD + SCHEMA_ONLY, encoding="utf-8")
    result = project.pytester.runpytest("-rA")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*shop.toolselect.yaml:3: case 'ship': decoys[[]0] 'AB12345' is the value "
         "expect_args[[]0] requires*can never pass*"])
