"""The probe's gate: a group's baseline entry, and a run compared with the stored entries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_toolselect.inputs.groups import Group
from pytest_toolselect.terms.vocabulary import Verdict

from .preference import (
    FACTORS,
)

KIND = "group"
# a group's verdicts are words of the cases' vocabulary
REGRESSION = Verdict.REGRESSION
HELD = Verdict.HELD
FIXED = Verdict.FIXED
FLAKY = Verdict.FLAKY
STILL_FAILING = Verdict.STILL_FAILING
NEW = Verdict.NEW
#: "now over-calls in most reps": more than half of the control's scored calls
MOST = 0.5


def group_fingerprint(group: Group) -> str:
    from pytest_toolselect.records.fingerprint import fingerprint

    return fingerprint(group.fingerprint_data())


def baseline_entry(group: Group, stats: Mapping[str, Any]) -> dict[str, Any]:
    """A group's baseline entry from its :func:`group_stats`.

    ``over_call_share`` is None for a pair group, ``first_twin_share`` None and
    ``effects`` empty for a control: each holds only what its kind measures.
    """
    return {
        "kind": KIND,
        "control": group.is_control,
        "over_call_share": stats.get("over_call_share"),
        "effects": dict(stats.get("effects") or {}),
        "first_twin_share": stats.get("first_twin_share"),
        "reps": int(stats.get("reps", 0)),
        "group_fingerprint": group_fingerprint(group),
    }


def baseline_entries(summary: Mapping[str, Any], groups: Sequence[Group]) -> dict[str, dict[str, Any]]:
    """Baseline entries by group id, for every group with a scored call (a group that
    did not run keeps its old entry: the caller merges)."""
    per_group = summary["groups"]
    return {g.id: baseline_entry(g, per_group[g.id]) for g in groups
            if g.id in per_group and per_group[g.id]["n_scored"]}


def compare(stored: Mapping[str, Mapping[str, Any]], current: Mapping[str, Mapping[str, Any]], *,
            seed: int, resamples: int = 10_000,
            min_effect_change: float | None = None) -> dict[str, Any]:
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

    controls: list[dict[str, Any]] = []
    for key in sorted(current):
        now = current[key]
        if not now.get("control"):
            continue
        before = stored.get(key)
        share = now.get("over_call_share")
        if share is None:
            continue
        if before is None or before.get("kind") != KIND or not before.get("control"):
            verdict = NEW
            was = None
        else:
            was = before.get("over_call_share")
            if was is None:
                verdict = NEW
            elif was == 0:
                verdict = HELD if share == 0 else REGRESSION if share > MOST else FLAKY
            else:
                verdict = FIXED if share == 0 else STILL_FAILING
        controls.append({"group": key, "verdict": verdict, "before": was, "now": share})

    paired = sorted(k for k in current if k in stored and not current[k].get("control")
                    and not stored[k].get("control") and stored[k].get("kind") == KIND)

    def change(values: list[tuple[float, float]]) -> dict[str, Any] | None:
        if not values:
            return None
        ci = paired_difference_ci([a for a, _ in values], [b for _, b in values],
                                  seed=seed, resamples=resamples)
        assert ci is not None
        blocking = (min_effect_change is not None and ci.excludes_zero()
                    and abs(ci.mean) >= min_effect_change)
        return {"change": ci.mean, "ci": [ci.low, ci.high], "groups": ci.n, "blocking": blocking}

    effect_changes: dict[str, dict[str, Any]] = {}
    for factor in FACTORS:
        values = [(current[k]["effects"][factor], stored[k]["effects"][factor]) for k in paired
                  if current[k].get("effects", {}).get(factor) is not None
                  and stored[k].get("effects", {}).get(factor) is not None]
        c = change(values)
        if c is not None:
            effect_changes[factor] = c
    position = change([(current[k]["first_twin_share"], stored[k]["first_twin_share"]) for k in paired
                       if current[k].get("first_twin_share") is not None
                       and stored[k].get("first_twin_share") is not None])
    regressions = [c["group"] for c in controls if c["verdict"] == REGRESSION]
    blocking = [f"control {g} over-calls now (it did not on the baseline)" for g in regressions]
    blocking += [f"{f} effect changed by {c['change']:+.2f} [{c['ci'][0]:+.2f}, {c['ci'][1]:+.2f}]"
                 for f, c in effect_changes.items() if c["blocking"]]
    if position is not None and position["blocking"]:
        blocking.append(f"position bias changed by {position['change']:+.2f} "
                        f"[{position['ci'][0]:+.2f}, {position['ci'][1]:+.2f}]")
    changed = sorted(k for k in current if k in stored
                     and stored[k].get("group_fingerprint") != current[k].get("group_fingerprint"))
    return {
        "controls": controls,
        "regressions": regressions,
        "effect_changes": effect_changes,
        "position_bias_change": position,
        "changed_groups": changed,
        "min_effect_change": min_effect_change,
        "blocking": blocking,
    }
