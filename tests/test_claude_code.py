"""The claude-code/<model> route end to end: the real Claude Code CLI (bundled with
claude-agent-sdk) against the fake API, with a real stdio MCP server that records every
tools/call it gets.

The harness is a process per call (seconds to start): each test runs few cases.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from harness_support import FLAKY_SERVER, calls_of, require_harness, run_from_parent

from conftest import FIND, REGISTRY_TOOLS, Project, case

# imported before pytester snapshots sys.modules
claude_agent_sdk = require_harness("claude_agent_sdk", "claude-code")
KEY = "sk-ant-" + "api03-harness-secret-" + "7" * 16  # built: no key-shaped literal
MCP_FIND = "mcp__registry__find_company"
#: a harness call starts a process: a generous deadline that only catches a hang
TIMEOUT = "--toolselect-timeout=300"


def offered(body: Any) -> list[str]:
    return [t.get("name") for t in body.get("tools", [])] if isinstance(body, dict) else []


def picks(name: str, args: dict[str, Any] | None = None) -> Any:
    """A model that calls `name` once it is offered, searching for it first under tool search."""
    def answer(body: Any) -> Reply:
        names = offered(body)
        if name in names:
            return Reply(tool_calls=[(name, args or {"name": "Acme Widgets"})],
                         input_tokens=1000, output_tokens=100)
        if "ToolSearch" in names:
            return Reply(tool_calls=[("ToolSearch", {"query": f"select:{name}"})])
        return Reply(text="no tool")
    return answer


@pytest.fixture
def harness(project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch,
            tmp_path: Path) -> tuple[Project, Path]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    log = tmp_path / "calls.jsonl"
    server = project.stdio_server(REGISTRY_TOOLS, flags={"call-log": str(log)})
    project.config(servers={"registry": server}, model="claude-code/claude-test",
                   api_base=fake_api.url, retry_backoff=0)
    return project, log


def _requests(fake_api: FakeAPI) -> list[Any]:
    return [r.body for r in fake_api.requests if isinstance(r.body, dict) and r.body.get("stream")]


def test_mcp_tools_reach_the_harness_and_no_tool_is_run(harness: tuple[Project, Path],
                                                        fake_api: FakeAPI) -> None:
    project, log = harness
    fake_api.handler = picks(MCP_FIND)
    project.cases([case(*FIND)])
    result = project.pytester.runpytest("--toolselect-harness-tool-search=off", TIMEOUT,
                                        "--toolselect-json=out.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*claude-code/claude-test*via the Claude Code harness*"])
    sent = _requests(fake_api)
    assert sent and MCP_FIND in offered(sent[0]) and "Bash" in offered(sent[0])
    assert FIND[1] in json.dumps(sent[0]["messages"])  # the question is the prompt
    # Claude Code's own system prompt, as users run it (the SDK's default is one line)
    system = " ".join(b.get("text", "") for b in sent[0]["system"])
    assert len(system) > 4000 and "Claude Agent SDK" in system
    assert calls_of(log) == []  # denied: the server never got a tools/call
    doc = json.loads((project.path / "out.json").read_text())
    rec = doc["cases"][0]
    assert rec["first_tool"] == "find_company"  # mcp__registry__find_company mapped back
    assert rec["calls"][0][0]["arguments"] == {"name": "Acme Widgets"}
    assert doc["subject"]["harness"]["name"] == "claude-code"
    assert doc["subject"]["settings"]["system_prompt"] == "claude_code preset"
    assert doc["subject"]["harness"]["version"] == claude_agent_sdk._cli_version.__cli_version__


def test_one_request_scores_a_call_the_cli_rejects_as_the_models_choice(
        harness: tuple[Project, Path], fake_api: FakeAPI) -> None:
    """Bash with no command, and a name the CLI does not know: the CLI answers each with an
    error and would ask again; the first turn is the choice, scored, in one request."""
    project, log = harness

    def answer(body: Any) -> Reply:
        if "register" in json.dumps(body.get("messages")):
            return Reply(tool_calls=[("Bash", {})])
        return Reply(tool_calls=[("lookup_everything", {"q": "Acme"})])

    fake_api.handler = answer
    project.cases([case(*FIND), case("unknown", "Who are the officers of Acme Widgets?",
                                     ["list_officers"])])
    # a short deadline: the loop ran until it, so the run would end in two errors
    result = project.pytester.runpytest("--toolselect-harness-tool-search=off",
                                        "--toolselect-timeout=30", "--toolselect-json=out.json")
    result.assert_outcomes(failed=2)
    assert len(_requests(fake_api)) == 2  # one request per case, no second turn
    cases = {c["case_id"]: c for c in json.loads((project.path / "out.json").read_text())["cases"]}
    assert cases["find"]["first_tool"] == "Bash"
    assert cases["unknown"]["first_tool"] == "lookup_everything"
    for rec in cases.values():
        assert "tool_choice" in rec["failing_checks"] and rec["cost_usd"] is not None
    assert calls_of(log) == []


def test_a_server_that_fails_under_the_harness_is_an_error_naming_it_and_its_stderr(
        harness: tuple[Project, Path], fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """The CLI reports the server failed; its tools are missing, so a text reply is no
    choice. The server's secrets reach the CLI in a file, not on its command line."""
    from conftest import TOOLS_SERVER

    project, _ = harness
    token = "flaky-" + "secret-" + "4" * 12
    monkeypatch.setenv("FLAKY_TOKEN", token)
    (tmp_path / "flaky.py").write_text(FLAKY_SERVER)
    seen = tmp_path / "cmdline"
    flaky = {"command": "python", "env": {"FLAKY_TOKEN": "${FLAKY_TOKEN}"},
             "args": [str(tmp_path / "flaky.py"), str(tmp_path / "mark"), str(seen),
                      str(TOOLS_SERVER), json.dumps(REGISTRY_TOOLS[1:2])]}
    registry = project.stdio_server(REGISTRY_TOOLS[:1])
    project.config(servers={"registry": registry, "flaky": flaky},
                   model="claude-code/claude-test", api_base=fake_api.url, retry_backoff=0)
    fake_api.handler = lambda body: Reply(text="no tool needed")
    project.cases([case(*FIND)], servers=["registry", "flaky"])
    result = project.pytester.runpytest("--toolselect-harness-tool-search=off", TIMEOUT,
                                        "--toolselect-json=out.json")
    result.assert_outcomes(errors=1)
    out = result.stdout.str() + result.stderr.str() + (project.path / "out.json").read_text()
    result.stdout.fnmatch_lines(["*server 'flaky' did not connect under the harness (status failed)*"
                                 "flaky: licence check failed for token*"])
    assert token not in out  # its stderr said the token: masked
    cmdline = seen.read_bytes()
    assert b"claude" in cmdline and token.encode() not in cmdline  # the harness's own


