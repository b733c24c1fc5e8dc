"""One call of the preference probe as a typed, frozen value: what a group's record carries
from the worker that made it to the controller, and what a saved document's ``results``
hold. JSON only at the edge (``to_json``, ``from_json``, leniently where an older file
lacks a key)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class ProbeCall:
    """One model call of a group's cell: which cell, its outcome, what it cost.

    ``outcome`` is None for a call that failed (``error``), was not run (``skipped``)
    or was cut before any tool call (``inconclusive``).
    """

    group: str
    cell: str
    factor: str
    treated: str | None
    position: str
    rep: int
    domain: str | None
    control: bool
    calls: tuple[str, ...] = ()
    outcome: str | None = None
    error: str | None = None
    skipped: bool = False
    truncated: bool = False
    usage: Mapping[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    inconclusive: bool = False

    @property
    def scored(self) -> bool:
        """Whether the call counts in the shares (it ran, did not fail and has an outcome)."""
        return not self.skipped and self.error is None and self.outcome is not None

    def to_json(self) -> dict[str, Any]:
        """The call as the record a worker sends (its keys in the order they were always written)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["calls"] = list(self.calls)
        out["usage"] = dict(self.usage)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProbeCall:
        """A call as a worker sent it or a saved document holds it (its ``results``)."""
        return cls(
            group=data["group"], cell=data["cell"], factor=data["factor"],
            treated=data.get("treated"), position=data["position"], rep=int(data["rep"]),
            domain=data.get("domain"), control=bool(data.get("control")),
            calls=tuple(data.get("calls") or ()), outcome=data.get("outcome"),
            error=data.get("error"), skipped=bool(data.get("skipped")),
            truncated=bool(data.get("truncated")), usage=dict(data.get("usage") or {}),
            cost_usd=data.get("cost_usd"), inconclusive=bool(data.get("inconclusive")),
        )
