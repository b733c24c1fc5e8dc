"""Every billed call is in every cost figure: cut replies and unreadable ones too.

The cost cap and the cost summary count the same calls, and the call count equals the
calls the fake API served. Through the real openai SDK against the fake API.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest
import test_models_e2e
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from test_models_e2e import CALL_COST, _answer, _config
from test_probe_e2e import _first_listed, _groups

from conftest import FIND, OFFICERS, Project, case
from pytest_toolselect.positions.sourcemap import load_schema

CUT_Q = "Which register holds the filing history of Acme Widgets, and since when?"
BAD_Q = "Look up the VAT number GB123456789 for me"

# the fixtures of those modules, used here by name
models = test_models_e2e.models


def _mixed(body: dict[str, Any]) -> Reply:
    """Right answers, a reply cut before any tool call, and one that cannot be read."""
    asked = json.dumps(body["messages"])
    if "filing history" in asked:
        return Reply(text="The filing history is", stop_reason="max_tokens",
                     input_tokens=1000, output_tokens=100)
    if "VAT number" in asked:
        return Reply(tool_calls=[("lookup_vat", "[1, 2]")], input_tokens=1000, output_tokens=100)
    return _answer(body)


def _figures(out: str) -> tuple[float, int]:
    total = re.search(r"^cost: \$([0-9.]+)", out, re.M)
    calls = re.search(r"openai/gpt-test: \$[0-9.]+ over (\d+) calls", out)
    assert total is not None and calls is not None, out
    return float(total.group(1)), int(calls.group(1))


def test_cut_and_unreadable_calls_are_in_every_cost_figure(models: Project,
                                                           fake_api: FakeAPI) -> None:
    _config(models, fake_api, "openai/gpt-test")
    models.cases([case(*FIND), case(*OFFICERS), case("cut", CUT_Q, ["find_company"]),
                  case("bad", BAD_Q, ["lookup_vat"])])
    fake_api.handler = _mixed
    result = models.pytester.runpytest("--toolselect-reps=2", "--toolselect-json=out.json")
    result.assert_outcomes(passed=2, errors=2)
    billed = len(fake_api.requests)
    assert billed == 8
    total, calls = _figures(result.stdout.str())
    assert calls == billed
    assert total == pytest.approx(billed * CALL_COST, abs=1e-4)
    doc = json.loads((models.path / "out.json").read_text())
    jsonschema.validate(doc, load_schema("tool_selection.v1"))
    assert doc["cost"]["total_usd"] == pytest.approx(billed * CALL_COST)
    assert doc["cost"]["by_model"]["openai/gpt-test"]["calls"] == billed
    assert doc["cost"]["by_model"]["openai/gpt-test"]["usage"]["input_tokens"] == 1000 * billed
    by_id = {c["case_id"]: c for c in doc["cases"]}
    assert by_id["cut"]["costs"] == [pytest.approx(CALL_COST)] * 2
    assert by_id["bad"]["cost_usd"] == pytest.approx(2 * CALL_COST)


def test_the_cap_and_the_summary_count_the_same_calls(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "openai/gpt-test")
    models.cases([case(f"cut{n}", f"{CUT_Q} ({n})", ["find_company"]) for n in range(5)])
    fake_api.handler = _mixed
    # one call at a time: the cap is reached with every earlier call settled
    result = models.pytester.runpytest("--toolselect-max-cost-usd=0.003", "--toolselect-concurrency=1",
                                       "-rs")
    out = result.stdout.str()
    spent = re.search(r"cost cap reached: priced calls spent \$([0-9.]+) of \$0.003", out)
    assert spent is not None, out
    billed = len(fake_api.requests)
    assert 0 < billed < 5
    total, calls = _figures(out)
    assert calls == billed
    assert float(spent.group(1)) == pytest.approx(total, abs=1e-4) == pytest.approx(
        billed * CALL_COST, abs=1e-4)
    assert f"cost: ${total:.4f} of a $0.003 cap" in out


def test_the_total_counts_the_probes_calls_as_the_cap_does(models: Project,
                                                           fake_api: FakeAPI) -> None:
    _config(models, fake_api, "anthropic/claude-test")
    models.cases([case(*FIND)])
    _groups(models, ["C01"])

    def priced(body: dict[str, Any]) -> Reply:
        reply = _answer(body) if "Acme" in json.dumps(body["messages"]) else _first_listed(body)
        reply.input_tokens, reply.output_tokens = 1000, 100  # each call CALL_COST
        return reply

    fake_api.handler = priced
    result = models.pytester.runpytest("--toolselect-max-cost-usd=5")
    result.assert_outcomes(passed=2)
    billed = len(fake_api.requests)
    assert billed == 13  # one case, and the control group's 12 cells
    result.stdout.fnmatch_lines([f"cost: ${billed * CALL_COST:.4f} of a $5 cap",
                                 f"  tool preference probe: ${12 * CALL_COST:.4f} over 12 calls",
                                 f"  anthropic/claude-test: ${CALL_COST:.4f} over 1 call,*"])
