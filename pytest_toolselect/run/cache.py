"""A response cache in SQLite: one first turn per exact request and repetition.

Keyed by a sha256 of everything that can move an answer (provider, model, the
settings in the provider's subject, system prompt, the tools exactly as offered,
the question) plus the rep index, so reps stay independent samples and a change
to one tool description re-asks only the cases that offer that tool.

Modes (pytest-recording's idea: the mode is explicit and a typo fails loudly):

``off``         the file is never opened or created
``read-write``  a hit is returned, a miss is asked and stored (the default with a path)
``replay``      a miss is an error: a CI job with no key re-runs a recorded suite
``refresh``     every request is asked again and its answer overwrites the old one

SQLite because it ships with Python, and its WAL journal lets pytest-xdist
workers (separate processes) read and write one file at once. No secret is ever
stored: keys are not part of the hashed request, and every string of a stored
turn goes through :func:`messages.masking.redact` first. ``sqlite3`` is
imported only when a cache is opened, so loading the plugin stays light.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pytest_toolselect.exchange.context import context_to_data
from pytest_toolselect.exchange.tool import ToolCall
from pytest_toolselect.messages.errors import ToolselectError, nearest
from pytest_toolselect.messages.masking import redact_data
from pytest_toolselect.positions.bounded import not_regular
from pytest_toolselect.providers import Provider, Turn, TurnRequest

if TYPE_CHECKING:
    import sqlite3

__all__ = ["MODES", "CacheMiss", "CacheStats", "CachingProvider", "ResponseCache", "check_mode",
           "request_key"]

MODES = ("off", "read-write", "replay", "refresh")

#: bumped when what is hashed or how a turn is stored changes, so old entries miss
#: instead of decoding into something wrong; the file records it (table `meta`)
FORMAT = "toolselect_cache.v2"
#: v1 keys did not hold the API's base URL: its entries cannot be told apart by server
_OLD_FORMAT = "toolselect_cache.v1"

#: subject keys never hashed: a key must not be part of the hash, and an endpoint or
#: the name of a key's env var does not change what the model answers
_NOT_HASHED = re.compile(
    r"(^|_)(api_base|base_url|api_key_env|api_key|key|token|secret|password|authorization)$", re.I)

#: seconds a writer waits for another process's write to finish (writes take
#: milliseconds; a long wait means a stuck process, and then an error is right)
_BUSY_TIMEOUT_S = 30.0

_RECORD_FIX = "record it: run once with the provider's API key in read-write mode, then commit the file"
_DELETE_FIX = ("it is only a cache: delete it (and any -wal/-shm file beside it) and run again, "
               "or point the cache at another path")


def check_mode(mode: str) -> str:
    """`mode` if it is a cache mode; else a ToolselectError naming the valid ones and the nearest."""
    if mode in MODES:
        return mode
    # compared lowercased so 'READ-WRITE' or 'Replay' still get their suggestion
    guess = nearest(str(mode).strip().lower(), MODES)
    hint = f"did you mean {guess!r}? " if guess else ""
    raise ToolselectError(f"unknown cache mode {mode!r}",
                          fix=f"{hint}the cache modes are: {', '.join(MODES)}")


class _Busy(ToolselectError):
    """Another process holds the cache file's lock (opening is tried again for a while)."""


class CacheMiss(ToolselectError):
    """Replay mode found no stored answer for a request."""

    def __init__(self, model: str, key: str, path: Path) -> None:
        super().__init__(
            f"{model or 'model'}: no cached response for this request (key {key[:12]}) in replay "
            "mode: the request changed since it was recorded (a tool, its description, the "
            "question, the system prompt, a setting or the rep count), or it was never recorded",
            file=path, fix=_RECORD_FIX,
        )
        self.model = model
        self.key = key


# --- the key -------------------------------------------------------------------------------

