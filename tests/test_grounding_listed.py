"""Grounding, both ways, where a function-calling benchmark's right answers were called
invented and wrong ones let through; each rule as properties over generated values and
every Unicode separator class (Zs, Zl, Zp, Cc whitespace, Cf):

- a value the tool lists itself (its ``enum``/``const``, a short code in a description)
  grounds; a long value a description gives as an example does not;
- a small count passed as a JSON number under a ``*_number`` name is no identifier;
- a verbatim copy that holds spaces (``iPhone 12``) grounds, a changed one does not;
- digit groups separated by any one whitespace character group like a space;
- a URL's version segment (``/v2/``) and a short word (``s3``) in a search text name no
  record;
- a format character inside an identifier in the call makes it another value;
- an identifier used as an object key is checked like a value.
"""

from __future__ import annotations

import sys
import unicodedata
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_toolselect import score_case

SETTINGS = settings(max_examples=120, deadline=None, database=None)
WHITESPACE = [c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()]
FORMAT = [c for c in map(chr, range(sys.maxunicode + 1)) if unicodedata.category(c) == "Cf"]
long_ids = st.text("0123456789", min_size=6, max_size=9)
codes = st.text("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", min_size=1, max_size=5).filter(
    lambda c: any(ch.isdigit() for ch in c))
words = st.text("abcdefghkmnpqrstuvwxyz", min_size=3, max_size=7)
names = st.sampled_from(["service_id", "product_id", "plan_code", "order_ref", "item_id"])


def invented(question: str, args: dict[str, Any], schema: dict[str, Any] | None = None,
             description: str = "", **case: Any) -> bool | None:
    """Whether no_identifier_invented fails (None: it does not run)."""
    schema = schema or {"type": "object", "properties": {k: {} for k in args}}
    result = score_case({"question": question, **case}, [{"name": "t", "arguments": args}],
                        [{"name": "t", "description": description, "input_schema": schema}])
    check = result.checks.get("no_identifier_invented")
    return None if check is None else not check.passed


def _changed(value: str) -> str:
    i = max(k for k, c in enumerate(value) if c.isdigit())
    return value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1:]


def test_the_separator_classes_are_all_there() -> None:
    assert {unicodedata.category(c) for c in WHITESPACE} == {"Zs", "Zl", "Zp", "Cc"}
    assert len(FORMAT) > 150


# -- what the tool lists itself --------------------------------------------------------------


@SETTINGS
@given(names, st.lists(st.integers(0, 10**9) | codes | long_ids, min_size=1, max_size=4,
                       unique=True), st.data())
def test_a_value_of_the_parameters_enum_grounds_and_no_other(
        name: str, enum: list[Any], data: st.DataObject) -> None:
    schema = {"type": "object", "properties": {name: {"enum": enum}}}
    value = data.draw(st.sampled_from(enum))
    assert not invented("Book the usual, please", {name: value}, schema)
    other = _changed(str(value)) if any(c.isdigit() for c in str(value)) else "X" + str(value)
    assume(all(str(e).casefold().lstrip("0") != other.casefold().lstrip("0") for e in enum))
    assert invented("Book the usual, please", {name: other}, schema)
    # the parameter's default is the tool's own value too, and a const
    for key in ("default", "const"):
        assert not invented("Book the usual, please", {name: value},
                            {"type": "object", "properties": {name: {key: value}}})
        assert invented("Book the usual, please", {name: other},
                        {"type": "object", "properties": {name: {key: value}}})


@SETTINGS
@given(names, codes, long_ids)
def test_a_short_code_a_description_lists_grounds_and_a_long_example_does_not(
        name: str, code: str, example: str) -> None:
    schema = {"type": "object", "properties": {name: {
        "type": "string", "description": f"{code} for the standard plan; e.g. {example}"}}}
    assert not invented("Book the standard plan", {name: code}, schema)
    assert not invented("Book it", {name: code}, {"type": "object", "properties": {name: {}}},
                        description=f"Plans: {code} standard, other codes on request.")
    # an example copied from a description is invented all the same
    assert invented("Book the standard plan", {name: example}, schema)
    # and a code the description does not list is not grounded by it (leading zeros pad)
    assume(_changed(code).lstrip("0") not in (code.lstrip("0"), example.lstrip("0")))
    assert invented("Book the standard plan", {name: _changed(code)}, schema)


@SETTINGS
@given(words, st.integers(0, 99), st.integers(100, 10**8))
def test_a_small_count_under_a_number_name_is_a_quantity(word: str, count: int, big: int) -> None:
    name = f"{word}_number"
    # two dice, ten pages: no identifier at all, so the check has nothing to judge
    assert invented("Roll some dice", {name: count}) is None
    assert invented("Roll some dice", {name: float(count)}) is None
    # a larger number, or a count written as a string, is judged as an identifier
    assert invented("Roll some dice", {name: big})
    assert invented("Roll some dice", {name: f"{count:02d}"})
    # a name that is an identifier by another ending is judged as always
    assume(count >= 10)
    assert invented("Roll some dice", {f"{word}_id": count})


# -- verbatim, with spaces ---------------------------------------------------------------------