def test_a_case_expecting_the_mcp_tool_fails_when_the_model_picks_bash(
        harness: tuple[Project, Path], fake_api: FakeAPI) -> None:
    project, log = harness
    fake_api.handler = picks("Bash", {"command": "grep -ri acme /srv/register"})
    project.cases([case(*FIND), case("shell", "Count the lines of register.csv", ["Bash"])])
    result = project.pytester.runpytest("--toolselect-harness-tool-search=off", TIMEOUT)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*called:   Bash(command='grep -ri acme /srv/register')*"])
    assert calls_of(log) == []


def test_tool_search_the_first_call_after_the_search_is_the_choice(
        harness: tuple[Project, Path], fake_api: FakeAPI) -> None:
    project, log = harness
    fake_api.handler = picks(MCP_FIND)
    project.cases([case(*FIND)])
    result = project.pytester.runpytest("--toolselect-harness-tool-search=on", TIMEOUT,
                                        "--toolselect-json=out.json")
    result.assert_outcomes(passed=1)
    sent = _requests(fake_api)
    # hidden at first: the harness offered its search, the MCP tool only once searched for
    assert MCP_FIND not in offered(sent[0]) and "ToolSearch" in offered(sent[0])
    assert MCP_FIND in offered(sent[-1])
    assert calls_of(log) == []
    rec = json.loads((project.path / "out.json").read_text())["cases"][0]
    assert rec["first_tool"] == "find_company"
    assert rec["found_by"] == ["ToolSearch: select:mcp__registry__find_company"]


