"""The sequential rule of adaptive reps: pure decisions, and its error under repeated looks."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolselect.gate import sequential
from pytest_toolselect.gate.sequential import MORE, REGRESSION, SETTLED, Design, decide

DESIGN, FISHER = sequential.design_for("fisher-0.005", 3, sequential.DEFAULT_MAX_EXTRA_REPS) or (
    None, None)
assert DESIGN is not None and FISHER is not None

histories = st.lists(st.integers(1, 5).flatmap(lambda r: st.tuples(st.integers(0, r), st.just(r))),
                     min_size=0, max_size=5)


def run_of(design: Design) -> st.SearchStrategy[tuple[int, int]]:
    """(passes, reps) at one of the design's looks."""
    sizes = [min(design.base_reps + k * design.batch, design.base_reps + design.max_extra)
             for k in range(design.looks + 1)]
    return st.sampled_from(sizes).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@given(histories, run_of(DESIGN))
def test_a_run_whose_every_rep_held_is_never_escalated(history: list[tuple[int, int]],
                                                       run: tuple[int, int]) -> None:
    _, reps = run
    assert decide(history, reps, reps, DESIGN, FISHER) == SETTLED


@given(histories, run_of(DESIGN))
def test_more_only_below_the_cap_and_the_verdict_is_the_decision(
        history: list[tuple[int, int]], run: tuple[int, int]) -> None:
    passes, reps = run
    decision = decide(history, passes, reps, DESIGN, FISHER)
    if decision == MORE:
        assert 0 < DESIGN.next_batch(reps) <= DESIGN.batch
        assert reps + DESIGN.next_batch(reps) <= DESIGN.base_reps + DESIGN.max_extra
    if reps == DESIGN.base_reps + DESIGN.max_extra:
        assert decision != MORE
    assert sequential.regressed(history, passes, reps, DESIGN, FISHER) == (decision == REGRESSION)


def test_no_history_settles_at_once() -> None:
    assert decide([], 0, 3, DESIGN, FISHER) == SETTLED


@given(st.floats(0.0001, 0.2), st.integers(1, 10), st.integers(0, 60), st.integers(1, 10))
def test_the_looks_spend_at_most_the_rules_alpha(alpha: float, base: int, extra: int,
                                                  batch: int) -> None:
    design = Design(alpha=alpha, base_reps=base, max_extra=extra, batch=batch, futility=0.5)
    spent = sum(design.alpha_at(k) for k in range(design.looks + 1))
    assert spent == pytest.approx(alpha)
    assert all(design.alpha_at(k) >= 0 for k in range(design.looks + 1))


def test_a_clean_break_of_a_case_that_always_held_blocks_at_the_first_look() -> None:
    assert decide([(3, 3)] * 5, 0, 3, DESIGN, FISHER) == REGRESSION


def test_a_drop_the_fixed_reps_cannot_settle_asks_again() -> None:
    # 14 of 15 then 0 of 3: p = 4/816, under fisher-0.005 but over the first look's share
    assert decide([(3, 3)] * 4 + [(2, 3)], 0, 3, DESIGN, FISHER) == MORE
    # one failed rep of a case that always held: ask again
    assert decide([(3, 3)] * 5, 2, 3, DESIGN, FISHER) == MORE
    # a case that wobbles on main and wobbles now: in line with its history
    assert decide([(2, 3), (1, 3), (2, 3), (2, 3), (1, 3)], 2, 3, DESIGN, FISHER) == SETTLED


def _binom(n: int, k: int, p: float) -> float:
    return math.comb(n, k) * p ** k * (1 - p) ** (n - k)


