"""What asking a blocked case again with the baseline's tools found (gate/attribution.py
decides, run/attribution.py asks): the record holds it, every report says it.

``to_json()`` writes it key for key as the results document always held it: an attribution
never made names its reason and no calls; one that asked names its counts, the paired check
when it was made, what it cost and its one line (or why it stopped short).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_toolselect.terms.vocabulary import Verdict

from .strict import require_keys


def _pair(value: Any) -> tuple[int, int]:
    passes, reps = value
    return int(passes), int(reps)


@dataclass(frozen=True, slots=True)
class ChangedTool:
    """A tool that differs between the baseline's set and the head's, and the part that
    changed (``description``, ``input schema``, both, ``added``, ``removed``, or ``name``:
    a rename, with the new name)."""

    tool: str
    part: str
    renamed_to: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool, "part": self.part}
        if self.renamed_to is not None:
            out["renamed_to"] = self.renamed_to
        return out


@dataclass(frozen=True, slots=True)
class Cause:
    """A change whose head version breaks the case: the [passes, reps] with it put back, and
    whether the head's model chose the new tool (shadowing), and the change's word diff."""

    change: ChangedTool
    evidence: tuple[int, int]
    shadowing: bool = False
    diff: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {**self.change.to_json(), "evidence": list(self.evidence)}
        if self.shadowing:
            out["shadowing"] = True
        if self.diff is not None:
            out["diff"] = self.diff
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Cause:
        require_keys(cls, data, ("tool", "part", "evidence"), ("renamed_to", "shadowing", "diff"))
        return cls.read(data)

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> Cause:
        return cls(ChangedTool(data["tool"], data["part"], data.get("renamed_to")),
                   _pair(data.get("evidence") or (0, 0)), bool(data.get("shadowing")),
                   data.get("diff"))


@dataclass(frozen=True, slots=True)
class PairedCheck:
    """The paired arms asked now: the one-sided p, the baseline's tools' and the head's
    [passes, reps]."""

    p: float
    baseline_tools: tuple[int, int]
    head: tuple[int, int]


#: the keys of an attribution that asked, in order (the paired check's, costs and the line
#: follow where they were written)
_ASKED_KEYS = ("outcome", "recorded", "same_tools", "reps_per_arm", "causes", "search",
               "stopped", "calls", "costs", "usage")
_ASKED_OPTIONAL = ("p_paired", "baseline_tools", "head", "summary", "unavailable")
_UNASKED_KEYS = ("outcome", "unavailable", "calls")


@dataclass(frozen=True, slots=True)
class Attribution:
    """A blocked case asked again: regression or drift (None: not decided, and why)."""

    outcome: Verdict | None
    calls: int = 0
    #: why no outcome was decided (no kept tools, a cap, a stop before the paired check)
    unavailable: str | None = None
    #: the entry's recorded [passes, reps]; None: nothing was asked
    recorded: tuple[int, int] | None = None
    same_tools: bool = False
    reps_per_arm: int = 0
    causes: tuple[Cause, ...] = ()
    #: how the causes were searched for (single, one at a time, halving, together)
    search: str | None = None
    #: why the asking stopped before it was complete
    stopped: str | None = None
    paired: PairedCheck | None = None
    #: each call's price (None: unknown) and the tokens: the cost summary counts them
    costs: tuple[float | None, ...] = ()
    usage: dict[str, int] = field(default_factory=dict)
    #: the one line every report shows (written for JSON readers too)
    summary: str | None = None

    def __post_init__(self) -> None:
        if self.outcome is not None:
            object.__setattr__(self, "outcome", Verdict(self.outcome))

    def to_json(self) -> dict[str, Any]:
        outcome = None if self.outcome is None else self.outcome.value
        if self.recorded is None:
            return {"outcome": outcome, "unavailable": self.unavailable, "calls": self.calls}
        out: dict[str, Any] = {
            "outcome": outcome, "recorded": list(self.recorded), "same_tools": self.same_tools,
            "reps_per_arm": self.reps_per_arm, "causes": [c.to_json() for c in self.causes],
            "search": self.search, "stopped": self.stopped, "calls": self.calls}
        if self.paired is not None:
            out.update(p_paired=self.paired.p, baseline_tools=list(self.paired.baseline_tools),
                       head=list(self.paired.head))
        out.update(costs=list(self.costs), usage=dict(self.usage))
        if self.unavailable is not None:
            out["unavailable"] = self.unavailable
        if self.summary is not None:
            out["summary"] = self.summary
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Attribution:
        if "recorded" not in data:
            require_keys(cls, data, _UNASKED_KEYS)
            return cls(data["outcome"], data["calls"], data["unavailable"])
        require_keys(cls, data, _ASKED_KEYS, _ASKED_OPTIONAL)
        return cls._asked(data, Cause.from_json)

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> Attribution:
        """A saved document's attribution: what is absent reads as not said."""
        if data.get("recorded") is None:
            return cls(data.get("outcome"), data.get("calls", 0), data.get("unavailable"))
        return cls._asked(data, Cause.read)

    @classmethod
    def _asked(cls, data: Mapping[str, Any], cause: Any) -> Attribution:
        paired = (PairedCheck(data["p_paired"], _pair(data["baseline_tools"]), _pair(data["head"]))
                  if "p_paired" in data else None)
        return cls(data.get("outcome"), data.get("calls", 0), data.get("unavailable"),
                   _pair(data["recorded"]), bool(data.get("same_tools")),
                   data.get("reps_per_arm", 0), tuple(cause(c) for c in data.get("causes") or ()),
                   data.get("search"), data.get("stopped"), paired,
                   tuple(data.get("costs") or ()), dict(data.get("usage") or {}),
                   data.get("summary"))