def _without_secrets(value: Any) -> Any:
    """The subject with key-like and endpoint fields dropped and dict keys sorted.

    Sorted because a subject is a settings map whose order means nothing; the tools
    are not sorted (their schemas go to the model in the order discovered).
    """
    if isinstance(value, Mapping):
        return {str(k): _without_secrets(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
                if not _NOT_HASHED.search(str(k))}
    if isinstance(value, (list, tuple)):
        return [_without_secrets(v) for v in value]
    return value


def _plain_endpoint(url: str | None) -> str | None:
    """A base URL as hashed: scheme, host, port and path; no user, password or query (they
    may hold a key), no trailing slash (``/v1`` and ``/v1/`` are one server)."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    if not host:
        return parts.path.rstrip("/") or None
    return f"{parts.scheme.lower()}://{host.lower()}{port}{parts.path.rstrip('/')}"


def request_key(subject: Mapping[str, Any], request: TurnRequest, endpoint: str | None = None) -> str:
    """The sha256 (hex) of one request and its rep: equal exactly when the model is asked the same.

    Hashed: the provider subject (provider, model, settings; keys and api_base
    dropped), the base URL the request goes to (`endpoint`, None for the provider's
    own: two local servers may serve different models under one name), the system
    prompt, every tool's name, description and input schema in the order offered,
    the question, the rep index and any context (the turns replayed after the question).
    """
    envelope = {
        "format": FORMAT,
        "subject": _without_secrets(subject),
        "endpoint": _plain_endpoint(endpoint),
        # None and "" both send no system prompt: one request, one key
        "system": request.system or "",
        "tools": [t.to_dict() for t in request.tools],
        "question": request.question,
        "rep": request.rep,
        # only when given: the keys of first-turn requests stay as they were
        **({"context": context_to_data(request.context)} if request.context else {}),
    }
    # default=repr: a schema holding a non-JSON value still hashes (stably) instead of crashing
    text = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- turns as stored -----------------------------------------------------------------------

def check_path(path: Path) -> None:
    """Refuse a cache path that names a FIFO, a device or a folder (SQLite would block on a
    FIFO, or fail obscurely on the others); a missing file is fine: it is created."""
    kind = not_regular(path)
    if kind is not None:
        raise ToolselectError(f"the cache path is {kind}, not a file", file=path,
                              fix="point --toolselect-cache at a file (it is created if missing)")


def _encode(turn: Turn, secrets: tuple[str, ...]) -> str:
    return json.dumps(redact_data(turn.to_dict(), secrets), ensure_ascii=False, default=repr)


def _decode(text: str) -> Turn:
    data = json.loads(text)
    calls = tuple(ToolCall(name=c["name"], arguments=dict(c.get("arguments") or {}),
                           raw_arguments=c.get("raw_arguments"))
                  for c in data["calls"])
    return Turn(calls=calls, text=data.get("text", ""), stop_reason=data.get("stop_reason"),
                usage={str(k): int(v) for k, v in (data.get("usage") or {}).items()},
                cost_usd=data.get("cost_usd"), truncated=bool(data.get("truncated", False)),
                dropped_schema_keys=tuple(data.get("dropped_schema_keys") or ()),
                attempts=int(data.get("attempts", 1)), found_by=data.get("found_by"))


# --- the cache -----------------------------------------------------------------------------

@dataclass(frozen=True)
class CacheStats:
    """What the summary reports; per process (xdist workers' stats add up with ``+``)."""

    hits: int = 0
    #: lookups the cache did not answer (in refresh mode: every lookup)
    misses: int = 0
    #: the cost_usd of every hit: what asking again would have cost
    saved_usd: float = 0.0
    #: turns written to the file
    stored: int = 0

    def __add__(self, other: CacheStats) -> CacheStats:
        return CacheStats(self.hits + other.hits, self.misses + other.misses,
                          self.saved_usd + other.saved_usd, self.stored + other.stored)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ResponseCache:
    """One SQLite file of first turns, shared safely by threads and by xdist worker processes."""

    def __init__(self, path: Path, mode: str) -> None:
        self.path = Path(path)
        self.mode = check_mode(mode)
        # one connection per cache, every use under this lock: first_turn runs in an
        # event loop on a background thread while the main thread reads stats
        self._lock = threading.Lock()
        self._stats = CacheStats()
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        if self.mode == "off":
            return  # never touch the file, not even to create its folder
        if self.mode == "replay" and not self.path.exists():
            raise ToolselectError("replay mode: the cache file does not exist", file=self.path,
                                  fix=_RECORD_FIX)
        check_path(self.path)
        self._conn = self._open()

    def _open(self) -> sqlite3.Connection:

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolselectError(
                f"cannot create the cache's folder {self.path.parent}: {exc.strerror or exc}",
                file=self.path, fix="choose a writable cache path") from None
        # several xdist workers opening a new file at once: switching it to WAL needs a lock
        # the busy timeout does not wait for, so a busy open is tried again for a while
        deadline = time.monotonic() + _BUSY_TIMEOUT_S
        while True:
            try:
                return self._connect()
            except _Busy:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _connect(self) -> sqlite3.Connection:
        import sqlite3

        conn = None
        try:
            # autocommit (isolation_level=None): each statement is its own short transaction,
            # so no write lock is held between calls; timeout is SQLite's busy_timeout
            conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None,
                                   check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            if self.mode != "replay":
                # WAL: readers never wait for a writer, and writers from other processes
                # queue on busy_timeout instead of failing; replay never writes, so it
                # leaves the file's journal mode as recorded
                if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")  # safe under WAL, and fast
                conn.execute("CREATE TABLE IF NOT EXISTS responses ("
                             "key TEXT PRIMARY KEY, model TEXT NOT NULL, turn TEXT NOT NULL, "
                             "stored_at TEXT NOT NULL)")
            # read once now so a corrupt or foreign file fails at start, not mid-run
            conn.execute("SELECT key, model, turn, stored_at FROM responses LIMIT 1").fetchall()
            self._check_format(conn)
        except ToolselectError:  # raised once the file is open: conn is set
            if conn is not None:
                conn.close()
            raise
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            error = self._error(exc)
            low = str(exc).lower()
            if "locked" in low or "busy" in low:
                raise _Busy(error.message, file=error.file, fix=error.fix) from None
            raise error from None
        return conn

    def _check_format(self, conn: sqlite3.Connection) -> None:
        """Entries of an older key format are invalidated: dropped when the file is opened to
        write (they could never be hit again), refused in replay (it would replay nothing).

        A file with entries and no `meta` table is a v1 file, whose keys did not hold the
        base URL: an answer recorded against one server would be replayed for another.
        """
        has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                                "AND name = 'meta'").fetchone() is not None
        row = (conn.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
               if has_meta else None)
        found = row[0] if row is not None else None
        if found == FORMAT:
            return
        if found is not None:  # a later version's file: never emptied by this one
            raise ToolselectError(
                f"the cache was written in the format {found}; this version reads {FORMAT}",
                file=self.path, fix="upgrade pytest-toolselect, or point the cache at another path")
        entries = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        if self.mode == "replay":
            if entries:
                raise ToolselectError(
                    f"replay mode: the cache holds {entries} answers recorded in the format "
                    f"{_OLD_FORMAT}, whose keys did not say which server answered; this "
                    f"version reads {FORMAT} only, so every request would miss", file=self.path,
                    fix=_RECORD_FIX)
            return
        # one transaction: another worker opening the file meanwhile sees it old or new
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
            current = conn.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
            if current is None:  # still v1 (no worker converted it meanwhile)
                conn.execute("DELETE FROM responses")
                conn.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('format', ?)", (FORMAT,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _error(self, exc: Exception) -> ToolselectError:
        """A SQLite failure as one message naming the file and what to do about it."""
        text = str(exc)
        low = text.lower()
        if "readonly" in low or "unable to open" in low or "permission" in low or "disk i/o" in low:
            fix = "make the file and its folder writable, or choose another cache path"
        elif "locked" in low or "busy" in low:
            fix = ("another process held the cache for over "
                   f"{_BUSY_TIMEOUT_S:.0f} s: a stuck run, or a network filesystem where SQLite "
                   "cannot lock; use a local path")
        elif "no such table" in low or "no such column" in low:
            fix = ("this is not a pytest-toolselect cache, or it was never recorded; "
                   f"{_RECORD_FIX}" if self.mode == "replay" else _DELETE_FIX)
        else:  # "file is not a database", "database disk image is malformed", ...
            fix = _DELETE_FIX
        return ToolselectError(f"response cache failed: {text}", file=self.path, fix=fix)

    def _connection(self) -> sqlite3.Connection:
        if self._closed or self._conn is None:
            raise ToolselectError("the response cache is closed", file=self.path,
                                  fix="open a new ResponseCache")
        return self._conn

    @property
    def stats(self) -> CacheStats:
        """A snapshot (immutable), safe to read from any thread."""
        with self._lock:
            return self._stats

    def get(self, key: str, *, model: str = "") -> Turn | None:
        """The stored turn for `key`; None in off/refresh mode or on a miss.

        In replay mode a miss raises CacheMiss (naming `model`). A hit comes back
        with ``attempts=0``: it was not asked.
        """
        import sqlite3

        if self.mode == "off":
            return None
        with self._lock:
            if self.mode == "refresh":
                self._connection()  # a closed cache fails the same way in every mode
                self._stats = replace(self._stats, misses=self._stats.misses + 1)
                return None
            try:
                row = self._connection().execute(
                    "SELECT turn FROM responses WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            turn = None
            if row is not None:
                try:
                    turn = replace(_decode(row[0]), attempts=0)
                except (ValueError, KeyError, TypeError) as exc:
                    if self.mode == "replay":
                        raise ToolselectError(f"cached response {key[:12]} is unreadable ({exc})",
                                              file=self.path, fix=_DELETE_FIX) from None
                    # read-write: a bad entry is a miss, and the fresh answer overwrites it
                    turn = None
            if turn is None:
                self._stats = replace(self._stats, misses=self._stats.misses + 1)
                if self.mode == "replay":
                    raise CacheMiss(model, key, self.path)
                return None
            self._stats = replace(self._stats, hits=self._stats.hits + 1,
                                  saved_usd=self._stats.saved_usd + (turn.cost_usd or 0.0))
            return turn

    def put(self, key: str, turn: Turn, *, model: str = "", secrets: tuple[str, ...] = ()) -> None:
        """Store `turn` under `key` (overwriting), every string redacted; no-op in off/replay.

        `secrets`: keys to mask beyond those redact finds itself (env vars named
        *KEY/*TOKEN/*SECRET, and anything shaped like a key).
        """
        import sqlite3

        if self.mode in ("off", "replay"):
            return
        # encoded outside the lock: redaction walks every string and needs no connection
        data = _encode(turn, secrets)
        stored_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._lock:
            try:
                self._connection().execute(
                    "INSERT OR REPLACE INTO responses (key, model, turn, stored_at) VALUES (?, ?, ?, ?)",
                    (key, model, data, stored_at))
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            self._stats = replace(self._stats, stored=self._stats.stored + 1)

    def __len__(self) -> int:
        """How many turns the file holds (0 in off mode)."""
        import sqlite3

        if self.mode == "off":
            return 0
        with self._lock:
            try:
                return int(self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            except sqlite3.Error as exc:
                raise self._error(exc) from None

    def close(self) -> None:
        """Close the connection (idempotent); the last closer folds the WAL back into the file."""
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CachingProvider:
    """Any Provider, answered from a ResponseCache where it can be.

    Same ``model`` and ``subject()`` as the inner provider, so baselines and reports
    cannot tell the wrapper apart, except that a cached turn has ``attempts=0``.
    Errors from the inner provider pass through and nothing is stored for them.
    """

    def __init__(self, inner: Provider, cache: ResponseCache) -> None:
        self.inner = inner
        self.cache = cache
        self.model = inner.model
        self.deterministic = bool(getattr(inner, "deterministic", False))
        self.fills_arguments = bool(getattr(inner, "fills_arguments", True))

    def subject(self) -> dict[str, Any]:
        return self.inner.subject()

    def _secrets(self) -> tuple[str, ...]:
        """The inner provider's key, when its env var has a name redact would not recognise."""
        settings = getattr(self.inner, "settings", None)
        env = getattr(settings, "api_key_env", None)
        value = os.environ.get(env) if isinstance(env, str) and env else None
        return (value,) if value else ()

    def max_cost_usd(self, request: TurnRequest) -> float | None:
        """The inner provider's bound on a call's price (a hit costs less: it is settled)."""
        bound = getattr(self.inner, "max_cost_usd", None)
        return bound(request) if callable(bound) else None

    def _endpoint(self) -> str | None:
        """The base URL the inner provider calls (None: its default, or a hook's own)."""
        endpoint = getattr(self.inner, "endpoint", None)
        value = endpoint() if callable(endpoint) else None
        return value if isinstance(value, str) else None

    async def first_turn(self, request: TurnRequest) -> Turn:
        key = request_key(self.inner.subject(), request, self._endpoint())
        cached = self.cache.get(key, model=self.model)
        if cached is not None:
            return cached
        turn = await self.inner.first_turn(request)
        # the caller gets the turn as the provider returned it; only the stored copy is redacted
        self.cache.put(key, turn, model=self.model, secrets=self._secrets())
        return turn
