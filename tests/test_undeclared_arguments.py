"""no_undeclared_arguments: a call passing a parameter its tool does not declare fails,
where the schema declares ``properties`` and does not itself allow other keys; as
properties over generated names (every Unicode category) and values (every JSON type)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolselect import score_case
from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.inputs.cases import Case
from pytest_toolselect.records.baseline_entry import CaseEntry
from pytest_toolselect.scoring.checks import score
from pytest_toolselect.scoring.undeclared import OPENING_KEYS, undeclared
from pytest_toolselect.terms.check_names import CHECKS_BEFORE_LIST
from pytest_toolselect.terms.vocabulary import Verdict

#: every JSON type, nested
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=3),
    max_leaves=8)
#: parameter names from the whole of Unicode (every category, surrogates aside)
NAMES = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=6)

WEATHER = {"type": "object", "properties": {"location": {"type": "string"},
                                            "unit": {"enum": ["celsius", "fahrenheit"]}},
           "required": ["location"]}
TOOLS = (Tool("get_weather", "Weather now", WEATHER),)


def case(**kw: Any) -> Case:
    return Case(id="c", question="Weather in Paris?", why="w", expect_tool=("get_weather",), **kw)


def check(arguments: Any, tools: tuple[Tool, ...] = TOOLS, **fields: Any) -> Any:
    return score(case(**fields), [ToolCall("get_weather", arguments)], tools).checks.get(
        "no_undeclared_arguments")


def test_a_made_up_parameter_fails_and_is_named() -> None:
    found = check({"location": "Paris", "units": "celsius"})
    assert not found.passed
    assert found.detail == ("get_weather (call 1) passes what its tool does not declare: "
                            "$.units (its parameters: location, unit)")
    ok = check({"location": "Paris", "unit": "celsius"})
    assert ok.passed and ok.detail == "every argument is declared by its tool: get_weather (call 1)"


def test_the_check_is_on_by_default_and_turned_off_per_case() -> None:
    call = [{"name": "get_weather", "arguments": {"location": "Paris", "days": 3}}]
    tools = [{"name": "get_weather", "input_schema": WEATHER}]
    base = {"question": "Weather in Paris?", "expect_tool": ["get_weather"]}
    assert score_case(base, call, tools).failing == ["no_undeclared_arguments"]
    for off in ({"undeclared_arguments": False}, {"undeclaredArguments": False}):
        result = score_case({**base, **off}, call, tools)
        assert result.passed and "no_undeclared_arguments" not in result.checks
    # turning it off is part of what the case is; leaving it on keeps old fingerprints
    assert "undeclared_arguments" not in case().fingerprint_data()
    assert case(undeclared_arguments=False).fingerprint_data()["undeclared_arguments"] is False


def test_nothing_to_judge_without_a_call_to_an_offered_tool_or_filled_arguments() -> None:
    assert score(case(), [], TOOLS).checks.get("no_undeclared_arguments") is None
    assert score(case(), [ToolCall("made_up", {"x": 1})], TOOLS).checks.get(
        "no_undeclared_arguments") is None
    # a model that fills no arguments by design (local/bm25) has nothing of its own to judge
    assert "no_undeclared_arguments" not in score(
        case(), [ToolCall("get_weather", {"x": 1})], TOOLS, arguments_filled=False).checks


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(NAMES, JSON, max_size=4), st.dictionaries(NAMES, JSON, max_size=5))
def test_exactly_the_undeclared_names_fail(declared: dict[str, Any], arguments: dict[str, Any]
                                           ) -> None:
    schema = {"type": "object", "properties": {k: {} for k in declared}}
    expected = [(k,) for k in arguments if k not in declared]
    assert undeclared(schema, arguments) == expected
    result = check(arguments, (Tool("get_weather", "", schema),))
    assert result.passed == (not expected)
    if expected:
        assert "passes what its tool does not declare" in result.detail


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(OPENING_KEYS)), JSON, st.dictionaries(NAMES, JSON, max_size=4))
def test_a_schema_that_says_what_else_may_be_passed_is_left_to_json_schema(
        key: str, value: Any, arguments: dict[str, Any]) -> None:
    # additionalProperties true, false or a schema, patternProperties, a condition: the
    # schema speaks for itself, and valid_arguments judges it
    schema = {"type": "object", "properties": {"location": {}}, key: value}
    assert undeclared(schema, arguments) == []


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(NAMES, JSON, max_size=4), JSON)
def test_a_schema_that_declares_no_properties_rules_nothing_out(
        arguments: dict[str, Any], other: Any) -> None:
    for schema in ({}, {"type": "object"}, {"description": "anything"}, {"type": ["object"]}):
        assert undeclared(schema, arguments) == []
    assert undeclared(WEATHER, other if not isinstance(other, dict) else {}) == []


def test_at_any_depth_through_ref_items_and_branches() -> None:
    schema = {
        "type": "object",
        "properties": {
            "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}},
            "ship_to": {"anyOf": [{"$ref": "#/$defs/address"}, {"type": "null"}]},
            "meta": {"type": "object", "additionalProperties": True, "properties": {"a": {}}},
        },
        "$defs": {"line": {"type": "object", "properties": {"sku": {}, "quantity": {}}},
                  "address": {"type": "object", "properties": {"street": {}}}},
    }
    args = {"lines": [{"sku": "A", "quantity": 1}, {"sku": "B", "qty": 2}],
            "ship_to": {"street": "x", "floor": 3}, "meta": {"anything": 1}, "coupon": "X"}
    assert undeclared(schema, args) == [("lines", 1, "qty"), ("ship_to", "floor"), ("coupon",)]
    # a key declared by one branch of an anyOf is declared
    either = {"anyOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]}
    assert undeclared(either, {"a": 1, "b": 2, "c": 3}) == [("c",)]
    # a $ref that leads nowhere, or a cycle, judges nothing rather than crash
    assert undeclared({"$ref": "#/$defs/nowhere"}, {"x": 1}) == []
    loop = {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}
    assert undeclared(loop, {"x": 1}) == []


def test_many_undeclared_arguments_stay_readable() -> None:
    found = check({"location": "Paris", **{f"x{i}": i for i in range(40)}})
    assert not found.passed
    assert found.detail.count("$.x") == 5 and "and 35 more" in found.detail


def test_a_baseline_recorded_without_it_is_not_blocked_by_it() -> None:
    # the upgrade rule: held on the baseline, failing only the new check -> new failing
    assert "no_undeclared_arguments" not in CHECKS_BEFORE_LIST
    old = CaseEntry.from_json({"status": "passing", "passes": 1, "reps": 1, "history": [[1, 1]],
                               "checks": ["tool_choice", "valid_arguments"]})
    verdict, aside = gate.judge([["no_undeclared_arguments"]], old, have_baseline=True)
    assert (verdict, aside) == (Verdict.NEW_FAILING, ["no_undeclared_arguments"])
    new = CaseEntry.from_json({**old.to_json(), "checks": ["tool_choice", "valid_arguments",
                                                           "no_undeclared_arguments"]})
    assert gate.judge([["no_undeclared_arguments"]], new, have_baseline=True)[0] == Verdict.REGRESSION
