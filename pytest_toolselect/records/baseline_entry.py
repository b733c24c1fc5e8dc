"""A case's and a preference group's baseline entries as typed, frozen values, converted
at the file's edge.

The baseline file holds each case's entry as JSON; ``CaseEntry.from_json`` reads one
(already checked against the schema by ``gate.baseline.load``) and ``to_json`` writes it
back key for key, in the order it was read, so an entry kept as it was (a case not run, or
a replay) leaves the file byte for byte as it was. Readers name fields (``entry.runs``),
never keys. It is data every part may import: the gate judges with it, and what the run
hands its reports (``report_input.ResultsInput``) holds the stored entries as they are.
A group's entry (``GroupEntry``) is read and written the same way; the probe makes it and
gates against it.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_toolselect.terms.check_names import CHECKS_BEFORE_LIST

#: one stored run of a case: (passes, reps)
Run = tuple[int, int]

#: the keys an entry may hold (the baseline schema's), in the order the plugin writes them
KEYS = ("status", "passes", "reps", "first_tool", "failing_checks", "case_fingerprint",
        "tools_fingerprint", "history", "checks")
_REQUIRED = ("status", "passes", "reps")


#: the few distinct key lists and check lists a baseline's entries hold, each held once
_SHARED: dict[tuple[str, ...], tuple[str, ...]] = {}


def _shared(words: Any) -> tuple[str, ...]:
    """The words as a tuple, the same object for every entry that holds the same words (a
    baseline of 20,000 cases holds 20,000 equal lists of check names)."""
    held = tuple(_word(w) for w in words)
    return _SHARED.setdefault(held, held)


def _word(text: Any) -> Any:
    """Plain text held once (a vocabulary's member, or None, is kept as it is)."""
    return sys.intern(text) if type(text) is str else text


@dataclass(frozen=True, slots=True)
class CaseEntry:
    """One case's baseline entry: its status and last run, its fingerprints, its history."""

    status: str
    passes: int
    reps: int
    first_tool: str | None = None
    failing_checks: tuple[str, ...] = ()
    case_fingerprint: str | None = None
    tools_fingerprint: str | None = None
    #: the stored runs, oldest first; None: written before the history existed
    history: tuple[Run, ...] | None = None
    #: the checks the entry was evaluated with; None: written before the list existed
    checks: tuple[str, ...] | None = None
    #: the JSON keys the entry holds, in their order (absent and null stay apart)
    keys: tuple[str, ...] = field(default=KEYS, repr=False)

    def __post_init__(self) -> None:
        unknown = [k for k in self.keys if k not in KEYS]
        missing = [k for k in _REQUIRED if k not in self.keys]
        if unknown or missing or len(set(self.keys)) != len(self.keys):
            raise ValueError(f"a baseline entry's keys are {list(self.keys)!r}: "
                             f"unknown {unknown!r}, missing {missing!r}")

    @property
    def runs(self) -> list[Run]:
        """The stored runs, oldest first: an entry written before the history existed
        holds one run (its passes and reps)."""
        if self.history:
            return list(self.history)
        return [(self.passes, self.reps)]

    @property
    def evaluated(self) -> frozenset[str]:
        """The checks the entry was evaluated with: its ``checks`` list, or for an entry
        written before the list existed, the checks there were then."""
        return frozenset(CHECKS_BEFORE_LIST if self.checks is None else self.checks)

    def to_json(self) -> dict[str, Any]:
        """The entry as the file holds it, key for key."""
        out: dict[str, Any] = {}
        for key in self.keys:
            value = getattr(self, key)
            if key == "history":
                value = None if value is None else [[p, r] for p, r in value]
            elif key in ("failing_checks", "checks"):
                value = None if value is None else list(value)
            out[key] = value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseEntry:
        """An entry as the file holds it (checked against the schema where it was read)."""
        history = data.get("history")
        checks = data.get("checks")
        # the words many entries share are held once (a fingerprint is the case's own)
        return cls(
            status=_word(data["status"]), passes=int(data["passes"]),
            reps=int(data["reps"]), first_tool=_word(data.get("first_tool")),
            failing_checks=_shared(data.get("failing_checks") or ()),
            case_fingerprint=data.get("case_fingerprint"),
            tools_fingerprint=_word(data.get("tools_fingerprint")),
            history=None if history is None else tuple((int(p), int(r)) for p, r in history),
            checks=None if checks is None else _shared(checks),
            keys=_shared(data),
        )


#: the keys a group's entry may hold (the baseline schema's), in the order the probe writes them
ENTRY_KEYS = ("kind", "control", "over_call_share", "effects", "first_twin_share", "reps",
              "group_fingerprint")


@dataclass(frozen=True)
class GroupEntry:
    """A preference group's baseline entry: what the probe gates a later run against.

    ``over_call_share`` is None for a pair group, ``first_twin_share`` None and
    ``effects`` empty for a control: each holds only what its kind measures.
    """

    kind: str | None
    control: bool
    over_call_share: float | None = None
    effects: Mapping[str, float] = field(default_factory=dict)
    first_twin_share: float | None = None
    reps: int | None = None
    group_fingerprint: str | None = None
    #: the JSON keys the entry holds, in their order (absent and null stay apart)
    keys: tuple[str, ...] = field(default=ENTRY_KEYS, repr=False)
    #: keys the schema allows but the probe does not write (a hand edit), kept as they were
    #: so that a group not run this time is written back as it was read
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The entry as the baseline file holds it, key for key."""
        return {k: (dict(self.effects) if k == "effects" else getattr(self, k))
                if k in ENTRY_KEYS else copy.deepcopy(self.extra[k]) for k in self.keys}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GroupEntry:
        """An entry as the baseline file holds it (a key it lacks reads as none)."""
        reps = data.get("reps")
        return cls(
            kind=data.get("kind"), control=bool(data.get("control")),
            over_call_share=data.get("over_call_share"), effects=dict(data.get("effects") or {}),
            first_twin_share=data.get("first_twin_share"),
            reps=int(reps) if reps is not None else None,
            group_fingerprint=data.get("group_fingerprint"),
            keys=tuple(data),
            # a copy: a later edit of the data read leaves the entry as it was
            extra={k: copy.deepcopy(v) for k, v in data.items() if k not in ENTRY_KEYS},
        )
