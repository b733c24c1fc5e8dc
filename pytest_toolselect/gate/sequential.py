"""Adaptive reps: a group-sequential test of this run against a case's history.

After a case's reps, a drop the rule cannot settle either way earns a small batch
of extra reps, then another, up to a cap; each look tests all reps of this run
against the pooled history with the rule's own test (the one-sided Fisher exact
p-value, or the Beta posterior for the beta rules). Three outcomes per look:

* **regression**: the p-value is at or below the alpha this look may spend;
* **settled**: every rep held, the p-value is above the futility bound (this run
  looks like the history), or the cap is reached;
* **more**: neither: ask another batch.

The error under repeated looks is controlled by splitting the rule's alpha between
the only two looks that may block (a Haybittle-Peto-like plan with a union bound):
the first look (the fixed reps) spends a quarter, the last (the cap) the rest; the
batches in between may only stop early as settled. Whatever the correlation between
looks, and however discrete the test, the chance that a case which did not change
is ever called a regression is then at most the rule's alpha. Stopping early as
settled only removes chances to block, so it needs no share of alpha. Pure
functions: data in, decision out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_toolselect.terms.rule_names import DEFAULT_MAX_EXTRA_REPS as DEFAULT_MAX_EXTRA_REPS
from pytest_toolselect.terms.vocabulary import Step

REGRESSION, SETTLED, MORE = Step.REGRESSION, Step.SETTLED, Step.MORE

#: one stored run of a case: (passes, reps)
Run = tuple[int, int]
#: (history passes, history reps, passes now, reps now) -> a p-value of "no drop"
Test = Callable[[int, int, int, int], float]

#: the fewest extra reps asked at once
MIN_BATCH = 3
#: share of the rule's alpha the first look (the fixed reps) may spend; the last look
#: spends the rest. A quarter of 0.005 still blocks a clean break of a case that held
#: 15 of 15 stored reps (p = 1/816) without asking again
FIRST_LOOK_SHARE = 0.25
#: settle as soon as the p-value of "no drop" is above this: the run is in line with
#: the history (a known-marginal case that failed a rep, as it does)
FUTILITY = 0.5
#: the alternative of the likelihood-ratio stop: the pass rate fell to this share of
#: the history's
DROP = 0.5
#: settle as soon as this run fits "the rate halved" at most this many times as well
#: as "nothing changed" (an SPRT's lower bound, used only to stop early)
FUTILITY_RATIO = 0.3


@dataclass(frozen=True)
class Design:
    """One case's sequential plan: the reps every case gets, then batches up to a cap."""

    alpha: float
    base_reps: int
    max_extra: int
    batch: int
    futility: float

    @property
    def looks(self) -> int:
        """Looks after the first: one per batch."""
        return math.ceil(self.max_extra / self.batch) if self.max_extra > 0 else 0

    def look_of(self, reps: int) -> int:
        """Which look `reps` reps of this run are (0: the fixed reps)."""
        extra = max(0, reps - self.base_reps)
        return min(self.looks, math.ceil(extra / self.batch)) if self.batch else 0

    def alpha_at(self, look: int) -> float:
        """The alpha look k may spend: a share up front, the rest evenly over the batches."""
        if self.looks == 0:
            return self.alpha
        if look == 0:
            return self.alpha * FIRST_LOOK_SHARE
        # the batches in between only look for a reason to stop early as settled
        return self.alpha * (1 - FIRST_LOOK_SHARE) if look >= self.looks else 0.0

    def next_batch(self, reps: int) -> int:
        return max(0, min(self.batch, self.base_reps + self.max_extra - reps))


def design_for(rule: str, base_reps: int, max_extra: int) -> tuple[Design, Test] | None:
    """The plugin's design for a gate rule, or None: the rule has no test to repeat."""
    found = rule_test(rule)
    if found is None:
        return None
    test, alpha = found
    # batches of the fixed reps, and at least MIN_BATCH calls: at reps 1 a batch of one
    # would make a broken case wait for thirty round trips
    return Design(alpha=alpha, base_reps=base_reps, max_extra=max_extra,
                  batch=max(base_reps, MIN_BATCH), futility=FUTILITY), test


def pooled(history: Sequence[Run]) -> Run:
    return sum(p for p, _ in history), sum(r for _, r in history)


def decide(history: Sequence[Run], passes: int, reps: int, design: Design, test: Test) -> Step:
    """After a look at `passes` of `reps`: REGRESSION, SETTLED or MORE."""
    if reps > 0 and passes >= reps:
        return SETTLED
    hp, hr = pooled(history)
    if hr == 0 or reps == 0:
        return SETTLED
    p = test(hp, hr, passes, reps)
    if p <= design.alpha_at(design.look_of(reps)):
        return REGRESSION
    if (p > design.futility or likelihood_ratio(hp, hr, passes, reps) < FUTILITY_RATIO
            or design.next_batch(reps) == 0):
        return SETTLED
    return MORE


def likelihood_ratio(hp: int, hr: int, passes: int, reps: int) -> float:
    """How much better this run fits a broken case than the case of the history.

    The history's rate p0 (with half a pass and half a failure added, so 15/15 is
    not certainty) against the alternative that the rate halved, p1 = p0 / 2.
    """
    p0 = (hp + 0.5) / (hr + 1)
    p1 = p0 * DROP
    return float((p1 / p0) ** passes * ((1 - p1) / (1 - p0)) ** (reps - passes))


def regressed(history: Sequence[Run], passes: int, reps: int, design: Design, test: Test) -> bool:
    """The verdict at the look this run stopped at.

    The run stops at the first look that crosses a bound, so whether the last look
    crossed the efficacy bound is whether the sequence did: the verdict is a pure
    function of the history and this run's totals.
    """
    return decide(history, passes, reps, design, test) == REGRESSION


def recording_extra(passes: int, reps: int, design: Design) -> int:
    """Extra reps for a case recorded with no history: all of the cap when its reps disagree.

    With nothing stored to test against there is no sequential test to stop early;
    the stored rate is what later runs are tested against, so it is bought in full.
    """
    if 0 < passes < reps:
        return max(0, design.base_reps + design.max_extra - reps)
    return 0


# -- the rule family ------------------------------------------------------------------------------


def _fisher(hp: int, hr: int, passes: int, reps: int) -> float:
    from .stats import exact_drop_p

    return exact_drop_p(hp, hr, passes, reps)


def _beta(hp: int, hr: int, passes: int, reps: int) -> float:
    from .stats import posterior_no_drop

    return posterior_no_drop(hp, hr, passes, reps)


def rule_test(rule: str) -> tuple[Test, float] | None:
    """The test and alpha of a gate rule by name, or None: the rule has no test to
    repeat (legacy, clean-break), and adaptive reps leave it alone."""
    family, _, level = rule.partition("-")
    try:
        value = float(level)
    except ValueError:
        return None
    if family == "fisher":
        return _fisher, value
    if family == "beta":
        return _beta, 1 - value
    return None
