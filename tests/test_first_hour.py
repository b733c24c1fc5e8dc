"""A newcomer's first hour: mistakes said once at the start, before any request is sent."""

from __future__ import annotations

import json
import os
from unittest import mock

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import anthropic  # noqa: F401  imported before pytester snapshots sys.modules
import litellm  # noqa: F401
import openai  # noqa: F401
import pytest
from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401
from hypothesis import given
from hypothesis import strategies as st

from conftest import FIND, NESTED_XDIST, OFFICERS, OUT_OF_SCOPE, Project, case
from pytest_toolselect.inputs.option_table import OPTIONS, Option
from pytest_toolselect.providers import ProviderSettings
from pytest_toolselect.providers.preflight import (
    PLACEHOLDER_KEY,
    key_vars,
    placeholder_key,
    suggest,
)
from pytest_toolselect.providers.routes import LITELLM_KEY_VARS, OPENAI_COMPATIBLE

KEY_VARS = ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", *(c.key_env for c in OPENAI_COMPATIBLE.values()),
            "GEMINI_API_KEY", "GOOGLE_API_KEY", "XAI_API_KEY"]


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)


# 1. a missing key -----------------------------------------------------------------------------

@pytest.mark.parametrize(("model", "var"), [("openai/gpt-4o", "OPENAI_API_KEY"),
                                            ("anthropic/claude-haiku-4-5", "ANTHROPIC_API_KEY"),
                                            ("groq/llama-3.1-8b", "GROQ_API_KEY")])
def test_a_missing_key_is_one_usage_error_before_any_request(project: Project, no_keys: None,
                                                             model: str, var: str) -> None:
    project.config(model=model)
    project.cases([case(*FIND), case(*OFFICERS)])
    result = project.pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.count("no API key") == 1, err
    assert f"{var} is not set (no request sent)" in err


@pytest.mark.parametrize(("model", "path"), [("openai/local-llm", "/v1"),  # the openai SDK
                                           ("anthropic/claude-local", ""),  # the anthropic SDK
                                           ("xai/grok-local", "/v1")])  # litellm
def test_a_loopback_server_needs_no_key(project: Project, no_keys: None, fake_api: FakeAPI,
                                        model: str, path: str) -> None:
    fake_api.handler = lambda body: Reply(tool_calls=[("find_company", {"name": "Acme"})])
    project.config(model=model, api_base=fake_api.url + path, retry_backoff=0)
    project.cases([case(*FIND), case(*OFFICERS)])
    result = project.pytester.runpytest()
    # every route, the same rule: no error on any item (the anthropic SDK refused each
    # request for want of a key: "Could not resolve authentication method")
    assert "Could not resolve" not in result.stdout.str()
    result.assert_outcomes(passed=1, failed=1)
    assert len(fake_api.requests) == 2


def test_a_hook_provided_model_needs_no_key(project: Project, no_keys: None) -> None:
    project.pytester.makeconftest('''
from pytest_toolselect.providers import Turn
from pytest_toolselect.exchange.tool import ToolCall

class Mine:
    model = "openai/scripted"
    fills_arguments = False
    def subject(self):
        return {"provider": "script", "model": self.model}
    async def first_turn(self, request):
        return Turn(calls=(ToolCall("find_company", {}),))

def pytest_toolselect_provider(model, config):
    return Mine()
''')
    project.config(model="openai/scripted")
    project.cases([case(*FIND)])
    project.pytester.runpytest().assert_outcomes(passed=1)


@given(prefix=st.sampled_from(sorted(OPENAI_COMPATIBLE)),
       name=st.from_regex(r"[a-z0-9.-]{1,12}", fullmatch=True),
       port=st.integers(1, 65535), host=st.sampled_from(["127.0.0.1", "localhost", "[::1]", "127.3.2.1"]))
