"""The gate: a case's status over reps, and its verdict against the baseline.

Only a case that held on the baseline and no longer holds blocks (a
regression). Repeated runs of a real model move marginal cases back and
forth, so a gate on the total or on every failure would block on noise.

Which drops count as a regression is a named *rule* over the case's stored
history (the last K runs on main, see baseline.build): a case that always held
blocks on a clean break (every rep fails now); a case known to wobble blocks
only on strong statistical evidence. The default rule is the one the simulation
in benchmarks/gate_validity.py chose (figures in docs/gate.md).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_toolselect.messages.plural import plural
from pytest_toolselect.records.baseline_entry import CaseEntry
from pytest_toolselect.records.baseline_entry import Run as Run  # re-exported: gate.Run
from pytest_toolselect.records.report_input import SuiteChange

# the names and defaults are data the options table shows too; re-exported as gate.<name>
from pytest_toolselect.terms.rule_names import DEFAULT_HISTORY as DEFAULT_HISTORY
from pytest_toolselect.terms.rule_names import DEFAULT_RULE
from pytest_toolselect.terms.rule_names import RULE_NAMES as RULE_NAMES
from pytest_toolselect.terms.rule_names import rule_problem as rule_problem
from pytest_toolselect.terms.vocabulary import Outcome, Status, Verdict

if TYPE_CHECKING:
    from pytest_toolselect.records.report_input import SuiteChange
    from pytest_toolselect.records.run_records import CaseRecord

#: most severe first: the enum's own order
VERDICT_ORDER = tuple(Verdict)

def status_of(passes: int, reps: int) -> Status:
    if passes >= reps:
        return Status.HELD
    if passes == 0:
        return Status.FAILING
    return Status.FLAKY


# -- rules ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """A way to decide, from a case's history and this run, that it regressed."""

    name: str
    summary: str
    #: (history oldest first, passes now, reps now) -> blocks; only asked when not all reps passed
    regressed: Callable[[Sequence[Run], int, int], bool]


def history_of(base: CaseEntry) -> list[Run]:
    """A baseline entry's stored runs, oldest first (``CaseEntry.runs``): entries written
    before the history existed hold one run (their passes and reps)."""
    return base.runs


def _pooled(history: Iterable[Run]) -> Run:
    runs = list(history)
    return sum(p for p, _ in runs), sum(r for _, r in runs)


def always_held(history: Sequence[Run]) -> bool:
    """Every stored rep of every stored run passed: nothing marks the case as marginal."""
    return bool(history) and all(p >= r for p, r in history)


def clean_break(history: Sequence[Run], passes: int, reps: int) -> bool:
    """A case that always held now fails every rep."""
    return passes == 0 and reps > 0 and always_held(history)


def _legacy(history: Sequence[Run], passes: int, reps: int) -> bool:
    # the gate before the history: held on the last baseline run, fails every rep now
    p, r = history[-1]
    return passes == 0 and p >= r


def _exact(alpha: float) -> Callable[[Sequence[Run], int, int], bool]:
    def regressed(history: Sequence[Run], passes: int, reps: int) -> bool:
        if clean_break(history, passes, reps):
            return True
        from .stats import exact_drop_p

        return exact_drop_p(*_pooled(history), passes, reps) <= alpha

    return regressed


def _posterior(level: float) -> Callable[[Sequence[Run], int, int], bool]:
    def regressed(history: Sequence[Run], passes: int, reps: int) -> bool:
        if clean_break(history, passes, reps):
            return True
        from .stats import posterior_no_drop

        return posterior_no_drop(*_pooled(history), passes, reps) <= 1 - level

    return regressed


RULES: dict[str, Rule] = {r.name: r for r in (
    Rule("legacy", "held on the last baseline run, every rep fails now (history ignored)", _legacy),
    Rule("clean-break", "every stored rep held, every rep fails now; a known-marginal case never "
         "blocks", clean_break),
    Rule("fisher-0.05", "clean break, or a one-sided Fisher exact test of history vs now, p <= 0.05",
         _exact(0.05)),
    Rule("fisher-0.01", "clean break, or a one-sided Fisher exact test of history vs now, p <= 0.01",
         _exact(0.01)),
    Rule("fisher-0.005", "clean break, or a one-sided Fisher exact test of history vs now, "
         "p <= 0.005", _exact(0.005)),
    Rule("fisher-0.001", "clean break, or a one-sided Fisher exact test of history vs now, "
         "p <= 0.001", _exact(0.001)),
    Rule("beta-0.99", "clean break, or P(rate dropped | data) >= 0.99 with Beta(1,1) priors",
         _posterior(0.99)),
    Rule("beta-0.995", "clean break, or P(rate dropped | data) >= 0.995 with Beta(1,1) priors",
         _posterior(0.995)),
    Rule("beta-0.999", "clean break, or P(rate dropped | data) >= 0.999 with Beta(1,1) priors",
         _posterior(0.999)),
)}



def get_rule(name: str | Rule) -> Rule:
    if isinstance(name, Rule):
        return name
    try:
        return RULES[name]
    except KeyError:
        raise ValueError(f"unknown gate rule {name!r}; valid rules: {', '.join(RULES)}") from None


# -- verdicts -------------------------------------------------------------------------------------


