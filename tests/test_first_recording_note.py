"""A first recording says what it recorded (cases and groups), what it left out and why,
and the one command that records the rest."""

from __future__ import annotations

import json
from typing import Any

import test_models_e2e
import test_probe_e2e
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from test_models_e2e import _answer, _config
from test_probe_e2e import _first_listed, _groups

from conftest import FIND, OFFICERS, Project, case

FIX = ("A plain run compares and writes nothing: to record them, run every case with "
       "`pytest --toolselect-baseline=*base.json --toolselect-update-baseline`")

# the fixtures of those modules, used here by name
models = test_models_e2e.models
probe = test_probe_e2e.probe


def _cut_some(body: dict[str, Any]) -> Reply:
    if "filing history" in json.dumps(body["messages"]):
        return Reply(text="The filing history", stop_reason="max_tokens")
    return _answer(body)


def test_deselected_errored_and_inconclusive_cases_are_told_apart(models: Project,
                                                                  fake_api: FakeAPI) -> None:
    # a server that does not start: its case errors, the others run
    _config(models, fake_api, "openai/gpt-test", servers={
        "registry": {"tools_file": models.tools_file()},
        "down": {"command": "toolselect-no-such-server-command"}})
    models.cases([case(*FIND), case(*OFFICERS),
                  case("cut", "Show the filing history of Acme Widgets", ["find_company"]),
                  case("down", FIND[1], FIND[2], servers=["down"])], servers=["registry"])
    fake_api.handler = _cut_some
    result = models.pytester.runpytest("--toolselect-baseline=base.json", "-k", "not officers")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines([
        "toolselect: recorded 1 case; left out, with no entry yet: 1 item not run (deselected "
        "with -k, -m or --deselect); 1 errored; 1 inconclusive (every rep cut at max_tokens "
        "before any tool call). " + FIX])
    assert list(models.read_baseline()["cases"]) == ["registry.toolselect.yaml::find"]


def test_a_probe_only_recording_counts_its_groups(probe: Project, fake_api: FakeAPI) -> None:
    _groups(probe, ["G01", "G02", "C01"])
    fake_api.handler = _first_listed
    result = probe.pytester.runpytest("--toolselect-baseline=base.json", "-k", "not G02")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([
        "toolselect: recorded 0 cases and 2 preference groups; left out, with no entry yet: "
        "1 item not run (deselected with -k, -m or --deselect). " + FIX])
    assert len(probe.read_baseline()["groups"]) == 2
