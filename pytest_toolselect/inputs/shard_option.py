"""``--toolselect-shard K/N`` as data: its parse and the options table's check."""

from __future__ import annotations

import re

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """(k, n) from "K/N" with 1 <= K <= N; otherwise a ValueError saying what is wrong, to
    follow the value (as the options table says it)."""
    match = _SPEC.match(str(text))
    if match is None:
        raise ValueError("is not K/N (e.g. 2/3: the second of three shards)")
    k, n = int(match[1]), int(match[2])
    if n < 1 or not 1 <= k <= n:
        raise ValueError("names no shard: K must be 1 to N, and N at least 1")
    return k, n


def shard_problem(text: object) -> str | None:
    """The options table's check: what is wrong, after the value it names, or None."""
    try:
        parse_shard(str(text))
    except ValueError as e:
        return str(e)  # the table's message puts the value before it
    return None
