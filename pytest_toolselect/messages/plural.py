"""A count with its noun: "1 case", "2 cases" (every part may use it)."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n` and `word`, with `many` (or word + "s") when n is not 1."""
    return f"{n} {noun(n, word, many)}"


def noun(n: int, word: str, many: str | None = None) -> str:
    """`word` as `n` of it take it, without the count ("shards 2, 3"): `many` (or word + "s")
    when n is not 1."""
    return word if n == 1 else (many or word + "s")
