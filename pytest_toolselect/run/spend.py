"""One cost cap for a whole run under pytest-xdist: the workers share one spend.

Each worker reserves a call's highest price before it starts and charges what the call
cost, so with a per-process tally `-n 4` could spend four caps. The controller makes one
small SQLite file before the workers start and hands its path to each of them
(``workerinput``); each worker's reservations are one row of it, every admission reads
the spend and every worker's reservations in one transaction, so the run passes the cap
by at most one call's reservation, as a single process does. A worker that died holding
reservations (its process is gone) has them dropped by the next worker that waits. The
file is removed when the controller ends.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from .budget import Budget, Ledger, admission

#: the workerinput key that carries the file's path to each worker
SPEND_KEY = "toolselect_spend"
_PATH = pytest.StashKey[str]()
#: seconds a charge waits for another worker's transaction (each lasts well under 1 ms)
_BUSY_TIMEOUT_S = 30.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS spend (id INTEGER PRIMARY KEY CHECK (id = 0), usd REAL NOT NULL);
INSERT OR IGNORE INTO spend (id, usd) VALUES (0, 0.0);
CREATE TABLE IF NOT EXISTS unpriced (model TEXT PRIMARY KEY, calls INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS reserved (pid INTEGER PRIMARY KEY, usd REAL NOT NULL);
"""


def _connect(path: str) -> sqlite3.Connection:
    # autocommit: each statement or explicit BEGIN IMMEDIATE is its own transaction;
    # the connection is used from the scheduler's thread, under the budget's lock
    return sqlite3.connect(path, timeout=_BUSY_TIMEOUT_S, isolation_level=None,
                           check_same_thread=False)


def configure_node(config: pytest.Config, node: Any, cap: float | None) -> None:
    """Controller, per worker it starts: make the shared file once and pass its path on."""
    if cap is None:
        return
    path = config.stash.get(_PATH, None)
    if path is None:
        folder = tempfile.mkdtemp(prefix="toolselect-spend-")
        path = str(Path(folder) / "spend.sqlite")
        with contextlib.closing(_connect(path)) as db:
            db.executescript(_SCHEMA)
        config.stash[_PATH] = path
    node.workerinput[SPEND_KEY] = path


def cleanup(config: pytest.Config) -> None:
    """Controller, at the end: remove the shared file."""
    path = config.stash.get(_PATH, None)
    if path is not None:
        shutil.rmtree(Path(path).parent, ignore_errors=True)
        del config.stash[_PATH]


def make_budget(config: pytest.Config, cap: float | None) -> Budget:
    """The run's budget: shared with the other workers on an xdist worker given the file."""
    path = getattr(config, "workerinput", {}).get(SPEND_KEY)
    if cap is None or path is None:
        return Budget(cap=cap)
    return SharedBudget(cap=cap, path=path)


class SharedBudget(Budget):
    """A Budget whose totals are the whole run's, read from and charged to the shared file."""

    def __init__(self, *, cap: float, path: str) -> None:
        super().__init__(cap=cap)
        self._db = _connect(path)
        self._db_lock = threading.Lock()
        self._pid = os.getpid()

    def totals(self) -> tuple[float, dict[str, int]]:
        with self._db_lock:
            (usd,) = self._db.execute("SELECT usd FROM spend WHERE id = 0").fetchone()
            unpriced = dict(self._db.execute("SELECT model, calls FROM unpriced").fetchall())
        return float(usd), {str(k): int(v) for k, v in unpriced.items()}

    def _ledger(self) -> Ledger:
        (usd,) = self._db.execute("SELECT usd FROM spend WHERE id = 0").fetchone()
        (held,) = self._db.execute("SELECT COALESCE(SUM(usd), 0) FROM reserved").fetchone()
        unpriced = self._db.execute("SELECT model, calls FROM unpriced").fetchall()
        return Ledger(float(usd), float(held), {str(k): int(v) for k, v in unpriced})

    def _try_reserve(self, held: float) -> bool:
        assert self.cap is not None
        with self._db_lock:
            # a plain read first: a call that must wait takes no write lock at each look
            if not admission(self.cap, self._ledger(), held):
                self._drop_the_dead()
                return False
            # IMMEDIATE: no other worker admits a call between this look and this hold
            self._db.execute("BEGIN IMMEDIATE")
            try:
                admitted = admission(self.cap, self._ledger(), held)
                if admitted:
                    with self._lock:
                        self.reserved += held
                        mine = self.reserved
                    self._write_reserved(mine)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return bool(admitted)

    def release(self, held: float) -> None:
        with self._lock:
            self.reserved = max(0.0, self.reserved - held)
            mine = self.reserved
        with self._db_lock:
            self._write_reserved(mine)

    def _write_reserved(self, usd: float) -> None:
        # this process's whole holding, written as a value (not added to): no drift
        self._db.execute("INSERT INTO reserved (pid, usd) VALUES (?, ?) "
                         "ON CONFLICT(pid) DO UPDATE SET usd = excluded.usd", (self._pid, usd))

    def _drop_the_dead(self) -> None:
        """Drop the reservations of workers whose process is gone (a crash, a kill): they
        would hold the others back for ever."""
        if os.name != "posix":  # os.kill(pid, 0) only asks, without signalling, on POSIX
            return
        for (pid,) in self._db.execute("SELECT pid FROM reserved WHERE pid != ? AND usd > 0",
                                       (self._pid,)).fetchall():
            try:
                os.kill(int(pid), 0)
            except ProcessLookupError:
                self._db.execute("DELETE FROM reserved WHERE pid = ?", (pid,))
            except OSError:
                pass  # alive (another user's process, say): its holding stands

    def charge(self, model: str, cost: float | None) -> None:
        super().charge(model, cost)  # this worker's own tally too
        with self._db_lock:
            if cost is None:
                self._db.execute("INSERT INTO unpriced (model, calls) VALUES (?, 1) "
                                 "ON CONFLICT(model) DO UPDATE SET calls = calls + 1", (model,))
            else:
                self._db.execute("UPDATE spend SET usd = usd + ? WHERE id = 0", (cost,))
