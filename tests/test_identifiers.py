"""Identifier extraction and grounding: spans, forms, the attacks, what counts as one."""

from __future__ import annotations

import pytest

from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.inputs.cases import IdentifierSettings
from pytest_toolselect.scoring.identifiers import (
    Grounding,
    Identifier,
    call_identifiers,
    decoy_grounding,
    decoy_matched,
    find_identifiers,
    grounded_by,
    identifier_param,
    is_plain_quantity,
    normal_form,
    question_grounding,
    span_forms,
    spans,
    zero_key,
)

DEFAULT = IdentifierSettings()
NO_ZEROS = IdentifierSettings(leading_zeros=False)
VAT_QUESTION = "Look up the company with VAT number GB 745 9384 21, please."


def texts(text: str, **kw: bool) -> list[str]:
    return [s.text for s in spans(text, **kw)]


def grounds(question: str, value: str, settings: IdentifierSettings = DEFAULT) -> bool:
    return question_grounding(question, settings).grounds(value)


def idents(arguments: dict, schema: dict | None = None,
           settings: IdentifierSettings = DEFAULT, name: str = "tool") -> list[str]:
    call = ToolCall(name, arguments)
    return [i.value for i in call_identifiers(call, 0, schema, settings)]


def obj(**props: dict) -> dict:
    return {"type": "object", "properties": props}


# --- spans --------------------------------------------------------------------------


def test_span_space_joined_digit_groups_with_letter_prefix():
    assert texts(VAT_QUESTION) == ["GB 745 9384 21"]
    (span,) = spans(VAT_QUESTION)
    assert span.prefix == "GB"


def test_span_hyphen_joined_tokens_may_be_letters():
    assert texts("plate AB-12-CD-99 and order SC-123") == ["AB-12-CD-99", "SC-123"]


def test_span_single_token():
    assert texts("numbers SC123456 and GB745938421.") == ["SC123456", "GB745938421"]


def test_span_dot_and_slash_join():
    assert texts("version 12.34.56 then 2024/XY/77") == ["12.34.56", "2024/XY/77"]


def test_span_needs_a_digit():
    assert texts("a state-of-the-art ACME-UK service") == []


def test_span_broken_by_double_space_and_comma():
    assert texts("745  9384") == ["745", "9384"]
    assert texts("745, 9384") == ["745", "9384"]
    assert texts("745 - 9384") == ["745", "9384"]


def test_span_space_joined_tokens_must_each_bear_a_digit():
    # "abc" is not a prefix here (it is after the run), and "item" is too long to be one
    assert texts("item 12 34 abc") == ["12 34"]


def test_span_takes_only_one_prefix_token():
    assert texts("VAT GB 745 9384 21") == ["GB 745 9384 21"]


def test_span_prefix_of_at_most_three_letters():
    assert texts("ABCD 123") == ["123"]
    assert texts("ABC 123") == ["ABC 123"]


def test_span_prefix_only_before_digits():
    # "and" must not glue onto "SC-123", or "SC-123" would stop grounding
    assert texts("this and SC-123") == ["SC-123"]


def test_span_upper_prefix_only():
    assert texts("in 2024", upper_prefix_only=True) == ["2024"]
    assert texts("GB 745", upper_prefix_only=True) == ["GB 745"]
    assert texts("in 2024") == ["in 2024"]


def test_span_offsets():
    text = "it is no 123-45 here"
    (span,) = spans(text)
    assert text[span.start:span.end] == span.text == "no 123-45"
    assert span.prefix == "no"


# --- forms --------------------------------------------------------------------------


def test_normal_form_casefolds_and_drops_separators():
    assert normal_form("GB 745-9384.21/x") == "gb745938421x"


def test_span_forms_whole_and_without_prefix():
    assert span_forms("GB 745 9384 21") == ("gb745938421", "745938421")
    assert span_forms("SC-123") == ("sc123", "123")
    assert span_forms("745 9384 21") == ("745938421",)
    assert span_forms("ABCD123") == ("abcd123",)


def test_zero_key_drops_leading_zeros_of_the_digit_part():
    assert zero_key("04138203") == "4138203"
    assert zero_key("sc012345") == "sc12345"
    assert zero_key("000") == "0"
    assert zero_key("abcd0123") == "abcd0123"


# --- grounding ----------------------------------------------------------------------


@pytest.mark.parametrize("value", [
    "GB 745 9384 21", "GB745938421", "gb-745938421", "gb745938421", "745938421",
    "745 9384 21", "745-9384-21",
])
def test_grounded_whole_span_with_or_without_prefix(value):
    assert grounds(VAT_QUESTION, value)


