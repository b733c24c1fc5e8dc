"""Loading the plugin (every pytest run of every user) imports nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys

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
    # the SDK's heap was frozen once imported: the collections at the end pass over it
    print("FROZEN", gc.get_freeze_count() > 10000)
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=1)
    assert len(fake_api.requests) == 1
    assert 'MODULES ["openai"]' in result.stdout.str()
    assert "FROZEN True" in result.stdout.str()
    result.stdout.fnmatch_lines(["*openai/gpt-4o-mini: $0.0000 over 1 calls*"])
