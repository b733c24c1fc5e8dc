"""Walking a tool's JSON schema: local ``$ref``s followed, the keywords beside a ``$ref``
and the branches of ``anyOf``/``oneOf``/``allOf`` read as alternatives, list indexes read.

The one walker of the case loader (a matcher's path checked against the schema) and the
scorer (matchers, identifier rules): both read a node through :func:`alternatives`, so a
path the loader accepts is one the scorer finds. Pure: nothing but the standard library.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .json_value import JSONObject

INDEX = re.compile(r"\d+")
# $ref chains and anyOf nesting are short in real schemas; the cap only guards cycles
MAX_DEPTH = 12
BRANCH_KEYS = ("anyOf", "oneOf", "allOf")


def alternatives(node: Any, root: Any, *, keeps: Callable[[JSONObject], bool] = bool,
                 depth: int = 0) -> list[JSONObject]:
    """The schemas a value at ``node`` is read against, each on its own and none with a
    ``$ref`` or a branch list left in it: the node with its local ``$ref`` followed, then
    the keywords beside that ``$ref`` (JSON Schema 2019-09 on applies them as well); for a
    node with branches, its own keywords beside them first, then every branch, flattened.

    Keywords beside a ``$ref`` or beside branches count only when ``keeps`` says they
    matter to the reader (the loader: only those that shape where arguments may be).
    Cycles and unresolvable references end in no alternative."""
    if depth > MAX_DEPTH:
        return []
    target = deref(node, root)
    if target is None:
        return []
    out: list[Mapping[str, Any]] = []
    if target is not node and isinstance(node, Mapping):
        out += alternatives(target, root, keeps=keeps, depth=depth + 1)
        beside = {k: v for k, v in node.items() if k != "$ref"}
        if beside and keeps(beside):
            out += alternatives(beside, root, keeps=keeps, depth=depth + 1)
        return out
    branches = [b for k in BRANCH_KEYS if isinstance(target.get(k), list) for b in target[k]]
    if not branches:
        return [target]
    own = {k: v for k, v in target.items() if k not in BRANCH_KEYS}
    if own and keeps(own):
        out.append(own)
    for branch in branches:
        out += alternatives(branch, root, keeps=keeps, depth=depth + 1)
    return out


def deref(node: Any, root: Any) -> JSONObject | None:
    """Follow local ``$ref``s (``#/$defs/X``), as pydantic-built MCP schemas use them."""
    for _ in range(MAX_DEPTH):
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
            elif isinstance(target, list) and INDEX.fullmatch(part) and int(part) < len(target):
                target = target[int(part)]
            else:
                return None
        node = target
    return None
