"""The probe's gate: a group's baseline entry, and a run compared with the stored entries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolselect.inputs.groups import Group
from pytest_toolselect.records.baseline_entry import GroupEntry
from pytest_toolselect.records.fingerprint import fingerprint
from pytest_toolselect.records.run_records import GROUP_KIND
from pytest_toolselect.terms.vocabulary import Verdict

from .preference import FACTORS
from .values import GroupStats, ProbeSummary

KIND = GROUP_KIND
#: "now over-calls in most reps": more than half of the control's scored calls
MOST = 0.5


def group_fingerprint(group: Group) -> str:
    return fingerprint(group.fingerprint_data())


def baseline_entry(group: Group, stats: GroupStats) -> GroupEntry:
    """A group's baseline entry from its :func:`group_stats`.

    ``over_call_share`` is None for a pair group, ``first_twin_share`` None and
    ``effects`` empty for a control: each holds only what its kind measures.
    """
    return GroupEntry(kind=KIND, control=group.is_control, over_call_share=stats.over_call_share,
                      effects=dict(stats.effects), first_twin_share=stats.first_twin_share,
                      reps=stats.reps, group_fingerprint=group_fingerprint(group))


def baseline_entries(summary: ProbeSummary, groups: Sequence[Group]) -> dict[str, GroupEntry]:
    """Baseline entries by group id, for every group with a scored call (a group that
    did not run keeps its old entry: the caller merges)."""
    per_group = summary.groups or {}
    return {g.id: baseline_entry(g, per_group[g.id]) for g in groups
            if g.id in per_group and per_group[g.id].n_scored}


@dataclass(frozen=True)
class ControlVerdict:
    """A control group against its stored entry: its share of calls that called a tool."""

    group: str
    verdict: Verdict
    #: the stored share (None: no stored entry to compare with)
    before: float | None
    now: float

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "verdict": self.verdict.value, "before": self.before,
                "now": self.now}


@dataclass(frozen=True)
class EffectChange:
    """The change of a measure since the baseline, paired over groups, with its CI."""

    change: float
    low: float
    high: float
    groups: int
    blocking: bool

    @property
    def holds_zero(self) -> bool:
        return bool(self.low <= 0 <= self.high)

    def to_json(self) -> dict[str, Any]:
        return {"change": self.change, "ci": [self.low, self.high], "groups": self.groups,
                "blocking": self.blocking}


@dataclass(frozen=True)
class Comparison:
    """This run's group entries against the baseline's (see :func:`compare`)."""

    controls: tuple[ControlVerdict, ...]
    #: the controls that over-call now and did not on the baseline (blocking)
    regressions: tuple[str, ...]
    effect_changes: Mapping[str, EffectChange]
    position_bias_change: EffectChange | None
    changed_groups: tuple[str, ...]
    min_effect_change: float | None
    #: why the comparison blocks, one line each (empty: it does not)
    blocking: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The comparison as the probe's document holds it."""
        position = self.position_bias_change
        return {
            "controls": [c.to_json() for c in self.controls],
            "regressions": list(self.regressions),
            "effect_changes": {f: c.to_json() for f, c in self.effect_changes.items()},
            "position_bias_change": position.to_json() if position is not None else None,
            "changed_groups": list(self.changed_groups),
            "min_effect_change": self.min_effect_change,
            "blocking": list(self.blocking),
        }


def compare(stored: Mapping[str, GroupEntry], current: Mapping[str, GroupEntry], *,
            seed: int, resamples: int = 10_000,
            min_effect_change: float | None = None) -> Comparison:
    """This run's group entries against the baseline's (both keyed alike, e.g. by node id).

    Controls: one that did not over-call on the baseline and now over-calls in most of
    its calls is a "regression" (blocking). Pairs: the change of each factor effect and
    of the position bias (first-listed twin share), paired over the groups present in
    both, with a bootstrap CI of the change; reported, and blocking only when
    ``min_effect_change`` is given, the CI excludes 0 and |change| >= it. Groups whose
    fingerprint changed are still paired (as cases whose tools changed are still gated)
    and listed in ``changed_groups`` so a report can say so.
    """
    from .bootstrap import paired_difference_ci  # numpy: only when comparing

    controls: list[ControlVerdict] = []
    for key in sorted(current):
        now = current[key]
        if not now.control:
            continue
        before = stored.get(key)
        share = now.over_call_share
        if share is None:
            continue
        if before is None or before.kind != KIND or not before.control:
            verdict = Verdict.NEW
            was = None
        else:
            was = before.over_call_share
            if was is None:
                verdict = Verdict.NEW
            elif was == 0:
                verdict = (Verdict.HELD if share == 0 else Verdict.REGRESSION if share > MOST
                           else Verdict.FLAKY)
            else:
                verdict = Verdict.FIXED if share == 0 else Verdict.STILL_FAILING
        controls.append(ControlVerdict(key, verdict, was, share))

    paired = sorted(k for k in current if k in stored and not current[k].control
                    and not stored[k].control and stored[k].kind == KIND)

    def change(values: list[tuple[float, float]]) -> EffectChange | None:
        if not values:
            return None
        ci = paired_difference_ci([a for a, _ in values], [b for _, b in values],
                                  seed=seed, resamples=resamples)
        assert ci is not None
        blocking = (min_effect_change is not None and ci.excludes_zero()
                    and abs(ci.mean) >= min_effect_change)
        return EffectChange(ci.mean, ci.low, ci.high, ci.n, blocking)

    effect_changes: dict[str, EffectChange] = {}
    for factor in FACTORS:
        values = [(effect_now, effect_was) for k in paired
                  if (effect_now := current[k].effects.get(factor)) is not None
                  and (effect_was := stored[k].effects.get(factor)) is not None]
        c = change(values)
        if c is not None:
            effect_changes[factor] = c
    position = change([(share_now, share_was) for k in paired
                       if (share_now := current[k].first_twin_share) is not None
                       and (share_was := stored[k].first_twin_share) is not None])
    regressions = [c.group for c in controls if c.verdict == Verdict.REGRESSION]
    blocking = [f"control {g} over-calls now (it did not on the baseline)" for g in regressions]
    blocking += [f"{f} effect changed by {c.change:+.2f} [{c.low:+.2f}, {c.high:+.2f}]"
                 for f, c in effect_changes.items() if c.blocking]
    if position is not None and position.blocking:
        blocking.append(f"position bias changed by {position.change:+.2f} "
                        f"[{position.low:+.2f}, {position.high:+.2f}]")
    changed = sorted(k for k in current if k in stored
                     and stored[k].group_fingerprint != current[k].group_fingerprint)
    return Comparison(controls=tuple(controls), regressions=tuple(regressions),
                      effect_changes=effect_changes, position_bias_change=position,
                      changed_groups=tuple(changed), min_effect_change=min_effect_change,
                      blocking=tuple(blocking))
