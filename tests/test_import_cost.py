"""Loading the plugin (every pytest run of every user) imports nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fakeapi import Reply, fake_api_fixture  # noqa: F401

HEAVY = ("litellm", "anthropic", "numpy", "mcp", "openai", "bm25s", "yaml", "jsonschema", "httpx")


def test_importing_the_plugin_loads_nothing_heavy() -> None:
    code = ("import sys, json, pytest_toolselect.plugin, pytest_toolselect; "
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_a_run_without_toolselect_files_loads_nothing_heavy(pytester) -> None:  # type: ignore[no-untyped-def]
    pytester.makepyfile(test_plain=f"""
import sys
def test_modules():
    heavy = [m for m in {HEAVY!r} if m in sys.modules]
    assert heavy == []
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_run_on_the_openai_route_imports_neither_litellm_nor_anthropic(
        pytester, fake_api, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # litellm costs 5-6 s to import and anthropic ~3 s: the openai/ route needs neither,
    # not for the call, not for its price (read from the JSON file litellm ships)
    from conftest import FIND, Project, case

    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "route-test-" + "0" * 12)
    project = Project(pytester)
    project.config(model="openai/gpt-4o-mini", api_base=fake_api.url + "/v1")
    project.cases([case(*FIND)])
    fake_api.default = Reply(tool_calls=[("find_company", {"name": "Acme Widgets"})])
    pytester.makeconftest("""
import gc, json, sys
def pytest_sessionfinish(session):
    heavy = [m for m in ("litellm", "anthropic", "openai") if m in sys.modules]
    print("MODULES " + json.dumps(heavy))
    # what the run does not need stays out: the lint's modules, the SDK's types it never reads
    unneeded = [m for m in sys.modules
                if m.startswith("pytest_toolselect.lint") or m == "openai.types.eval_create_params"]
    print("UNNEEDED " + json.dumps(unneeded))
    # the SDK's heap was frozen once imported: the collections at the end pass over it
    print("FROZEN", gc.get_freeze_count() > 10000)
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=1)
    assert len(fake_api.requests) == 1
    assert 'MODULES ["openai"]' in result.stdout.str()
    assert "UNNEEDED []" in result.stdout.str()
    assert "FROZEN True" in result.stdout.str()
    result.stdout.fnmatch_lines(["*openai/gpt-4o-mini: $0.0000 over 1 call,*"])


#: a conftest that says, once collection is over and before any item ran, whether the
#: model SDK was imported or being imported, and at the end whether the collector is on
SDK_PROBE = """
import gc, json, sys, threading
def pytest_collection_finish(session):
    begun = {m: m in sys.modules or any(t.name == "toolselect-import-" + m and t.is_alive()
                                         for t in threading.enumerate())
             for m in ("anthropic", "openai")}
    print("BEGUN " + json.dumps(begun))
def pytest_sessionfinish(session):
    print("GC", gc.isenabled(), "FROZEN", gc.get_freeze_count() > 10000)
"""


def _sdk_run(pytester, fake_api, monkeypatch, model: str, *args: str, servers=None):  # type: ignore[no-untyped-def]
    from conftest import FIND, Project, case

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-" + "route-test-" + "0" * 12)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "route-test-" + "0" * 12)
    project = Project(pytester)
    base = fake_api.url if model.startswith("anthropic/") else fake_api.url + "/v1"
    project.config(servers, model=model, api_base=base)
    project.cases([case(*FIND)])
    fake_api.default = Reply(tool_calls=[("find_company", {"name": "Acme Widgets"})])
    pytester.makeconftest(SDK_PROBE)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", *args)


@pytest.mark.parametrize(("model", "sdk", "other"), [("anthropic/claude-x", "anthropic", "openai"),
                                                     ("openai/gpt-x", "openai", "anthropic")])
def test_the_sdk_import_begins_before_any_item_and_pauses_no_collection_for_good(
        pytester, fake_api, monkeypatch, model: str, sdk: str, other: str) -> None:  # type: ignore[no-untyped-def]
    # the import (seconds) overlaps collection and the servers' start instead of following them
    result = _sdk_run(pytester, fake_api, monkeypatch, model)
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    begun = json.loads(out.split("BEGUN ", 1)[1].splitlines()[0])
    assert begun == {sdk: True, other: False}
    # the collector, paused for the import, is back on; the SDK's heap is frozen
    assert "GC True FROZEN True" in out
    assert len(fake_api.requests) == 1


@pytest.mark.parametrize("args", [("--collect-only",), ("--toolselect-dry-run",)])
def test_a_run_that_makes_no_call_does_not_import_the_sdk(pytester, fake_api, monkeypatch,  # type: ignore[no-untyped-def]
                                                          args: tuple[str, ...]) -> None:
    result = _sdk_run(pytester, fake_api, monkeypatch, "anthropic/claude-x", *args)
    assert 'BEGUN {"anthropic": false, "openai": false}' in result.stdout.str()
    assert fake_api.requests == []


def test_the_sdk_imports_beside_a_starting_mcp_server_without_a_deadlock(
        pytester, fake_api, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from conftest import REGISTRY_TOOLS, Project

    # the server's mcp SDK import on the main thread, the model SDK's on its own: the
    # modules they share were imported first, so neither waits on the other's locks
    server = Project(pytester).stdio_server(REGISTRY_TOOLS)
    for _ in range(3):
        result = _sdk_run(pytester, fake_api, monkeypatch, "anthropic/claude-x",
                          servers={"registry": server})
        result.assert_outcomes(passed=1)
        assert "Deadlock" not in result.stdout.str() + result.stderr.str()
