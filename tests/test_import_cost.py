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


#: the package's modules a run of ordinary tests may import: the entry module and what it
#: needs to register the options and to ask whether the run concerns toolselect
ENTRY_MODULES = {
    "pytest_toolselect", "pytest_toolselect.plugin", "pytest_toolselect.plugin.options",
    "pytest_toolselect.plugin.hookspecs", "pytest_toolselect.inputs",
    "pytest_toolselect.inputs.option_table", "pytest_toolselect.inputs.report_formats",
    "pytest_toolselect.inputs.shard_option",
    "pytest_toolselect.inputs.labels",
    "pytest_toolselect.inputs.find_config", "pytest_toolselect.terms",
    "pytest_toolselect.terms.rule_names", "pytest_toolselect.messages",
    "pytest_toolselect.messages.errors", "pytest_toolselect.run", "pytest_toolselect.run.settings",
}

PACKAGE_PROBE = """
import json, sys
def pytest_sessionfinish(session):
    print("PACKAGE " + json.dumps(sorted(m for m in sys.modules if m.startswith("pytest_toolselect"))))
"""


def _package_modules(result) -> set[str]:  # type: ignore[no-untyped-def]
    return set(json.loads(result.stdout.str().split("PACKAGE ", 1)[1].splitlines()[0]))


@pytest.mark.parametrize("args", [("--collect-only",), ()])
def test_a_run_of_ordinary_tests_loads_the_entry_module_alone(pytester, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    # the run's machinery (session, hooks, records, gate) is imported only once the run
    # turns out to have toolselect work: a suite of plain tests pays for the options alone
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    pytester.makeconftest(PACKAGE_PROBE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", *args)
    assert result.ret == 0
    assert _package_modules(result) <= ENTRY_MODULES


def test_a_marked_test_under_a_config_below_the_rootdir_starts_the_machinery(project) -> None:  # type: ignore[no-untyped-def]
    # nothing at configure time says toolselect (no config at the rootdir, no option): the
    # marked test met in collection starts the machinery, and the case is judged as a case
    from conftest import FIND

    project.config()
    sub = project.path / "zsub"  # collected after test_first.py
    sub.mkdir()
    for name in ("toolselect.yaml", "registry.tools.json"):
        (project.path / name).rename(sub / name)
    (sub / "test_cases.py").write_text(f'''
from pytest_toolselect import case

@case(question="{FIND[1]}", expect_tool=["find_company"], why="found by name")
def test_find(toolselect_result):
    assert toolselect_result.first_tool == "find_company"
''')
    (project.path / "test_first.py").write_text("import nothing_of_that_name\n")
    project.pytester.makeconftest(PACKAGE_PROBE)
    result = project.pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s",
                                                   "--continue-on-collection-errors")
    out = result.stdout.str()
    assert "pytest_toolselect.plugin.machinery" in _package_modules(result)
    result.assert_outcomes(passed=1, errors=1)
    assert "toolselect" in out and "1 case" in out, out
    # the file that failed to collect before the machinery started still fails the run
    assert result.ret == 1
