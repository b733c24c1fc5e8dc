"""unsatisfiable-schema: a parameter no value satisfies is told by the lint, once, as
properties over every JSON type: a schema the rule flags refuses every value, and a schema
whose enum holds a value of its type is never flagged."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.inputs.cases import IdentifierSettings
from pytest_toolselect.lint.run import lint
from pytest_toolselect.lint.tool_rules import ToolSet
from pytest_toolselect.lint.unsatisfiable import (
    _TYPES,
    json_type,
    unsatisfiable,
    why_unsatisfiable,
)
from pytest_toolselect.terms.check_names import LINT_RULES

SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                                 allow_infinity=False)
           | st.text(max_size=4))
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=2)
                    | st.dictionaries(st.text(max_size=3), inner, max_size=2), max_leaves=4)
TYPES = st.lists(st.sampled_from(_TYPES), min_size=1, max_size=3, unique=True)


def _valid(schema: dict[str, Any], value: Any) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def test_a_string_enum_on_an_array_parameter_is_an_error_of_the_tool() -> None:
    schema = {"type": "object", "required": ["tags"], "properties": {
        "tags": {"type": "array", "enum": ["urgent", "low"]},
        "limit": {"type": "integer", "minimum": 10, "maximum": 5}}}
    found = unsatisfiable("tickets", "search_tickets", schema)
    assert [(f.rule, str(f.severity), f.subject) for f in found] == [
        ("unsatisfiable-schema", "error", "tags"), ("unsatisfiable-schema", "warning", "limit")]
    assert found[0].message == ("search_tickets: no value satisfies parameter 'tags': its enum "
                                "holds only string values, and its type is array; every call "
                                "fails valid_arguments")
    assert "its minimum 10 is above its maximum 5; a call can only leave it out" in found[1].message
    # through the whole lint, as the rule of its table
    report = lint(ToolSet({"tickets": (Tool("search_tickets", "Search the tickets by tag "
                                            "and state, newest first.", schema),)}),
                  IdentifierSettings())
    assert [f.id for f in report.findings if f.rule == "unsatisfiable-schema"] == [
        "unsatisfiable-schema:search_tickets:tags", "unsatisfiable-schema:search_tickets:limit"]
    assert "unsatisfiable-schema" in LINT_RULES


def test_nested_items_refs_and_closed_objects() -> None:
    schema = {"type": "object", "properties": {
        "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}},
        "closed": {"type": "object", "additionalProperties": False, "required": ["x"],
                   "properties": {"y": {}}},
        "empty": {"enum": []}, "none": {"type": []}},
        "$defs": {"line": {"type": "object", "properties": {"qty": {"type": "integer",
                                                                    "enum": ["1"]}}},
                  "loop": {"$ref": "#/$defs/loop"}}}
    found = {f.subject: f.message for f in unsatisfiable("s", "t", schema)}
    assert set(found) == {"lines[].qty", "closed", "empty", "none"}
    assert "requires 'x', which it does not declare" in found["closed"]
    assert "its enum is empty" in found["empty"] and "type list is empty" in found["none"]
    # what a model can satisfy is never flagged; a self-referring schema ends
    assert unsatisfiable("s", "t", {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}) == []


@settings(max_examples=300, deadline=None)
@given(TYPES, st.lists(JSON, max_size=4), st.lists(JSON, max_size=4))
def test_a_flagged_enum_refuses_every_value_and_an_unflagged_one_accepts_one(
        types: list[str], enum: list[Any], others: list[Any]) -> None:
    schema = {"type": types, "enum": enum}
    why = why_unsatisfiable(schema)
    if why is None:
        # some listed value has the declared type: that value validates
        assert any(_valid(schema, v) for v in enum)
    else:
        # nothing validates: not the listed values, not any other JSON value
        assert not any(_valid(schema, v) for v in [*enum, *others])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([("minimum", "maximum"), ("minLength", "maxLength"),
                        ("minItems", "maxItems"), ("minProperties", "maxProperties")]),
       st.integers(0, 50), st.integers(0, 50), JSON)
def test_bounds_are_flagged_exactly_when_they_cross(keys: tuple[str, str], low: int, high: int,
                                                    value: Any) -> None:
    schema = {keys[0]: low, keys[1]: high}
    flagged = why_unsatisfiable(schema) is not None
    assert flagged == (low > high)
    if flagged:
        # a value the bounds speak of never validates (others are not of that kind)
        kind = {"minimum": "number", "minLength": "string", "minItems": "array",
                "minProperties": "object"}[keys[0]]
        if kind in json_type(value):
            assert not _valid(schema, value)
