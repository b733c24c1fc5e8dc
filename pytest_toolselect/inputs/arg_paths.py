"""Why an argument path can never occur in a call a tool's input schema allows, and
which offered tool a name misspells: the loader's checks of a case against the tools."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_toolselect.messages.errors import nearest


def path_problem(node: Any, segments: list[str], root: Any, done: tuple[str, ...] = (),
                  depth: int = 0) -> tuple[str, str | None] | None:
    """Why a schema-conforming call can never have an argument at ``segments`` (with a
    likely intended path), or None when it can or the schema cannot tell ($ref cycles,
    open objects). An argument the schema does not declare is ruled out only when the
    object is closed (additionalProperties: false) or a declared name is a near miss
    (company.number for company_number): a matcher on an undeclared argument may be a
    deliberate check of one a model might invent."""
    from pytest_toolselect.exchange.schema_paths import MAX_DEPTH, alternatives

    if not segments or depth > MAX_DEPTH:
        return None
    # keywords beside a $ref or beside branches count where they shape where arguments may
    # be (an alternative that says nothing of it would make every path possible)
    alts = alternatives(node, root, keeps=lambda own: bool(_SHAPING_KEYS.intersection(own)))
    if not alts:
        return None
    found = [_problem_in(alt, segments, root, done, depth) for alt in alts]
    # the path exists when one alternative declares it; else the first one's reason
    return None if not all(found) else found[0]


def _problem_in(node: Mapping[str, Any], segments: list[str], root: Any, done: tuple[str, ...],
                depth: int) -> tuple[str, str | None] | None:
    """path_problem in one alternative: a schema with no $ref and no branches left."""
    from pytest_toolselect.exchange.schema_paths import INDEX

    here = ".".join(done) or "the tool"
    props = node.get("properties")
    problem: tuple[str, str | None] | None = None
    if isinstance(props, Mapping):
        # a key may itself hold dots (matchers try the longest key first)
        for k in range(len(segments), 0, -1):
            key = ".".join(segments[:k])
            if key in props:
                problem = path_problem(props[key], segments[k:], root, (*done, key), depth + 1)
                if problem is None:
                    return None
        if problem:
            return problem
    kind = node.get("type")
    kinds = {k for k in (kind if isinstance(kind, list) else [kind]) if isinstance(k, str)}
    if INDEX.fullmatch(segments[0]) and ("items" in node or "prefixItems" in node or kinds == {"array"}):
        index = int(segments[0])
        prefix, items = node.get("prefixItems"), node.get("items")
        if isinstance(prefix, list) and index < len(prefix):
            return path_problem(prefix[index], segments[1:], root, (*done, segments[0]), depth + 1)
        if items is False:
            return f"{here} holds at most {len(prefix or [])} items", None
        if isinstance(items, list):
            item = items[index] if index < len(items) else None
            return path_problem(item, segments[1:], root, (*done, segments[0]), depth + 1)
        return path_problem(items, segments[1:], root, (*done, segments[0]), depth + 1)
    if kinds and kinds <= {"string", "number", "integer", "boolean", "null"}:
        return f"{here} is a {' or '.join(sorted(kinds))}, with nothing inside", None
    if kinds == {"array"}:
        return f"{here} is a list: its items are reached by index, e.g. {'.'.join((*done, '0'))}", None
    if not isinstance(props, Mapping) or not props:
        return None
    if node.get("additionalProperties") not in (None, False) or node.get("patternProperties") \
            or node.get("unevaluatedProperties") not in (None, False) \
            or _CONDITIONAL_KEYS.intersection(node):
        # open, or declaring more under a condition (if/then, dependentSchemas): cannot tell
        return None
    near = _near_path(segments, [str(p) for p in props])
    if near:
        return f"{here} declares no {segments[0]!r}", ".".join((*done, near))
    if node.get("additionalProperties") is False:
        return f"{here} declares no {segments[0]!r} and allows no other keys", None
    return None


#: keywords that shape where arguments may be, beside a $ref or anyOf/oneOf/allOf
_SHAPING_KEYS = frozenset({"properties", "patternProperties", "additionalProperties",
                           "unevaluatedProperties", "items", "prefixItems"})
#: keywords that may declare properties only under a condition
_CONDITIONAL_KEYS = frozenset({"if", "then", "else", "dependentSchemas", "dependencies"})


def misspelt(name: str, offered: Mapping[str, Any]) -> str | None:
    """The offered tool ``name`` is a misspelling of: the same name but for case and
    separators (Find-Company), or one letter off inside a word (list_oficers, fnid_company).
    Not a word's first letter (set_user is not get_user) nor a plural (delete_files is
    not delete_file): those name other tools a model may call."""
    def squash(text: str) -> str:
        return re.sub(r"[-_.\s]", "", text).casefold()

    for other in offered:
        if squash(other) == squash(name):
            return other
    for other in offered:
        if _one_slip(name, other):
            return other
    return None


def _one_slip(a: str, b: str) -> bool:
    """Whether a and b differ by one typing slip inside a word of the same name: two
    neighbouring letters swapped, or one letter dropped, added or changed, neither at a
    word's start nor a trailing s."""
    if a.count("_") != b.count("_") or abs(len(a) - len(b)) > 1 or a == b:
        return False
    start = next(i for i, (x, y) in enumerate(zip(a + "\0", b + "\0", strict=False)) if x != y)
    word_start = start == 0 or a[start - 1] in "_-."
    if len(a) == len(b):
        if a[start + 2:] == b[start + 2:] and a[start:start + 2] == b[start:start + 2][::-1]:
            return True  # swapped neighbours (oficres): even at a word's start
        rest_equal = a[start + 1:] == b[start + 1:]
    else:
        short, long = (a, b) if len(a) < len(b) else (b, a)
        rest_equal = short[start:] == long[start + 1:]
        if rest_equal and long[start:] == "s":
            return False  # a plural names another tool
    return rest_equal and not word_start


def _near_path(segments: list[str], names: list[str]) -> str | None:
    """The declared name the path most likely meant, with the rest of the path kept:
    company.number -> company_number (one name misread as two), mayb.x -> maybe.x."""
    import difflib

    rest = ".".join(segments)
    whole, first = nearest(rest, names), nearest(segments[0], names)
    if whole and (not first or difflib.SequenceMatcher(None, rest, whole).ratio()
                  >= difflib.SequenceMatcher(None, segments[0], first).ratio()):
        return whole
    return ".".join((first, *segments[1:])) if first else None