def test_an_invented_identifier_is_caught(harness: tuple[Project, Path], fake_api: FakeAPI) -> None:
    project, _ = harness
    fake_api.handler = picks("mcp__registry__list_officers", {"company_number": "99887766"})
    project.cases([case("officers", "Who runs Acme Widgets Ltd?", ["list_officers"],
                        forbid_ungrounded=True)])
    result = project.pytester.runpytest("--toolselect-harness-tool-search=off", TIMEOUT)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*99887766*"])


def test_keys_are_masked(harness: tuple[Project, Path], fake_api: FakeAPI) -> None:
    project, _ = harness
    # a 400 echoing the key, as a proxy may (the CLI retries a 401 for minutes)
    fake_api.handler = lambda body: Reply(status=400, error=f"bad request for key {KEY}")
    project.cases([case(*FIND)])
    result = project.pytester.runpytest("--toolselect-harness-tool-search=off", TIMEOUT,
                                        "--toolselect-json=out.json")
    result.assert_outcomes(errors=1)
    assert any(r.headers.get("x-api-key") == KEY for r in fake_api.requests)  # the key was sent
    out = result.stdout.str() + result.stderr.str() + (project.path / "out.json").read_text()
    assert KEY not in out
    assert "bad request for key" in out  # the error was reported, the key masked in it


def test_the_builtin_tools_are_read_from_the_harness_for_the_model_in_use(
        harness: tuple[Project, Path], fake_api: FakeAPI) -> None:
    """A real model name is offered TaskCreate (claude-test is not): a case may expect it,
    and the tools a case is offered are exactly those of the request the harness sent."""
    project, _ = harness
    fake_api.handler = picks("TaskCreate", {"subject": "Call Acme", "description": "Call them"})
    project.cases([case("todo", "Add a task to call Acme Widgets tomorrow", ["TaskCreate"])])
    result = project.pytester.runpytest("--toolselect-model=claude-code/claude-sonnet-4-5",
                                        "--toolselect-harness-tool-search=off", TIMEOUT,
                                        "--toolselect-json=out.json")
    result.assert_outcomes(passed=1)
    sent = offered(_requests(fake_api)[0])
    assert "TaskCreate" in sent
    rec = json.loads((project.path / "out.json").read_text())["cases"][0]
    scored = set(rec["toolset"]) - {"(system prompt)"}
    mapped = {n.replace("mcp__registry__", "") for n in sent}
    assert scored == mapped


def test_a_broken_cli_is_one_usage_error_with_its_stderr(harness: tuple[Project, Path],
                                                        fake_api: FakeAPI) -> None:
    project, _ = harness
    cli = project.path / "broken-claude"
    cli.write_text("#!/bin/sh\necho 'claude: /lib64/libc.so.6: version GLIBC_2.99 not found' >&2\n"
                   "exit 127\n")
    cli.chmod(0o755)
    # the CLI the SDK finds, replaced by a broken one (a process of its own: no patch leaks)
    (project.path / "conftest.py").write_text(
        "from claude_agent_sdk._internal.transport import subprocess_cli\n"
        f"subprocess_cli.SubprocessCLITransport._find_bundled_cli = lambda self: {str(cli)!r}\n")
    project.cases([case(*FIND), case("two", "Find Acme Widgets Ltd", ["find_company"])])
    result = project.pytester.runpytest_subprocess("--toolselect-harness-tool-search=off", TIMEOUT)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.count("GLIBC_2.99 not found") == 1 and "the Claude Code CLI did not start" in err
    assert fake_api.requests == []


