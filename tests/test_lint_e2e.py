"""`toolselect lint` and `pytest --toolselect-lint` end to end, on real projects (pytester):
exit statuses, the JSON and markdown outputs, servers discovered as the gate does, and the
items gated against the baseline (a new confusable pair blocks, a known one does not)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lint_data import DISTINCT, TWIN, tool

from conftest import NESTED_XDIST, Project

TOOLSELECT = Path(sys.executable).with_name("toolselect")
#: a second deliberate near-duplicate, of send_email
EMAIL_TWIN = tool("email_send", "Send an email message to a recipient, with a subject line and a "
                  "text body.", to="Recipient address, e.g. 'bo@example.com'.", body="The text.")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    # the linter calls no model: it must work with no key at all
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def registry(project: Project, tools: list[dict[str, Any]]) -> None:
    project.config({"registry": {"tools_file": project.tools_file(tools=tools)}})


def lint(pytester: pytest.Pytester, *args: str | Path) -> pytest.RunResult:
    return pytester.run(TOOLSELECT, "lint", *args, timeout=300)


# -- the command -----------------------------------------------------------------------------


def test_a_distinct_tool_set_lints_clean(project: Project, pytester: pytest.Pytester) -> None:
    registry(project, DISTINCT)
    result = lint(pytester)
    assert result.ret == 0, result.stderr.str()
    result.stdout.fnmatch_lines(
        ["toolselect lint: 7 tools on 1 server, 0 cases: 0 errors, 0 warnings, 1 info"])


def test_a_confusable_pair_exits_1_and_says_what_tells_them_apart(project: Project,
                                                                   pytester: pytest.Pytester) -> None:
    registry(project, [*DISTINCT, TWIN])
    result = lint(pytester)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "ERROR   confusable-pair [[]get_weather, weather_forecast[]]: * read alike: similarity 0.* sharing *",
        "        fix: open each description with what only it does *"])


def test_json_holds_the_findings_the_similarities_and_the_heatmap(project: Project,
                                                                   pytester: pytest.Pytester) -> None:
    registry(project, [*DISTINCT, TWIN])
    result = lint(pytester, "--json", "-")
    assert result.ret == 1
    doc = json.loads(result.stdout.str())
    assert doc["schema_version"] == "toolselect_lint.v1"
    pair = [f for f in doc["findings"] if f["rule"] == "confusable-pair"]
    assert [f["tools"] for f in pair] == [["get_weather", "weather_forecast"]]
    assert pair[0]["id"] == "confusable-pair:get_weather+weather_forecast"
    assert len(doc["similarity"]) == 8 and all(len(row) == 8 for row in doc["similarity"])
    assert doc["heatmap"]["tools"] == ["get_weather", "weather_forecast"]
    assert doc["heatmap"]["matrix"][0][1] == pair[0]["data"]["similarity"] >= doc["threshold"]


def test_markdown_is_a_pr_comment_with_the_heatmap(project: Project, pytester: pytest.Pytester) -> None:
    registry(project, [*DISTINCT, TWIN])
    result = lint(pytester, "--markdown", "comment.md")
    assert result.ret == 1
    text = (pytester.path / "comment.md").read_text()
    assert "## toolselect lint" in text
    assert "| error | confusable-pair | get_weather, weather_forecast |" in text
    assert "| `get_weather` | — | █ " in text
    # the text summary still goes to the terminal
    result.stdout.fnmatch_lines(["toolselect lint: 8 tools*"])


def test_fail_on_warning_tightens_the_exit_status(project: Project, pytester: pytest.Pytester) -> None:
    registry(project, [*DISTINCT, tool("ping", "Ping a host.", host="Host name, e.g. example.com.")])
    assert lint(pytester).ret == 0
    result = lint(pytester, "--fail-on", "warning")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["WARNING thin-description [[]ping[]]: *"])


def test_servers_are_discovered_as_the_gate_does_from_another_folder(project: Project,
                                                                      pytester: pytest.Pytester) -> None:
    config = project.config({"live": project.stdio_server([*DISTINCT, TWIN])})
    elsewhere = pytester.mkdir("elsewhere")
    done = subprocess.run([str(TOOLSELECT), "lint", "--config", str(config), "--json", "out.json"],
                          cwd=elsewhere, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    doc = json.loads((elsewhere / "out.json").read_text())
    assert [f["tools"] for f in doc["findings"] if f["rule"] == "confusable-pair"] == [
        ["get_weather", "weather_forecast"]]


def test_bad_input_exits_2_with_the_file_named(project: Project, pytester: pytest.Pytester) -> None:
    project.config({"gone": {"tools_file": "missing.tools.json"}})
    result = lint(pytester)
    assert result.ret == 2
    result.stderr.fnmatch_lines(["toolselect: error: *missing.tools.json*"])


def test_cases_give_coverage_and_untested_tools(project: Project, pytester: pytest.Pytester) -> None:
    registry(project, DISTINCT)
    project.cases([{"id": "w", "question": "Will it rain in Lyon tomorrow?",
                    "expect_tool": ["get_weather"], "why": "weather"}])
    result = lint(pytester, "--json", "-")
    doc = json.loads(result.stdout.str())
    assert doc["cases"] == 1
    assert doc["coverage"]["registry"]["tested"] == 1
    untested = sorted(f["tools"][0] for f in doc["findings"] if f["rule"] == "untested-tool")
    assert untested == sorted(t["name"] for t in DISTINCT if t["name"] != "get_weather")
    assert result.ret == 0  # warnings only


DECORATED = '''
import pytest
import pytest_toolselect as ts
from pytest_toolselect import case
from pytest_toolselect import case as selection

@pytest.mark.parametrize("question", ["Will it rain in Lyon tomorrow?"])
@case(expect_tool=["get_weather"], why="weather")
def test_weather(question, toolselect_result):
    pass

@selection(question="Mail Bo the minutes", expect_tool=["send_email"], forbid_tools=["play_song"])
def test_mail(toolselect_result):
    pass

class TestMore:
    @ts.case(question="Book a call at 3pm", expect_tool=["create_calendar_event"])
    def test_book(self, toolselect_result):
        pass

@pytest.mark.toolselect_case(question="Say it in French", expect_tool=["translate_text"])
def test_translate():
    pass

TOOLS = ["resize_image"]

@case(question="Make it smaller", expect_tool=TOOLS)  # computed: names no tool
def test_computed(toolselect_result):
    pass

@pytest.mark.parametrize("x", [1])
def test_plain(x):
    pass
'''


def test_decorated_cases_count_for_coverage_without_being_run(project: Project,
                                                              pytester: pytest.Pytester) -> None:
    registry(project, DISTINCT)
    (project.path / "test_selection.py").write_text(DECORATED + "raise SystemExit('imported')\n")
    (project.path / "tests").mkdir()
    (project.path / "tests" / "test_broken.py").write_text("def test_(:\n")  # does not parse
    (project.path / "helpers.py").write_text(DECORATED)  # not a test file: not read
    result = lint(pytester, "--json", "-")
    doc = json.loads(result.stdout.str())
    assert doc["cases"] == 5
    untested = sorted(f["tools"][0] for f in doc["findings"] if f["rule"] == "untested-tool")
    named = {"get_weather", "send_email", "play_song", "create_calendar_event", "translate_text"}
    assert untested == sorted(t["name"] for t in DISTINCT if t["name"] not in named)
    assert doc["coverage"]["registry"]["tested"] == len(named)
    assert result.ret == 0


# -- the pytest items ---------------------------------------------------------------------------


def test_an_item_per_server_fails_on_error_findings_without_a_baseline(project: Project,
                                                                        pytester: pytest.Pytester) -> None:
    project.config({"clean": {"tools_file": project.tools_file("clean", DISTINCT)},
                    "twin": {"tools_file": project.tools_file("twin", [TWIN])}})
    result = pytester.runpytest("--toolselect-lint", "-rA")
    result.assert_outcomes(passed=0, failed=2)  # the pair spans both servers
    result.stdout.fnmatch_lines(["*1 new error-level lint finding(s) on server 'clean'*",
                                 "*confusable-pair [[]get_weather, weather_forecast[]]*"])


@pytest.mark.parametrize("shard", [[], ["--toolselect-shard", "1/2"], ["--toolselect-shard", "2/2"]])
def test_the_lint_items_are_counted_as_collected(project: Project, pytester: pytest.Pytester,
                                                 shard: list[str]) -> None:
    servers = {name: {"tools_file": project.tools_file(name, tools)}
               for name, tools in (("alpha", DISTINCT), ("beta", [TWIN]), ("gamma", [EMAIL_TWIN]))}
    project.config(servers)
    project.cases([{"id": "w", "question": "Will it rain in Lyon tomorrow?",
                    "expect_tool": ["get_weather"], "why": "weather"}])
    result = pytester.runpytest("--toolselect-lint", "-p", "no:randomly", *shard)
    outcomes = result.parseoutcomes()
    ran = outcomes.get("passed", 0) + outcomes.get("failed", 0)
    deselected = outcomes.get("deselected", 0)
    # three lint items and one case: what ran and what a shard left out add up to four
    assert ran + deselected == 4, result.stdout.str()
    line = [s for s in result.stdout.lines if s.startswith("collected ")]
    expected = "collected 4 items" + (f" / {deselected} deselected / {ran} selected"
                                       if deselected else "")
    assert line == [expected], result.stdout.str()


def test_a_known_pair_does_not_block_and_a_new_one_does(project: Project, pytester: pytest.Pytester) -> None:
    registry(project, [*DISTINCT, TWIN])
    first = pytester.runpytest("--toolselect-lint", "--toolselect-baseline", "base.json")
    first.assert_outcomes(xfailed=1)  # recorded, not blocking
    assert project.read_baseline()["lint"] == {
        "registry": ["confusable-pair:get_weather+weather_forecast"]}
    again = pytester.runpytest("--toolselect-lint", "--toolselect-baseline", "base.json")
    again.assert_outcomes(xfailed=1)
    assert again.ret == 0

    registry(project, [*DISTINCT, TWIN, EMAIL_TWIN])
    blocked = pytester.runpytest("--toolselect-lint", "--toolselect-baseline", "base.json")
    blocked.assert_outcomes(failed=1)
    blocked.stdout.fnmatch_lines(
        ["*1 new error-level lint finding(s) on server 'registry' (not in the baseline)",
         "*confusable-pair [[]send_email, email_send[]]*"])
    failure = blocked.stdout.str().split("FAILURES")[1].split("short test summary")[0]
    assert "get_weather" not in failure
    # the baseline is not rewritten by a compared run
    assert project.read_baseline()["lint"]["registry"] == ["confusable-pair:get_weather+weather_forecast"]


def test_a_clean_server_passes_and_the_reports_gain_a_lint_section(project: Project,
                                                                    pytester: pytest.Pytester) -> None:
    registry(project, [*DISTINCT, TWIN])
    result = pytester.runpytest("--toolselect-lint", "--toolselect-markdown", "c.md",
                                "--toolselect-html", "r.html", "--toolselect-json", "r.json")
    result.assert_outcomes(failed=1)
    comment = (pytester.path / "c.md").read_text()
    assert "### toolselect lint" in comment and "| **new** error | confusable-pair |" in comment
    page = (pytester.path / "r.html").read_text()
    assert '<section class="card" id="lint-card">' in page and '<svg id="lint-heatmap"' in page
    assert "style=" not in page.split('id="lint-card"')[1]  # the CSP allows no inline style
    doc = json.loads((pytester.path / "r.json").read_text())
    assert doc["verdict"]["blocking"]
    assert doc["lint"]["new"] == ["confusable-pair:get_weather+weather_forecast"]
    assert pytester.run(TOOLSELECT, "report", "r.json").ret == 0  # valid against the schema

    registry(project, DISTINCT)
    pytester.runpytest("--toolselect-lint").assert_outcomes(passed=1)


@NESTED_XDIST
def test_under_xdist_the_controller_records_every_servers_findings(project: Project,
                                                                    pytester: pytest.Pytester) -> None:
    project.config({"clean": {"tools_file": project.tools_file("clean", DISTINCT)},
                    "twin": {"tools_file": project.tools_file("twin", [TWIN, EMAIL_TWIN])}})
    result = pytester.runpytest_subprocess("--toolselect-lint", "-n", "2", "-p", "xdist",
                                           "--toolselect-baseline", "base.json")
    result.assert_outcomes(xfailed=2)
    pair = "confusable-pair:get_weather+weather_forecast"
    other = "confusable-pair:send_email+email_send"
    assert project.read_baseline()["lint"] == {"clean": [pair, other], "twin": [pair, other]}
    result.stdout.fnmatch_lines(["*toolselect lint*", "clean: 2 errors, 0 warnings, 1 info; 0 new",
                                 "twin: 2 errors, 0 warnings, 1 info; 0 new"])


def test_a_server_that_gives_no_tools_errors_its_own_item_only(project: Project,
                                                               pytester: pytest.Pytester) -> None:
    project.config({"clean": {"tools_file": project.tools_file("clean", DISTINCT)},
                    "dead": {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}})
    result = pytester.runpytest("--toolselect-lint")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*MCP server 'dead'*exited or closed its stdout*"])
    assert "Traceback" not in result.stdout.str()


def test_the_ini_key_and_the_config_file_key_turn_it_on(project: Project, pytester: pytest.Pytester) -> None:
    registry(project, DISTINCT)
    pytester.runpytest().assert_outcomes()  # off by default: no item
    pytester.makeini("[pytest]\ntoolselect_lint = true\n")
    pytester.runpytest().assert_outcomes(passed=1)
    (pytester.path / "tox.ini").unlink()  # where makeini writes
    project.config({"registry": {"tools_file": project.tools_file(tools=DISTINCT)}}, lint=True)
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_bad_lint_value_in_the_config_is_one_usage_error(project: Project,
                                                           pytester: pytest.Pytester) -> None:
    project.config({"registry": {"tools_file": project.tools_file(tools=DISTINCT)}}, lint="maybe")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "lint" in result.stderr.str() and "Traceback" not in result.stderr.str()