def classify(passes: int, reps: int, base: CaseEntry | None, *, have_baseline: bool,
             rule: str | Rule = DEFAULT_RULE) -> Verdict:
    """The verdict of one case from its passes over reps now and its baseline entry (if any)."""
    status = status_of(passes, reps)
    if not have_baseline:
        if status == Status.FLAKY:
            return Verdict.FLAKY
        return Verdict.PASSED if status == Status.HELD else Verdict.FAILED
    if base is None:
        if status == Status.FLAKY:
            return Verdict.FLAKY
        return Verdict.NEW if status == Status.HELD else Verdict.NEW_FAILING
    if status == Status.HELD:
        return Verdict.FIXED if base.status == Status.FAILING else Verdict.HELD
    if get_rule(rule).regressed(history_of(base), passes, reps):
        return Verdict.REGRESSION
    if status == Status.FLAKY:
        # reps disagree within this run and the rule does not call it a regression
        return Verdict.FLAKY
    # every rep fails now, and the history says the case failed on the baseline too
    # (or the rule wants stronger evidence than a known-marginal case gives)
    return Verdict.STILL_FAILING


def evaluated_checks(base: CaseEntry) -> frozenset[str]:
    """The checks a baseline entry was evaluated with (``CaseEntry.evaluated``)."""
    return base.evaluated


def judge(failing: Sequence[Collection[str]], base: CaseEntry | None, *,
          have_baseline: bool, rule: str | Rule = DEFAULT_RULE) -> tuple[Verdict, list[str]]:
    """The verdict of one case from each rep's failing checks, and the checks set aside.

    A check an upgrade added never blocks by itself: the case is judged on the checks its
    baseline entry was evaluated with. When the others change its verdict, a case that
    holds on those is new failing (reported, not blocking) until the baseline is updated,
    and one that does not keeps the verdict they give; the checks set aside are returned
    (empty when they changed nothing)."""
    reps = len(failing)
    verdict = classify(sum(1 for f in failing if not f), reps, base,
                       have_baseline=have_baseline, rule=rule)
    if base is None or not have_baseline:
        return verdict, []
    known = evaluated_checks(base)
    passes_known = sum(1 for f in failing if known.isdisjoint(f))
    known_verdict = classify(passes_known, reps, base, have_baseline=True, rule=rule)
    if known_verdict == verdict:
        return verdict, []
    unknown = sorted({c for f in failing for c in f} - known)
    if known_verdict in (Verdict.HELD, Verdict.FIXED):
        return Verdict.NEW_FAILING, unknown
    return known_verdict, unknown


def pytest_outcome(verdict: Verdict, *, fail_on_flaky: bool, fail_on_still_failing: bool,
                   accept_regressions: bool, fail_on_drift: bool = False) -> Outcome:
    """How a verdict shows in pytest: 'passed', 'failed', 'xfailed' or 'warned' (passed + warning)."""
    if verdict in (Verdict.HELD, Verdict.PASSED, Verdict.NEW, Verdict.FIXED):
        return Outcome.PASSED
    if verdict == Verdict.FLAKY:
        return Outcome.FAILED if fail_on_flaky else Outcome.WARNED
    if verdict == Verdict.FAILED:
        return Outcome.FAILED
    if verdict == Verdict.REGRESSION:
        return Outcome.XFAILED if accept_regressions else Outcome.FAILED
    if verdict == Verdict.STILL_FAILING:
        return Outcome.FAILED if fail_on_still_failing else Outcome.XFAILED
    if verdict == Verdict.NEW_FAILING:
        return Outcome.XFAILED
    if verdict == Verdict.DRIFT:
        return Outcome.XFAILED if accept_regressions or not fail_on_drift else Outcome.FAILED
    raise ValueError(f"no pytest outcome for verdict {verdict!r}")


# -- the whole suite ------------------------------------------------------------------------------


def measure_suite(records: Iterable[CaseRecord], base_status: Mapping[str, str | None],
                  *, fail_on_drop: bool = False) -> SuiteChange | None:
    """The share of cases held now against the baseline (each entry's status by key: all
    the check reads of it), with a Newcombe 95% interval.

    Only cases scored now *and* in the baseline are compared, so a new or errored case
    does not move the rate. The two shares come from the same cases, so treating them as
    independent (as Newcombe's method 10 does) makes the interval wider, never narrower:
    the check can only err towards not blocking. None when nothing can be compared.
    """
    from .stats import newcombe_diff

    now_held = base_held = n = 0
    for rec in records:
        if rec.status is None or rec.key not in base_status:
            continue
        n += 1
        now_held += rec.status == Status.HELD
        base_held += base_status[rec.key] == Status.HELD
    if n == 0:
        return None
    change, low, high = newcombe_diff(now_held, n, base_held, n)
    dropped = high < 0
    return SuiteChange(
        cases=n, held_now=now_held, held_baseline=base_held, rate_now=now_held / n,
        rate_baseline=base_held / n, change=change, low=low, high=high, level=0.95,
        method="newcombe-hybrid-score",
        dropped=dropped, blocks=fail_on_drop and dropped,
    )


def suite_line(s: SuiteChange) -> str:
    """One line for the terminal summary (and any other text report: a document's suite,
    read with SuiteChange.from_json)."""
    line = (f"suite: {s.rate_now:.1%} held vs {s.rate_baseline:.1%} on the baseline, "
            f"change {s.change * 100:+.1f} pts [{s.low * 100:+.1f}, "
            f"{s.high * 100:+.1f}] (Newcombe 95%, {plural(s.cases, 'case')})")
    if s.blocks:
        line += "; blocks: the whole interval is below 0 (--toolselect-fail-on-suite-drop)"
    elif s.dropped:
        line += "; below 0 beyond noise (blocks only with --toolselect-fail-on-suite-drop)"
    return line
