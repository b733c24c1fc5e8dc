"""A record's strict reading: the JSON a worker or a file hands over holds exactly the keys
of its shape (so a record's writer and its reader cannot drift apart)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def require_keys(cls: type, data: Mapping[str, Any], required: Iterable[str],
           optional: Iterable[str] = ()) -> None:
    """Refuse data that lacks a key of the shape, or holds one the shape does not have."""
    required = tuple(required)
    missing = [k for k in required if k not in data]
    extra = sorted(set(data) - set(required) - set(optional))
    if missing or extra:
        problem = "; ".join(p for p in (f"missing {', '.join(missing)}" if missing else "",
                                        f"unknown {', '.join(extra)}" if extra else "") if p)
        raise ValueError(f"not a {cls.__name__} record: {problem}")
