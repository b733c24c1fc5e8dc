"""The cost cap: once priced calls have spent the cap, no new call starts.

A call with no price leaves the cap blind, so nothing new starts after it
either; a call priced at exactly 0 is priced, and does not move the cap.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


class CostCapReached(Exception):
    """No new call may start: the reason says why (spent, or blind)."""


@dataclass
class Budget:
    cap: float | None = None
    spent: float = 0.0
    priced_calls: int = 0
    #: models whose calls came back with no price
    unpriced: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def totals(self) -> tuple[float, dict[str, int]]:
        """(spent, unpriced calls per model) as the cap sees them: this process's own here."""
        with self._lock:
            return self.spent, dict(self.unpriced)

    def check(self) -> None:
        """Raise CostCapReached when no new call may start; the reason quotes the spend now."""
        if self.cap is None:
            return
        spent, unpriced = self.totals()
        if unpriced:
            models = ", ".join(sorted(unpriced))
            raise CostCapReached(
                f"cost cap ${self.cap:g} is blind: a call to {models} came back with no price "
                "(add it under `prices:` in toolselect.yaml)"
            )
        if spent >= self.cap:
            raise CostCapReached(f"cost cap reached: priced calls spent ${spent:.4f} of ${self.cap:g}")

    def charge(self, model: str, cost: float | None) -> None:
        with self._lock:
            if cost is None:
                self.unpriced[model] = self.unpriced.get(model, 0) + 1
            else:
                self.spent += cost
                self.priced_calls += 1
