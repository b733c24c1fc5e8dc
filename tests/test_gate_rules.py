"""The gate's rules: verdicts from a case's history on hand-computed examples, the suite check,
the options, and the simulation that chose the default."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import sys
from collections.abc import Sequence
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from conftest import FIND, PLANNED, Project, case
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.inputs.option_table import BY_NAME
from pytest_toolselect.records.baseline_entry import CaseEntry
from pytest_toolselect.records.report_input import SuiteChange
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.terms.vocabulary import Verdict

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

REPO = Path(__file__).resolve().parent.parent


def entry(*history: tuple[int, int]) -> CaseEntry:
    """A baseline entry whose latest run is the last of `history`."""
    passes, reps = history[-1]
    return CaseEntry.from_json({"status": gate.status_of(passes, reps), "passes": passes,
                                "reps": reps, "history": [list(r) for r in history]})


def verdict(rule: str, history: Sequence[tuple[int, int]], passes: int, reps: int = 3) -> str:
    return gate.classify(passes, reps, entry(*history), have_baseline=True, rule=rule)


CLEAN_15 = [(3, 3)] * 5            # 15 of 15
ONE_MISS = [(3, 3)] * 4 + [(2, 3)]  # 14 of 15
TWO_MISSES = [(3, 3), (2, 3), (3, 3), (2, 3), (3, 3)]  # 13 of 15, last run held


# -- the verdicts that do not depend on the rule ---------------------------------------------------


@pytest.mark.parametrize("rule", list(gate.RULES))
def test_verdicts_outside_the_rule_are_unchanged(rule: str) -> None:
    def classify(passes: int, reps: int, base: CaseEntry | None, have: bool = True) -> str:
        return gate.classify(passes, reps, base, have_baseline=have, rule=rule)

    assert classify(3, 3, None, have=False) == Verdict.PASSED
    assert classify(0, 3, None, have=False) == Verdict.FAILED
    assert classify(1, 3, None, have=False) == Verdict.FLAKY
    assert classify(3, 3, None) == Verdict.NEW
    assert classify(0, 3, None) == Verdict.NEW_FAILING
    assert classify(2, 3, None) == Verdict.FLAKY
    assert classify(3, 3, entry((3, 3))) == Verdict.HELD
    assert classify(3, 3, entry((0, 3))) == Verdict.FIXED
    assert classify(3, 3, entry((3, 3), (1, 3))) == Verdict.HELD  # flaky last time, held now
    assert classify(0, 3, entry((0, 3))) == Verdict.STILL_FAILING
    # a case that always held and now fails every rep: a clean break, for every rule
    assert classify(0, 3, entry(*CLEAN_15)) == Verdict.REGRESSION
    assert classify(0, 1, CaseEntry("held", 1, 1)) == Verdict.REGRESSION


def test_an_entry_from_before_the_history_is_one_run() -> None:
    assert gate.history_of(CaseEntry.from_json({"status": "held", "passes": 2, "reps": 2})) == [
        (2, 2)]
    assert gate.history_of(entry((3, 3), (1, 3))) == [(3, 3), (1, 3)]


# -- the statistical rules on hand-computed examples -----------------------------------------------
# One-sided Fisher p of history vs now (see tests/test_stats.py): 15/15 vs 0/3 = 1/816,
# 14/15 vs 0/3 = 4/816 = 0.0049, 13/15 vs 0/3 = 10/816 = 0.0123, 15/15 vs 1/3 = 16/816 = 0.0196.


@pytest.mark.parametrize(("rule", "history", "passes", "expected"), [
    # 14 of 15 then a clean break: p = 0.0049 is strong enough for 0.005, not for 0.001
    ("fisher-0.005", ONE_MISS, 0, Verdict.REGRESSION),
    ("fisher-0.01", ONE_MISS, 0, Verdict.REGRESSION),
    ("fisher-0.001", ONE_MISS, 0, Verdict.STILL_FAILING),
    # known marginal (13 of 15, held last time): p = 0.0123 blocks only the lenient rule
    ("fisher-0.005", TWO_MISSES, 0, Verdict.STILL_FAILING),
    ("fisher-0.01", TWO_MISSES, 0, Verdict.STILL_FAILING),
    ("fisher-0.05", TWO_MISSES, 0, Verdict.REGRESSION),
    # ... where the history-blind rule blocks, because the last run held
    ("legacy", TWO_MISSES, 0, Verdict.REGRESSION),
    ("clean-break", TWO_MISSES, 0, Verdict.STILL_FAILING),
    # always held, one pass of 3 now: p = 0.0196; flaky unless the rule is lenient
    ("fisher-0.005", CLEAN_15, 1, Verdict.FLAKY),
    ("fisher-0.05", CLEAN_15, 1, Verdict.REGRESSION),
    ("legacy", CLEAN_15, 1, Verdict.FLAKY),
    # the same, posterior: P(now >= base) = 24/6840 = 0.0035
    ("beta-0.99", CLEAN_15, 1, Verdict.REGRESSION),
    ("beta-0.995", CLEAN_15, 1, Verdict.REGRESSION),
    ("beta-0.999", CLEAN_15, 1, Verdict.FLAKY),
    # the last run failed, so the history-blind rule calls it still failing
    ("legacy", [(3, 3), (3, 3), (0, 3)], 0, Verdict.STILL_FAILING),
    ("fisher-0.05", [(3, 3), (3, 3), (0, 3)], 0, Verdict.STILL_FAILING),
])
def test_rules_on_hand_computed_examples(rule: str, history: list[tuple[int, int]], passes: int,
                                         expected: str) -> None:
    assert verdict(rule, history, passes) == expected


def test_more_reps_now_give_the_exact_test_power() -> None:
    # 25 of 25, 1 of 5 now: p = C(26,1) C(4,4) / C(30,5) = 26 / 142506
    history = [(5, 5)] * 5
    assert verdict("fisher-0.001", history, 1, reps=5) == Verdict.REGRESSION
    assert verdict("fisher-0.005", history, 3, reps=5) == Verdict.FLAKY


def test_the_default_rule_is_a_rule_and_the_option_default() -> None:
    assert gate.DEFAULT_RULE in gate.RULES
    assert BY_NAME["rule"].default == gate.DEFAULT_RULE
    assert BY_NAME["history"].default == gate.DEFAULT_HISTORY
    assert gate.classify(0, 3, entry(*TWO_MISSES), have_baseline=True) == verdict(
        gate.DEFAULT_RULE, TWO_MISSES, 0)


def test_an_unknown_rule_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=re.escape("valid rules: legacy, clean-break, fisher-0.05,")):
        gate.get_rule("fisher-001")
    assert gate.rule_problem("fisher-0.005") is None
    problem = gate.rule_problem("fisher")
    assert problem is not None and "fisher-0.005" in problem


# -- the suite-level check -------------------------------------------------------------------------


def _suite(now: Sequence[str], base: Sequence[str | None], **kw: Any) -> SuiteChange | None:
    records = [CaseRecord.read({"nodeid": f"c{i}", "status": s}) for i, s in enumerate(now)]
    cases = {f"c{i}": s for i, s in enumerate(base) if s is not None}
    return gate.measure_suite(records, cases, **kw)


def test_suite_change_is_newcombe_on_the_shares_held() -> None:
    from pytest_toolselect.gate.stats import newcombe_diff

    suite = _suite(["held"] * 46 + ["failing"] * 4, ["held"] * 47 + ["flaky"] * 3)
    assert suite is not None
    d, lo, hi = newcombe_diff(46, 50, 47, 50)
    assert (suite.cases, suite.held_now, suite.held_baseline) == (50, 46, 47)
    assert (suite.change, suite.low, suite.high) == pytest.approx((d, lo, hi))
    assert suite.dropped is False and suite.blocks is False
    line = gate.suite_line(suite)
    assert line == (f"suite: 92.0% held vs 94.0% on the baseline, change -2.0 pts "
                    f"[{lo * 100:+.1f}, {hi * 100:+.1f}] (Newcombe 95%, 50 cases)")


def test_suite_change_compares_only_cases_in_both() -> None:
    # a new case and an errored one do not move the rate
    suite = _suite(["held", "held", None, "failing"], ["held", "held", "held", None])
    assert suite is not None and (suite.cases, suite.held_now) == (2, 2)
    assert _suite([None], ["held"]) is None
    assert _suite(["held"], [None]) is None


def test_a_suite_drop_blocks_only_under_the_flag() -> None:
    drop = _suite(["failing"] * 10, ["held"] * 10)
    assert drop is not None and drop.dropped and not drop.blocks
    assert "blocks only with --toolselect-fail-on-suite-drop" in gate.suite_line(drop)
    blocking = _suite(["failing"] * 10, ["held"] * 10, fail_on_drop=True)
    assert blocking is not None and blocking.blocks
    assert "blocks: the whole interval is below 0" in gate.suite_line(blocking)
    # a drop within noise never blocks
    noise = _suite(["held"] * 9 + ["failing"], ["held"] * 10, fail_on_drop=True)
    assert noise is not None and not noise.dropped and not noise.blocks


# -- end to end ------------------------------------------------------------------------------------

SUBJECT = {"provider": "script", "model": "script/planned", "system_hash": None}


def _marginal_suite(project: Project) -> None:
    """Four cases that held last time on main but wobbled before, all failing every rep now."""
    project.config(model="script/planned")
    project.pytester.makeconftest(PLANNED)
    project.cases([case(f"c{i}", FIND[1], FIND[2]) for i in range(4)])
    (project.path / "plan.json").write_text(json.dumps({FIND[1]: ["list_officers"]}))
    marginal = {"status": "held", "passes": 3, "reps": 3, "history": [[3, 3], [1, 3], [3, 3]]}
    project.baseline({f"registry.toolselect.yaml::c{i}": marginal for i in range(4)},
                     subject=SUBJECT)


def test_a_known_marginal_case_is_not_a_regression(project: Project) -> None:
    _marginal_suite(project)
    # fixed reps: the rule on these three reps alone
    args = ("--toolselect-baseline=base.json", "--toolselect-reps=3", "-rx",
            "--toolselect-adaptive=off")
    result = project.pytester.runpytest(*args)
    # 7 of 9 on main, 0 of 3 now: p = C(5,3)/C(12,3) = 0.045, not strong evidence
    result.assert_outcomes(xfailed=4)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["suite: 0.0% held vs 100.0% on the baseline, change -100.0 pts "
                                 "?-100.0, -30.7? (Newcombe 95%, 4 cases); below 0 beyond noise*",
                                 "*XFAIL*dropped, not significant: held 7/9 on the baseline: "
                                 "tool_choice*"])
    # the history-blind rule blocks all four
    result = project.pytester.runpytest(*args, "--toolselect-rule=legacy")
    result.assert_outcomes(failed=4)
    # adaptive reps ask again: failing every one of 12 more reps is no wobble
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=3",
                                        "--toolselect-max-extra-reps=12")
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(["adaptive reps: 4 case(s) asked again, 48 extra call(s); "
                                 "settled as 4 regressions (*)"])


def test_fail_on_suite_drop_sets_the_exit_status(project: Project) -> None:
    _marginal_suite(project)
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=3",
                                        "--toolselect-fail-on-suite-drop",
                                        "--toolselect-adaptive=off")
    result.assert_outcomes(xfailed=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*suite: *; blocks: the whole interval is below 0*"])
    # accepting the run into the baseline accepts the drop too
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=3",
                                        "--toolselect-fail-on-suite-drop",
                                        "--toolselect-update-baseline")
    assert result.ret == pytest.ExitCode.OK


def test_a_clean_case_breaking_is_still_a_regression(project: Project) -> None:
    project.config(model="script/planned")
    project.pytester.makeconftest(PLANNED)
    project.cases([case(*FIND)])
    (project.path / "plan.json").write_text(json.dumps({FIND[1]: ["list_officers"]}))
    project.baseline({"registry.toolselect.yaml::find": {"status": "held", "passes": 3, "reps": 3,
                                                         "history": [[3, 3], [3, 3]]}},
                     subject=SUBJECT)
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*regressions (held on the baseline, fail now: these block): 1*"])


def test_a_misspelled_rule_is_a_usage_error(project: Project) -> None:
    project.config()
    project.cases([case(*FIND)])
    result = project.pytester.runpytest("--toolselect-rule=fisher-001")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolselect-rule*'fisher-001' is not a gate rule; valid rules: "
                                 "legacy, clean-break, fisher-0.05*"])


def test_a_misspelled_rule_in_the_config_file_is_a_usage_error(project: Project) -> None:
    project.config(rule="strict")
    project.cases([case(*FIND)])
    result = project.pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*rule*is not a gate rule; valid rules:*"])


# -- the simulation --------------------------------------------------------------------------------


def _benchmark() -> Any:
    spec = importlib.util.spec_from_file_location("gate_validity", REPO / "benchmarks" /
                                                  "gate_validity.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is built
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_the_simulation_is_seeded_and_drives_the_plugin_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _benchmark()
    calls = {"classify": 0, "build": 0}
    real_classify, real_build = gate.classify, bench.build

    def counting_classify(*args: Any, **kwargs: Any) -> str:
        calls["classify"] += 1
        return real_classify(*args, **kwargs)

    def counting_build(*args: Any, **kwargs: Any) -> dict[str, Any]:
        calls["build"] += 1
        return real_build(*args, **kwargs)

    monkeypatch.setattr(gate, "classify", counting_classify)
    monkeypatch.setattr(bench, "build", counting_build)

    def run() -> list[str]:
        out = io.StringIO()
        with redirect_stdout(out):
            assert bench.main(["--prs", "400", "--history", "5", "--seed", "3"]) == 0
        return out.getvalue().splitlines()[:-1]  # the last line is the time taken

    first = run()
    assert calls["classify"] > 0 and calls["build"] > 0
    assert run() == first
    text = "\n".join(first)
    for rule in gate.RULES:
        assert f"  {rule}" in text
    assert "false blocks per PR" in text and "misses per regressed case" in text
    assert any(line.startswith("   3       150  ") for line in first)