def test_every_route_names_its_key_and_loopback_needs_none(prefix: str, name: str, port: int,
                                                            host: str) -> None:
    model = f"{prefix}/{name}"
    assert key_vars(model, ProviderSettings()) == (OPENAI_COMPATIBLE[prefix].key_env,)
    assert key_vars(f"anthropic/{name}", ProviderSettings()) == ("ANTHROPIC_API_KEY",)
    assert key_vars(model, ProviderSettings(api_base=f"http://{host}:{port}/v1")) == ()
    assert key_vars(model, ProviderSettings(api_base="https://gateway.example.com/v1")) != ()
    # a variable named by api_key_env is needed even on loopback
    assert key_vars(model, ProviderSettings(api_base=f"http://{host}:{port}",
                                            api_key_env="MY_KEY")) == ("MY_KEY",)


@given(prefix=st.sampled_from(["anthropic", *OPENAI_COMPATIBLE, *LITELLM_KEY_VARS]),
       name=st.from_regex(r"[a-z0-9.-]{1,12}", fullmatch=True), port=st.integers(1, 65535),
       host=st.sampled_from(["127.0.0.1", "localhost", "[::1]", "127.3.2.1"]),
       remote=st.sampled_from(["gateway.example.com", "10.0.0.7", "[2001:db8::1]"]))
def test_every_route_sends_a_placeholder_key_to_loopback_only(prefix: str, name: str, port: int,
                                                              host: str, remote: str) -> None:
    model = f"{prefix}/{name}"
    local = ProviderSettings(api_base=f"http://{host}:{port}/v1")
    (usual,) = key_vars(model, ProviderSettings())[:1]
    with mock.patch.dict(os.environ, clear=True):
        assert placeholder_key(model, local) == PLACEHOLDER_KEY
        assert placeholder_key(model, ProviderSettings(api_base=f"https://{remote}/v1")) is None
        assert placeholder_key(model, ProviderSettings()) is None
        # a named variable is the key, even on loopback (unset: the usual no-key error)
        assert placeholder_key(model, ProviderSettings(api_base=local.api_base, api_key_env="K")) is None
        os.environ[usual] = "a real key"
        assert placeholder_key(model, local) is None


# 2. a bad model string ------------------------------------------------------------------------

@pytest.mark.parametrize(("model", "meant"), [("bm25", "local/bm25"), ("gpt-4o", "openai/gpt-4o"),
                                              ("local/bm26", "local/bm25"),
                                              ("claude-haiku-4-5", "anthropic/claude-haiku-4-5")])
