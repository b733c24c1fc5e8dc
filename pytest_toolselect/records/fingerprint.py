"""A short stable hash of JSON-able data: the baseline's subject, a group's identity."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def fingerprint(data: Any) -> str:
    """A short stable hash of JSON-able data (canonical form)."""
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()[:16]
