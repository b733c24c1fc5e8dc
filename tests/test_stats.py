"""The gate's statistics against published and hand-computed values."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from fractions import Fraction

import pytest

from pytest_toolselect.gate.stats import exact_drop_p, newcombe_diff, posterior_no_drop, wilson

# -- Wilson ---------------------------------------------------------------------------------------

# Newcombe (1998a), "Two-sided confidence intervals for the single proportion", Stat Med 17:857,
# Table I, method 3 (score, no continuity correction)
WILSON_PUBLISHED = [
    ((81, 263), (0.2553, 0.3662)),
    ((15, 148), (0.0624, 0.1605)),
    ((0, 20), (0.0000, 0.1611)),
    ((1, 29), (0.0061, 0.1718)),
]


@pytest.mark.parametrize(("counts", "expected"), WILSON_PUBLISHED)
def test_wilson_matches_newcombe_1998a(counts: tuple[int, int], expected: tuple[float, float]) -> None:
    lo, hi = wilson(*counts)
    assert lo == pytest.approx(expected[0], abs=5e-5)
    assert hi == pytest.approx(expected[1], abs=5e-5)


def test_wilson_at_the_edges_stays_in_the_unit_interval() -> None:
    assert wilson(0, 3)[0] == 0.0
    assert wilson(3, 3)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)  # no data: anything is possible
    lo, hi = wilson(5, 10)
    assert lo == pytest.approx(1 - hi)  # symmetric at one half


# -- Newcombe's difference -----------------------------------------------------------------------

# Newcombe (1998b), "Interval estimation for the difference between independent proportions:
# comparison of eleven methods", Stat Med 17:873, Table II, method 10 (hybrid score)
NEWCOMBE_PUBLISHED = [
    ((56, 70, 48, 80), (0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.1705, 0.8090)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ((0, 10, 0, 20), (-0.1611, 0.2775)),
    ((0, 10, 0, 10), (-0.2775, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0000)),
    ((10, 10, 0, 10), (0.6075, 1.0000)),
]


@pytest.mark.parametrize(("counts", "expected"), NEWCOMBE_PUBLISHED)
def test_newcombe_matches_the_published_examples(counts: tuple[int, int, int, int],
                                                 expected: tuple[float, float]) -> None:
    x1, n1, x2, n2 = counts
    d, lo, hi = newcombe_diff(*counts)
    assert d == pytest.approx(x1 / n1 - x2 / n2)
    assert lo == pytest.approx(expected[0], abs=5e-5)
    assert hi == pytest.approx(expected[1], abs=5e-5)


def test_newcombe_is_antisymmetric() -> None:
    d, lo, hi = newcombe_diff(46, 50, 47, 50)
    d2, lo2, hi2 = newcombe_diff(47, 50, 46, 50)
    assert (d2, lo2, hi2) == pytest.approx((-d, -hi, -lo))
    assert lo < d < hi


# -- the one-sided exact test --------------------------------------------------------------------


@pytest.mark.parametrize(("counts", "expected"), [
    # 15 of 15 on the baseline, none of 3 now: 1 table of C(18, 3) = 816 is this extreme
    ((15, 15, 0, 3), Fraction(1, 816)),
    # 14 of 15, none of 3: the 3 failures now drawn from the 4 in all, C(4, 3) = 4 tables
    ((14, 15, 0, 3), Fraction(4, 816)),
    ((13, 15, 0, 3), Fraction(10, 816)),
    # 15 of 15, one of 3: one pass now from 16, both failures from 2: 16 tables
    ((15, 15, 1, 3), Fraction(16, 816)),
    # Fisher's lady tasting tea, read as 3 of 4 before and 1 of 4 now: (1 + 16) / 70
    ((3, 4, 1, 4), Fraction(17, 70)),
    # nothing failed: no evidence of a drop at all
    ((3, 3, 3, 3), Fraction(1)),
])
def test_exact_drop_p_hand_computed(counts: tuple[int, int, int, int], expected: Fraction) -> None:
    assert exact_drop_p(*counts) == pytest.approx(float(expected), rel=1e-12)


def test_exact_drop_p_is_the_hypergeometric_lower_tail() -> None:
    rng = random.Random(8)
    for _ in range(200):
        n1, n2 = rng.randint(1, 25), rng.randint(1, 5)
        x1, x2 = rng.randint(0, n1), rng.randint(0, n2)
        total, passed = n1 + n2, x1 + x2
        tail = sum(Fraction(math.comb(passed, k) * math.comb(total - passed, n2 - k),
                            math.comb(total, n2)) for k in range(0, x2 + 1))
        assert exact_drop_p(x1, n1, x2, n2) == pytest.approx(float(tail), rel=1e-12)


# -- the Beta posterior ---------------------------------------------------------------------------


def test_posterior_hand_computed() -> None:
    # base 15/15 -> Beta(16, 1), now 1/3 -> Beta(2, 3): P(now >= base) = E[X^16] for X ~ Beta(2, 3)
    # = B(18, 3) / B(2, 3) = (2 / 6840) / (1 / 12) = 24 / 6840
    assert posterior_no_drop(15, 15, 1, 3) == pytest.approx(24 / 6840, rel=1e-12)
    # base 1/1 -> density 2a, now 0/1 -> density 2(1 - b): P(b >= a) = 2 B(2, 3) = 1/6
    assert posterior_no_drop(1, 1, 0, 1) == pytest.approx(1 / 6, rel=1e-12)
    # the same data on both sides: by symmetry one half
    assert posterior_no_drop(7, 10, 7, 10) == pytest.approx(0.5, rel=1e-12)


def test_posterior_agrees_with_sampling() -> None:
    rng = random.Random(8)
    draws = 200_000
    hits = sum(rng.betavariate(3, 2) >= rng.betavariate(13, 4) for _ in range(draws))
    # base 12/15, now 2/3
    assert posterior_no_drop(12, 15, 2, 3) == pytest.approx(hits / draws, abs=0.005)


def test_counts_are_checked() -> None:
    with pytest.raises(ValueError, match="4/3"):
        exact_drop_p(4, 3, 0, 3)
    with pytest.raises(ValueError, match="-1/3"):
        wilson(-1, 3)


def test_stats_needs_no_numpy_or_scipy() -> None:
    code = ("import sys, pytest_toolselect.gate.stats, pytest_toolselect.gate.verdict_rules; "
            "print([m for m in ('numpy', 'scipy') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
