"""A run closes every connection it opened to the model's API: under ``-W error`` nothing
the plugin leaves behind can error a later test of the user's, nor the run's end.

pytest turns a ResourceWarning raised while garbage is collected (an unclosed socket or
transport) into an error of whichever test is running then, under a warning filter that
makes warnings errors; so a client left open after the calls is a false red somewhere
else in the suite, at a time that depends on the collector.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import anthropic  # noqa: F401  (imported before pytester snapshots sys.modules)
import openai  # noqa: F401
import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401

from conftest import FIND, HTTP_TOKEN, OFFICERS, REGISTRY_TOOLS, Project, case, http_mcp_server

#: a later test of the user's: it collects the garbage the run left
LATER = '''
import gc

def test_later():
    gc.collect()
'''


def _run_then_collect(project: Project) -> tuple[pytest.RunResult, list[str]]:
    """The run under -W error with a later test, and what was unraisable after it."""
    project.pytester.makepyfile(test_zz_later=LATER)
    gc.collect()  # what earlier tests of this suite left is not this run's
    unraised: list[str] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda u: unraised.append(f"{u.exc_type.__name__}: {u.exc_value}")
    try:
        result = project.pytester.runpytest("-p", "no:randomly", "-W", "error",
                                            "--toolselect-baseline=base.json")
        gc.collect()  # and what the run left after it ended
    finally:
        sys.unraisablehook = hook
    return result, unraised


def _answer(body: dict[str, Any]) -> Reply:
    if "directors" in json.dumps(body["messages"]):
        return Reply(tool_calls=[("list_officers", {"company_number": "01234567"})])
    return Reply(tool_calls=[("find_company", {"name": "Acme Widgets"})])


@pytest.mark.parametrize("model", ["anthropic/claude-test", "openai/gpt-test"])
def test_no_connection_is_left_open_for_a_later_test_to_trip_on(
        project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch, model: str) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "placeholder")
    monkeypatch.setenv("OPENAI_API_KEY", "placeholder")
    fake_api.handler = _answer
    base = fake_api.url if model.startswith("anthropic/") else fake_api.url + "/v1"
    project.config(model=model, api_base=base, retry_backoff=0)
    project.cases([case(*FIND), case(*OFFICERS)])
    result, unraised = _run_then_collect(project)
    result.assert_outcomes(passed=3)
    assert result.ret == 0
    assert not unraised, unraised
    assert len(fake_api.requests) == 2


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    with http_mcp_server(REGISTRY_TOOLS) as url:
        yield url


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_no_server_connection_is_left_open_either(project: Project, http_server: str,
                                                  transport: str) -> None:
    servers: dict[str, Callable[[], dict[str, Any]]] = {
        "stdio": lambda: project.stdio_server(REGISTRY_TOOLS),
        "streamable-http": lambda: {"url": http_server,
                                    "headers": {"Authorization": f"Bearer {HTTP_TOKEN}"}}}
    project.config({"registry": servers[transport]()})
    project.cases([case(*FIND), case(*OFFICERS)])
    result, unraised = _run_then_collect(project)
    result.assert_outcomes(passed=3)
    assert result.ret == 0
    assert not unraised, unraised
