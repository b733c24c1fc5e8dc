"""The response cache: keys, modes, secrets, and two processes sharing one file."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.providers import ProviderCallError, ProviderSettings, Turn, TurnRequest
from pytest_toolselect.run.cache import (
    MODES,
    CacheMiss,
    CacheStats,
    CachingProvider,
    ResponseCache,
    check_mode,
    request_key,
)

SECRET = "sk-ant-" + "test-secret-0123456789abcdefXYZ"  # built: no key-shaped literal

TOOLS = (
    Tool("find_company", "Search the company register by name.",
         {"type": "object", "properties": {"name": {"type": "string"}}}),
    Tool("lookup_vat", "Check a VAT registration number.",
         {"type": "object", "properties": {"vat_number": {"type": "string"}}}),
)


class FakeProvider:
    """Counts its calls; answers with the first tool, at a known cost."""

    def __init__(self, model: str = "fake/model-1", *, text: str = "calling it",
                 cost: float | None = 0.25, settings: ProviderSettings | None = None) -> None:
        self.model = model
        self.settings = settings or ProviderSettings()
        self.text = text
        self.cost = cost
        self.calls = 0
        self.fail: Exception | None = None

    def subject(self) -> dict[str, Any]:
        return {"provider": "fake", "model": self.model,
                "settings": {"max_tokens": self.settings.max_tokens,
                             "temperature": self.settings.temperature}}

    async def first_turn(self, request: TurnRequest) -> Turn:
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        return Turn(calls=(ToolCall(request.tools[0].name, {"name": "Acme", "n": self.calls}),),
                    text=f"{self.text} #{self.calls}", stop_reason="tool_use",
                    usage={"input_tokens": 100, "output_tokens": 10}, cost_usd=self.cost,
                    dropped_schema_keys=("find_company/format",), attempts=2)


def req(question: str = "Find Acme Ltd", *, rep: int = 0, tools: tuple[Tool, ...] = TOOLS,
        system: str | None = None) -> TurnRequest:
    return TurnRequest(question=question, tools=tools, system=system, rep=rep)


def ask(provider: CachingProvider, request: TurnRequest) -> Turn:
    return asyncio.run(provider.first_turn(request))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "sub" / "dir" / "responses.sqlite"


# --- hit, miss, modes --------------------------------------------------------------------------

def test_miss_then_hit_returns_the_stored_turn_with_attempts_zero(db: Path) -> None:
    inner = FakeProvider()
    with ResponseCache(db, "read-write") as cache:
        cached = CachingProvider(inner, cache)
        assert cached.model == inner.model and cached.subject() == inner.subject()
        first = ask(cached, req())
        second = ask(cached, req())
        assert inner.calls == 1
        assert first.attempts == 2 and second.attempts == 0  # a report can tell it was not asked
        assert second == Turn(**{**first.__dict__, "attempts": 0})  # every field round-trips
        assert cache.stats == CacheStats(hits=1, misses=1, saved_usd=0.25, stored=1)
        assert db.exists()  # parent folders were created
    # a new process (a new cache object) reads what the last one stored
    with ResponseCache(db, "read-write") as again:
        assert ask(CachingProvider(inner, again), req()).calls == first.calls
        assert inner.calls == 1


def test_saved_cost_adds_up_over_hits_and_counts_unpriced_as_zero(db: Path) -> None:
    with ResponseCache(db, "read-write") as cache:
        priced = CachingProvider(FakeProvider(cost=0.125), cache)
        unpriced = CachingProvider(FakeProvider("fake/free", cost=None), cache)
        for _ in range(3):
            ask(priced, req())
            ask(unpriced, req())
        assert cache.stats.hits == 4 and cache.stats.misses == 2
        assert cache.stats.saved_usd == pytest.approx(0.25)
    assert (CacheStats(1, 2, 0.5, 3) + CacheStats(1, 1, 0.25, 0)).to_dict() == {
        "hits": 2, "misses": 3, "saved_usd": 0.75, "stored": 3}


def test_replay_miss_is_an_error_naming_the_model_and_how_to_record(db: Path) -> None:
    inner = FakeProvider("anthropic/claude-haiku-4-5")
    with ResponseCache(db, "read-write") as cache:
        ask(CachingProvider(inner, cache), req("Find Acme Ltd"))
    with ResponseCache(db, "replay") as cache:
        replay = CachingProvider(inner, cache)
        assert ask(replay, req("Find Acme Ltd")).attempts == 0  # recorded: served
        with pytest.raises(CacheMiss) as info:
            ask(replay, req("Find Beta plc"))
        assert inner.calls == 1  # replay never asks the model
        assert cache.stats.hits == 1 and cache.stats.misses == 1 and cache.stats.stored == 0
    message = str(info.value)
    assert "anthropic/claude-haiku-4-5" in message
    assert "changed" in message and "never recorded" in message
    assert "read-write" in message and "key" in message
    assert str(db) in message
    assert isinstance(info.value, ToolselectError)


def test_replay_without_a_recorded_file_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(ToolselectError, match=r"does not exist.*read-write"):
        ResponseCache(tmp_path / "none.sqlite", "replay")
    assert not (tmp_path / "none.sqlite").exists()


def test_replay_never_writes(db: Path) -> None:
    with ResponseCache(db, "read-write") as cache:
        ask(CachingProvider(FakeProvider(), cache), req())
    with ResponseCache(db, "replay") as cache:
        cache.put("k" * 64, Turn(calls=()))
        assert len(cache) == 1 and cache.stats.stored == 0


def test_refresh_asks_again_and_overwrites(db: Path) -> None:
    inner = FakeProvider()
    with ResponseCache(db, "read-write") as cache:
        assert ask(CachingProvider(inner, cache), req()).text == "calling it #1"
    with ResponseCache(db, "refresh") as cache:
        refreshed = CachingProvider(inner, cache)
        assert ask(refreshed, req()).text == "calling it #2"
        assert ask(refreshed, req()).text == "calling it #3"  # refresh never serves from the file
        assert cache.stats == CacheStats(hits=0, misses=2, saved_usd=0.0, stored=2)
        assert len(cache) == 1  # overwritten, not added
    with ResponseCache(db, "read-write") as cache:
        assert ask(CachingProvider(inner, cache), req()).text == "calling it #3"
    assert inner.calls == 3


def test_off_never_touches_the_file(db: Path) -> None:
    inner = FakeProvider()
    with ResponseCache(db, "off") as cache:
        cached = CachingProvider(inner, cache)
        ask(cached, req())
        ask(cached, req())
        assert inner.calls == 2
        assert cache.stats == CacheStats()
        assert len(cache) == 0
    assert not db.parent.parent.exists()  # not even its folder


def test_an_error_from_the_provider_is_not_stored(db: Path) -> None:
    inner = FakeProvider()
    inner.fail = ProviderCallError("fake/model-1: 529 overloaded", attempts=5, status=529)
    with ResponseCache(db, "read-write") as cache:
        cached = CachingProvider(inner, cache)
        with pytest.raises(ProviderCallError):
            ask(cached, req())
        inner.fail = None
        assert ask(cached, req()).attempts == 2  # asked, not served from an error
        assert inner.calls == 2 and cache.stats.stored == 1


# --- the key -----------------------------------------------------------------------------------

def test_reps_are_independent_samples(db: Path) -> None:
    subject = FakeProvider().subject()
    assert request_key(subject, req(rep=0)) != request_key(subject, req(rep=1))
    inner = FakeProvider()
    with ResponseCache(db, "read-write") as cache:
        cached = CachingProvider(inner, cache)
        a, b = ask(cached, req(rep=0)), ask(cached, req(rep=1))
        assert a.text != b.text and inner.calls == 2
        assert ask(cached, req(rep=1)).text == b.text and inner.calls == 2


def test_a_changed_tool_description_re_asks_only_the_cases_that_offer_it(db: Path) -> None:
    other = (Tool("list_officers", "List the officers of a company.", {"type": "object"}),)
    inner = FakeProvider()
    with ResponseCache(db, "read-write") as cache:
        cached = CachingProvider(inner, cache)
        ask(cached, req("Find Acme Ltd", tools=TOOLS))
        ask(cached, req("Who runs Acme?", tools=other))
        assert inner.calls == 2
        # the pull request rewords one description of a tool the first case offers
        reworded = (TOOLS[0], Tool("lookup_vat", "Validate a VAT number.", TOOLS[1].input_schema))
        ask(cached, req("Find Acme Ltd", tools=reworded))
        ask(cached, req("Who runs Acme?", tools=other))
        assert inner.calls == 3  # only the changed case was asked again
        assert cache.stats.hits == 1


def test_the_key_covers_every_part_of_the_request_and_nothing_secret() -> None:
    subject = FakeProvider().subject()
    base = request_key(subject, req())
    assert base == request_key(dict(subject), req())  # deterministic
    assert len(base) == 64 and int(base, 16) >= 0
    changed = [
        request_key({**subject, "model": "fake/model-2"}, req()),
        request_key({**subject, "settings": {"max_tokens": 1024, "temperature": 0.5}}, req()),
        request_key(subject, req(system="Be brief.")),
        request_key(subject, req("Find Acme Limited")),
        request_key(subject, req(tools=TOOLS[::-1])),  # order offered is part of the request
        request_key(subject, req(tools=(TOOLS[0], Tool("lookup_vat", TOOLS[1].description,
                                                       {"type": "object"})))),
        request_key(subject, req(tools=TOOLS[:1])),
    ]
    assert len({base, *changed}) == len(changed) + 1
    # None and "" both send no system prompt; settings order means nothing
    assert request_key(subject, req(system="")) == base
    reordered = {"settings": dict(reversed(list(subject["settings"].items()))),
                 "model": subject["model"], "provider": subject["provider"]}
    assert request_key(reordered, req()) == base
    # a key, an endpoint or the key's env var name never reaches the hash
    secretive = {**subject, "api_key": SECRET, "api_base": "https://proxy.example",
                 "settings": {**subject["settings"], "api_key_env": "MY_KEY", "token": SECRET}}
    assert request_key(secretive, req()) == base


_HOSTS = st.sampled_from(["127.0.0.1", "localhost", "[::1]", "gateway.example.com", "10.1.2.3"])
_PATHS = st.sampled_from(["", "/v1", "/api/v1", "/openai/v1"])


@given(host=_HOSTS, other_host=_HOSTS, port=st.integers(1, 65535), other_port=st.integers(1, 65535),
       path=_PATHS, other_path=_PATHS, secret=st.from_regex(r"[A-Za-z0-9]{8,20}", fullmatch=True))
def test_the_key_holds_the_base_url_but_no_secret_in_it(host: str, other_host: str, port: int,
                                                        other_port: int, path: str, other_path: str,
                                                        secret: str) -> None:
    subject = FakeProvider().subject()
    url = f"http://{host}:{port}{path}"
    key = request_key(subject, req(), url)
    # another server answers another cache entry: two local servers may serve different
    # models under one name
    other = f"http://{other_host}:{other_port}{other_path}"
    assert (request_key(subject, req(), other) == key) == (
        (host, port, path) == (other_host, other_port, other_path))
    assert key != request_key(subject, req())  # the provider's own endpoint is another
    # the same server however written: a trailing slash, a case, credentials or a query
    assert request_key(subject, req(), url + "/") == key
    assert request_key(subject, req(), f"HTTP://{host.upper()}:{port}{path}") == key
    assert request_key(subject, req(), f"http://user:{secret}@{host}:{port}{path}?key={secret}") == key


def test_answers_of_one_server_are_not_replayed_for_another(db: Path) -> None:
    first = FakeProvider(settings=ProviderSettings(api_base="http://127.0.0.1:8001/v1"))
    second = FakeProvider(settings=ProviderSettings(api_base="http://127.0.0.1:8002/v1"))
    for provider in (first, second):
        provider.endpoint = lambda p=provider: p.settings.api_base  # type: ignore[attr-defined]
    with ResponseCache(db, "read-write") as cache:
        ask(CachingProvider(first, cache), req())
        ask(CachingProvider(second, cache), req())
        ask(CachingProvider(first, cache), req())
        assert (first.calls, second.calls) == (1, 1)
        assert cache.stats.hits == 1 and len(cache) == 2


def _v1_file(path: Path, rows: int) -> None:
    """A cache file as the key format v1 wrote it: no meta table, keys without a base URL."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                 "turn TEXT NOT NULL, stored_at TEXT NOT NULL)")
    turn = json.dumps(Turn(calls=(ToolCall("find_company", {}),)).to_dict())
    conn.executemany("INSERT INTO responses VALUES (?, 'fake/model-1', ?, '2026-01-01T00:00:00+00:00')",
                     [(f"{n:064x}", turn) for n in range(rows)])
    conn.commit()
    conn.close()