def test_a_bad_model_string_is_one_usage_error_with_a_did_you_mean(project: Project, model: str,
                                                                   meant: str) -> None:
    project.config()
    project.cases([case(*FIND), case(*OFFICERS)])
    project.pytester.runpytest("--toolselect-baseline=base.json")  # a first recording
    result = project.pytester.runpytest(f"--toolselect-model={model}",
                                        "--toolselect-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.count(repr(model)) == 1, err
    assert f"did you mean {meant}?" in err
    assert "Traceback" not in err + result.stdout.str()


@given(st.from_regex(r"claude-[a-z0-9.-]{1,20}", fullmatch=True))
def test_a_bare_claude_name_is_meant_for_anthropic(name: str) -> None:
    assert suggest(name) == f"anthropic/{name}"


# 4. every mistake in a file at once ------------------------------------------------------------

THREE_MISTAKES = """\
schema_version: toolselect_cases.v1
cases:
  - id: a
    question: Find the company called Acme Widgets
    expect_tool: [find_company]
    wyh: because
  - id: b
    question: 3
    expect_tool: [find_company]
    why: a number is no question
  - id: c
    question: Who are the directors of 01234567?
    expect_tool: list_officers
    why: a list
"""


def test_every_mistake_in_a_case_file_is_shown_at_once_in_file_order(project: Project) -> None:
    project.config()
    (project.path / "bad.toolselect.yaml").write_text(THREE_MISTAKES)
    result = project.pytester.runpytest()
    out = result.stdout.str()
    wanted = ["bad.toolselect.yaml:6: at cases[0].wyh: unknown key 'wyh'; did you mean 'why'?",
              "bad.toolselect.yaml:8: at cases[1].question:",
              "bad.toolselect.yaml:13: at cases[2].expect_tool: expect_tool must be a list"]
    at = [out.find(w) for w in wanted]
    assert all(i >= 0 for i in at) and at == sorted(at), out
    assert out.count("unknown key 'wyh'") == 1  # once, not again for the missing why


def test_every_mistake_in_the_config_is_shown_at_once(project: Project) -> None:
    (project.path / "toolselect.yaml").write_text(
        "servers:\n  registry:\n    tools_file: registry.tools.json\n    timout: 5\n"
        "repz: 3\nmodel: 12\n")
    project.tools_file()
    project.cases([case(*FIND)])
    result = project.pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    lines = [err.find(f"toolselect.yaml:{n}:") for n in (4, 5, 6)]
    assert all(i >= 0 for i in lines) and lines == sorted(lines), err


# 5. labels that are pytest marks --------------------------------------------------------------

@pytest.mark.parametrize(("field", "value", "shown"), [
    ("category", "xfail", "category 'xfail'"), ("tags", ["fine", "skip"], "tag 'skip'"),
    ("intent", "skipif", "intent 'skipif'"), ("tags", ["usefixtures"], "tag 'usefixtures'"),
    ("category", "filterwarnings", "category 'filterwarnings'"), ("tags", ["flaky"], "tag 'flaky'"),
])
def test_a_label_named_like_an_outcome_changing_mark_is_refused(project: Project, field: str,
                                                                value: object, shown: str) -> None:
    project.config()
    project.cases([case(*FIND, **{field: value}), case(*OFFICERS)])
    project.baseline({"registry.toolselect.yaml::find": {"status": "held"},
                      "registry.toolselect.yaml::officers": {"status": "held"}})
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "-rA")
    out = result.stdout.str()
    assert result.ret != 0
    assert f"{shown} is the name of a pytest mark that changes outcomes" in out, out
    assert "xfailed" not in out.splitlines()[-1] and "skipped" not in out.splitlines()[-1]


def test_labels_still_select_with_k_and_m(project: Project) -> None:
    project.config()
    project.cases([case(*FIND, category="search", tags=["smoke"]), case(*OFFICERS, category="people")])
    by_m = project.pytester.runpytest("-m", "search")
    by_m.assert_outcomes(passed=1)
    by_k = project.pytester.runpytest("-k", "people or smoke")
    by_k.assert_outcomes(passed=2)


def test_a_decorated_case_with_a_mark_label_is_refused(project: Project) -> None:
    project.config()
    project.pytester.makepyfile('''
from pytest_toolselect import case

@case(question="Find the company called Acme Widgets", expect_tool=["find_company"],
      why="a name", category="xfail")
def test_find(toolselect_result):
    pass
''')
    result = project.pytester.runpytest()
    assert "category 'xfail' is the name of a pytest mark" in result.stdout.str()
    result.assert_outcomes(errors=1)


# 6. a decorated test that fails its own assertion ---------------------------------------------

def test_a_decorated_test_failing_its_own_assertion_is_recorded_and_blocks(project: Project) -> None:
    project.config()
    project.pytester.makepyfile('''
from pytest_toolselect import case

@case(question="Find the company called Acme Widgets in the company register",
      expect_tool=["find_company"], why="a name")
def test_find(toolselect_result):
    assert toolselect_result.passes == 99, "wanted 99 passes"

@case(question="Who are the directors and officers of company 01234567?",
      expect_tool=["list_officers"], why="a number")
def test_officers(toolselect_result):
    pass
''')
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-json=r.json",
                                        "--toolselect-markdown=c.md")
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == 1
    assert "2 cases" in result.stdout.str()
    doc = json.loads((project.path / "r.json").read_text())
    assert doc["summary"]["total"] == 2
    failed = next(c for c in doc["cases"] if c["case_id"] == "test_find")
    assert failed["outcome"] == "failed" and failed["status"] == "held"
    assert "wanted 99 passes" in failed["test_failure"]
    assert set(project.read_baseline()["cases"]) == {"test_a_decorated_test_failing_its_own_assertion"
                                                     "_is_recorded_and_blocks.py::test_find",
                                                     "test_a_decorated_test_failing_its_own_assertion"
                                                     "_is_recorded_and_blocks.py::test_officers"}
    comment = (project.path / "c.md").read_text()
    assert comment.startswith("## ❌ toolselect: blocking"), comment
    assert "1 decorated test failed its own assertion" in comment