def test_grounded_prefix_kept_or_dropped_single_token():
    q = "Company SC123456 filed late"
    assert grounds(q, "SC123456")
    assert grounds(q, "123456")
    assert grounds(q, "sc-123456")


def test_grounded_hyphenated_letters_and_digits():
    assert grounds("my plate is AB-12-CD-99", "AB12CD99")
    assert grounds("my plate is AB-12-CD-99", "ab 12 cd 99")


def test_leading_zeros_equivalence_on_by_default():
    assert grounds("Company 4138203 please", "04138203")
    assert grounds("Company 04138203 please", "4138203")
    assert grounds("Company SC012345 please", "SC12345")


def test_leading_zeros_equivalence_off():
    assert not grounds("Company 4138203 please", "04138203", NO_ZEROS)
    assert not grounds("Company 04138203 please", "4138203", NO_ZEROS)
    assert grounds("Company 04138203 please", "04138203", NO_ZEROS)


def test_letter_only_value_grounds_on_a_whole_word():
    assert grounds("companies registered in GB", "GB")
    assert not grounds("companies registered in GB", "FR")


# The attacks: each derivation of an identifier in the question must fail.


def test_attack_digit_dropped():
    assert not grounds(VAT_QUESTION, "74593842")
    assert not grounds("Company 04138203", "0413823")


def test_attack_digit_added():
    assert not grounds(VAT_QUESTION, "7459384211")
    assert not grounds("Company 04138203", "041382033")


def test_attack_digits_transposed():
    assert not grounds(VAT_QUESTION, "745983421")
    assert not grounds("Company 04138203", "04132803")


def test_attack_prefix_added_where_question_had_none():
    assert not grounds("VAT number 745938421", "GB745938421")
    assert not grounds("VAT number 745938421", "GB 745938421")


def test_attack_prefix_changed():
    assert not grounds(VAT_QUESTION, "FR745938421")
    assert not grounds(VAT_QUESTION, "FR 745 9384 21")


def test_attack_two_identifiers_glued_without_space():
    q = "Compare company 04138203 and company 00000006"
    assert grounds(q, "04138203") and grounds(q, "00000006")
    assert not grounds(q, "0413820300000006")


def test_attack_two_identifiers_glued_with_space():
    q = "Compare company 04138203 and company 00000006"
    assert not grounds(q, "04138203 00000006")


def test_attack_part_of_span_zero_padded():
    assert not grounds("VAT number 745938421", "07459384")
    assert not grounds(VAT_QUESTION, "07459384")
    assert not grounds("VAT number 745938421", "07459384", NO_ZEROS)


def test_attack_substring():
    assert not grounds("VAT number 745938421", "4593842")
    assert not grounds("VAT number 745938421", "745938")


def test_attack_part_of_span():
    assert not grounds(VAT_QUESTION, "745 9384")
    assert not grounds(VAT_QUESTION, "9384 21")
    assert not grounds(VAT_QUESTION, "GB 745")


def test_attack_prefix_plus_zero_padding_of_a_part():
    assert not grounds(VAT_QUESTION, "GB07459384")


# --- which parameters are identifiers -----------------------------------------------


@pytest.mark.parametrize("name", [
    "id", "ID", "company_id", "companyId", "company_number", "companyNumber",
    "order_ref", "orderRef", "ref", "reference", "code", "postal_code", "COMPANY_ID",
    "customer.id", "items.0.sku_code",
])
def test_identifier_param_by_name(name):
    assert identifier_param(name, None, DEFAULT)


@pytest.mark.parametrize("name", [
    "query", "name", "paid", "limit", "valid", "numbers_only", "description", "encode",
])
def test_not_identifier_param_by_name(name):
    assert not identifier_param(name, None, DEFAULT)


def test_identifier_param_by_schema_pattern():
    assert identifier_param("vat", {"type": "string", "pattern": "^GB\\d{9}$"}, DEFAULT)
    assert not identifier_param("vat", {"type": "string"}, DEFAULT)


def test_identifier_param_by_uuid_format():
    assert identifier_param("key", {"type": "string", "format": "uuid"}, DEFAULT)
    assert not identifier_param("key", {"type": "string", "format": "date"}, DEFAULT)


