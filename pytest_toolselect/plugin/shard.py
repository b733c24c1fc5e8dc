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
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from pytest_toolselect.inputs.shard_option import parse_shard
from pytest_toolselect.messages.errors import ToolselectError

if TYPE_CHECKING:
    from pytest_toolselect.run.session import RunSession

NAME = "toolselect-shard"

#: each item's index among all items before the shard was taken (the merged report's order)
GLOBAL_ORDER = pytest.StashKey[int]()
#: set on an item another shard runs: deselected, and not "not run" (the merge joins them)
OTHER_SHARD = pytest.StashKey[bool]()


def node_key(item: pytest.Item) -> str:
    """An ordinary test's shard key: its node id. Cases and groups are sharded by their
    baseline key (the case file's path relative to its config, and the id), which does
    not move with the rootdir."""
    return item.nodeid


def shard_of(key: str, n: int) -> int:
    """The 1-based shard a key belongs to among n (sha256: the same on every machine)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % n + 1


def select(items: list[pytest.Item], config: pytest.Config, spec: str,
           key: Callable[[pytest.Item], str] = node_key) -> None:
    """Keep this shard's items in `items` (in place); report the others as deselected."""
    k, n = parse_shard(spec)
    for index, item in enumerate(items):
        item.stash[GLOBAL_ORDER] = index
    mine = {id(item): shard_of(key(item), n) == k for item in items}
    kept = [item for item in items if mine[id(item)]]
    if len(kept) != len(items):
        dropped = [item for item in items if not mine[id(item)]]
        for item in dropped:
            item.stash[OTHER_SHARD] = True
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


class Shard:
    """--toolselect-shard K/N as one plugin object: it keeps this job's share of the items.

    Registered by the plugin's pytest_configure only when the option is given, before the
    session's hooks: among the ``tryfirst`` hooks pytest calls the later registered first,
    so the session has keyed every case and group (the whole suite's keys, which the merge
    checks) before this shard takes its share.
    """

    def __init__(self, session: RunSession, spec: str) -> None:
        self.session = session
        self.index, self.count = parse_shard(spec)
        self.spec = spec

    @classmethod
    def of(cls, session: RunSession) -> Shard | None:
        """The run's shard, or None when the run is not sharded."""
        settings = session.settings
        try:
            spec = settings.options.shard if settings.in_use() else None
        except ToolselectError:
            return None  # a bad option is the setup check's one usage error
        return cls(session, str(spec)) if spec is not None else None

    def holds(self, key: str) -> bool:
        """Whether a case with this baseline key is this shard's."""
        return shard_of(key, self.count) == self.index

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        keys = self.session.state.keys
        select(items, self.session.settings.pytest_config, self.spec,
               key=lambda item: keys.get(item.nodeid, item.nodeid))
