"""The probe's values: a group's stats and the summary (a call's record, ``ProbeCall``, and a
group's stored entry, ``GroupEntry``, are data the records carry: ``records.probe_call`` and
``records.baseline_entry``).

Each is typed where the probe makes it and written as JSON only where it leaves
(``to_json``: the record a worker sends, the document, the baseline file); what comes
back as JSON (a worker's call, a saved document's summary, a baseline's group entry) is
read with ``from_json``, leniently where older files may lack a key. Nothing here imports
numpy: the markdown page reads a saved summary without computing one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from pytest_toolselect.records.baseline_entry import GroupEntry


@dataclass(frozen=True)
class Interval:
    """A mean over groups with its bootstrap confidence interval."""

    mean: float
    low: float
    high: float
    #: how many groups the mean is over
    n: int

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict[str, float | int | list[float]]:
        return {"mean": self.mean, "ci": [self.low, self.high], "groups": self.n}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Interval:
        low, high = data["ci"]
        return cls(mean=data["mean"], low=low, high=high, n=data["groups"])


@dataclass(frozen=True)
class GroupStats:
    """One group's shares from its scored calls (see ``preference.group_stats``).

    A pair group has ``first_twin_share`` and ``effects``; a control ``over_call`` per
    factor and ``over_call_share`` (each None or empty where the kind does not measure it).
    """

    control: bool
    domain: str | None
    n_scored: int
    reps: int
    cells_planned: int
    cells_run: int
    missing_cells: tuple[str, ...]
    first_twin_share: float | None = None
    effects: Mapping[str, float] = field(default_factory=dict)
    over_call_share: float | None = None
    #: a control's share of calls that called any tool, by factor (None for a pair group)
    over_call: Mapping[str, float] | None = None

    def to_json(self) -> dict[str, Any]:
        """The stats as the summary's ``groups`` holds them (a control's keys in its order)."""
        out: dict[str, Any] = {
            "control": self.control, "domain": self.domain, "n_scored": self.n_scored,
            "reps": self.reps, "cells_planned": self.cells_planned, "cells_run": self.cells_run,
            "missing_cells": list(self.missing_cells),
        }
        if self.control:
            out["over_call"] = dict(self.over_call or {})
            out["over_call_share"] = self.over_call_share
            out["first_twin_share"] = self.first_twin_share
            out["effects"] = dict(self.effects)
        else:
            out["first_twin_share"] = self.first_twin_share
            out["effects"] = dict(self.effects)
            out["over_call_share"] = self.over_call_share
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GroupStats:
        over_call = data.get("over_call")
        return cls(
            control=bool(data.get("control")), domain=data.get("domain"),
            n_scored=int(data.get("n_scored", 0)), reps=int(data.get("reps", 0)),
            cells_planned=int(data.get("cells_planned", 0)), cells_run=int(data.get("cells_run", 0)),
            missing_cells=tuple(data.get("missing_cells") or ()),
            first_twin_share=data.get("first_twin_share"), effects=dict(data.get("effects") or {}),
            over_call_share=data.get("over_call_share"),
            over_call=dict(over_call) if over_call is not None else None,
        )


@dataclass(frozen=True)
class ProbeSummary:
    """The probe's summary over groups (see ``preference.summarize``), or one domain's slice
    of it (``groups`` and ``by_domain`` None); ``model`` is the run's, when it names one."""

    n_groups: int
    n_pair_groups: int
    n_control_groups: int
    groups_not_run: tuple[str, ...]
    partial_groups: tuple[str, ...]
    reps: int
    n_calls: int
    n_scored: int
    n_errors: int
    n_skipped: int
    n_truncated: int
    n_inconclusive: int
    n_pair_calls: int
    n_control_calls: int
    cost_usd: float
    #: billed (it reported usage) but no price known: ``cost_usd`` leaves it out
    n_unpriced: int
    first_twin_share_baseline: Interval | None
    factor_effects: Mapping[str, Interval]
    #: share of the pair groups' scored calls by outcome (both_twins, distractor, none, unmatched)
    pair_outcomes: Mapping[str, float | None]
    control_over_call: Mapping[str, float]
    control_calls: Mapping[str, int]
    same_choice_rate: float | None
    modal_share: float | None
    n_repeated_items: int
    seed: int
    resamples: int
    groups: Mapping[str, GroupStats] | None = None
    by_domain: Mapping[str, ProbeSummary] | None = None
    model: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The summary as the document holds it, key for key."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("groups", "by_domain", "model") and value is None:
                continue  # a domain's slice has no groups of its own; a model only when named
            out[f.name] = _json(value)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProbeSummary:
        """A saved document's summary (keys an older file lacks read as none)."""
        first = data.get("first_twin_share_baseline")
        groups = data.get("groups")
        by_domain = data.get("by_domain")
        return cls(
            **{name: int(data.get(name, 0)) for name in _COUNTS},
            groups_not_run=tuple(data.get("groups_not_run") or ()),
            partial_groups=tuple(data.get("partial_groups") or ()),
            cost_usd=data.get("cost_usd", 0), n_unpriced=int(data.get("n_unpriced", 0)),
            first_twin_share_baseline=Interval.from_json(first) if first is not None else None,
            factor_effects={f: Interval.from_json(v) for f, v in (data.get("factor_effects") or {}).items()},
            pair_outcomes=dict(data.get("pair_outcomes") or {}),
            control_over_call=dict(data.get("control_over_call") or {}),
            control_calls=dict(data.get("control_calls") or {}),
            same_choice_rate=data.get("same_choice_rate"), modal_share=data.get("modal_share"),
            n_repeated_items=int(data.get("n_repeated_items", 0)),
            seed=int(data.get("seed", 0)), resamples=int(data.get("resamples", 0)),
            groups=({k: GroupStats.from_json(v) for k, v in groups.items()}
                    if groups is not None else None),
            by_domain=({d: cls.from_json(v) for d, v in by_domain.items()}
                       if by_domain is not None else None),
            model=data.get("model"),
        )


_COUNTS = ("n_groups", "n_pair_groups", "n_control_groups", "reps", "n_calls", "n_scored",
           "n_errors", "n_skipped", "n_truncated", "n_inconclusive", "n_pair_calls",
           "n_control_calls")


def _json(value: Any) -> Any:
    """A field's value as JSON: typed values through their own ``to_json``."""
    if isinstance(value, Interval):
        return value.to_dict()
    if isinstance(value, (GroupStats, ProbeSummary, GroupEntry)):
        return value.to_json()
    if isinstance(value, Mapping):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_json(v) for v in value]
    return value