def test_the_cost_cap_holds_and_the_dry_run_counts_what_the_harness_sends(
        harness: tuple[Project, Path], fake_api: FakeAPI) -> None:
    """A call reserves what the harness's request can cost before it starts, so a cap below
    one call lets one call run, however many may run at once; the dry run's estimate is the
    size of the request the harness really sends."""
    project, log = harness
    project.config(servers={"registry": project.stdio_server(REGISTRY_TOOLS)},
                   model="claude-code/claude-test", api_base=fake_api.url, retry_backoff=0,
                   prices={"claude-test": {"input_per_mtok": 3, "output_per_mtok": 15}})
    project.cases([case(f"c{n}", FIND[1], FIND[2]) for n in range(3)])
    dry = project.pytester.runpytest("--toolselect-harness-tool-search=off", TIMEOUT,
                                     "--toolselect-dry-run")
    found = re.search(r"input: about ([\d,]+) tokens", dry.stdout.str())
    assert found, dry.stdout.str()
    estimate = int(found.group(1).replace(",", "")) / 3
    assert fake_api.requests == []  # the dry run asked no model

    def answer(body: Any) -> Reply:
        return Reply(tool_calls=[(MCP_FIND, {"name": "Acme Widgets"})], input_tokens=100_000)

    fake_api.handler = answer
    result = project.pytester.runpytest("--toolselect-harness-tool-search=off", TIMEOUT,
                                        "--toolselect-max-cost-usd=0.01",
                                        "--toolselect-concurrency=4")
    result.assert_outcomes(passed=1, skipped=2)
    sent = _requests(fake_api)
    assert len(sent) == 1
    measured = len(json.dumps(sent[0])) / 4  # the dry run's 4 characters a token
    assert 0.75 * measured <= estimate <= 1.25 * measured, (estimate, measured)
    assert calls_of(log) == []


def test_attribution_asks_the_harness_with_the_baselines_tools(
        harness: tuple[Project, Path], fake_api: FakeAPI, tmp_path: Path) -> None:
    """The paired check re-asks Claude Code itself, the baseline's tools served by a
    throwaway server: every call it counts is a request the model got."""
    project, log = harness
    listed = tmp_path / "tools.json"
    listed.write_text(json.dumps(REGISTRY_TOOLS))
    server = project.stdio_server(REGISTRY_TOOLS, flags={"call-log": str(log), "tools-from": listed})
    project.config(servers={"registry": server}, model="claude-code/claude-test",
                   api_base=fake_api.url, retry_backoff=0)

    def reads_descriptions(body: Any) -> Reply:
        for tool in body.get("tools", []):
            if tool["name"].endswith("__find_company") and "company register" in tool["description"]:
                return Reply(tool_calls=[(tool["name"], {"name": "Acme Widgets"})])
        return Reply(tool_calls=[("Bash", {"command": "grep -ri acme ."})])

    fake_api.handler = reads_descriptions
    project.cases([case(*FIND)])
    args = ("--toolselect-harness-tool-search=off", TIMEOUT, "--toolselect-baseline=base.json",
            "--toolselect-adaptive=off", "--toolselect-attribution=on",
            "--toolselect-attribution-max-calls=4")
    project.pytester.runpytest(*args).assert_outcomes(passed=1)
    listed.write_text(json.dumps([{**REGISTRY_TOOLS[0], "description": "Look things up."},
                                  *REGISTRY_TOOLS[1:]]))
    fake_api.requests.clear()
    result = project.pytester.runpytest(*args, "--toolselect-json=out.json")
    result.assert_outcomes(failed=1)
    found = json.loads((project.path / "out.json").read_text())["cases"][0]["attribution"]
    sent = _requests(fake_api)
    assert found["calls"] == 4 and len(sent) == 1 + found["calls"]  # counted = asked
    assert found["baseline_tools"] == [2, 2] and found["head"] == [0, 2]
    # the baseline's arm: its own description, served under the throwaway server's name
    served = [t for b in sent for t in b["tools"] if t["name"] == "mcp__toolselect__find_company"]
    assert {t["description"] for t in served} == {REGISTRY_TOOLS[0]["description"], "Look things up."}
    # the built-ins are the CLI's own, never served again as MCP tools
    assert not any(t["name"] == "mcp__toolselect__Bash" for b in sent for t in b["tools"])
    assert calls_of(log) == []


