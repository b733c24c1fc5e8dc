"""The gate end to end: case files -> local/bm25 -> checks -> verdicts -> pytest outcomes."""

from __future__ import annotations

import json

import pytest

from conftest import FIND, OFFICERS, OUT_OF_SCOPE, WRONG, Project, case

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _cases(*specs: tuple[str, str, list[str]], **fields: object) -> list[dict[str, object]]:
    return [case(i, q, e, **fields) for i, q, e in specs]


def test_header_names_model_and_source(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND))
    result = project.pytester.runpytest()
    result.stdout.fnmatch_lines(["toolselect: model local/bm25 (embedded default), reps 1"])
    result.assert_outcomes(passed=1)


def test_header_says_where_a_model_came_from(project: Project) -> None:
    project.config(model="local/bm25")
    project.cases(_cases(FIND))
    result = project.pytester.runpytest()
    result.stdout.fnmatch_lines(["toolselect: model local/bm25 (from toolselect.yaml), reps 1"])
    result = project.pytester.runpytest("--toolselect-model=local/bm25")
    result.stdout.fnmatch_lines(["*model local/bm25 (from --toolselect-model)*"])


def test_without_baseline_a_case_is_an_ordinary_test(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND, OFFICERS, OUT_OF_SCOPE, WRONG))
    result = project.pytester.runpytest("-rA")
    result.assert_outcomes(passed=3, failed=1)
    # the case in full once, under FAILURES; the toolselect summary points there in one line
    result.stdout.fnmatch_lines([
        "*_ toolselect case wrong _*",
        "question: Find the company register entry with the people running Acme",
        "expected: list_officers",
        "called:   find_company()",
        "failing:  tool_choice:*",
        "why:      wrong has a reason",
        "*= toolselect =*",
        "  registry.toolselect.yaml::wrong: tool_choice (in full under FAILURES above)",
    ])
    assert result.stdout.str().count("question: Find the company register entry") == 1
    assert result.ret == 1


def test_item_ids_are_file_and_case_id(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND, OFFICERS))
    result = project.pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["registry.toolselect.yaml::find", "registry.toolselect.yaml::officers"])


def test_baseline_recorded_when_absent(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND, WRONG))
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    # nothing held before, so nothing can regress: a failing case is new failing (xfailed)
    result.assert_outcomes(passed=1, xfailed=1)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["baseline: recorded to *base.json"])
    doc = project.read_baseline()
    assert doc["schema_version"] == "toolselect_baseline.v1"
    assert doc["subject"]["model"] == "local/bm25"
    find = doc["cases"]["registry.toolselect.yaml::find"]
    assert (find["status"], find["passes"], find["reps"], find["first_tool"]) == ("held", 1, 1,
                                                                                 "find_company")
    wrong = doc["cases"]["registry.toolselect.yaml::wrong"]
    assert wrong["status"] == "failing" and wrong["failing_checks"] == ["tool_choice"]
    assert find["case_fingerprint"].startswith("sha256:") and find["tools_fingerprint"]


def test_regression_fails_with_the_whole_story(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND, WRONG))
    project.baseline({"registry.toolselect.yaml::find": {"status": "held"},
                      "registry.toolselect.yaml::wrong": {"status": "held"}})
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "*_ toolselect case wrong _*",
        "expected: list_officers",
        "called:   find_company()",
        "*regressions (held on the baseline, fail now: these block): 1*",
        "*registry.toolselect.yaml::wrong: tool_choice (in full under FAILURES above)",
    ])
    assert result.stdout.str().count("expected: list_officers") == 1
    # comparing never rewrites the baseline
    assert project.read_baseline()["cases"]["registry.toolselect.yaml::wrong"]["status"] == "held"


def test_still_failing_is_xfailed_unless_asked(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND, WRONG))
    project.baseline({"registry.toolselect.yaml::find": {"status": "held"},
                      "registry.toolselect.yaml::wrong": {"status": "failing"}})
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "-rx")
    result.assert_outcomes(passed=1, xfailed=1)
    result.stdout.fnmatch_lines(["*XFAIL*wrong*still failing: tool_choice*why: wrong has a reason*"])
    assert result.ret == 0
    result = project.pytester.runpytest("--toolselect-baseline=base.json",
                                        "--toolselect-fail-on-still-failing")
    result.assert_outcomes(passed=1, failed=1)


