"""The cost cap: a call starts only while what is spent and reserved is under the cap.

Before a call starts it reserves the most it can cost (its ``max_tokens`` of output and
a bound on its input, priced: ``providers.pricing.reservation_usd``); when it returns,
the reservation is released and what it really cost is charged. A call is admitted
only while spent + reserved < cap, so the spend never passes the cap by more than one
call's reservation, however many calls run at once: each admitted call adds at most its
reservation to a total that was under the cap, and settling never adds more than it
releases. A call that would not fit while others hold reservations waits for them to
settle; once the spend itself reaches the cap, no new call starts.

A call with no price leaves the cap blind, so nothing new starts after it either; a
call priced at exactly 0 is priced, and does not move the cap. A provider that cannot
bound a call's price in advance (a hook's) reserves nothing: its calls are charged as
they return, and those in flight when the cap is reached finish.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

#: seconds between looks at the spend while a call waits for reservations to settle
POLL_S = 0.02


class CostCapReached(Exception):
    """No new call may start: the reason says why (spent, or blind)."""


@dataclass(frozen=True)
class Ledger:
    """The whole run's figures as the cap sees them."""

    spent: float
    #: held by calls in flight, not yet settled
    reserved: float
    #: models whose calls came back with no price, and how many
    unpriced: dict[str, int]


def admission(cap: float, ledger: Ledger, amount: float) -> bool | None:
    """May a call reserving `amount` start: True, None (wait: reservations must settle
    first), or raise CostCapReached (the cap is reached, or blind)."""
    if ledger.unpriced:
        models = ", ".join(sorted(ledger.unpriced))
        raise CostCapReached(
            f"cost cap ${cap:g} is blind: a call to {models} came back with no price "
            "(add it under `prices:` in toolselect.yaml)"
        )
    if ledger.spent >= cap:
        raise CostCapReached(f"cost cap reached: priced calls spent ${ledger.spent:.4f} of ${cap:g}")
    return True if ledger.spent + ledger.reserved < cap else None


@dataclass
class Budget:
    cap: float | None = None
    spent: float = 0.0
    priced_calls: int = 0
    #: models whose calls came back with no price
    unpriced: dict[str, int] = field(default_factory=dict)
    #: this process's reservations of the calls in flight
    reserved: float = 0.0
    #: seconds between looks while a call waits for room
    poll_s: float = POLL_S
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
        admission(self.cap, Ledger(spent, 0.0, unpriced), 0.0)

    async def reserve(self, amount: float | None) -> float:
        """Hold `amount` (None: not known, 0 held) for a call about to start, waiting while
        other calls' reservations leave no room; raise CostCapReached when none may start.
        Returns what was held, for release()."""
        if self.cap is None:
            return 0.0
        held = max(0.0, amount or 0.0)
        while not self._try_reserve(held):
            await asyncio.sleep(self.poll_s)
        return held

    def _try_reserve(self, held: float) -> bool:
        """One atomic look: hold it and say True, say False to wait, or raise."""
        assert self.cap is not None
        with self._lock:
            if admission(self.cap, Ledger(self.spent, self.reserved, dict(self.unpriced)), held):
                self.reserved += held
                return True
            return False

    def release(self, held: float) -> None:
        """A call's reservation ends (it returned, failed or was cancelled); charge() first."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - held)

    def charge(self, model: str, cost: float | None) -> None:
        with self._lock:
            if cost is None:
                self.unpriced[model] = self.unpriced.get(model, 0) + 1
            else:
                self.spent += cost
                self.priced_calls += 1
