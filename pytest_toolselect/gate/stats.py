"""Small exact statistics for the gate: Wilson, Newcombe, a one-sided exact test, a Beta posterior.

Pure ``math`` on purpose: the gate imports this in every run that has a baseline, and
numpy (or scipy, which the plugin does not depend on) would put tens of milliseconds
of import on the plugin's load path for sums over a few dozen terms.
"""

from __future__ import annotations

import math

#: the standard normal quantile for a two-sided 95% interval
Z95 = 1.959963984540054


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion (no continuity correction).

    Chosen over the textbook Wald interval because it stays inside [0, 1] and keeps
    its coverage at 0/n and n/n, which is where a gate's pass rates live.
    """
    _check_counts(successes, trials)
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    denom = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    # the bounds at 0/n and n/n are exactly 0 and 1; the formula leaves rounding dust there
    lower = 0.0 if successes == 0 else max(0.0, centre - half)
    upper = 1.0 if successes == trials else min(1.0, centre + half)
    return lower, upper


def newcombe_diff(x1: int, n1: int, x2: int, n2: int,
                  z: float = Z95) -> tuple[float, float, float]:
    """The difference p1 - p2 of two independent proportions and its interval.

    Newcombe (1998), method 10 (the hybrid score interval): the two Wilson intervals
    combined by squaring and adding the distances on each side. It needs no iteration
    and, unlike the Wald interval, never leaves [-1, 1] or collapses to zero width at
    0/n or n/n. Returns (difference, lower, upper).
    """
    p1 = x1 / n1 if n1 else 0.0
    p2 = x2 / n2 if n2 else 0.0
    l1, u1 = wilson(x1, n1, z)
    l2, u2 = wilson(x2, n2, z)
    d = p1 - p2
    lower = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    upper = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return d, max(-1.0, lower), min(1.0, upper)


def exact_drop_p(base_passes: int, base_reps: int, passes: int, reps: int) -> float:
    """One-sided Fisher exact p-value that the pass rate fell from the baseline to now.

    With both margins fixed, the passes of this run follow a hypergeometric law under
    "nothing changed"; the p-value is the chance of this few passes or fewer. Exact
    integer sums (math.comb), so small counts need no approximation at all.
    """
    _check_counts(base_passes, base_reps)
    _check_counts(passes, reps)
    total = base_reps + reps
    passed = base_passes + passes
    failed = total - passed
    if reps == 0 or base_reps == 0:
        return 1.0
    low = max(0, reps - failed)
    tail = sum(math.comb(passed, k) * math.comb(failed, reps - k) for k in range(low, passes + 1))
    return tail / math.comb(total, reps)


def posterior_no_drop(base_passes: int, base_reps: int, passes: int, reps: int,
                      prior: tuple[int, int] = (1, 1)) -> float:
    """P(rate now >= rate on the baseline | data), each rate with a Beta posterior.

    A uniform Beta(1, 1) prior by default. Small is strong evidence of a drop; the rule
    compares it with 1 - level. Exact for integer parameters (Miller's sum over the
    now-posterior's first parameter), in log space so 25 reps do not overflow; this is
    computed directly, never as 1 - P(drop), so tiny tails keep their precision.
    """
    _check_counts(base_passes, base_reps)
    _check_counts(passes, reps)
    a_base, b_base = prior[0] + base_passes, prior[1] + base_reps - base_passes
    a_now, b_now = prior[0] + passes, prior[1] + reps - passes
    log_b_base = _log_beta(a_base, b_base)
    total = 0.0
    for i in range(a_now):
        total += math.exp(_log_beta(a_base + i, b_base + b_now) - math.log(b_now + i)
                          - _log_beta(1 + i, b_now) - log_b_base)
    return min(1.0, total)


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _check_counts(successes: int, trials: int) -> None:
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
