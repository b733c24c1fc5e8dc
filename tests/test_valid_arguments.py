"""valid_arguments: each call against its tool's input schema, as unit and property tests."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolselect import score_case
from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.inputs.cases import Case
from pytest_toolselect.scoring.argschema import MAX_ERRORS, json_path
from pytest_toolselect.scoring.checks import score

ORDER = {
    "type": "object",
    "properties": {
        "customer_id": {"type": "integer"},
        "priority": {"enum": ["standard", "express"]},
        "gift": {"type": "boolean"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "ship_to": {"$ref": "#/$defs/address"},
        "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}, "minItems": 1},
    },
    "required": ["customer_id", "lines"],
    "$defs": {
        "address": {"type": "object", "additionalProperties": False,
                    "properties": {"street": {"type": "string"}, "postcode": {"type": "string"}},
                    "required": ["street"]},
        "line": {"type": "object",
                 "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{4}$"},
                                "quantity": {"type": "integer", "minimum": 1}},
                 "required": ["sku", "quantity"]},
    },
}
CLOSED = {"type": "object", "properties": {"order_id": {"type": "integer"}},
          "required": ["order_id"], "additionalProperties": False}
TOOLS = (Tool("place_order", "Place an order", ORDER), Tool("get_order", "Get an order", CLOSED))
DROP = object()
GOOD = {"customer_id": 7, "lines": [{"sku": "AB-1234", "quantity": 2}],
        "ship_to": {"street": "1 High St"}, "priority": "express", "note": None}


def case(**kw: Any) -> Case:
    return Case(id="c", question="Send two AB-1234 to customer 7", why="w", **kw)


def verdict(arguments: Any, tool: str = "place_order", tools: tuple[Tool, ...] = TOOLS,
            **case_fields: Any) -> tuple[bool, str] | None:
    result = score(case(**case_fields), [ToolCall(tool, arguments)], tools).checks
    found = result.get("valid_arguments")
    return None if found is None else (found.passed, found.detail)


def test_valid_arguments_pass_and_name_the_call() -> None:
    assert verdict(GOOD) == (True, "arguments valid against the input schema: place_order (call 1)")


@pytest.mark.parametrize(("change", "expected"), [
    ({"customer_id": DROP}, "$: 'customer_id' is a required property (required)"),
    ({"customer_id": "7"}, "$.customer_id: '7' is not of type 'integer' (type)"),
    ({"customer_id": True}, "$.customer_id: True is not of type 'integer' (type)"),
    ({"gift": "yes"}, "$.gift: 'yes' is not of type 'boolean' (type)"),
    ({"priority": "urgent"}, "$.priority: 'urgent' is not one of ['standard', 'express'] (enum)"),
    # $ref into a closed nested object: an undeclared key and a missing required one
    ({"ship_to": {"street": "1 High St", "floor": 2}},
     "$.ship_to: Additional properties are not allowed ('floor' was unexpected) "
     "(additionalProperties)"),
    ({"ship_to": {"postcode": "N1"}}, "$.ship_to: 'street' is a required property (required)"),
    # arrays of $ref'd objects: the index is in the path
    ({"lines": [{"sku": "AB-1234", "quantity": 1}, {"sku": "ab-1", "quantity": 1}]},
     "$.lines[1].sku: 'ab-1' does not match '^[A-Z]{2}-[0-9]{4}$' (pattern)"),
    ({"lines": [{"sku": "AB-1234", "quantity": 0}]},
     "$.lines[0].quantity: 0 is less than the minimum of 1 (minimum)"),
    ({"lines": []}, "$.lines: [] should be non-empty (minItems)"),
    # anyOf: the error, and why each branch did not hold
    ({"note": 5}, "$.note: 5 is not valid under any of the given schemas (anyOf) "
                  "[branch 1: $.note: 5 is not of type 'string' (type); "
                  "branch 2: $.note: 5 is not of type 'null' (type)]"),
])
def test_each_schema_feature_fails_with_call_path_and_rule(change: dict[str, Any],
                                                          expected: str) -> None:
    arguments = {k: v for k, v in {**GOOD, **change}.items() if v is not DROP}
    assert verdict(arguments) == (False, f"place_order (call 1): {expected}")


def test_undeclared_argument_fails_only_where_the_schema_closes_the_object() -> None:
    # JSON Schema allows keys it does not declare unless the object is closed
    assert verdict({**GOOD, "coupon": "X"}) == (
        True, "arguments valid against the input schema: place_order (call 1)")
    assert verdict({"order_id": 1, "coupon": "X"}, "get_order") == (
        False, "get_order (call 1): $: Additional properties are not allowed ('coupon' was "
               "unexpected) (additionalProperties)")
    closed = Tool("t", "", {"type": "object", "properties": {"a": {"type": "string"}},
                            "unevaluatedProperties": False})
    assert verdict({"a": "x", "b": 1}, "t", (closed,)) == (
        False, "t (call 1): $: Unevaluated properties are not allowed ('b' was unexpected) "
               "(unevaluatedProperties)")


def test_every_error_of_every_call_is_named_and_counted_past_the_limit() -> None:
    calls = [ToolCall("get_order", {"order_id": "1"}), ToolCall("nowhere", {}),
             ToolCall("place_order", {"lines": [{"quantity": "x"}] * 4})]
    found = score(case(), calls, TOOLS).checks["valid_arguments"]
    assert not found.passed
    first, rest = found.detail.split("; place_order (call 3): ")
    assert first == "get_order (call 1): $.order_id: '1' is not of type 'integer' (type)"
    # a call to a tool not offered is tool_choice's to report, not validated
    assert "nowhere" not in found.detail
    errors = rest.split("; ")
    assert errors[0] == "$: 'customer_id' is a required property (required)"
    assert len(errors) == MAX_ERRORS + 1 and errors[-1] == "and 4 more"


def test_long_values_are_clipped_in_the_message() -> None:
    found = verdict({"order_id": "9" * 100_000}, "get_order")
    assert found is not None and not found[0]
    assert len(found[1]) < 400 and found[1].endswith("is not of type 'integer' (type)")


def test_arguments_that_are_not_an_object_fail() -> None:
    found = score(case(), [ToolCall("get_order", {}, raw_arguments="{order_id: 1")], TOOLS)
    assert found.checks["valid_arguments"].detail == (
        "get_order (call 1): the arguments are not a JSON object")


def test_the_check_applies_only_to_calls_of_offered_tools_and_can_be_turned_off() -> None:
    assert verdict({"x": 1}, "not_offered") is None
    assert "valid_arguments" not in score(case(), [], TOOLS).checks
    assert verdict({"order_id": "1"}, "get_order", valid_arguments=False) is None
    # a model that fills no arguments by design (local/bm25) has nothing to validate
    result = score(case(), [ToolCall("get_order", {})], TOOLS, arguments_filled=False)
    assert "valid_arguments" not in result.checks


def test_the_declared_draft_is_used() -> None:
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
              "properties": {"n": {"type": "integer", "minimum": 1, "exclusiveMinimum": True}}}
    assert verdict({"n": 1}, "t", (Tool("t", "", draft4),)) == (
        False, "t (call 1): $.n: 1 is less than or equal to the minimum of 1 (minimum)")
    assert verdict({"n": 2}, "t", (Tool("t", "", draft4),))[0] is True  # type: ignore[index]
    # in 2020-12 (the default) exclusiveMinimum is a number: the same schema is not valid
    found = verdict({"n": 1}, "t", (Tool("t", "", {k: v for k, v in draft4.items()
                                                   if k != "$schema"}),))
    # ... and the keyword it refuses is left out, said once, while the rest is validated
    assert found == (True, "arguments valid against the input schema: t (call 1); t's input "
                           "schema is not valid JSON Schema: True is not of type 'number' at "
                           "$.properties.n.exclusiveMinimum (type); validated without it")
    # a $schema jsonschema does not know is read as 2020-12
    custom = {"$schema": "https://example.invalid/meta", "type": "object",
              "properties": {"n": {"type": "integer"}}}
    assert verdict({"n": "1"}, "t", (Tool("t", "", custom),)) == (
        False, "t (call 1): $.n: '1' is not of type 'integer' (type)")


@pytest.mark.parametrize(("schema", "problem"), [
    ({"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}},
     "'(' is not a 'regex' at $.properties.a.pattern (format)"),
    ({"type": "object", "dependentRequired": {"a": "b"}},
     "'b' is not of type 'array' at $.dependentRequired.a (type)"),
    ({"type": "object", "properties": {"a": {"type": "any"}}},
     "'any' is not valid under any of the given schemas at $.properties.a.type (anyOf)"),
    ({"type": "object", "properties": {"a": 5}},
     "5 is not of type 'object', 'boolean' at $.properties.a (type)"),
    ({"type": "object", "required": ["a", 5]}, "5 is not of type 'string' at $.required[1] (type)"),
])
def test_a_refused_keyword_is_left_out_said_once_and_the_rest_validated(
        schema: dict[str, Any], problem: str) -> None:
    bad = Tool("bad", "", {**schema, "properties": {**schema.get("properties", {}),
                                                    "n": {"type": "integer"}}})
    note = f"bad's input schema is not valid JSON Schema: {problem}; validated without it"
    assert verdict({"a": "x"}, "bad", (bad,)) == (
        True, f"arguments valid against the input schema: bad (call 1); {note}")
    # what can be validated is: "100" is not the integer the schema asks for, twice, said once
    calls = [ToolCall("bad", {"a": "x", "n": "100"}), ToolCall("bad", {"a": "y", "n": "7"})]
    found = score(case(), calls, (bad,)).checks["valid_arguments"]
    assert (found.passed, found.detail) == (
        False, "bad (call 1): $.n: '100' is not of type 'integer' (type); bad (call 2): $.n: "
               f"'7' is not of type 'integer' (type); {note}")


@pytest.mark.parametrize(("schema", "problem"), [
    # a $ref to a URL is never fetched: unresolvable, so the schema cannot be used
    ({"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/a.json"}}},
     "$ref 'http://127.0.0.1:9/a.json' resolves to nothing (a URL is never fetched)"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
     "$ref '#/$defs/missing' resolves to nothing (a URL is never fetched)"),
])
def test_a_schema_that_cannot_be_read_is_not_checked_and_says_why(
        schema: dict[str, Any], problem: str) -> None:
    bad = Tool("bad", "", schema)
    note = f"bad (call 1): its input schema is not valid JSON Schema: {problem}"
    assert verdict({"a": "x"}, "bad", (bad, *TOOLS)) == (True, f"not checked: {note}")
    # beside a checked call, the note follows the verdict on it
    calls = [ToolCall("bad", {"a": "x"}), ToolCall("get_order", {"order_id": "1"})]
    found = score(case(), calls, (bad, *TOOLS)).checks["valid_arguments"]
    assert (found.passed, found.detail) == (
        False, "get_order (call 2): $.order_id: '1' is not of type 'integer' (type); "
               "not checked: " + note)


def test_score_case_runs_the_check_and_the_key_turns_it_off() -> None:
    tools = [{"name": "get_order", "description": "d", "input_schema": CLOSED}]
    calls = [{"name": "get_order", "arguments": {"order_id": "x"}}]
    result = score_case({"question": "order 1", "expect_tool": ["get_order"]}, calls, tools)
    assert result.failing == ["valid_arguments"]
    for key in ("valid_arguments", "validArguments"):
        off = score_case({"question": "order 1", "expect_tool": ["get_order"], key: False},
                         calls, tools)
        assert off.passed and "valid_arguments" not in off.checks


@pytest.mark.parametrize(("path", "text"), [
    ((), "$"), (("a", 0, "b_2"), "$.a[0].b_2"), (("a b", 'q"'), '$["a b"]["q\\""]'),
    (("0",), '$["0"]'),
])
def test_json_path(path: tuple[Any, ...], text: str) -> None:
    assert json_path(path) == text


# --- properties over generated schemas ------------------------------------------------------

KEYS = st.one_of(st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True),
                 st.text(min_size=1, max_size=6))
LEAVES = st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"},
                          {"type": "number"}, {"enum": ["a", "b", "c"]}])


def _objects(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        props = draw(st.dictionaries(KEYS, children, min_size=1, max_size=4))
        required = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            schema["required"] = required
        if draw(st.booleans()):
            schema["additionalProperties"] = False
        return schema
    return build()


SCHEMAS = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        _objects(children),
        st.builds(lambda items: {"type": "array", "items": items}, children),
        st.builds(lambda a, b: {"anyOf": [a, b]}, children, children),
        # the same schema behind a $ref (resolved at the root: see _rooted)
        st.builds(lambda s: {"$ref": "#/$defs/x", "__def": s}, children),
    ),
    max_leaves=8,
)


def _rooted(schema: dict[str, Any]) -> dict[str, Any]:
    """The generated schema under a root object, each {"$ref", "__def"} moved to $defs."""
    defs: dict[str, Any] = {}

    def walk(node: dict[str, Any]) -> dict[str, Any]:
        if "__def" in node:
            name = f"d{len(defs)}"
            defs[name] = {}
            defs[name] = walk(node["__def"])
            return {"$ref": f"#/$defs/{name}"}
        out = dict(node)
        if "properties" in node:
            out["properties"] = {k: walk(v) for k, v in node["properties"].items()}
        if "items" in node:
            out["items"] = walk(node["items"])
        if "anyOf" in node:
            out["anyOf"] = [walk(b) for b in node["anyOf"]]
        return out

    root = walk({"type": "object", "properties": {"arg": schema}, "required": ["arg"]})
    return {**root, "$defs": defs} if defs else root


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = root["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


@st.composite
def _conforming(draw: st.DrawFn, node: dict[str, Any], root: dict[str, Any]) -> Any:
    node = _resolve(node, root)
    if "anyOf" in node:
        return draw(_conforming(draw(st.sampled_from(node["anyOf"])), root))
    if "enum" in node:
        return draw(st.sampled_from(node["enum"]))
    kind = node["type"]
    if kind == "object":
        props = node["properties"]
        out = {k: draw(_conforming(props[k], root)) for k in node.get("required", [])}
        for k in sorted(props):
            if k not in out and draw(st.booleans()):
                out[k] = draw(_conforming(props[k], root))
        return out
    if kind == "array":
        return [draw(_conforming(node["items"], root)) for _ in range(draw(st.integers(0, 2)))]
    return draw({"string": st.text(max_size=5), "integer": st.integers(),
                 "boolean": st.booleans(),
                 "number": st.one_of(st.integers(), st.floats(allow_nan=False,
                                                              allow_infinity=False))}[kind])


def _sites(node: dict[str, Any], value: Any, root: dict[str, Any], path: tuple[Any, ...] = ()
           ) -> list[tuple[tuple[Any, ...], str, Any]]:
    """Where one change makes exactly one error: (path, rule, the changed value at path)."""
    node = _resolve(node, root)
    if "anyOf" in node:
        return []  # the error would be the anyOf's, with one per branch
    if "enum" in node:
        return [(path, "enum", "zzz")]
    kind = node["type"]
    wrong = {"string": 12345, "integer": "7", "boolean": "yes", "number": "1.5",
             "object": [], "array": {}}[kind]
    out = [(path, "type", wrong)]
    if kind == "object":
        for k in node.get("required", []):
            out.append((path, "required", {kk: v for kk, v in value.items() if kk != k}))
        if node.get("additionalProperties") is False:
            extra = "undeclared" + "_" * max(len(k) for k in node["properties"])
            out.append((path, "additionalProperties", {**value, extra: 1}))
        for k, v in value.items():
            out += _sites(node["properties"][k], v, root, (*path, k))
    elif kind == "array":
        for i, item in enumerate(value):
            out += _sites(node["items"], item, root, (*path, i))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return copy


def _detail(schema: dict[str, Any], arguments: Any) -> tuple[bool, str]:
    found = verdict(arguments, "t", (Tool("t", "", schema),))
    assert found is not None
    return found


@settings(max_examples=200, deadline=None)
@given(st.data(), SCHEMAS)
def test_arguments_a_schema_allows_always_pass(data: st.DataObject, schema: dict[str, Any]) -> None:
    root = _rooted(schema)
    arguments = data.draw(_conforming(root, root))
    assert jsonschema.Draft202012Validator(root).is_valid(arguments)  # the generator is right
    assert _detail(root, arguments) == (True, "arguments valid against the input schema: t (call 1)")


@settings(max_examples=200, deadline=None)
@given(st.data(), SCHEMAS)
def test_one_change_fails_naming_its_path_and_rule(data: st.DataObject,
                                                  schema: dict[str, Any]) -> None:
    root = _rooted(schema)
    arguments = data.draw(_conforming(root, root))
    sites = _sites(root, arguments, root)
    path, rule, new = data.draw(st.sampled_from(sites))
    changed = _replace(arguments, path, new)
    passed, detail = _detail(root, changed)
    assert not passed
    # exactly one error: the changed place and the rule it breaks
    assert re.fullmatch(rf"t \(call 1\): {re.escape(json_path(path))}: .* \({rule}\)", detail), detail


def test_a_schema_that_refers_to_itself_forever_is_not_checked() -> None:
    endless = Tool("t", "", {"allOf": [{"$ref": "#"}]})
    found = verdict({"a": 1}, "t", (endless,))
    assert found is not None and found[0]
    assert found[1].startswith("not checked: t (call 1): its input schema is not valid JSON "
                               "Schema: validating with it fails: maximum recursion depth")


def test_only_turning_the_check_off_changes_a_case_fingerprint() -> None:
    # cases written before the check keep their fingerprint, so their history goes on
    assert "valid_arguments" not in case().fingerprint_data()
    assert case(valid_arguments=False).fingerprint_data()["valid_arguments"] is False


#: keywords the metaschema refuses, each where it says nothing of the generated arguments
#: (a property no call passes; a string or number keyword on the root object)
REFUSED = [
    ("properties", "zz_any", {"type": "any"}),
    ("properties", "zz_five", 5),
    ("properties", "zz_pattern", {"type": "string", "pattern": "(["}),
    ("properties", "zz_types", {"type": ["string", "whatever"]}),
    (None, "exclusiveMinimum", True),
    (None, "minLength", -1),
    (None, "pattern", ")"),
]


@settings(max_examples=150, deadline=None)
@given(st.data(), SCHEMAS, st.lists(st.sampled_from(REFUSED), min_size=1, max_size=3,
                                    unique_by=lambda r: r[1]))
def test_a_refused_keyword_changes_no_verdict_on_what_can_be_validated(
        data: st.DataObject, schema: dict[str, Any],
        refused: list[tuple[str | None, str, Any]]) -> None:
    root = _rooted(schema)
    spoilt = json.loads(json.dumps(root))
    for where, key, value in refused:
        if where is None:
            spoilt[key] = value
        else:
            spoilt["properties"][key] = value
    arguments = data.draw(_conforming(root, root))
    sites = _sites(root, arguments, root)
    path, _, new = data.draw(st.sampled_from(sites))
    for args in (arguments, _replace(arguments, path, new)):
        plain, with_refused = _detail(root, args), _detail(spoilt, args)
        # the same verdict and errors, then the note of what was left out, once
        assert with_refused[0] == plain[0]
        assert with_refused[1].startswith(plain[1] + "; t's input schema is not valid JSON Schema: ")
        assert with_refused[1].endswith("validated without it" if len(refused) == 1
                                        else "validated without them")
        assert with_refused[1].count("not valid JSON Schema") == 1