@SETTINGS
@given(st.sampled_from(["iPhone", "Pixel", "Galaxy S", "ThinkPad X", "Model"]),
       st.text("0123456789", min_size=1, max_size=3), st.sampled_from(["", " Pro", " Max"]),
       names)
def test_a_verbatim_copy_with_spaces_grounds_and_a_changed_one_does_not(
        model: str, number: str, tail: str, name: str) -> None:
    value = f"{model} {number}{tail}"
    question = f"Is the {value} in stock today?"
    assert not invented(question, {name: value})
    assert not invented(question, {name: value.upper()}) or model != model.upper()
    assert invented(question, {name: f"{model} {_changed(number)}{tail}"})


def test_digit_groups_with_spaces_are_judged_as_groups_still() -> None:
    # the exception of the rule: a short group of a longer spaced identifier
    assert invented("VAT number GB 745 9384 21", {"vat_number": "745 9384"})
    assert invented("VAT number GB 745 9384 21", {"vat_number": "GB 745 9384"})
    assert not invented("VAT number GB 745 9384 21", {"vat_number": "GB 745 9384 21"})


# -- every whitespace groups like a space --------------------------------------------------------


@settings(max_examples=200, deadline=None, database=None)
@given(st.sampled_from(WHITESPACE), st.text("0123456789", min_size=3, max_size=5),
       st.text("0123456789", min_size=3, max_size=5), st.sampled_from(["", " ", "-"]))
def test_groups_split_by_any_whitespace_ground_as_by_a_space(
        gap: str, a: str, b: str, sep: str) -> None:
    question = f"Please check account {a}{gap}{b} for me"
    assert not invented(question, {"account_id": f"{a}{sep}{b}"})
    # a separator moved, or a digit changed, is another identifier
    assume(len(a) > 3)
    assert invented(question, {"account_id": f"{a[:-1]}-{a[-1]}{b}"})
    assert invented(question, {"account_id": f"{a}{_changed(b)}"})


# -- pieces that name no record ------------------------------------------------------------------


@SETTINGS
@given(st.integers(1, 12), long_ids, st.sampled_from(["https://api.shop.example/v{}/orders/{}",
                                                      "https://shop.example/api/v{}/track/{}",
                                                      "/v{}/orders/{}/status"]))
def test_a_url_version_segment_is_the_apis_own(version: int, ident: str, url: str) -> None:
    question = f"Where is my order {ident}?"
    for name in ("url", "endpoint_url", "path"):
        assert not invented(question, {name: url.format(version, ident)}, forbid_ungrounded=True)
        assert invented(question, {name: url.format(version, _changed(ident))},
                        forbid_ungrounded=True)


@SETTINGS
@given(st.sampled_from(["s3", "ec2", "mp3", "4k", "h264", "v2", "3d"]), long_ids)
def test_a_short_word_in_a_search_text_names_no_record(word: str, ident: str) -> None:
    question = "Find the storage settings of my cloud buckets"
    assume(len(word) <= 3 or word.startswith("v"))
    assert not invented(question, {"query": f"{word} bucket settings"}, forbid_ungrounded=True)
    # a long number in the same text is still an identifier that must be grounded
    assert invented(question, {"query": f"{word} bucket {ident}"}, forbid_ungrounded=True)


# -- a format character inside an identifier ---------------------------------------------------


@settings(max_examples=200, deadline=None, database=None)
@given(st.sampled_from(FORMAT), long_ids, st.integers(1, 5))
def test_a_format_character_inside_an_identifier_is_another_value(
        cf: str, ident: str, at: int) -> None:
    spoilt = ident[:at] + cf + ident[at:]
    question = f"Please close account {ident} today"
    assert invented(question, {"account_id": spoilt})
    assert invented(question, {"query": f"account {spoilt}"}, forbid_ungrounded=True)
    # the very same string in the question is a verbatim copy
    assert not invented(f"Please close account {spoilt} today", {"account_id": spoilt})
    # and the identifier without it grounds, as always
    assert not invented(question, {"account_id": ident})


# -- an identifier as an object key --------------------------------------------------------------


@SETTINGS
@given(long_ids, st.sampled_from(["accounts", "flags", "items"]), st.booleans())
def test_an_identifier_used_as_an_object_key_is_checked(ident: str, param: str, nested: bool
                                                        ) -> None:
    schema = {"type": "object", "properties": {param: {"type": "object"}}}
    question = f"Freeze account {ident} now"

    def args(key: str) -> dict[str, Any]:
        inner = {key: True}
        return {param: [inner] if nested else inner}

    assert not invented(question, args(ident), schema)
    assert invented(question, args(_changed(ident)), schema)
    # a typed map's keys are the model's too
    typed = {"type": "object", "properties": {param: {
        "type": "object", "additionalProperties": {"type": "boolean"}}}}
    assert invented(question, {param: {_changed(ident): True}}, typed)
    assert not invented(question, {param: {ident: True}}, typed)
    # a key the schema declares is a parameter's name, chosen by the tool, not the model
    declared = {"type": "object", "properties": {param: {
        "type": "object", "properties": {"2fa_0001": {"type": "boolean"}}}}}
    assert invented(question, {param: {"2fa_0001": True}}, declared) is None