def test_records_holds_and_regresses_from_the_parent_folder(harness: tuple[Project, Path],
                                                            fake_api: FakeAPI) -> None:
    project, log = harness
    project.cases([case(*FIND)])
    suite = project.path

    def run(*more: str) -> subprocess.CompletedProcess[str]:
        return run_from_parent(suite, "--toolselect-harness-tool-search=off", TIMEOUT, *more)

    fake_api.handler = picks(MCP_FIND)
    first = run()
    assert first.returncode == 0, first.stdout[-3000:]
    stored = json.loads((suite / "base.json").read_text())
    assert stored["subject"]["provider"] == "claude-code"
    assert stored["cases"][next(iter(stored["cases"]))]["status"] == "held"
    held = run()
    assert held.returncode == 0, held.stdout[-3000:]
    fake_api.handler = picks("Bash", {"command": "ls"})
    # fixed reps: the adaptive reps' 30 more harness calls (a process each) would confirm
    # what one call shows; asking again has tests of its own (test_adaptive_reps.py)
    regressed = run("--toolselect-adaptive=off")
    assert regressed.returncode == 1, regressed.stdout[-3000:]
    assert "regress" in regressed.stdout.lower()
    assert calls_of(log) == []
    # a harness upgrade is another subject, refused as a model change is
    stored["subject"]["harness"]["version"] = "0.0.1"
    (suite / "base.json").write_text(json.dumps(stored))
    upgraded = run()
    assert upgraded.returncode == 4, upgraded.stdout[-3000:]
    assert "harness" in upgraded.stderr + upgraded.stdout


def test_a_model_that_never_answers_is_an_error_on_its_item(harness: tuple[Project, Path],
                                                            fake_api: FakeAPI) -> None:
    project, _ = harness
    fake_api.handler = lambda body: Reply(hang=True)
    project.config(servers={"registry": project.stdio_server(REGISTRY_TOOLS)},
                   model="claude-code/claude-test", api_base=fake_api.url, retry_backoff=0,
                   prices={"claude-test": {"input_per_mtok": 3, "output_per_mtok": 15}})
    project.cases([case(*FIND), case("again", FIND[1], FIND[2])])
    # the fake API never answers, so any deadline ends in the error: a short one keeps it quick
    result = project.pytester.runpytest("--toolselect-harness-tool-search=off", "--toolselect-timeout=6",
                                        "--toolselect-max-cost-usd=0.01", "--toolselect-concurrency=1")
    # the call that timed out may be billed: the cap counts its reservation, so none follows
    result.assert_outcomes(errors=1, skipped=1)
    result.stdout.fnmatch_lines(["*Claude Code gave no tool choice in 6 s*"])
    assert len(_requests(fake_api)) == 1


def test_a_projects_claude_md_reaches_the_harness_only_with_user_settings(
        harness: tuple[Project, Path], fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    project, _ = harness
    # the user's own home, for this test: the harness may write its config there
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    marker = "Always answer in the voice of a pirate 4711."
    (project.path / "CLAUDE.md").write_text(marker + "\n")
    fake_api.handler = picks(MCP_FIND)
    project.cases([case(*FIND)])
    project.pytester.runpytest("--toolselect-harness-tool-search=off", TIMEOUT).assert_outcomes(passed=1)
    isolated = json.dumps(_requests(fake_api))
    assert FIND[1] in isolated and marker not in isolated
    fake_api.requests.clear()
    project.pytester.runpytest("--toolselect-harness-tool-search=off", TIMEOUT,
                               "--toolselect-harness-user-settings").assert_outcomes(passed=1)
    assert marker in json.dumps(_requests(fake_api))