# 7. long text clipped everywhere --------------------------------------------------------------

MB = 1_000_000


def test_a_one_megabyte_question_is_clipped_in_the_terminal_xfail_reasons_and_junit(
        project: Project) -> None:
    project.config()
    long_q = "Find the company called Acme Widgets " + "x" * MB
    long_why = "because " + "y" * MB
    project.cases([case("big", long_q, ["list_officers"], why=long_why),
                   case("known", long_q, ["lookup_vat"], why=long_why)])
    project.baseline({"registry.toolselect.yaml::big": {"status": "held"},
                      "registry.toolselect.yaml::known": {"status": "failing",
                                                          "failing_checks": ["tool_choice"]}})
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--junitxml=j.xml",
                                        "--toolselect-json=r.json", "-rA")
    result.assert_outcomes(failed=1, xfailed=1)
    out = result.stdout.str()
    assert len(out) < 50_000, len(out)
    assert "chars)" in out  # it says how much was cut
    assert (project.path / "j.xml").stat().st_size < 50_000
    # the saved run keeps the whole text (the HTML search covers it)
    doc = json.loads((project.path / "r.json").read_text())
    assert all(c["question"] == long_q for c in doc["cases"])


# should: the embedded model fills no arguments -------------------------------------------------

def test_an_argument_check_under_local_bm25_says_it_fills_no_arguments(project: Project) -> None:
    project.config()
    project.cases([case(*FIND, expect_args=[{"path": "name", "contains": "acme"}])])
    result = project.pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*note:     local/bm25 fills no arguments; use a real model for "
                                 "argument checks*"])


# should: counts in words ----------------------------------------------------------------------

@given(st.integers(0, 5), st.sampled_from(["case", "regression", "error", "rep", "held", "new",
                                           "new_failing", "flaky"]))
def test_a_count_reads_as_words(n: int, word: str) -> None:
    from pytest_toolselect.report.words import counted

    text = counted(n, word)
    assert text.startswith(f"{n} ") and "_" not in text
    assert text.endswith("s") == (n != 1 and word in ("case", "regression", "error", "rep"))


def test_one_case_and_two_regressions_read_as_words(project: Project) -> None:
    project.config()
    project.cases([case("a", FIND[1], ["lookup_vat"]), case("b", FIND[1], ["list_officers"])])
    project.baseline({"registry.toolselect.yaml::a": {"status": "held"},
                      "registry.toolselect.yaml::b": {"status": "held"}})
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    result.stdout.fnmatch_lines(["2 cases: 2 regressions", "regressions*: 2"])
    one = project.pytester.runpytest("--toolselect-baseline=base.json", "registry.toolselect.yaml::a")
    one.stdout.fnmatch_lines(["1 case: 1 regression"])


# should: no bm25s log lines in a failing case's report -----------------------------------------

def test_a_failing_case_shows_no_bm25s_debug_log(project: Project) -> None:
    project.config()
    project.cases([case("wrong", FIND[1], ["lookup_vat"])])
    result = project.pytester.runpytest("--log-level=DEBUG")
    result.assert_outcomes(failed=1)
    assert "Building index from tokens" not in result.stdout.str()


# should: a failing case printed once ----------------------------------------------------------

ONCE_CASES = [case("a", FIND[1], ["lookup_vat"]), case("b", OFFICERS[1], ["find_company"]),
              case(*FIND)]
