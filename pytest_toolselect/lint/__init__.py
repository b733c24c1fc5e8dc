"""A static linter of the tool set: findings from the tools alone, no key and no network.

``toolselect lint`` and ``pytest --toolselect-lint`` both use it. Nothing here imports
numpy, bm25s or mcp at import time: each is imported by the rule that needs it.
"""

from __future__ import annotations

from .findings import ERROR, INFO, SEVERITIES, WARNING, Finding

__all__ = ["ERROR", "INFO", "SEVERITIES", "WARNING", "Finding"]