def test_fixed_passes_and_is_listed(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND))
    project.baseline({"registry.toolselect.yaml::find": {"status": "failing"}})
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*fixed (failed on the baseline, hold now): 1*",
                                 "*registry.toolselect.yaml::find*"])


def test_new_failing_case_is_xfailed_against_a_baseline(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND, WRONG))
    project.baseline({"registry.toolselect.yaml::find": {"status": "held"}})
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "-rx")
    result.assert_outcomes(passed=1, xfailed=1)
    result.stdout.fnmatch_lines(["*XFAIL*wrong*new failing*"])


def test_update_baseline_rewrites_and_lists_gone_cases(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND, WRONG))
    project.baseline({"registry.toolselect.yaml::find": {"status": "failing"},
                      "registry.toolselect.yaml::wrong": {"status": "held"},
                      "registry.toolselect.yaml::removed": {"status": "held"}})
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    result.stdout.fnmatch_lines(["*in the baseline, no longer a case: 1*",
                                 "*registry.toolselect.yaml::removed*"])
    result = project.pytester.runpytest("--toolselect-baseline=base.json",
                                        "--toolselect-update-baseline")
    # the regression is accepted into the new baseline, not blocking
    result.assert_outcomes(passed=1, xfailed=1)
    assert result.ret == 0
    cases = project.read_baseline()["cases"]
    assert sorted(cases) == ["registry.toolselect.yaml::find", "registry.toolselect.yaml::wrong"]
    assert cases["registry.toolselect.yaml::find"]["status"] == "held"
    assert cases["registry.toolselect.yaml::wrong"]["status"] == "failing"


def test_a_baseline_of_another_subject_is_refused(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND))
    path = project.baseline({"registry.toolselect.yaml::find": {"status": "held"}},
                            subject={"provider": "anthropic", "model": "anthropic/claude-haiku-4-5",
                                     "settings": {}, "system_hash": None})
    before = path.read_bytes()
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*belongs to another subject*model: baseline 'anthropic/claude-haiku-4-5'"
                                 ", this run 'local/bm25'*"])
    assert path.read_bytes() == before


def test_a_subject_mismatch_names_the_route_the_run_took(project: Project,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # an OpenAI-compatible model goes through the openai SDK, while its subject keeps the
    # provider name it was first recorded under: the message says both, as the header does
    monkeypatch.setenv("GROQ_API_KEY", "test-key")
    project.config(model="groq/llama-3.1-8b")
    project.cases(_cases(FIND))
    project.baseline({"registry.toolselect.yaml::find": {"status": "held"}},
                     subject={"provider": "anthropic", "model": "anthropic/claude-haiku-4-5",
                              "settings": {}, "system_hash": None})
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*provider: baseline 'anthropic', this run 'litellm' (via openai SDK)*"])


def test_a_changed_threshold_is_another_subject(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND))
    project.baseline({"registry.toolselect.yaml::find": {"status": "held"}})
    result = project.pytester.runpytest("--toolselect-baseline=base.json",
                                        "--toolselect-bm25-threshold=2.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*settings: baseline*bm25_threshold*"])


def test_a_corrupted_baseline_is_refused_not_rerecorded(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND))
    path = project.path / "base.json"
    path.write_text('{"schema_version": "toolselect_baseline.v1", "subj')
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*base.json: the baseline is not valid JSON*"])
    assert path.read_text().endswith('"subj')


def test_k_selects_by_category_and_intent(project: Project) -> None:
    project.config()
    project.cases([case("find", FIND[1], FIND[2], category="search", intent="name_lookup"),
                   case("officers", OFFICERS[1], OFFICERS[2], category="people"),
                   case("weather", OUT_OF_SCOPE[1], [], category="out-of-scope")])
    result = project.pytester.runpytest("-k", "people", "-v")
    result.assert_outcomes(passed=1, deselected=2)
    result.stdout.fnmatch_lines(["*::officers PASSED*"])
    result = project.pytester.runpytest("-m", "out-of-scope or name_lookup", "--strict-markers")
    result.assert_outcomes(passed=2, deselected=1)


