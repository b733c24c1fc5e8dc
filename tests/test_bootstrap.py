"""The numpy bootstrap: correct intervals, seeded, vectorised, and paired where it should be."""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
import pytest

from pytest_toolselect.probe import bootstrap
from pytest_toolselect.probe.bootstrap import Interval, mean_ci, paired_difference_ci, resample_means


def test_identical_values_give_a_zero_width_interval() -> None:
    ci = mean_ci([0.25] * 30, seed=1, resamples=500)
    assert ci == Interval(0.25, 0.25, 0.25, 30)
    assert ci.excludes_zero()


def test_no_values_no_interval_and_one_value_a_point() -> None:
    assert mean_ci([], seed=1) is None
    assert mean_ci([0.7], seed=1, resamples=100) == Interval(0.7, 0.7, 0.7, 1)


def test_the_interval_matches_the_normal_theory_width() -> None:
    # 400 values with sd 1: the 95% CI of the mean is about +-1.96/20 = +-0.098
    values = np.random.default_rng(7).normal(0.3, 1.0, 400)
    ci = mean_ci(values, seed=3, resamples=10_000)
    assert ci is not None
    sd = values.std(ddof=1) / np.sqrt(len(values))
    assert ci.low == pytest.approx(values.mean() - 1.96 * sd, abs=0.015)
    assert ci.high == pytest.approx(values.mean() + 1.96 * sd, abs=0.015)
    assert ci.low < ci.mean < ci.high and ci.n == 400


def test_coverage_is_close_to_95_percent() -> None:
    # 300 experiments of 40 groups each: the true mean 0.5 should fall inside ~95% of CIs
    rng = np.random.default_rng(11)
    hits = 0
    for i in range(300):
        ci = mean_ci(rng.uniform(0, 1, 40), seed=i, resamples=2_000)
        assert ci is not None
        hits += ci.low <= 0.5 <= ci.high
    assert 0.90 <= hits / 300 <= 0.99


def test_seeded_and_reproducible() -> None:
    values = np.random.default_rng(0).random(50)
    a = mean_ci(values, seed=42, resamples=2_000)
    b = mean_ci(values, seed=42, resamples=2_000)
    c = mean_ci(values, seed=43, resamples=2_000)
    assert a == b
    assert a != c


def test_blocks_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    values = np.random.default_rng(0).random(300)
    whole = resample_means(values, seed=5, resamples=3_000)
    monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", 10_000)  # 33 rows a block
    assert np.array_equal(whole, resample_means(values, seed=5, resamples=3_000))


def test_statistics_over_the_same_groups_share_their_resamples() -> None:
    rows = np.random.default_rng(1).random((3, 25))
    together = resample_means(rows, seed=9, resamples=1_000)
    assert together.shape == (3, 1_000)
    for k in range(3):
        assert np.allclose(together[k], resample_means(rows[k], seed=9, resamples=1_000))


def test_pairing_removes_the_spread_between_groups() -> None:
    rng = np.random.default_rng(2)
    before = rng.uniform(0, 1, 60)  # groups differ a lot
    after = before + 0.1 + rng.normal(0, 0.02, 60)  # each moves by about 0.1
    paired = paired_difference_ci(after, before, seed=1, resamples=5_000)
    unpaired_width = 1.96 * np.sqrt(after.var(ddof=1) / 60 + before.var(ddof=1) / 60) * 2
    assert paired is not None
    assert paired.low <= 0.1 <= paired.high
    assert paired.excludes_zero()
    assert paired.high - paired.low < unpaired_width / 5


def test_paired_values_must_align() -> None:
    with pytest.raises(ValueError, match="shape"):
        paired_difference_ci([1.0, 2.0], [1.0], seed=0)
    with pytest.raises(ValueError, match="resamples"):
        resample_means([1.0], seed=0, resamples=0)


def test_interval_as_json() -> None:
    assert Interval(0.1, -0.2, 0.3, 4).to_dict() == {"mean": 0.1, "ci": [-0.2, 0.3], "groups": 4}
    assert Interval(0.1, 0.05, 0.3, 4).excludes_zero()
    assert Interval(-0.1, -0.3, -0.01, 4).excludes_zero()
    assert not Interval(0.1, -0.05, 0.3, 4).excludes_zero()


def python_calls(run: Callable[[], object]) -> int:
    """How many Python and C functions run() calls, counted by a profile hook."""
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += event in ("call", "c_call")

    sys.setprofile(count)
    try:
        run()
    finally:
        sys.setprofile(None)
    return calls


def test_500_groups_by_10000_resamples_is_vectorised() -> None:
    # index matrices in a few large blocks, no Python loop per resample: 9,990 more resamples
    # add a handful of calls, not thousands (counted, not timed: load changes only the time)
    values = np.random.default_rng(0).random(500)
    mean_ci(values, seed=0, resamples=10)  # numpy's first use of a function may differ
    few = python_calls(lambda: mean_ci(values, seed=0, resamples=10))
    many = python_calls(lambda: mean_ci(values, seed=0, resamples=10_000))
    assert many - few < 500, (few, many)
