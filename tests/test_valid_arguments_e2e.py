"""valid_arguments end to end, and the upgrade rule: a check an upgrade adds never blocks
by itself.

Each run is a real pytest run (pytester) of a user's project: a real MCP server
(``tests/servers/orders_server.py``, typed tools whose schemas hold required fields, enums,
anyOf, $ref'd nested objects and arrays, a closed object) over stdio, and a real SDK
(openai) asking the fake model API, which answers each question with the calls scripted
for it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import mcp.client.stdio  # noqa: F401  (imported once: the in-process runs reuse it)
import openai  # noqa: F401  (the SDK is imported once, before pytester snapshots modules)
import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401

from conftest import Project

ORDERS = Path(__file__).resolve().parent / "servers" / "orders_server.py"
KEY = "sk-proj-valid-arguments-" + "2" * 24
ADDRESS = {"street": "1 High St", "postcode": "N1 9GU"}
LINE = {"sku": "AB-1234", "quantity": 2}
ORDER = {"customer_id": 7, "lines": [LINE], "ship_to": ADDRESS}
#: question -> the calls the model makes; what valid_arguments must say in the case below
SCRIPT: dict[str, list[tuple[str, dict[str, Any]]]] = {}


def _scripted(body: dict[str, Any]) -> Reply:
    question = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return Reply(tool_calls=SCRIPT[question])


@pytest.fixture
def orders(project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    SCRIPT.clear()
    fake_api.handler = _scripted
    project.config(servers={"orders": {"command": sys.executable, "args": [str(ORDERS)]}},
                   model="openai/gpt-test", api_base=fake_api.url + "/v1", retry_backoff=0)
    return project


def _case(id: str, tool: str, arguments: dict[str, Any], **fields: Any) -> dict[str, Any]:
    question = f"Case {id}: please {tool.replace('_', ' ')}"
    SCRIPT[question] = [(tool, arguments)]
    # grounding is another check's concern: these cases look at the schema alone
    return {"id": id, "question": question, "why": f"{id} has a reason", "expect_tool": [tool],
            "forbid_ungrounded": False, **fields}


def _results(project: Project) -> dict[str, dict[str, Any]]:
    doc = json.loads((project.path / "out.json").read_text())
    return {c["case_id"]: c for c in doc["cases"]}


def test_each_schema_feature_through_a_real_server_and_sdk(orders: Project) -> None:
    cases = [
        _case("valid", "place_order", {**ORDER, "priority": "express", "gift_note": None}),
        # an argument the schema does not declare, where it leaves the object open: valid
        # against the schema, and no_undeclared_arguments' to refuse
        _case("open", "place_order", {**ORDER, "coupon": "SPRING"}),
        _case("missing", "place_order", {"customer_id": 7, "lines": [LINE]}),
        _case("type", "get_order", {"order_id": "1042"}),
        _case("enum", "place_order", {**ORDER, "priority": "urgent"}),
        _case("closed", "place_order", {**ORDER, "ship_to": {**ADDRESS, "floor": 3}}),
        _case("nested", "place_order", {**ORDER, "ship_to": {"street": "1 High St",
                                                              "postcode": "N1", "country": "US"}}),
        _case("array", "place_order", {**ORDER, "lines": [LINE, {"sku": "ab-1", "quantity": 0}]}),
        _case("anyof", "place_order", {**ORDER, "gift_note": 5}),
        _case("off", "get_order", {"order_id": "1042"}, valid_arguments=False),
        _case("alias", "get_order", {"order_id": "1042"}, validArguments=False),
    ]
    orders.cases(cases, name="orders", servers=["orders"])
    result = orders.pytester.runpytest("--toolselect-json=out.json", "-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=8)
    by_id = _results(orders)
    details = {k: c["failing_detail"].get("valid_arguments") for k, c in by_id.items()}
    assert details == {
        "valid": None, "open": None, "off": None, "alias": None,
        "missing": "place_order (call 1): $: 'ship_to' is a required property (required)",
        "type": "get_order (call 1): $.order_id: '1042' is not of type 'integer' (type)",
        "enum": "place_order (call 1): $.priority: 'urgent' is not one of ['standard', "
                "'express'] (enum)",
        "closed": "place_order (call 1): $.ship_to: Additional properties are not allowed "
                  "('floor' was unexpected) (additionalProperties)",
        "nested": "place_order (call 1): $.ship_to.country: 'US' is not one of ['GB', 'IE', "
                  "'FR'] (enum)",
        "array": "place_order (call 1): $.lines[1].quantity: 0 is less than the minimum of 1 "
                 "(minimum); $.lines[1].sku: 'ab-1' does not match '^[A-Z]{2}-[0-9]{4}$' "
                 "(pattern)",
        "anyof": "place_order (call 1): $.gift_note: 5 is not valid under any of the given "
                 "schemas (anyOf) [branch 1: $.gift_note: 5 is not of type 'string' (type); "
                 "branch 2: $.gift_note: 5 is not of type 'null' (type)]",
    }
    # the check ran on the others, and passed, and it is the only one that failed
    assert [c["name"] for c in by_id["valid"]["checks"][0]] == [
        "tool_choice", "valid_arguments", "no_undeclared_arguments"]
    assert {k for k, c in by_id.items() if c["failing_checks"]} == {
        k for k, v in details.items() if v} | {"open"}
    assert all(c["failing_checks"] == ["valid_arguments"] for k, c in by_id.items()
               if c["failing_checks"] and k != "open")
    assert by_id["open"]["failing_detail"] == {
        "no_undeclared_arguments": "place_order (call 1) passes what its tool does not "
                                   "declare: $.coupon (its parameters: customer_id, lines, "
                                   "ship_to, priority, gift_note)"}
    assert [c["name"] for c in by_id["off"]["checks"][0]] == ["tool_choice",
                                                             "no_undeclared_arguments"]
    result.stdout.fnmatch_lines(["*failing:  valid_arguments: get_order (call 1): $.order_id: "
                                 "'1042' is not of type 'integer' (type)*"])


def test_a_decorated_case_turns_the_check_off(orders: Project) -> None:
    SCRIPT["Open order 1042"] = [("get_order", {"order_id": "1042"})]
    orders.pytester.makepyfile(test_orders="""
        from pytest_toolselect import case

        @case(question="Open order 1042", why="wrong type", expect_tool=["get_order"],
              servers=["orders"])
        def test_checked(toolselect_result):
            pass

        @case(question="Open order 1042", why="off", expect_tool=["get_order"],
              servers=["orders"], valid_arguments=False)
        def test_unchecked(toolselect_result):
            pass
    """)
    result = orders.pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_checked*valid_arguments*"])


def test_a_decorated_case_takes_the_new_keys(orders: Project) -> None:
    SCRIPT["Open order 1042 once"] = [("get_order", RIGHT_ID), ("get_order", RIGHT_ID)]
    SCRIPT["Open order 1042 with a note"] = [("get_order", {**RIGHT_ID, "note": "x"})]
    orders.pytester.makepyfile(test_orders="""
        from pytest_toolselect import case

        @case(question="Open order 1042 once", why="one call", expect_tool=["get_order"],
              servers=["orders"], expect_calls=1,
              expect_args=[{"path": "order_id", "equals": 1042},
                           {"path": "include_lines", "equals": True, "optional": True}])
        def test_twice(toolselect_result):
            pass

        @case(question="Open order 1042 with a note", why="a made-up note",
              expect_tool=["get_order"], servers=["orders"], valid_arguments=False,
              expect_args=[{"path": "order_id", "equals_text": " 1042 "}])
        def test_note(toolselect_result):
            pass

        @case(question="Open order 1042 with a note", why="notes allowed here",
              expect_tool=["get_order"], servers=["orders"], valid_arguments=False,
              undeclared_arguments=False)
        def test_note_allowed(toolselect_result):
            pass
    """)
    result = orders.pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([
        "*failing:  tool_choice: first call is get_order, as expected, but the turn calls "
        "get_order twice; expected exactly once*",
        "*failing:  arguments: get_order (call 1): order_id: expected to equal \" 1042 \" as "
        "text (case and surrounding space aside), got 1042*",
        "*failing:  no_undeclared_arguments: get_order (call 1) passes what its tool does not "
        "declare: $.note (its parameters: order_id, include_lines)*"], consecutive=False)


# --- the upgrade rule ------------------------------------------------------------------------

RIGHT = {"order_id": 1042}
RIGHT_ID = RIGHT
WRONG_TYPE = {"order_id": "1042"}
GATE = ["--toolselect-baseline=base.json", "--toolselect-json=out.json", "-p", "no:randomly"]
LINE_START = "new checks: valid_arguments failed in 1 case whose baseline entries were not"


def _old_format(project: Project) -> dict[str, Any]:
    """The recorded baseline as a version before valid_arguments wrote it: no checks list."""
    doc = project.read_baseline()
    for entry in doc["cases"].values():
        assert entry.pop("checks") == ["tool_choice", "no_forbidden_tools", "arguments",
                                       "valid_arguments", "no_undeclared_arguments",
                                       "no_identifier_invented",
                                       "no_any_identifier", "no_decoy_identifier"]
    (project.path / "base.json").write_text(json.dumps(doc, indent=2))
    return doc


def test_a_check_the_baseline_never_evaluated_does_not_block_until_updated(
        orders: Project, fake_api: FakeAPI) -> None:
    cases = [_case("open", "get_order", RIGHT), _case("other", "get_order", RIGHT)]
    orders.cases(cases, name="orders", servers=["orders"])
    open_q, other_q = (c["question"] for c in cases)
    recorded = orders.pytester.runpytest(*GATE)
    recorded.assert_outcomes(passed=2)
    old = _old_format(orders)

    # the model now passes the number as a string: held on the baseline, fails only the new check
    SCRIPT[open_q] = [("get_order", WRONG_TYPE)]
    fake_api.requests.clear()
    result = orders.pytester.runpytest(*GATE)
    result.assert_outcomes(passed=1, xfailed=1)
    assert result.ret == 0
    # adaptive reps do not ask it again: a rep failing only the new check is no evidence
    assert len(fake_api.requests) == 2
    assert _results(orders)["open"]["verdict"] == "new_failing"
    out = result.stdout.str()
    assert out.count(LINE_START) == 1, out
    result.stdout.fnmatch_lines([f"{LINE_START} evaluated with them; they do not block those "
                                 "cases (new failing) until the baseline is updated "
                                 "(--toolselect-update-baseline)"])
    assert json.loads((orders.path / "base.json").read_text()) == old  # compared, not written

    # the rule sets aside only the new check: a regression on an old one still blocks
    SCRIPT[other_q] = [("place_order", {"customer_id": "x"})]
    result = orders.pytester.runpytest(*GATE)
    result.assert_outcomes(failed=1, xfailed=1)
    assert {k: c["verdict"] for k, c in _results(orders).items()} == {
        "open": "new_failing", "other": "regression"}
    SCRIPT[other_q] = [("get_order", RIGHT)]

    # main updates the baseline: the entries now say they were evaluated with valid_arguments
    SCRIPT[open_q] = [("get_order", RIGHT)]
    updated = orders.pytester.runpytest(*GATE, "--toolselect-update-baseline")
    updated.assert_outcomes(passed=2)
    assert all("valid_arguments" in e["checks"] for e in orders.read_baseline()["cases"].values())

    # and the same failure now blocks, as a regression
    SCRIPT[open_q] = [("get_order", WRONG_TYPE)]
    result = orders.pytester.runpytest(*GATE)
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == 1
    assert _results(orders)["open"]["verdict"] == "regression"
    assert LINE_START not in result.stdout.str()


def test_an_update_that_fails_the_new_check_records_it(orders: Project) -> None:
    cases = [_case("open", "get_order", RIGHT)]
    orders.cases(cases, name="orders", servers=["orders"])
    orders.pytester.runpytest(*GATE).assert_outcomes(passed=1)
    _old_format(orders)
    SCRIPT[cases[0]["question"]] = [("get_order", WRONG_TYPE)]
    updated = orders.pytester.runpytest(*GATE, "--toolselect-update-baseline")
    updated.assert_outcomes(xfailed=1)
    updated.stdout.fnmatch_lines([f"{LINE_START} evaluated with them; they do not block those "
                                  "cases (the updated baseline evaluates them from now on)"])
    entry = orders.read_baseline()["cases"]["orders.toolselect.yaml::open"]
    assert (entry["status"], entry["failing_checks"]) == ("failing", ["valid_arguments"])
    assert "valid_arguments" in entry["checks"]
    # from now on the failure is the case's known state, judged as any failing case
    result = orders.pytester.runpytest(*GATE)
    assert _results(orders)["open"]["verdict"] == "still_failing"
    assert LINE_START not in result.stdout.str()