def test_identifier_param_by_schema_in_anyof_branch():
    schema = {"anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]}
    assert identifier_param("key", schema, DEFAULT)


def test_identifier_param_by_settings_name_and_path():
    by_name = IdentifierSettings(params=("vat",))
    assert identifier_param("vat", None, by_name)
    assert identifier_param("buyer.vat", None, by_name)
    by_path = IdentifierSettings(params=("buyer.vat",))
    assert identifier_param("buyer.vat", None, by_path)
    assert not identifier_param("seller.vat", None, by_path)


def test_ignore_params_beats_name_schema_and_params():
    settings = IdentifierSettings(params=("code",), ignore_params=("code", "key"))
    assert not identifier_param("code", None, settings)
    assert not identifier_param("key", {"format": "uuid"}, settings)


# --- identifiers in arguments -------------------------------------------------------


def test_declared_by_name_whole_value_is_one_identifier():
    assert idents({"company_number": "GB 745 9384 21 (VAT)"}) == ["GB 745 9384 21 (VAT)"]
    assert idents({"customer_id": "ACME"}) == ["ACME"]


def test_declared_number_value():
    assert idents({"company_id": 4138203}) == ["4138203"]
    assert idents({"id": 7}) == ["7"]
    assert idents({"id": 12.0}) == ["12"]


def test_declared_empty_value_is_no_identifier():
    assert idents({"company_id": ""}) == []
    assert idents({"company_id": "  "}) == []


def test_declared_by_schema_pattern():
    schema = obj(vat={"type": "string", "pattern": "^GB\\d+$"})
    assert idents({"vat": "GB745938421"}, schema) == ["GB745938421"]
    assert idents({"vat": "some text"}, schema) == ["some text"]


def test_declared_by_uuid_format():
    schema = obj(key={"type": "string", "format": "uuid"})
    value = "123e4567-e89b-12d3-a456-426614174000"
    assert idents({"key": value}, schema) == [value]


def test_declared_by_settings_params():
    settings = IdentifierSettings(params=("who",))
    assert idents({"who": "ACME"}, None, settings) == ["ACME"]


def test_ignore_params_skips_the_value_entirely():
    settings = IdentifierSettings(ignore_params=("company_number", "query"))
    args = {"company_number": "04138203", "query": "SC123456"}
    assert idents(args, None, settings) == []


def test_ignore_params_covers_nested_values():
    settings = IdentifierSettings(ignore_params=("filters",))
    assert idents({"filters": {"id": "SC123456", "q": "04138203"}}, None, settings) == []


def test_free_text_spans_are_identifiers():
    args = {"query": "Royal Mail 04138203 and SC-123"}
    assert idents(args) == ["04138203", "SC-123"]


def test_free_text_with_no_identifier():
    assert idents({"query": "Royal Mail Group Limited"}) == []


@pytest.mark.parametrize("text", [
    "top 50 results", "filed in 2024", "costs 12.50", "over 1,000 items",
    "$1,000,000.00", "on 2024-01-15", "at 2024-01-15T10:30:00Z", "at 10:05",
    "on 15/01/2024", "the 1st time", "5kg", "between 2020-2024", "Q1 2024", "0",
])
def test_quantities_and_dates_are_not_identifiers(text):
    assert idents({"query": text}) == []


@pytest.mark.parametrize("text", ["745938421", "04138203", "0123", "12345", "A1B2"])
def test_numbers_that_are_not_plain_quantities_are_identifiers(text):
    assert idents({"query": text}) == [text]


def test_is_plain_quantity():
    assert is_plain_quantity("2024")
    assert is_plain_quantity("12.50")
    assert is_plain_quantity("2024-01-15")
    assert not is_plain_quantity("12345")
    assert not is_plain_quantity("0123")
    assert not is_plain_quantity("745 9384")


def test_json_numbers_on_free_params():
    assert idents({"limit": 50}) == []
    assert idents({"year": 2024}) == []
    assert idents({"amount": 12.5}) == []
    assert idents({"amount": 123456.78}) == []
    assert idents({"count": 12345}) == ["12345"]
    assert idents({"count": 745938421.0}) == ["745938421"]


def test_bool_and_none_are_never_identifiers():
    assert idents({"company_id": True, "ref": None, "flag": False}) == []


def test_free_text_prefix_only_when_upper_case():
    assert idents({"query": "VAT GB 745938421"}) == ["GB 745938421"]
    assert idents({"query": "search for 745938421"}) == ["745938421"]


def test_nested_arguments_and_list_indexes():
    call = ToolCall("t", {"items": [{"sku": "AB-1234"}, {"sku_code": "X9"}], "note": "ok"})
    found = call_identifiers(call, 2, None, DEFAULT)
    assert [(i.path, i.value, i.declared) for i in found] == [
        ("items.0.sku", "AB-1234", False),
        ("items.1.sku_code", "X9", True),
    ]
    assert all(i.call_index == 2 and i.tool == "t" for i in found)


def test_list_items_declared_by_schema():
    schema = obj(vats={"type": "array", "items": {"type": "string", "pattern": "^GB"}})
    assert idents({"vats": ["GB1", "GBX"]}, schema) == ["GB1", "GBX"]


def test_schema_ref_is_followed():
    schema = {
        "type": "object",
        "properties": {"who": {"$ref": "#/$defs/Who"}},
        "$defs": {"Who": obj(key={"type": "string", "format": "uuid"})},
    }
    assert idents({"who": {"key": "abc"}}, schema) == ["abc"]


def test_raw_arguments_are_scanned_as_free_text():
    call = ToolCall("get_company", {}, raw_arguments='{"company_number": "04138204"')
    found = call_identifiers(call, 0, None, DEFAULT)
    assert [(i.path, i.value) for i in found] == [("(raw arguments)", "04138204")]


def test_raw_arguments_written_compactly_still_hold_their_values():
    call = ToolCall("get_company", {}, raw_arguments='{"company_number":"04138204","n":[5]')
    found = call_identifiers(call, 0, None, DEFAULT)
    assert [i.value for i in found] == ["04138204"]


def test_find_identifiers_uses_the_schema_of_each_tool():
    tools = [Tool("a", "", obj(v={"type": "string", "pattern": "."})), Tool("b", "", {})]
    calls = [ToolCall("a", {"v": "word"}), ToolCall("b", {"v": "word"})]
    found = find_identifiers(calls, tools, DEFAULT)
    assert [(i.tool, i.value) for i in found] == [("a", "word")]


def test_identifier_describe_names_tool_path_and_value():
    declared = Identifier(0, "get_company", "company_number", "04138204", True)
    free = Identifier(1, "search", "query", "745 9384", False)
    assert declared.describe() == 'get_company (call 1) company_number="04138204"'
    assert free.describe() == 'search (call 2) query contains "745 9384"'


# --- grounded_by on identifiers -----------------------------------------------------


def _free(value: str, prefix: str | None = None) -> Identifier:
    return Identifier(0, "search", "query", value, False, prefix)


def test_free_text_prefix_word_from_the_question_is_allowed():
    g = question_grounding(VAT_QUESTION, DEFAULT)
    assert grounded_by(_free("VAT 745938421", "VAT"), g) == "GB 745 9384 21"


def test_free_text_prefix_not_in_the_question_is_a_claim():
    g = question_grounding(VAT_QUESTION, DEFAULT)
    assert grounded_by(_free("FR 745938421", "FR"), g) is None


# --- decoys -------------------------------------------------------------------------


def _decl(value: str) -> Identifier:
    return Identifier(0, "get_company", "company_number", value, True)


@pytest.mark.parametrize("value", [
    "GB745938421", "745938421", "GB 745 9384 21", "gb-745-938-421", "0745938421",
    "FR745938421",
])
def test_decoy_matched(value):
    decoys = decoy_grounding(["GB745938421"], DEFAULT)
    assert decoy_matched(_decl(value), decoys) == "GB745938421"


@pytest.mark.parametrize("value", ["74593842", "07459384", "04138203"])
def test_decoy_not_matched(value):
    decoys = decoy_grounding(["GB745938421"], DEFAULT)
    assert decoy_matched(_decl(value), decoys) is None


def test_decoy_leading_zeros_off():
    decoys = decoy_grounding(["04138203"], NO_ZEROS)
    assert decoy_matched(_decl("04138203"), decoys) == "04138203"
    assert decoy_matched(_decl("4138203"), decoys) is None


def test_decoy_free_text_span_with_prefix_word():
    decoys = decoy_grounding(["GB745938421"], DEFAULT)
    assert decoy_matched(_free("VAT 745938421", "VAT"), decoys) == "GB745938421"


def test_decoy_letter_only():
    decoys = decoy_grounding(["ACME"], DEFAULT)
    assert decoy_matched(_decl("acme"), decoys) == "ACME"


def test_grounding_of_several_texts():
    g = Grounding(["SC123", "04138203"])
    assert g.grounds("123") and g.grounds("4138203")
    assert not g.grounds("SC1234")


def _single_edits(digits: str) -> set[str]:
    out: set[str] = set()
    for i in range(len(digits) + 1):
        for d in "0123456789":
            out.add(digits[:i] + d + digits[i:])  # digit added
    for i in range(len(digits)):
        out.add(digits[:i] + digits[i + 1:])  # digit dropped
        for d in "0123456789":
            out.add(digits[:i] + d + digits[i + 1:])  # digit changed
    for i in range(len(digits) - 1):
        out.add(digits[:i] + digits[i + 1] + digits[i] + digits[i + 2:])  # transposed
    return out


def test_attack_every_single_digit_edit_fails():
    g = question_grounding(VAT_QUESTION, DEFAULT)
    edits = _single_edits("745938421") - {"745938421", "0745938421"}  # the equivalences
    assert edits
    assert [e for e in sorted(edits) if g.grounds(e) or g.grounds("GB" + e)] == []
