"""The run's exit status is one pure function of the run's facts, set in one place."""

from __future__ import annotations

import ast
import dataclasses

from hypothesis import given
from hypothesis import strategies as st
from test_architecture import ROOT, sources

from pytest_toolselect.gate.exit_status import Exit, RunFacts, exit_status

STATUSES = st.sampled_from([int(e) for e in Exit])
#: the verdict's own statuses (gate.decision): passes, blocks, incomplete (interrupted)
VERDICTS = st.one_of(st.none(), st.sampled_from([0, 1, 2]))
FACTS = st.builds(RunFacts, pytest_status=STATUSES, usage_problem=st.booleans(),
                  write_refused=st.booleans(), verdict=VERDICTS, report_problems=st.booleans())


@given(FACTS)
def test_a_usage_problem_or_a_refused_baseline_write_is_a_usage_error(facts: RunFacts) -> None:
    refused = facts.usage_problem or facts.write_refused
    assert (exit_status(facts) == Exit.USAGE_ERROR) >= refused
    if refused:
        assert exit_status(facts) == Exit.USAGE_ERROR


@given(FACTS)
def test_without_records_or_problems_pytest_s_status_stands(facts: RunFacts) -> None:
    # a dry run (pytest's OK), no tests (NO_TESTS_COLLECTED), a plain test's failure: the
    # plugin says nothing of them
    quiet = dataclasses.replace(facts, usage_problem=False, write_refused=False, verdict=None,
                                report_problems=False)
    assert exit_status(quiet) is None


@given(FACTS)
def test_the_verdict_decides_unless_pytest_refused_the_run_or_broke(facts: RunFacts) -> None:
    facts = dataclasses.replace(facts, usage_problem=False, write_refused=False,
                                report_problems=False)
    status = exit_status(facts)
    if facts.verdict is None:
        assert status is None
    elif facts.pytest_status in (Exit.INTERNAL_ERROR, Exit.USAGE_ERROR):
        assert status == facts.pytest_status
    else:
        # whatever pytest counted (a failed item, a not-run case, an interruption), the
        # one verdict says whether the run passes
        assert status == facts.verdict


@given(FACTS)
def test_a_report_problem_never_lets_the_run_pass(facts: RunFacts) -> None:
    facts = dataclasses.replace(facts, report_problems=True)
    status = exit_status(facts)
    assert status is not None and status != Exit.OK
    without = exit_status(dataclasses.replace(facts, report_problems=False))
    # it only turns a pass into a failure; any other status is kept as it was
    if without not in (None, Exit.OK):
        assert status == without


@given(FACTS, st.sampled_from(["usage_problem", "write_refused", "report_problems"]))
def test_one_more_problem_never_turns_a_failing_status_into_a_passing_one(
        facts: RunFacts, problem: str) -> None:
    before = exit_status(facts)
    after = exit_status(dataclasses.replace(facts, **{problem: True}))
    assert after is not None
    if before not in (None, Exit.OK):
        assert after != Exit.OK


def _sets_exitstatus(tree: ast.AST) -> list[int]:
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, (ast.Assign, ast.AugAssign))
            and any(isinstance(t, ast.Attribute) and t.attr == "exitstatus"
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))]


def test_the_session_s_exit_status_is_set_in_one_place_and_kept_in_one() -> None:
    found = {mod: lines for mod, src in sources(ROOT).items()
             if (lines := _sets_exitstatus(ast.parse(src)))}
    # run_end sets what exit_status decided; the plugin's cleanup only puts it back
    assert set(found) == {"pytest_toolselect.plugin.run_end",
                          "pytest_toolselect.plugin.machinery"}, found
    assert len(found["pytest_toolselect.plugin.run_end"]) == 1, found
    assert len(found["pytest_toolselect.plugin.machinery"]) == 1, found
    callers = sorted(mod for mod, src in sources(ROOT).items()
                     if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                            and n.func.id == "exit_status" for n in ast.walk(ast.parse(src))))
    assert callers == ["pytest_toolselect.plugin.run_end"]
