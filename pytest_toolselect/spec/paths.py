"""Walking a tool's JSON schema: local ``$ref``s followed, list indexes read.

Shared by the case loader (a matcher's path checked against the schema) and the
scorer (matchers, identifier rules). Pure: nothing but the standard library.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_INDEX = re.compile(r"\d+")
# $ref chains and anyOf nesting are short in real schemas; the cap only guards cycles
_MAX_DEPTH = 12


def _deref(node: Any, root: Any) -> Any:
    """Follow local ``$ref``s (``#/$defs/X``), as pydantic-built MCP schemas use them."""
    for _ in range(_MAX_DEPTH):
        if not isinstance(node, Mapping):
            return None
        ref = node.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#"):
            return node
        target: Any = root
        for part in ref[1:].split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping):
                target = target.get(part)
            elif isinstance(target, list) and _INDEX.fullmatch(part) and int(part) < len(target):
                target = target[int(part)]
            else:
                return None
        node = target
    return None