def ever_blocked(design: Design, history_reps: int, p: float) -> float:
    """Exactly: the chance an unchanged case at rate p is ever called a regression, over
    its pooled history ~ Binomial(history_reps, p) and every path of looks."""
    total = 0.0
    for hp in range(history_reps + 1):
        weight = _binom(history_reps, hp, p)
        states = {k: _binom(design.base_reps, k, p) for k in range(design.base_reps + 1)}
        reps = design.base_reps
        while states:
            batch = design.next_batch(reps)
            following: dict[int, float] = {}
            for passes, prob in states.items():
                decision = decide([(hp, history_reps)], passes, reps, design, FISHER)
                if decision == REGRESSION:
                    total += weight * prob
                elif decision == MORE:
                    for j in range(batch + 1):
                        following[passes + j] = following.get(passes + j, 0.0) + prob * _binom(
                            batch, j, p)
            states, reps = following, reps + batch
    return total


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([0.3, 0.5, 0.7, 0.85, 0.9, 0.95, 0.99]), st.sampled_from([3, 15]),
       st.sampled_from([3, 12]))
def test_an_unchanged_case_is_called_a_regression_at_most_alpha_of_the_time(
        p: float, history_reps: int, max_extra: int) -> None:
    design = Design(alpha=0.005, base_reps=3, max_extra=max_extra, batch=3,
                    futility=sequential.FUTILITY)
    assert ever_blocked(design, history_reps, p) <= design.alpha


@pytest.mark.parametrize("p", [0.5, 0.85, 0.95])
def test_the_default_design_keeps_an_unchanged_case_under_alpha(p: float) -> None:
    assert ever_blocked(DESIGN, 15, p) <= DESIGN.alpha


@pytest.mark.parametrize(("reps", "batch"), [(1, 3), (3, 3), (5, 5)])
def test_batches_are_the_fixed_reps_and_never_fewer_than_three(reps: int, batch: int) -> None:
    found = sequential.design_for("fisher-0.005", reps, 30)
    assert found is not None and found[0].batch == batch


@given(st.integers(1, 10).flatmap(lambda r: st.tuples(st.integers(0, r), st.just(r))))
def test_recording_buys_the_cap_only_when_reps_disagree(run: tuple[int, int]) -> None:
    passes, reps = run
    extra = sequential.recording_extra(passes, reps, DESIGN)
    if 0 < passes < reps:
        assert extra == max(0, DESIGN.base_reps + DESIGN.max_extra - reps)
    else:
        assert extra == 0


@pytest.mark.parametrize("rule", ["legacy", "clean-break"])
def test_rules_without_a_test_are_left_alone(rule: str) -> None:
    assert sequential.design_for(rule, 3, 9) is None


def test_the_beta_rules_repeat_their_posterior() -> None:
    found = sequential.design_for("beta-0.999", 3, 9)
    assert found is not None
    design, _ = found
    assert design.alpha == pytest.approx(0.001)


def test_the_benchmark_prints_the_adaptive_lines_from_the_plugins_rule(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    import io
    import re
    import sys
    from contextlib import redirect_stdout
    from pathlib import Path

    path = Path(__file__).parent.parent / "benchmarks" / "gate_validity.py"
    spec = importlib.util.spec_from_file_location("gate_validity_adaptive", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(bench)
    finally:
        del sys.modules[spec.name]
    asked = []
    real = sequential.decide

    def counting(*args: object, **kwargs: object) -> str:
        asked.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sequential, "decide", counting)
    out = io.StringIO()
    with redirect_stdout(out):
        assert bench.main(["--prs", "200", "--history", "5", "1", "--seed", "2"]) == 0
    text = out.getvalue()
    number = r"\d+\.\d+"
    for label in ("adaptive (default)", "adaptive (default), fresh baseline"):
        pattern = (rf"^{re.escape(label)}: false blocks {number}% \[{number}, {number}\], "
                   rf"misses {number}% \[{number}, {number}\], calls/PR {number}x of reps 3$")
        assert re.search(pattern, text, re.MULTILINE), text
    assert re.search(r"^adaptive \(default\), drop 0\.95 -> 0\.6: ", text, re.MULTILINE)
    assert asked
