"""What the model wrote is kept: per rep, clipped and masked, in the results, the HTML and,
with -v, the terminal; and the HTML names the route as the terminal does.

Through the real SDKs against the fake API.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
import test_models_e2e
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from test_models_e2e import OPENAI_KEY, _config

from conftest import FIND, Project, case
from pytest_toolselect.positions.sourcemap import load_schema

REASON = "I would need the company's registered number before I can search the register."

# the fixtures of those modules, used here by name
models = test_models_e2e.models


def _talker(body: dict) -> Reply:
    # a reason, the run's own key echoed (it must never reach a report), and a long tail
    return Reply(text=f"{REASON} My key is {OPENAI_KEY}. " + "And so on. " * 300)


@pytest.mark.parametrize("verbose", [False, True])
def test_a_text_answer_is_kept_per_rep_clipped_and_masked(models: Project, fake_api: FakeAPI,
                                                          verbose: bool) -> None:
    _config(models, fake_api, "openai/gpt-test")
    models.cases([case(*FIND)])
    fake_api.handler = _talker
    result = models.pytester.runpytest("--toolselect-reps=2", "--toolselect-json=out.json",
                                       "--toolselect-html=out.html", *(["-v"] if verbose else []))
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert OPENAI_KEY not in out
    if verbose:
        result.stdout.fnmatch_lines([f"said:     ?{REASON} My key is [*][*][*]. And so on.*"
                                     "   (x2 of 2 calls)"])
    else:
        assert "said:" not in out
    doc = json.loads((models.path / "out.json").read_text())
    jsonschema.validate(doc, load_schema("tool_selection.v1"))
    (entry,) = doc["cases"]
    assert len(entry["texts"]) == 2
    for text in entry["texts"]:
        assert text.startswith(REASON) and OPENAI_KEY not in text
        assert len(text) < 600  # clipped: the reply was over 3,000 characters
    html = (models.path / "out.html").read_text()
    assert REASON.replace("'", "&#x27;") in html and OPENAI_KEY not in html


def test_a_cut_reply_keeps_its_text_on_the_error(models: Project, fake_api: FakeAPI) -> None:
    _config(models, fake_api, "openai/gpt-test")
    models.cases([case(*FIND)])
    fake_api.handler = lambda body: Reply(text="Let me think about which register",
                                          stop_reason="max_tokens")
    result = models.pytester.runpytest("--toolselect-json=out.json", "-v")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*said:     'Let me think about which register'*"])
    (entry,) = json.loads((models.path / "out.json").read_text())["cases"]
    assert entry["texts"] == ["Let me think about which register"]
    assert entry["inconclusive"] == 1


@pytest.mark.parametrize(("model", "via"), [("openai/gpt-test", "openai SDK"),
                                            ("anthropic/claude-test", "anthropic SDK")])
def test_the_html_names_the_route_as_the_terminal_does(models: Project, fake_api: FakeAPI,
                                                       model: str, via: str) -> None:
    _config(models, fake_api, model)
    models.cases([case(*FIND)])
    result = models.pytester.runpytest("--toolselect-html=out.html", "--toolselect-json=out.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"toolselect: model {model} (*), reps 1, via {via}"])
    html = (models.path / "out.html").read_text()
    assert f'<span class="sub">via {via}</span>' in html
    assert "via litellm" not in html
    assert json.loads((models.path / "out.json").read_text())["settings"]["route"] == via