ONCE_BASE = {"registry.toolselect.yaml::a": {"status": "held"},
             "registry.toolselect.yaml::b": {"status": "failing", "failing_checks": ["tool_choice"]},
             "registry.toolselect.yaml::find": {"status": "held"}}


@pytest.mark.parametrize("run", ["in process", pytest.param("xdist", marks=NESTED_XDIST)])
def test_a_failing_case_is_printed_once(project: Project, run: str) -> None:
    project.config()
    project.cases(ONCE_CASES)
    project.baseline(ONCE_BASE)
    args = ("--toolselect-baseline=base.json", "--toolselect-fail-on-still-failing")
    result = (project.pytester.runpytest(*args) if run == "in process"
              else project.pytester.runpytest_subprocess(*args, "-n", "2"))
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    for question in (FIND[1], OFFICERS[1]):
        assert out.count(f"question: {question}") == 1, out
    # the block under FAILURES, a pointer in the toolselect summary
    result.stdout.fnmatch_lines([
        "*_ toolselect case a _*", f"question: {FIND[1]}", "why:      a has a reason",
        "*= toolselect =*",
        "regressions*: 1", "  registry.toolselect.yaml::a: tool_choice (in full under FAILURES above)",
        "still failing*: 1",
        "  registry.toolselect.yaml::b: tool_choice (in full under FAILURES above)",
    ])


def test_with_tracebacks_off_the_summary_keeps_the_failing_case(project: Project) -> None:
    project.config()
    project.cases(ONCE_CASES[:1])
    project.baseline({"registry.toolselect.yaml::a": {"status": "held"}})
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--tb=no")
    result.assert_outcomes(failed=1)
    assert result.stdout.str().count(f"question: {FIND[1]}") == 1
    result.stdout.fnmatch_lines(["regressions*: 1", "  registry.toolselect.yaml::a",
                                 f"    question: {FIND[1]}"])


@pytest.mark.parametrize("run", ["in process", pytest.param("xdist", marks=NESTED_XDIST)])
def test_an_error_s_message_is_printed_once(project: Project, run: str) -> None:
    # a server that cannot give its tools: every case of it errors with the same long message
    project.config({"registry": {"tools_file": "missing.tools.json"}})
    project.cases(ONCE_CASES[:2])
    args = ("-p", "no:randomly")
    result = (project.pytester.runpytest(*args) if run == "in process"
              else project.pytester.runpytest_subprocess(*args, "-n", "2"))
    result.assert_outcomes(errors=2)
    out = result.stdout.str()
    assert out.count("missing.tools.json") == 2, out  # once per case, under ERRORS
    # the summary still says which case it was, and points at the message above
    result.stdout.fnmatch_lines(["*= toolselect =*", "errors*: 2", "  registry.toolselect.yaml::a",
                                 f"    question: {FIND[1]}",
                                 "    error:    (in full under ERRORS above)"])


def test_with_tracebacks_off_the_summary_keeps_the_error_s_message(project: Project) -> None:
    project.config({"registry": {"tools_file": "missing.tools.json"}})
    project.cases(ONCE_CASES[:1])
    result = project.pytester.runpytest("--tb=no")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["errors*: 1", "  registry.toolselect.yaml::a", "*question:*",
                                 "*expected:*", "    error:    *missing.tools.json*"])


# should: a forbidden tool no server offers ----------------------------------------------------

def test_a_forbidden_tool_no_server_offers_is_a_warning_naming_case_file_and_name(
        project: Project) -> None:
    project.config()
    project.cases([case(*FIND, forbid_tools=["write_file", "list_officers"]),
                   case(*OFFICERS, forbid_tools=["drop_database", "delete_everything"]),
                   case("clean", OUT_OF_SCOPE[1], [], forbid_tools=["find_company"])])
    result = project.pytester.runpytest("-n", "0", "-rA")
    result.assert_outcomes(passed=3, warnings=2)
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*registry.toolselect.yaml:3: ToolselectUnofferedWarning: case 'find': forbid_tools names "
        "'write_file', which no server of the case offers, so the check fails only if the model "
        "calls a tool it was never offered (remove it, or name an offered tool)",
    ])
    assert out.count("ToolselectUnofferedWarning") == 2, out
    assert "'drop_database', 'delete_everything'" in out and "remove them" in out
    assert "'list_officers'" not in out and "case 'clean'" not in out


