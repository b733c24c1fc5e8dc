"""The matchers a careful user needs beyond equals and a regex, as properties over every
JSON type and every Unicode separator class: ``optional`` (may be left out, but if given
must match), ``equals_text`` (case and surrounding space only), ``equals`` exact over JSON
values unless ``by_value``, and ``expect_calls`` (the expected call made exactly n times)."""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_toolselect import score_case
from pytest_toolselect.exchange.tool import ToolCall
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.scoring.checks import check_tool_choice
from pytest_toolselect.scoring.contradictions import parse_case
from pytest_toolselect.scoring.matchers import evaluate, text_equal

NUMBERS = st.integers() | st.floats(allow_nan=False, allow_infinity=False)
SCALARS = st.none() | st.booleans() | NUMBERS | st.text(max_size=6)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
OPS = st.sampled_from(["equals", "one_of", "contains", "matches", "equals_text"])
#: every whitespace character Python's str.strip() removes: Zs, Zl, Zp and Cc whitespace
WHITESPACE = [c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()]
FORMAT = [c for c in map(chr, range(0x10000)) if unicodedata.category(c) == "Cf"]
#: what text equality never forgives: a digit, a sign, a decimal point
MEANINGFUL = "0123456789+-.,"
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)


def test_the_separator_classes_are_all_there() -> None:
    assert {unicodedata.category(c) for c in WHITESPACE} == {"Zs", "Zl", "Zp", "Cc"}
    assert "\u200b" in FORMAT and "\u00ad" in FORMAT


def _matcher(op: str, value: Any) -> dict[str, Any]:
    if op == "one_of":
        return {"path": "a", op: [value]}
    if op in ("contains", "equals_text"):
        return {"path": "a", op: json.dumps(value)[:8]}
    if op == "matches":
        return {"path": "a", op: re.escape(json.dumps(value)[:8])}
    return {"path": "a", op: value}


# -- optional ------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(OPS, JSON, JSON, st.dictionaries(st.text(max_size=3).filter(lambda k: k != "a"), JSON,
                                        max_size=3))
def test_optional_passes_a_call_that_leaves_it_out_and_judges_one_that_gives_it(
        op: str, expected: Any, given_value: Any, others: dict[str, Any]) -> None:
    plain = _matcher(op, expected)
    optional = {**plain, "optional": True}
    assert evaluate(optional, others)[0]  # left out: passes
    assert not evaluate(plain, others)[0]  # without optional it must be there
    given_args = {**others, "a": given_value}
    # given: exactly the verdict of the matcher without it
    assert evaluate(optional, given_args)[0] == evaluate(plain, given_args)[0]


def test_optional_reads_as_a_user_means_it() -> None:
    case = {"question": "Weather in Paris", "expect_tool": ["get_weather"],
            "expect_args": [{"path": "unit", "equals": "celsius", "optional": True}]}
    tools = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {
        "city": {"type": "string"}, "unit": {"type": "string"}}}}]

    def turn(**args: Any) -> Any:
        return score_case(case, [{"name": "get_weather", "arguments": args}], tools)

    assert turn(city="Paris").passed
    assert turn(city="Paris", unit="celsius").passed
    wrong = turn(city="Paris", unit="fahrenheit")
    assert wrong.failing == ["arguments"]
    assert 'unit: expected to equal "celsius", got "fahrenheit"' in wrong.checks["arguments"].detail
    assert "unit is left out, which this matcher allows" in turn(city="Paris").checks[
        "arguments"].detail


# -- equals_text ---------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(TEXT, st.lists(st.sampled_from(WHITESPACE), max_size=3),
       st.lists(st.sampled_from(WHITESPACE), max_size=3), st.sampled_from([str.upper, str.lower,
                                                                           str.title, str]))
def test_equal_as_text_forgives_case_and_the_space_around(
        text: str, before: list[str], after: list[str], case: Any) -> None:
    written = "".join(before) + case(text) + "".join(after)
    assume(case(text).casefold() == text.casefold())  # a case change that keeps the letters
    assert text_equal(text, written)
    assert evaluate({"path": "q", "equals_text": text}, {"q": written})[0]


@settings(max_examples=200, deadline=None)
@given(TEXT, st.integers(0, 12), st.sampled_from(MEANINGFUL), st.sampled_from(MEANINGFUL))
def test_equal_as_text_never_forgives_a_digit_a_sign_or_a_decimal_point(
        text: str, at: int, old: str, new: str) -> None:
    at = min(at, len(text))
    written = text[:at] + old + text[at:]
    # dropped, or changed into another: another value
    assert not text_equal(written, text)
    if new != old:
        assert not text_equal(written, text[:at] + new + text[at:])


@settings(max_examples=150, deadline=None)
@given(TEXT.filter(lambda t: t.strip() != ""), st.sampled_from(FORMAT + WHITESPACE),
       st.integers(1, 11))
def test_equal_as_text_never_forgives_a_character_inside(text: str, inside: str, at: int) -> None:
    core = text.strip()
    assume(len(core) >= 2)
    at = min(at, len(core) - 1)
    # a zero-width or format character, or a space, inside the text is another string
    assert not text_equal(core, core[:at] + inside + core[at:])


@given(st.one_of(st.none(), st.booleans(), NUMBERS, st.lists(st.text(max_size=3), max_size=2),
                 st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2)))
def test_equal_as_text_is_about_text_only(value: Any) -> None:
    # a number, a list, null: not the text, even when it prints the same
    shown = json.dumps(value)
    assert not evaluate({"path": "q", "equals_text": shown}, {"q": value})[0]


