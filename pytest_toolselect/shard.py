"""``--toolselect-shard K/N``: this CI job's stable share of the items.

A suite that outgrows one machine runs as N jobs; each takes the items whose
stable key hashes to its shard, writes its results, and ``toolselect merge``
makes the one verdict. An item's shard depends on its key alone, so the same
case always lands in the same shard whatever else is added or removed, and the
shards partition the items exactly. pytest-xdist still spreads a shard's items
over the job's cores; there is no scheduler across machines.
"""

from __future__ import annotations

import hashlib
import re

import pytest

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
#: each item's index among all items before the shard was taken (the merged report's order)
GLOBAL_ORDER = pytest.StashKey[int]()


def parse_shard(text: str) -> tuple[int, int]:
    """(k, n) from "K/N" with 1 <= K <= N; ValueError saying what is wrong otherwise."""
    match = _SPEC.match(str(text))
    if match is None:
        raise ValueError(f"{text!r} is not K/N (e.g. 2/3: the second of three shards)")
    k, n = int(match[1]), int(match[2])
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"{text!r}: K must be 1 to N, and N at least 1")
    return k, n


def shard_problem(text: object) -> str | None:
    """The options table's check: an error message, or None."""
    try:
        parse_shard(str(text))
    except ValueError as e:
        return str(e)
    return None


def shard_key(item: pytest.Item) -> str:
    """The key an item is sharded by: stable across runs, machines and working directories.

    The node id: a case file's path relative to the rootdir and the case id (or a
    test's own id). The one place to change what "the same case" means for shards.
    """
    return item.nodeid


def shard_of(key: str, n: int) -> int:
    """The 1-based shard a key belongs to among n (sha256: the same on every machine)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n + 1


def select(items: list[pytest.Item], config: pytest.Config, spec: str) -> None:
    """Keep this shard's items in `items` (in place); report the others as deselected."""
    k, n = parse_shard(spec)
    for index, item in enumerate(items):
        item.stash[GLOBAL_ORDER] = index
    kept = [item for item in items if shard_of(shard_key(item), n) == k]
    if len(kept) != len(items):
        dropped = [item for item in items if shard_of(shard_key(item), n) != k]
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