def test_a_misspelt_forbidden_tool_is_still_an_error(project: Project) -> None:
    project.config()
    project.cases([case(*FIND, forbid_tools=["list_oficers"])])
    result = project.pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*forbid_tools names 'list_oficers', which is not offered; "
                                 "did you mean 'list_officers'?*"])
    assert "ToolselectUnofferedWarning" not in result.stdout.str()


# should: the probe's terminal summary is short by default -------------------------------------

PROBE_GROUPS = ["G01", "C04", "G03", "C01"]  # two domains of two groups each: docs and web


def _probe_section(result: pytest.RunResult) -> list[str]:
    out = result.outlines
    start = next(i for i, line in enumerate(out) if "toolselect preference probe" in line)
    end = next(i for i, line in enumerate(out) if i > start and line.startswith("====="))
    return [line for line in out[start + 1:end] if line]


def test_the_probe_summary_is_short_by_default_and_whole_under_v(project: Project) -> None:
    from pathlib import Path

    example = Path(__file__).resolve().parent.parent / "examples" / "preference.groups.json"
    doc = json.loads(example.read_text())
    doc["groups"] = [g for g in doc["groups"] if g["id"] in PROBE_GROUPS]
    (project.path / "probe.groups.json").write_text(json.dumps(doc))
    project.config({})
    project.pytester.runpytest("--toolselect-baseline=base.json").assert_outcomes(passed=4)
    short = project.pytester.runpytest("--toolselect-baseline=base.json")
    whole = project.pytester.runpytest("--toolselect-baseline=base.json", "-v")
    short_lines, whole_lines = _probe_section(short), _probe_section(whole)
    assert len(short_lines) <= 15, "\n".join(short_lines)
    assert "by domain: docs, web (-v shows each domain's effects)" in short_lines
    assert not any(line.startswith("  docs: ") for line in short_lines)
    assert ("  changes since the baseline whose 95% CI holds 0: position bias, vendor_name, "
            "assertive, social_proof, long_desc, exclusion (-v shows them)") in short_lines
    # -v: every domain's slice and every change, each on its own line
    for domain in ("docs", "web"):
        assert f"  {domain}: 1 pair group, 1 control" in whole_lines
    assert any(line.startswith("    position bias +") for line in whole_lines)
    assert len(whole_lines) > len(short_lines) + 15
    # the overall effects are the same lines either way
    effects = [line for line in whole_lines if line.startswith(("first-listed", "  assertive"))]
    assert effects and all(line in short_lines for line in effects)


# should: a label naming a mark that a plugin or conftest registered ---------------------------

SKIPS_SLOW = '''
import pytest

def pytest_configure(config):
    config.addinivalue_line("markers", "slow: runs only with --runslow")
    config.addinivalue_line("markers", "network(host): needs the network")

def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.skip(reason="slow: needs --runslow"))
'''


def test_a_label_naming_a_mark_a_conftest_registered_is_refused(project: Project) -> None:
    project.pytester.makeconftest(SKIPS_SLOW)
    project.config()
    project.cases([case("a", FIND[1], ["lookup_vat"], tags=["slow"]),
                   case(*OFFICERS, category="network")])
    project.baseline({"registry.toolselect.yaml::a": {"status": "held"},
                      "registry.toolselect.yaml::officers": {"status": "held"}})
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "-rA")
    out = result.stdout.str()
    assert result.ret != 0
    # both at once, each naming the case, the field and the registration
    result.stdout.fnmatch_lines([
        "*registry.toolselect.yaml: 2 mistakes, in file order:",
        "*registry.toolselect.yaml:3: at case 'a': tag 'slow' is the name of a mark that pytest, a "
        "plugin or a conftest registered ('slow: runs only with --runslow'): code acts on that mark "
        "and may skip, rerun or fail the case; labels only select cases with -k and -m (pick another "
        "name, e.g. slow-cases*",
        "*registry.toolselect.yaml:*: at case 'officers': category 'network' is the name of a mark*"
        "('network(host): needs the network')*",
    ])
    # the regression was not skipped away
    assert "SKIPPED" not in out and "skipped" not in out.splitlines()[-1]


