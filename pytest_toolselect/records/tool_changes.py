"""What changed in the tools a case is offered since its baseline entry (gate/toolsdiff.py
finds them): a record holds them, every report names them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .strict import require_keys

#: the words of a change, as the results document writes them
ADDED, REMOVED, CHANGED = "added", "removed", "changed"


@dataclass(frozen=True, slots=True)
class ToolChange:
    """One tool added, removed or changed, and a changed tool's word diff (None: none shown)."""

    tool: str
    change: str
    diff: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "change": self.change, "diff": self.diff}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolChange:
        require_keys(cls, data, ("tool", "change", "diff"))
        return cls.read(data)

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> ToolChange:
        """A saved document's change; no diff reads as none shown."""
        return cls(data["tool"], data["change"], data.get("diff"))
