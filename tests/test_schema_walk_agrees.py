"""The case loader's path check and the scorer read a tool's schema by the same rules:
keywords beside a ``$ref`` apply as well (JSON Schema 2019-09 on), so a path the loader
accepts as declared is one the scorer finds, with its type."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect import score_case
from pytest_toolselect.exchange.schema_paths import BRANCH_KEYS, alternatives
from pytest_toolselect.inputs.cases import _path_problem
from pytest_toolselect.scoring.matchers import property_schema

#: ``amount.value`` is declared beside the $ref, not in the referenced Money
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"amount": {"$ref": "#/$defs/Money",
                              "properties": {"value": {"type": "number"}}}},
    "$defs": {"Money": {"type": "object", "properties": {"currency": {"type": "string"}}}},
}


def test_a_path_declared_beside_a_ref_is_found_by_both() -> None:
    assert _path_problem(SCHEMA, ["amount", "value"], SCHEMA) is None  # the loader: declared
    assert property_schema(SCHEMA, ["amount", "value"]) == {"type": "number"}  # the scorer too


def test_a_number_declared_beside_a_ref_is_judged_there() -> None:
    tool = {"name": "pay", "description": "Pay.", "input_schema": SCHEMA}

    def checks(matcher: dict[str, Any]) -> Any:
        return score_case({"question": "Pay 5", "expect_tool": ["pay"], "expect_args": [matcher]},
                          [{"name": "pay", "arguments": {"amount": {"value": "5"}}}], [tool]).checks

    # the string "5" is not the number the schema beside the $ref types: both checks say so,
    # and the matcher takes it by value only when asked
    found = checks({"path": "amount.value", "equals": 5})
    assert not found["arguments"].passed
    assert "$.amount.value: '5' is not of type 'number'" in found["valid_arguments"].detail
    assert checks({"path": "amount.value", "equals": 5, "by_value": True})["arguments"].passed


NAMES = st.sampled_from(["a", "b", "c"])
LEAF = st.sampled_from([{"type": "number"}, {"type": "string"}, {}])


def _schemas() -> st.SearchStrategy[Any]:
    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.dictionaries(NAMES, inner, min_size=1, max_size=2).map(
                lambda p: {"type": "object", "properties": p}),
            st.builds(lambda n, p: {"$ref": f"#/$defs/{n}", "properties": p},
                      NAMES, st.dictionaries(NAMES, inner, max_size=2)),
            st.sampled_from(["anyOf", "oneOf", "allOf"]).flatmap(
                lambda k: st.lists(inner, min_size=1, max_size=2).map(lambda b: {k: b})),
            # properties beside the branches (a common part, a oneOf per variant)
            st.builds(lambda k, b, p: {k: b, "properties": p}, st.sampled_from(["anyOf", "oneOf"]),
                      st.lists(inner, min_size=1, max_size=2),
                      st.dictionaries(NAMES, inner, min_size=1, max_size=2)),
            # closed objects: where the loader may call a path undeclared
            st.dictionaries(NAMES, inner, min_size=1, max_size=2).map(
                lambda p: {"type": "object", "properties": p, "additionalProperties": False}),
            inner.map(lambda i: {"type": "array", "items": i}),
        )
    return st.recursive(LEAF | st.builds(lambda n: {"$ref": f"#/$defs/{n}"}, NAMES), extend,
                        max_leaves=6)


@given(root=_schemas(), defs=st.dictionaries(NAMES, _schemas(), max_size=3),
       path=st.lists(st.sampled_from(["a", "b", "c", "0"]), min_size=1, max_size=3))
def test_a_path_the_scorer_finds_is_one_the_loader_accepts(root: Any, defs: Any,
                                                           path: list[str]) -> None:
    """Refs (cycles too), unions, items and keywords beside a $ref: wherever the scorer
    finds the schema of an argument, the loader never calls that path undeclared."""
    schema = {**root, "$defs": defs}
    if property_schema(schema, path) is not None:
        assert _path_problem(schema, path, schema) is None


@given(root=_schemas(), defs=st.dictionaries(NAMES, _schemas(), max_size=3),
       path=st.lists(st.sampled_from(["a", "b", "c", "0"]), min_size=1, max_size=3))
def test_a_path_the_loader_refuses_is_one_the_scorer_never_finds(root: Any, defs: Any,
                                                                 path: list[str]) -> None:
    """The other way round: the loader's refusal (the matcher can never hold) is never a
    path that scoring would find declared."""
    schema = {**root, "$defs": defs}
    if _path_problem(schema, path, schema) is not None:
        assert property_schema(schema, path) is None


@given(root=_schemas(), defs=st.dictionaries(NAMES, _schemas(), max_size=3))
def test_every_alternative_is_one_plain_schema(root: Any, defs: Any) -> None:
    """Both read a node as its alternatives, each with its $ref followed and its branches
    spread out: nothing left for a reader to follow its own way."""
    schema = {**root, "$defs": defs}
    for alt in alternatives(schema, schema):
        assert "$ref" not in alt and not set(BRANCH_KEYS).intersection(alt), alt