def test_a_mark_the_ini_file_declares_stays_a_label(project: Project) -> None:
    # registered by a conftest as well, but declared by the project: its own selection label
    project.pytester.makeconftest(
        'def pytest_configure(config):\n'
        '    config.addinivalue_line("markers", "smoke: the quick ones")\n')
    project.pytester.makeini("[pytest]\nmarkers =\n    smoke: the quick ones\n")
    project.config()
    project.cases([case(*FIND, tags=["smoke"]), case(*OFFICERS, category="people")])
    result = project.pytester.runpytest("-m", "not smoke", "--strict-markers")
    result.assert_outcomes(passed=1)
    assert result.ret == 0


def test_a_decorated_case_with_a_label_naming_a_registered_mark_errors(project: Project) -> None:
    project.pytester.makeconftest(SKIPS_SLOW)
    project.config()
    project.pytester.makepyfile('''
from pytest_toolselect import case

@case(question="Find the company called Acme Widgets", expect_tool=["lookup_vat"],
      why="a name", tags=["slow"])
def test_find(toolselect_result):
    pass
''')
    result = project.pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*tag 'slow' is the name of a mark that pytest, a plugin or a "
                                 "conftest registered*"])


MARK = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
DESCRIPTION = st.text(max_size=20).map(lambda t: " ".join(t.split()))


@given(code=st.dictionaries(MARK, DESCRIPTION, max_size=6), declared=st.sets(MARK, max_size=4),
       labels=st.sets(MARK, max_size=4), args=st.booleans())
def test_only_marks_code_registered_are_run_time_marks(code: dict[str, str], declared: set[str],
                                                       labels: set[str], args: bool) -> None:
    from pytest_toolselect.inputs.labels import OWN, registered_at_run_time

    lines = [f"{name}: declared" for name in sorted(declared)]
    lines += [f"{name}{'(x, y=1)' if args else ''}: {text}" for name, text in code.items()]
    lines += [f"{label}: {OWN}" for label in sorted(labels)]
    found = registered_at_run_time(lines, declared)
    want = {n for n in code if n not in declared and not n.startswith("toolselect_")}
    assert set(found) == want
    for name in want:
        assert found[name].startswith(name) and found[name].endswith(code[name])


# every option: a bad value is one usage error at the start ---------------------------------------

def _bad_value(opt: Option) -> str | None:
    """A value the option refuses (by its type or its check), or None if it refuses none."""
    convert = {"int": int, "float": float}.get(opt.kind)
    for value in ("-1", "0", "x", "3/2"):
        try:
            parsed = convert(value) if convert else value
        except ValueError:
            return value
        if opt.check is not None and opt.check(parsed) is not None:
            return value
    return None


def _checked_options() -> list[Option]:
    return [o for o in OPTIONS if o.kind in ("int", "float") or o.check is not None
            if _bad_value(o) is not None]


@pytest.mark.parametrize("opt", _checked_options(), ids=lambda o: o.name)
def test_a_bad_value_of_any_option_is_one_usage_error_before_any_item(
        project: Project, opt: Option) -> None:
    project.config()
    project.cases([case(*FIND), case(*OFFICERS)])
    value = _bad_value(opt)
    result = project.pytester.runpytest(f"{opt.flag}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    errors = [ln for ln in result.stderr.lines if ln.startswith("ERROR:")]
    assert len(errors) == 1 and opt.flag in errors[0], result.stderr.str()
    assert "passed" not in result.stdout.str() and " error" not in result.stdout.str()
