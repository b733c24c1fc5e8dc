"""The probe's terminal summary: short by default, every slice and change under -v.

Pure properties over generated summaries and comparisons; the pytester run is in
test_first_hour.py (test_the_probe_summary_is_short_by_default_and_whole_under_v).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.probe.comparison import Comparison, EffectChange
from pytest_toolselect.probe.preference import FACTORS, summarize
from pytest_toolselect.probe.values import ProbeSummary
from pytest_toolselect.report.probe_report import comparison_lines, lines

SHARE = st.floats(-1, 1, allow_nan=False)


@st.composite
def changes(draw: st.DrawFn) -> EffectChange:
    lo, hi = sorted((draw(SHARE), draw(SHARE)))
    return EffectChange(change=(lo + hi) / 2, low=lo, high=hi, groups=draw(st.integers(2, 40)),
                        blocking=draw(st.booleans()))


@st.composite
def comparisons(draw: st.DrawFn) -> Comparison:
    factors = draw(st.lists(st.sampled_from(FACTORS), unique=True))
    return Comparison(controls=(), regressions=(),
                      effect_changes={f: draw(changes()) for f in factors},
                      position_bias_change=draw(st.none() | changes()), changed_groups=(),
                      blocking=(), min_effect_change=None)


def _rows(comparison: Comparison) -> list[tuple[str, EffectChange]]:
    position = comparison.position_bias_change
    return ([("position bias", position)] if position else []) + [
        (f, comparison.effect_changes[f]) for f in FACTORS if f in comparison.effect_changes]


@given(comparisons())
def test_a_short_comparison_shows_each_change_that_matters_and_names_the_rest(
        comparison: Comparison) -> None:
    short = list(comparison_lines(comparison, every_change=False))
    whole = list(comparison_lines(comparison))
    quiet_lines = [line for line in short if "whose 95% CI holds 0:" in line]
    assert len(quiet_lines) <= 1
    for name, change in _rows(comparison):
        own = [line for line in short if line.startswith(f"    {name:<13} ")]
        lo, hi = change.low, change.high
        matters = change.blocking or not lo <= 0 <= hi
        # a change that blocks or whose CI excludes 0 has its line; any other is only named
        assert len(own) == (1 if matters else 0), (name, change, short)
        assert own == [] or own[0] in whole
        named = bool(quiet_lines) and name in quiet_lines[0].split(": ", 1)[1]
        assert named == (not matters), (name, change, short)
    # -v: one line per change, nothing named in bulk
    assert len([line for line in whole if line.startswith("    ")]) == len(_rows(comparison))
    assert not any("whose 95% CI holds 0" in line for line in whole)
    assert len(short) <= len(whole) + 1


@cache
def _template() -> ProbeSummary:
    """A real domain slice, from summarize over two pair groups and a control."""
    from test_preference import first_listed, group, pairs, simulate

    groups = [*pairs(2, domain="docs"), group("C1", control=True, domain="docs")]
    return summarize(simulate(groups, first_listed), groups, seed=0, resamples=100)


DOMAIN = st.from_regex(r"[a-z]{2,10}", fullmatch=True)


@given(st.dictionaries(DOMAIN, st.integers(1, 6), min_size=2, max_size=30))
def test_the_short_summary_does_not_grow_with_the_domains(sizes: dict[str, int]) -> None:
    base = _template()
    assert base.by_domain is not None
    part = base.by_domain["docs"]
    by_domain = {d: replace(part, n_groups=n, n_pair_groups=n, n_control_groups=0)
                 for d, n in sizes.items()}
    summary = replace(base, by_domain=by_domain, n_groups=sum(sizes.values()))
    short = list(lines(summary, by_domain=False))
    whole = list(lines(summary))
    sliced = [d for d, n in sizes.items() if n >= 2]
    single = [d for d, n in sizes.items() if n < 2]
    overall = list(lines(replace(base, by_domain={})))
    if sliced:
        # the overall lines, then one line naming the sliced domains
        assert short == [*overall, f"by domain: {', '.join(sliced)} (-v shows each domain's effects)"]
        assert all(f"  {d}: {n} pair groups, 0 controls" in whole for d, n in sizes.items() if n >= 2)
    else:
        assert short == whole == [*overall, f"domains with one group (not sliced): {', '.join(single)}"]
    assert all(line in whole for line in overall)