# -- equals: JSON values exactly -----------------------------------------------------------------


def _same_json(a: Any, b: Any) -> bool:
    # JSON's own equality: one number type, and true is no number
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) or (
        type(a) in (int, float) and type(b) in (int, float) and a == b)


@settings(max_examples=300, deadline=None)
@given(JSON, JSON)
def test_equals_holds_exactly_when_the_json_values_are_equal(a: Any, b: Any) -> None:
    schema = {"type": "object", "properties": {"a": {"type": ["number", "integer", "string"]}}}
    assert evaluate({"path": "a", "equals": a}, {"a": b}, schema)[0] == _same_json(a, b)


@settings(max_examples=150, deadline=None)
@given(NUMBERS)
def test_a_numeric_string_is_not_its_number_unless_by_value(n: int | float) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "number"}}}
    text = json.dumps(n)
    assert not evaluate({"path": "a", "equals": n}, {"a": text}, schema)[0]
    assert not evaluate({"path": "a", "one_of": [n]}, {"a": text}, schema)[0]
    assert evaluate({"path": "a", "equals": n, "by_value": True}, {"a": text})[0]
    assert evaluate({"path": "a", "one_of": [n], "by_value": True}, {"a": text})[0]


# -- expect_calls --------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["get_weather", "get_time", "search"]), max_size=6),
       st.integers(1, 4))
def test_expect_calls_counts_the_expected_calls_exactly(names: list[str], n: int) -> None:
    case = parse_case({"id": "c", "question": "q", "expect_tool": ["get_weather"],
                       "expect_calls": n, "allow_no_tool": False}, source="t",
                      require_why=False)
    calls = [ToolCall(name, {}) for name in names]
    result = check_tool_choice(case, calls)
    made = names.count("get_weather")
    assert result.passed == (bool(names) and names[0] == "get_weather" and made == n)
    if names and names[0] == "get_weather" and made != n:
        assert "expected exactly" in result.detail


def test_the_expected_call_made_twice_fails_and_says_so() -> None:
    case = {"question": "Weather in Paris", "expect_tool": ["get_weather"], "expect_calls": 1}
    twice = [{"name": "get_weather", "arguments": {"city": "Paris"}}] * 2
    result = score_case(case, twice)
    assert result.failing == ["tool_choice"]
    assert result.checks["tool_choice"].detail == (
        "first call is get_weather, as expected, but the turn calls get_weather twice; "
        "expected exactly once")
    assert score_case(case, twice[:1]).passed
    assert score_case({k: v for k, v in case.items() if k != "expect_calls"}, twice).passed


# -- loading: the case schema, the aliases, the mistakes -----------------------------------------


def test_the_case_format_takes_them_and_their_camel_case_spellings() -> None:
    case = parse_case({"id": "c", "question": "q", "expectTool": ["t"], "expectCalls": 2,
                       "expectArgs": [{"path": "a", "equalsText": "x", "optional": True},
                                      {"path": "b", "equals": 1, "byValue": True}]},
                      source="t", require_why=False)
    assert case.expect_calls == 2
    assert case.expect_args == ({"path": "a", "equals_text": "x", "optional": True},
                                {"path": "b", "equals": 1, "by_value": True})
    # a count is part of what the case is; left out, old fingerprints stay
    assert case.fingerprint_data()["expect_calls"] == 2
    assert "expect_calls" not in parse_case({"id": "c", "question": "q"}, source="t",
                                            require_why=False).fingerprint_data()


@pytest.mark.parametrize(("fields", "says"), [
    ({"expect_calls": 1}, "expect_calls counts the calls of the expected tools"),
    ({"expect_tool": [], "expect_calls": 1}, "expect_calls counts the calls of the expected tools"),
    ({"expect_tool": ["t"], "expect_calls": 0}, "expect_calls"),
    ({"expect_tool": ["t"], "expect_calls": "1"}, "expect_calls"),
    ({"expect_args": [{"path": "a", "absent": True, "optional": True}]}, "cannot go with absent"),
    ({"expect_args": [{"path": "any", "equals": 1, "optional": True}]}, "cannot go with path: any"),
    ({"expect_args": [{"path": "a", "contains": "x", "by_value": True}]}, "by_value"),
    ({"expect_args": [{"path": "a", "equals_text": 5}]}, "equals_text"),
    ({"expect_args": [{"path": "a", "equals": 1, "optional": "yes"}]}, "optional"),
])
def test_a_mistake_is_said_at_load_naming_the_place(fields: dict[str, Any], says: str) -> None:
    with pytest.raises(ToolselectError) as err:
        parse_case({"id": "c", "question": "q", **fields}, source="t", require_why=False)
    assert says in str(err.value)


def test_a_decoy_the_matcher_requires_is_refused_unless_the_argument_is_optional() -> None:
    base = {"id": "c", "question": "Officers of the company with VAT number GB745938421",
            "expect_tool": ["list_officers"], "decoys": ["GB745938421"]}
    for matcher in ({"path": "company_number", "equals_text": "gb745938421"},
                    {"path": "company_number", "equals": "GB745938421"}):
        with pytest.raises(ToolselectError) as err:
            parse_case({**base, "expect_args": [matcher]}, source="t", require_why=False)
        assert "can never pass" in str(err.value)
        # left out is a way to pass: no contradiction
        parse_case({**base, "expect_args": [{**matcher, "optional": True}]}, source="t",
                   require_why=False)