def test_reps_and_intent_agreement(project: Project) -> None:
    project.config()
    project.cases([case("a", FIND[1], FIND[2], intent="find_people"),
                   case("b", WRONG[1], ["find_company", "list_officers"], intent="find_people"),
                   case("c", OFFICERS[1], OFFICERS[2], intent="find_people")])
    result = project.pytester.runpytest("--toolselect-reps=3")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([
        "*reps 3*",
        "*intents whose phrasings or reps chose different first tools:*",
        "*find_people: find_company x6, list_officers x3*",
    ])


def test_summary_has_categories_and_confusions(project: Project) -> None:
    project.config()
    project.cases([case("a", FIND[1], FIND[2], category="search"),
                   case("b", WRONG[1], WRONG[2], category="people"),
                   case("c", OFFICERS[1], OFFICERS[2], category="people")])
    result = project.pytester.runpytest()
    result.stdout.fnmatch_lines([
        "*held by category: people 1/2, search 1/1*",
        "*top confusions (expected -> chosen): list_officers -> find_company x1*",
    ])


def test_option_from_ini_and_config_file(project: Project) -> None:
    project.config(reps=2)
    project.cases(_cases(FIND))
    result = project.pytester.runpytest()
    result.stdout.fnmatch_lines(["*reps 2*"])
    project.pytester.makeini("[pytest]\ntoolselect_reps = 3\n")
    result = project.pytester.runpytest()
    result.stdout.fnmatch_lines(["*reps 3*"])
    result = project.pytester.runpytest("--toolselect-reps=4")
    result.stdout.fnmatch_lines(["*reps 4*"])


def test_bad_option_value_is_a_usage_error(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND))
    result = project.pytester.runpytest("--toolselect-reps=zero")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolselect-reps*'zero' is not a valid int*"])


def test_threshold_makes_bm25_decline(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND, OUT_OF_SCOPE))
    result = project.pytester.runpytest("--toolselect-bm25-threshold=1000")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*called:   (nothing)*"])


def test_json_case_file(project: Project) -> None:
    project.config()
    (project.path / "more.toolselect.json").write_text(json.dumps(
        {"schema_version": "toolselect_cases.v1", "cases": _cases(FIND)}))
    result = project.pytester.runpytest("-v")
    result.stdout.fnmatch_lines(["*more.toolselect.json::find PASSED*"])


def test_summary_says_when_the_tools_changed_since_the_baseline(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND, WRONG))
    project.pytester.runpytest("--toolselect-baseline=base.json")
    doc = project.read_baseline()
    doc["cases"]["registry.toolselect.yaml::wrong"]["tools_fingerprint"] = "sha256:0000"
    (project.path / "base.json").write_text(json.dumps(doc))
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "-rx")
    result.stdout.fnmatch_lines(["*note:     since the baseline, the tools offered or the system "
                                 "prompt changed*"])


def test_a_bad_config_is_a_usage_error(project: Project) -> None:
    (project.path / "toolselect.yaml").write_text("servers:\n  registry:\n    tools_fil: x.json\n")
    project.cases(_cases(FIND))
    result = project.pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*toolselect.yaml:3*tools_fil*did you mean*tools_file*"])


def test_update_baseline_re_records_for_a_new_subject(project: Project) -> None:
    project.config()
    project.cases(_cases(FIND))
    project.baseline({"registry.toolselect.yaml::old": {"status": "held"}},
                     subject={"provider": "anthropic", "model": "anthropic/claude-haiku-4-5",
                              "settings": {}, "system_hash": None})
    result = project.pytester.runpytest("--toolselect-baseline=base.json",
                                        "--toolselect-update-baseline")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*baseline: re-recorded for this model (it belonged to another)*"])
    doc = project.read_baseline()
    assert doc["subject"]["model"] == "local/bm25"
    assert list(doc["cases"]) == ["registry.toolselect.yaml::find"]