def test_entries_of_the_old_key_format_are_invalidated(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    _v1_file(old, 3)
    # replay would replay nothing: refused at once, saying why and what to do
    with pytest.raises(ToolselectError) as info:
        ResponseCache(old, "replay")
    message = str(info.value)
    assert "3 answers" in message and "toolselect_cache.v1" in message and str(old) in message
    assert "record it" in message
    # read-write drops them (none could ever be hit again) and records afresh
    inner = FakeProvider()
    with ResponseCache(old, "read-write") as cache:
        assert len(cache) == 0
        ask(CachingProvider(inner, cache), req())
        assert len(cache) == 1
    with ResponseCache(old, "replay") as cache:
        assert ask(CachingProvider(inner, cache), req()).attempts == 0
        assert inner.calls == 1
    # a later format is never emptied by this version, in any mode
    conn = sqlite3.connect(old)
    conn.execute("UPDATE meta SET value = 'toolselect_cache.v9'")
    conn.commit()
    conn.close()
    for mode in ("read-write", "refresh", "replay"):
        with pytest.raises(ToolselectError, match=r"toolselect_cache\.v9"):
            ResponseCache(old, mode)
    assert sqlite3.connect(old).execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 1


def test_request_key_hashes_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """What is hashed is the canonical JSON; spy on it to prove no key is in it."""
    seen: list[bytes] = []
    import hashlib

    real = hashlib.sha256

    def spy(data: bytes = b"") -> Any:
        seen.append(data)
        return real(data)

    monkeypatch.setattr("pytest_toolselect.run.cache.hashlib.sha256", spy)
    request_key({"provider": "x", "model": "y", "api_key": SECRET, "settings": {"secret": SECRET}},
                req())
    assert seen and all(SECRET.encode() not in d for d in seen)


# --- modes -------------------------------------------------------------------------------------

def test_check_mode_accepts_the_modes() -> None:
    assert MODES == ("off", "read-write", "replay", "refresh")
    for mode in MODES:
        assert check_mode(mode) == mode


@pytest.mark.parametrize(("typo", "suggestion"), [
    ("read_write", "read-write"), ("replya", "replay"), ("REFRESH", "refresh"), ("of", "off"),
])
def test_a_misspelled_mode_fails_loudly_with_the_nearest(typo: str, suggestion: str, db: Path) -> None:
    with pytest.raises(ToolselectError) as info:
        ResponseCache(db, typo)
    message = str(info.value)
    assert f"unknown cache mode {typo!r}" in message
    assert f"did you mean {suggestion!r}" in message
    assert "off, read-write, replay, refresh" in message
    assert not db.exists()


def test_a_mode_far_from_any_lists_the_modes_without_a_guess() -> None:
    with pytest.raises(ToolselectError, match="the cache modes are: off, read-write") as info:
        check_mode("zzzzzz")
    assert "did you mean" not in str(info.value)


# --- secrets -----------------------------------------------------------------------------------

def _all_bytes(db: Path) -> bytes:
    """The database and any journal beside it (-wal, -shm): everything on disk."""
    return b"".join(p.read_bytes() for p in db.parent.iterdir() if p.name.startswith(db.name))


def test_no_secret_lands_in_the_cache_file(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    # the model (or an API error it quoted) echoed the key back, in text and in an argument
    inner = FakeProvider("anthropic/claude-haiku-4-5", text=f"my key is {SECRET}, calling")
    cache = ResponseCache(db, "read-write")
    cached = CachingProvider(inner, cache)
    fresh = ask(cached, req(f"Find Acme ({SECRET})"))
    assert SECRET in fresh.text  # the caller gets what the model said
    hit = ask(cached, req(f"Find Acme ({SECRET})"))
    assert SECRET not in hit.text and "***" in hit.text
    # checked while the WAL still holds the write, and again after it is folded back
    assert SECRET.encode() not in _all_bytes(db)
    cache.close()
    assert SECRET.encode() not in _all_bytes(db)
    assert b"sk-ant-test-secret" not in _all_bytes(db)


def test_a_key_in_an_unusually_named_env_var_is_redacted_too(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # not shaped like a key, in a variable redact would not guess: known via api_key_env
    odd = "Zq9plainlookingcredential77"
    monkeypatch.setenv("GATEWAY_CREDENTIAL", odd)
    inner = FakeProvider(text=f"echo {odd}", settings=ProviderSettings(api_key_env="GATEWAY_CREDENTIAL"))
    with ResponseCache(db, "read-write") as cache:
        ask(CachingProvider(inner, cache), req())
    assert odd.encode() not in _all_bytes(db)


# --- errors ------------------------------------------------------------------------------------

def test_a_corrupt_cache_file_names_the_file_and_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "responses.sqlite"
    bad.write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(ToolselectError) as info:
        ResponseCache(bad, "read-write")
    message = str(info.value)
    assert str(bad) in message and "delete it" in message


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0,
                    reason="needs POSIX permissions that apply to this user")
def test_an_unwritable_cache_names_the_file_and_the_fix(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(ToolselectError) as info:
            ResponseCache(locked / "responses.sqlite", "read-write")
        assert "locked/responses.sqlite" in str(info.value) and "writable" in str(info.value)
    finally:
        locked.chmod(0o700)


@pytest.mark.parametrize("where", ["under_a_file", "a_folder"])
def test_a_path_that_cannot_hold_a_cache_names_the_file_and_the_fix(tmp_path: Path, where: str) -> None:
    # these fail even as root, where permissions would not
    (tmp_path / "plain.txt").write_text("x")
    (tmp_path / "folder.sqlite").mkdir()
    under_a_file = tmp_path / "plain.txt" / "responses.sqlite"
    path = under_a_file if where == "under_a_file" else tmp_path / "folder.sqlite"
    with pytest.raises(ToolselectError) as info:
        ResponseCache(path, "read-write")
    assert str(path) in str(info.value) and "cache path" in str(info.value)


def test_a_foreign_sqlite_file_in_replay_says_to_record(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(ToolselectError, match="read-write"):
        ResponseCache(other, "replay")


def test_an_unreadable_entry_is_a_miss_in_read_write_and_an_error_in_replay(db: Path) -> None:
    inner = FakeProvider()
    subject, request = inner.subject(), req()
    with ResponseCache(db, "read-write") as cache:
        ask(CachingProvider(inner, cache), request)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE responses SET turn = 'garbage'")
    conn.commit()
    conn.close()
    with ResponseCache(db, "replay") as cache, pytest.raises(ToolselectError, match="unreadable"):
        cache.get(request_key(subject, request))
    with ResponseCache(db, "read-write") as cache:
        ask(CachingProvider(inner, cache), request)
        assert inner.calls == 2 and cache.stats.misses == 1
        assert cache.get(request_key(subject, request)) is not None  # healed by the fresh answer


def test_a_closed_cache_says_so(db: Path) -> None:
    cache = ResponseCache(db, "read-write")
    cache.close()
    cache.close()  # idempotent
    with pytest.raises(ToolselectError, match="closed"):
        cache.get("k")


# --- concurrency -------------------------------------------------------------------------------

def test_stats_read_from_another_thread_while_calls_run_concurrently(db: Path) -> None:
    inner = FakeProvider()
    cache = ResponseCache(db, "read-write")
    cached = CachingProvider(inner, cache)
    done = threading.Event()
    seen: list[CacheStats] = []

    async def run() -> None:
        await asyncio.gather(*(cached.first_turn(req(f"question {i % 20}", rep=i // 20))
                               for i in range(200)))
        await asyncio.gather(*(cached.first_turn(req(f"question {i % 20}", rep=i // 20))
                               for i in range(200)))

    # the event loop runs on a background thread, as the session runs it
    worker = threading.Thread(target=lambda: (asyncio.run(run()), done.set()))
    worker.start()
    while not done.wait(0.0005):  # the main thread reads while the loop's thread writes
        seen.append(cache.stats)
    worker.join()
    assert cache.stats == CacheStats(hits=200, misses=200, saved_usd=pytest.approx(50.0), stored=200)
    assert all(s.hits <= 200 and s.stored <= 200 for s in seen)
    cache.close()


WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from pytest_toolselect.run.cache import ResponseCache
    from pytest_toolselect.providers import Turn
    from pytest_toolselect.exchange.tool import ToolCall

    path, worker, count, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    (go.parent / f"ready-{worker}").touch()
    while not go.exists():  # all writers start together, so their writes overlap
        time.sleep(0.005)
    cache = ResponseCache(path, "read-write")
    for i in range(count):
        cache.put(f"{worker}-{i}", Turn(calls=(ToolCall("t", {"i": i}),), text=worker, cost_usd=0.01))
    print(cache.stats.stored)
    cache.close()
""")


def test_two_processes_write_one_file_at_once(tmp_path: Path) -> None:
    db, go, count = tmp_path / "shared" / "responses.sqlite", tmp_path / "go", 150
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), name, str(count), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in ("gw0", "gw1", "gw2")]
    # once every interpreter has started (however slowly), release them at once
    deadline = time.monotonic() + 300
    while len(list(tmp_path.glob("ready-*"))) < len(procs) and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break  # a writer died: its error is reported below
        time.sleep(0.01)
    go.touch()
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert out.strip() == str(count)
    with ResponseCache(db, "replay") as cache:
        assert len(cache) == 3 * count
        for name in ("gw0", "gw1", "gw2"):
            for i in range(count):
                turn = cache.get(f"{name}-{i}")
                assert turn is not None and turn.text == name and turn.calls[0].arguments == {"i": i}
        assert cache.stats.hits == 3 * count


def test_the_stored_row_is_plain_json(db: Path) -> None:
    with ResponseCache(db, "read-write") as cache:
        ask(CachingProvider(FakeProvider(), cache), req())
    conn = sqlite3.connect(db)
    model, turn, stored_at = conn.execute("SELECT model, turn, stored_at FROM responses").fetchone()
    conn.close()
    assert model == "fake/model-1" and stored_at.endswith("+00:00")
    assert set(json.loads(turn)) == {"calls", "text", "stop_reason", "usage", "cost_usd", "truncated",
                                     "dropped_schema_keys", "attempts"}


def test_importing_the_cache_does_not_import_sqlite3() -> None:
    code = "import sys, pytest_toolselect.run.cache; print('sqlite3' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
