"""Baseline keys: where a case is, independent of where pytest runs.

A key is the case file's path relative to its anchor (the folder of the toolselect
config that governs the file, else the rootdir), ``::``, then the rest of the pytest
node id (the case id, a test's name and parameters, a group id). Node ids move with
the rootdir; a key moves only when the file moves within its suite.

Baselines written before keys existed hold node ids: ``legacy_renames`` maps each to
the current key it names (the same file path seen from another folder, so one path
is a segment-wise suffix of the other), once the run's keys are known.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

SEP = "::"


def key_for(path: Path, nodeid: str, anchor: Path) -> str:
    """The baseline key of the item at ``path`` with pytest node id ``nodeid``."""
    rest = nodeid.split(SEP, 1)[1] if SEP in nodeid else ""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(anchor))
    return f"{Path(rel).as_posix()}{SEP}{rest}"


def split(key: str) -> tuple[str, str]:
    """(file part, rest) of a key or node id."""
    file, _, rest = key.partition(SEP)
    return file, rest


def _suffix_match(a: list[str], b: list[str]) -> bool:
    """One segment list ends with the other (the same file seen from two folders)."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return bool(short) and long[len(long) - len(short):] == short


def _seen_from_above(extra: list[str], anchor: Path | None) -> bool:
    """A node id longer than the key was recorded from a parent of the anchor: the extra
    leading segments are the anchor's own folders (not another suite's)."""
    if not extra:
        return True
    if anchor is None:
        return False
    parts = Path(os.path.abspath(anchor)).parts
    return len(parts) > len(extra) and list(parts[-len(extra):]) == extra


def legacy_renames(stored: Iterable[str], current: Iterable[str],
                   anchors: Mapping[str, Path] | None = None) -> dict[str, str]:
    """Stored keys that are node ids of a current key: {stored: current}.

    ``anchors`` gives the anchor folder of a current key's file part. Only unambiguous
    pairs: a stored key matching two current keys (or a current key claimed twice, or
    already stored) stays as it is.
    """
    anchors = anchors or {}
    current = set(current)
    stored = list(stored)
    have = set(stored)
    by_tail: dict[tuple[str, str], list[str]] = {}
    for key in current:
        if key in have:
            continue
        file, rest = split(key)
        by_tail.setdefault((file.rsplit("/", 1)[-1], rest), []).append(key)
    if not by_tail:
        return {}
    found: dict[str, str] = {}
    claims: dict[str, int] = {}
    for old in stored:
        if old in current:
            continue
        file, rest = split(old)
        segments = [s for s in file.split("/") if s not in ("", ".")]
        if not segments:
            continue
        hits = []
        for c in by_tail.get((segments[-1], rest), ()):
            cfile = split(c)[0]
            theirs = cfile.split("/")
            if _suffix_match(segments, theirs) and _seen_from_above(
                    segments[:max(0, len(segments) - len(theirs))], anchors.get(cfile)):
                hits.append(c)
        if len(hits) == 1:
            found[old] = hits[0]
            claims[hits[0]] = claims.get(hits[0], 0) + 1
    return {old: new for old, new in found.items() if claims[new] == 1}


_PARAMS = re.compile(r"\[.*\]$", re.DOTALL)


def function_of(rest: str) -> str:
    """The function a decorated test's key names: ``Class::test_x[p]`` -> ``test_x``."""
    return _PARAMS.sub("", rest.rsplit(SEP, 1)[-1])


def family_of(key: str) -> str:
    """The test function a decorated case's key belongs to, parameters taken off:
    ``f.py::Class::test_x[p]`` -> ``f.py::Class::test_x`` (every parameter set of one
    parametrized function is one family)."""
    return _PARAMS.sub("", key)


def defines_function(text: str, name: str) -> bool:
    """Whether a Python file's text still defines the test function ``name``."""
    return re.search(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(", text, re.MULTILINE) is not None


def existing_file(file: str, anchors: Iterable[Path]) -> Path | None:
    """The file a key's path names under one of the anchors (or, for a node id recorded
    from a parent folder, under the anchor once the anchor's own folders are taken off
    its front); None when no such file exists."""
    segments = [s for s in file.split("/") if s not in ("", ".")]
    for anchor in anchors:
        for start in range(len(segments)):
            if not _seen_from_above(segments[:start], anchor):
                continue
            candidate = anchor.joinpath(*segments[start:])
            if candidate.is_file():
                return candidate
    return None
