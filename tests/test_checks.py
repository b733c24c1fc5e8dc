"""The six checks, score(), and the argument matchers."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.inputs.cases import Case, Decoy, IdentifierSettings
from pytest_toolselect.scoring.checks import CHECK_NAMES, CheckResult, ScoreResult, score
from pytest_toolselect.scoring.matchers import evaluate, validate_matcher

QUESTION = "Can you tell me about Royal Mail Group Limited, company 04138203?"
VAT_QUESTION = "Who has VAT number GB 745 9384 21?"

COMPANIES = (
    Tool("find_company", "Search companies by name", {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
    }),
    Tool("get_company", "Get a company by number", {
        "type": "object",
        "properties": {
            "company_number": {"type": "string", "pattern": "^[A-Z0-9]{8}$"},
            "year": {"type": "integer"},
            "price": {"type": ["number", "null"]},
            "items": {"type": "array", "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
            }},
        },
    }),
)


def make(**kw: Any) -> Case:
    kw.setdefault("id", "c")
    kw.setdefault("question", QUESTION)
    kw.setdefault("why", "test")
    for key in ("expect_tool", "forbid_tools", "decoys"):
        if isinstance(kw.get(key), list):
            kw[key] = tuple(kw[key])
    if "expect_args" in kw:
        kw["expect_args"] = tuple(kw["expect_args"])
    return Case(**kw)


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments)


def check(case: Case, calls: list[ToolCall], name: str,
          tools: tuple[Tool, ...] = COMPANIES) -> CheckResult:
    result = score(case, calls, tools)
    return result.checks[name]


# --- score --------------------------------------------------------------------------


def test_check_names():
    assert CHECK_NAMES == ("tool_choice", "no_forbidden_tools", "arguments", "valid_arguments",
                           "no_undeclared_arguments",
                           "no_identifier_invented", "no_any_identifier",
                           "no_decoy_identifier")


def test_score_only_applicable_checks_in_order():
    case = make(decoys=["GB745938421"], forbid_any_identifier=True, forbid_ungrounded=True,
                expect_args=[{"path": "query", "contains": "royal"}],
                forbid_tools=["get_company"], expect_tool=["find_company"])
    result = score(case, [call("find_company", query="Royal Mail")], COMPANIES)
    assert list(result.checks) == list(CHECK_NAMES)
    assert result.passed
    assert result.failing == []


def test_score_no_checks_apply():
    result = score(make(), [call("anything")])
    assert result == ScoreResult(True, {})


def test_score_failing_lists_failed_checks():
    case = make(expect_tool=["find_company"], forbid_tools=["get_company"],
                forbid_ungrounded=True)
    result = score(case, [call("get_company", company_number="04138204")], COMPANIES)
    assert not result.passed
    assert result.failing == ["tool_choice", "no_forbidden_tools", "no_identifier_invented"]


def test_score_accepts_any_sequence_and_no_tools():
    case = make(expect_tool=["find_company"], forbid_ungrounded=True)
    result = score(case, (call("find_company", query="04138203"),))
    assert result.passed


# --- tool_choice --------------------------------------------------------------------


def test_tool_choice_first_call_expected():
    r = check(make(expect_tool=["find_company", "search"]), [call("find_company")],
              "tool_choice")
    assert r.passed


def test_tool_choice_first_call_wrong():
    r = check(make(expect_tool=["find_company"]),
              [call("get_company"), call("find_company")], "tool_choice")
    assert not r.passed
    assert "get_company" in r.detail and "find_company" in r.detail


def test_tool_choice_only_first_call_counts():
    r = check(make(expect_tool=["find_company"]),
              [call("find_company"), call("get_company")], "tool_choice")
    assert r.passed


def test_tool_choice_no_call_fails():
    r = check(make(expect_tool=["find_company"]), [], "tool_choice")
    assert not r.passed
    assert "no tool was called" in r.detail


def test_tool_choice_no_call_allowed():
    r = check(make(expect_tool=["find_company"], allow_no_tool=True), [], "tool_choice")
    assert r.passed


def test_tool_choice_expect_nothing_and_nothing_called():
    assert check(make(expect_tool=[]), [], "tool_choice").passed


def test_tool_choice_expect_nothing_but_called():
    r = check(make(expect_tool=[]), [call("find_company")], "tool_choice")
    assert not r.passed
    assert "find_company" in r.detail


def test_tool_choice_allow_no_tool_still_checks_a_call():
    r = check(make(expect_tool=["find_company"], allow_no_tool=True),
              [call("get_company")], "tool_choice")
    assert not r.passed


def test_tool_choice_not_applied_without_expectation():
    assert "tool_choice" not in score(make(), [call("x")]).checks


# --- no_forbidden_tools -------------------------------------------------------------


def test_no_forbidden_tools_passes():
    r = check(make(forbid_tools=["get_company"]), [call("find_company")],
              "no_forbidden_tools")
    assert r.passed


def test_no_forbidden_tools_first_call():
    r = check(make(forbid_tools=["get_company"]), [call("get_company")],
              "no_forbidden_tools")
    assert not r.passed
    assert "get_company (call 1)" in r.detail


def test_no_forbidden_tools_any_later_call():
    r = check(make(forbid_tools=["get_company", "delete"]),
              [call("find_company"), call("find_company"), call("delete")],
              "no_forbidden_tools")
    assert not r.passed
    assert "delete (call 3)" in r.detail


def test_no_forbidden_tools_no_call_passes():
    assert check(make(forbid_tools=["get_company"]), [], "no_forbidden_tools").passed


# --- arguments ----------------------------------------------------------------------


def args_check(matchers: list[dict[str, Any]], calls: list[ToolCall],
               expect_tool: list[str] | None = None,
               tools: tuple[Tool, ...] = COMPANIES) -> CheckResult:
    case = make(expect_tool=expect_tool, expect_args=matchers)
    return check(case, calls, "arguments", tools)


def get(**arguments: Any) -> list[ToolCall]:
    return [call("get_company", **arguments)]


def test_arguments_equals_passes():
    assert args_check([{"path": "company_number", "equals": "04138203"}],
                      get(company_number="04138203")).passed


def test_arguments_equals_fails_with_detail():
    r = args_check([{"path": "company_number", "equals": "04138203"}],
                   get(company_number="04138204"), ["get_company"])
    assert not r.passed
    assert "company_number" in r.detail
    assert "equal" in r.detail
    assert '"04138203"' in r.detail and '"04138204"' in r.detail
    assert "get_company" in r.detail


def test_arguments_equals_is_exact_for_strings():
    assert not args_check([{"path": "company_number", "equals": "04138203"}],
                          get(company_number="4138203")).passed


def test_arguments_equals_compares_json_values_exactly():
    # year is typed integer, yet the string "2024" is not the number 2024: the tool receives
    # another JSON value (valid_arguments says so too, where its schema can be read)
    assert not args_check([{"path": "year", "equals": 2024}], get(year="2024")).passed
    assert not args_check([{"path": "year", "equals": "2024"}], get(year=2024)).passed
    assert not args_check([{"path": "price", "equals": 12.5}], get(price="12.50")).passed
    assert args_check([{"path": "year", "equals": 2024}], get(year=2024)).passed


def test_arguments_equals_by_value_when_the_matcher_says_so():
    by_value = {"by_value": True}
    assert args_check([{"path": "year", "equals": 2024, **by_value}], get(year="2024")).passed
    assert args_check([{"path": "year", "equals": "2024", **by_value}], get(year=2024)).passed
    assert args_check([{"path": "year", "equals": "02024", **by_value}], get(year=2024)).passed
    assert args_check([{"path": "price", "equals": 12.5, **by_value}], get(price="12.50")).passed
    assert not args_check([{"path": "year", "equals": 2023, **by_value}], get(year="2024")).passed
    # a string that is no number stays a string
    assert not args_check([{"path": "year", "equals": 2024, **by_value}],
                          get(year="2024 AD")).passed


def test_arguments_equals_not_numeric_without_schema():
    assert not args_check([{"path": "year", "equals": 2024}], get(year="2024"),
                          tools=()).passed
    assert not args_check([{"path": "company_number", "equals": 4138203}],
                          get(company_number="4138203")).passed


def test_arguments_equals_number_kinds_and_bools():
    assert args_check([{"path": "n", "equals": 1}], get(n=1.0), tools=()).passed
    assert not args_check([{"path": "n", "equals": 1}], get(n=True), tools=()).passed
    assert args_check([{"path": "n", "equals": [1, "a"]}], get(n=[1, "a"]),
                      tools=()).passed
    assert args_check([{"path": "n", "equals": {"a": 1}}], get(n={"a": 1}), tools=()).passed


def test_arguments_one_of():
    m = [{"path": "company_number", "one_of": ["04138203", "SC123456"]}]
    assert args_check(m, get(company_number="SC123456")).passed
    r = args_check(m, get(company_number="00000006"))
    assert not r.passed
    assert "one of" in r.detail and '"00000006"' in r.detail


def test_arguments_one_of_numeric_by_value():
    assert not args_check([{"path": "year", "one_of": [2023, 2024]}], get(year="2024")).passed
    assert args_check([{"path": "year", "one_of": [2023, 2024], "by_value": True}],
                      get(year="2024")).passed


def test_arguments_contains_case_insensitive():
    m = [{"path": "query", "contains": "royal mail"}]
    assert args_check(m, [call("find_company", query="ROYAL MAIL group")]).passed
    r = args_check(m, [call("find_company", query="Parcelforce")])
    assert not r.passed
    assert "contain" in r.detail and "Parcelforce" in r.detail


def test_arguments_contains_list_any_element():
    m = [{"path": "tags", "contains": "mail"}]
    assert args_check(m, get(tags=["post", "Royal Mail"]), tools=()).passed
    assert not args_check(m, get(tags=["post", "parcel"]), tools=()).passed


def test_arguments_contains_on_number_uses_string_form():
    assert args_check([{"path": "limit", "contains": "10"}],
                      [call("find_company", limit=100)]).passed


def test_arguments_matches():
    m = [{"path": "company_number", "matches": r"^\d{8}$"}]
    assert args_check(m, get(company_number="04138203")).passed
    r = args_check(m, get(company_number="SC123456"))
    assert not r.passed
    assert "match" in r.detail and "SC123456" in r.detail


def test_arguments_matches_searches_not_anchors():
    assert args_check([{"path": "query", "matches": "mail"}],
                      [call("find_company", query="royal mail group")]).passed


def test_arguments_absent_true():
    m = [{"path": "limit", "absent": True}]
    assert args_check(m, [call("find_company", query="x")]).passed
    r = args_check(m, [call("find_company", query="x", limit=5)])
    assert not r.passed
    assert "absent" in r.detail and "limit" in r.detail


def test_arguments_absent_false():
    m = [{"path": "limit", "absent": False}]
    assert args_check(m, [call("find_company", limit=None)]).passed
    r = args_check(m, [call("find_company", query="x")])
    assert not r.passed
    assert "missing" in r.detail


@pytest.mark.parametrize("op,value", [
    ("equals", "x"), ("one_of", ["x"]), ("contains", "x"), ("matches", "x"),
])
def test_arguments_missing_path_fails_every_op(op, value):
    r = args_check([{"path": "nope", op: value}], get(company_number="x"))
    assert not r.passed
    assert "nope" in r.detail and "missing" in r.detail


def test_arguments_list_index_path():
    calls = get(items=[{"sku": "A1", "qty": 1}, {"sku": "B2", "qty": "3"}])
    assert args_check([{"path": "items.1.sku", "equals": "B2"}], calls).passed
    assert args_check([{"path": "items.1.qty", "equals": "3"}], calls).passed
    assert not args_check([{"path": "items.1.qty", "equals": 3}], calls).passed
    assert not args_check([{"path": "items.0.sku", "equals": "B2"}], calls).passed
    assert not args_check([{"path": "items.2.sku", "equals": "B2"}], calls).passed


def test_arguments_nested_object_path():
    calls = get(filter={"address": {"postcode": "EC1A 1BB"}})
    assert args_check([{"path": "filter.address.postcode", "contains": "ec1a"}], calls,
                      tools=()).passed


def test_arguments_any_path():
    m = [{"path": "any", "contains": "royal mail"}]
    assert args_check(m, [call("find_company", query="Royal Mail")]).passed
    assert args_check(m, [call("search", q="x", terms=["post", "royal mail plc"])]).passed
    r = args_check(m, [call("find_company", query="Parcelforce")])
    assert not r.passed
    assert "any" in r.detail and "Parcelforce" in r.detail


def test_arguments_any_path_equals_numeric_by_value():
    assert not args_check([{"path": "any", "equals": 2024}], get(year="2024")).passed
    assert args_check([{"path": "any", "equals": 2024, "by_value": True}], get(year="2024")).passed
    assert not args_check([{"path": "any", "equals": 2024}], get(company_number="2024")).passed


def test_arguments_any_path_no_arguments_fails():
    assert not args_check([{"path": "any", "matches": "."}], get()).passed


def test_arguments_all_matchers_must_hold_and_all_misses_reported():
    m = [{"path": "company_number", "equals": "04138203"},
         {"path": "year", "equals": 2024},
         {"path": "price", "absent": True}]
    r = args_check(m, get(company_number="04138203", year=2023, price=1))
    assert not r.passed
    assert "year" in r.detail and "price" in r.detail
    assert "company_number" not in r.detail


def test_arguments_checked_on_first_expected_call():
    m = [{"path": "query", "contains": "royal"}]
    calls = [call("get_company", query="nothing"), call("find_company", query="Royal Mail")]
    assert args_check(m, calls, ["find_company"]).passed


def test_arguments_checked_on_first_call_without_expectation():
    m = [{"path": "query", "contains": "royal"}]
    calls = [call("get_company", query="nothing"), call("find_company", query="Royal Mail")]
    assert not args_check(m, calls).passed
    assert not args_check(m, calls, []).passed


def test_arguments_expected_tool_not_called_passes_unchecked():
    r = args_check([{"path": "query", "equals": "x"}], [call("get_company")],
                   ["find_company"])
    assert r.passed
    assert r.detail == "not checked: the expected tool was not called"
    r = args_check([{"path": "query", "equals": "x"}], [], ["find_company"])
    assert r.passed


def test_arguments_raw_arguments_fail():
    calls = [ToolCall("find_company", {}, raw_arguments='{"query": "Royal')]
    r = args_check([{"path": "query", "contains": "royal"}], calls, ["find_company"])
    assert not r.passed
    assert "not a JSON object" in r.detail and '{"query": "Royal' in r.detail


def test_arguments_malformed_matcher_fails():
    r = args_check([{"path": "query", "equal": "x"}], [call("find_company", query="x")])
    assert not r.passed
    assert "unknown" in r.detail


# --- matchers directly --------------------------------------------------------------


def test_evaluate_returns_ok_and_detail():
    ok, detail = evaluate({"path": "a", "equals": 1}, {"a": 1})
    assert ok and "a" in detail
    ok, detail = evaluate({"path": "a", "equals": 1}, {"a": 2})
    assert not ok and "got 2" in detail


def test_evaluate_key_with_a_dot():
    assert evaluate({"path": "a.b", "equals": 1}, {"a.b": 1})[0]


def test_evaluate_schema_ref_numeric():
    schema = {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}},
              "$defs": {"N": {"type": "integer"}}}
    assert not evaluate({"path": "n", "equals": 5}, {"n": "5"}, schema)[0]
    assert evaluate({"path": "n", "equals": 5, "by_value": True}, {"n": "5"}, schema)[0]


@pytest.mark.parametrize("m", [
    {"path": "a", "equals": 1},
    {"path": "a", "equals": None},
    {"path": "a", "one_of": [1, 2]},
    {"path": "a", "contains": "x"},
    {"path": "a", "contains": 12},
    {"path": "a", "matches": r"^\d+$"},
    {"path": "a", "absent": True},
    {"path": "any", "contains": "x"},
    {"path": "items.0.sku", "equals": "x"},
])
def test_validate_matcher_ok(m):
    assert validate_matcher(m) is None


@pytest.mark.parametrize("m,fragment", [
    ({"path": "a", "equal": 1}, "unknown"),
    ({"path": "a"}, "no op"),
    ({"path": "a", "equals": 1, "contains": "1"}, "2 ops"),
    ({"path": "a", "matches": "(unclosed"}, "invalid regex"),
    ({"path": "a", "matches": 5}, "regex"),
    ({"path": "a", "absent": "yes"}, "true or false"),
    ({"path": "a", "one_of": "x"}, "list"),
    ({"equals": 1}, "path"),
    ({"path": 3, "equals": 1}, "path"),
    ({"path": "", "equals": 1}, "path"),
    ({"path": "any", "absent": True}, "any"),
    ({"path": "a", "contains": ["x"]}, "contains"),
    ("not a mapping", "mapping"),
])
def test_validate_matcher_errors(m, fragment):
    error = validate_matcher(m)  # type: ignore[arg-type]
    assert error is not None
    assert fragment in error


# --- no_identifier_invented ---------------------------------------------------------


def invented(calls: list[ToolCall], question: str = QUESTION,
             settings: IdentifierSettings | None = None) -> CheckResult:
    kw: dict[str, Any] = {"identifiers": settings} if settings else {}
    return check(make(question=question, forbid_ungrounded=True, **kw), calls,
                 "no_identifier_invented")


def test_invented_grounded_value_passes():
    r = invented(get(company_number="04138203"))
    assert r.passed
    assert "grounded" in r.detail


def test_invented_no_identifier_passes():
    r = invented([call("find_company", query="Royal Mail Group", limit=10)])
    assert r.passed
    assert r.detail == "no identifier was passed"


def test_invented_value_fails_with_tool_path_and_value():
    r = invented(get(company_number="04138204"))
    assert not r.passed
    assert 'get_company (call 1) company_number="04138204"' in r.detail


def test_invented_in_any_call_of_the_turn():
    r = invented([call("find_company", query="Royal Mail"), *get(company_number="00000006")])
    assert not r.passed
    assert "call 2" in r.detail and "00000006" in r.detail


def test_invented_in_free_text():
    r = invented([call("find_company", query="Royal Mail 00000006")])
    assert not r.passed
    assert 'query contains "00000006"' in r.detail


def test_invented_leading_zeros_setting():
    q = "Tell me about company 4138203"
    assert invented(get(company_number="04138203"), q).passed
    off = IdentifierSettings(leading_zeros=False)
    assert not invented(get(company_number="04138203"), q, off).passed


def test_invented_part_of_span_zero_padded_fails():
    r = invented(get(company_number="07459384"), "VAT number 745938421")
    assert not r.passed


def test_invented_prefix_dropped_passes():
    assert invented(get(vat="745938421", company_number="GB745938421"), VAT_QUESTION).passed


def test_invented_declared_by_schema_pattern():
    # "word" has no digit: only the schema pattern makes it an identifier
    tools = (Tool("t", "", {"type": "object",
                            "properties": {"v": {"type": "string", "pattern": "."}}}),)
    case = make(forbid_ungrounded=True)
    assert not check(case, [call("t", v="word")], "no_identifier_invented", tools).passed
    assert check(case, [call("t", v="word")], "no_identifier_invented", ()).passed


def test_invented_ignore_params():
    settings = IdentifierSettings(ignore_params=("company_number",))
    assert invented(get(company_number="04138204"), settings=settings).passed


def test_invented_quantities_not_counted():
    r = invented([call("find_company", query="filings 2024-01-15 over 1,000", limit=50)])
    assert r.passed


def test_invented_raw_arguments_scanned():
    r = invented([ToolCall("get_company", {}, raw_arguments='{"company_number": 99999999')])
    assert not r.passed
    assert "99999999" in r.detail


# --- no_any_identifier --------------------------------------------------------------


def any_ident(calls: list[ToolCall]) -> CheckResult:
    return check(make(question=VAT_QUESTION, forbid_any_identifier=True), calls,
                 "no_any_identifier")


def test_any_identifier_none_passes():
    assert any_ident([call("find_company", query="Royal Mail", limit=10)]).passed


def test_any_identifier_even_grounded_fails():
    r = any_ident(get(company_number="GB745938421"))
    assert not r.passed
    assert 'get_company (call 1) company_number="GB745938421"' in r.detail


def test_any_identifier_derived_fails():
    assert not any_ident(get(company_number="07459384")).passed


def test_any_identifier_in_search_text_is_no_identifier_use():
    # a search text is not an identifier use: only identifier parameters are guarded
    assert any_ident([call("find_company", query="07459384")]).passed


def test_any_identifier_no_call_passes():
    assert any_ident([]).passed


# --- no_decoy_identifier ------------------------------------------------------------


def decoy(calls: list[ToolCall], decoys: tuple[str, ...] = ("GB745938421",)) -> CheckResult:
    return check(make(question=VAT_QUESTION, decoys=decoys), calls, "no_decoy_identifier")


def test_decoy_not_used_passes():
    assert decoy(get(company_number="04138203")).passed


@pytest.mark.parametrize("value", ["GB745938421", "745938421", "GB 745 9384 21"])
def test_decoy_used_fails(value):
    r = decoy(get(company_number=value))
    assert not r.passed
    assert "GB745938421" in r.detail and "company_number" in r.detail


def test_decoy_in_search_text_is_no_identifier_use():
    r = decoy([call("find_company", query="vat GB 745 9384 21")])
    assert r.passed


def test_decoy_naming_a_free_text_param_guards_it():
    guarded = make(question=VAT_QUESTION, decoys=[Decoy("GB745938421", ("query",))])
    r = check(guarded, [call("find_company", query="vat GB 745 9384 21")],
              "no_decoy_identifier")
    assert not r.passed
    assert 'query contains "GB 745 9384 21"' in r.detail


def test_decoy_in_later_call_fails():
    r = decoy([call("find_company", query="x"), *get(company_number="745938421")])
    assert not r.passed
    assert "call 2" in r.detail


def test_decoy_derivation_is_not_a_decoy_match():
    # the zero-padded part is caught by the grounding checks, not by the decoy list
    assert decoy(get(company_number="07459384")).passed


def test_several_decoys():
    r = decoy(get(company_number="SC123456"), ("GB745938421", "SC123456"))
    assert not r.passed
    assert "SC123456" in r.detail
