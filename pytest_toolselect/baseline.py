"""The baseline file (toolselect_baseline.v1): load, check the subject, build, write atomically."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ToolselectError
from .gate import DEFAULT_HISTORY

SCHEMA_VERSION = "toolselect_baseline.v1"


def fingerprint(data: Any) -> str:
    """A short stable hash of JSON-able data (canonical form)."""
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass
class Baseline:
    path: Path
    subject: dict[str, Any]
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: preference groups' entries (the probe's gate), by node id
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: False when the file did not exist (this run records it)
    existed: bool = True


def load(path: Path) -> Baseline | None:
    """The baseline at path, or None when there is no file yet.

    A file that exists but cannot be read as a complete baseline is refused, never
    re-recorded over: losing a team's baseline silently would un-gate every case.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ToolselectError(f"cannot read the baseline: {e.strerror}", file=path) from None
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ToolselectError(
            f"the baseline is not valid JSON ({e}); it may be truncated or corrupted",
            file=path,
            fix="restore it from version control, or delete it to record a new one",
        ) from None
    _validate(data, path)
    return Baseline(path=path, subject=data["subject"], cases=data["cases"],
                    groups=data.get("groups", {}))


def _validate(data: Any, path: Path) -> None:
    from importlib.resources import files

    import jsonschema

    schema = json.loads(files("pytest_toolselect").joinpath("schemas/toolselect_baseline.v1.json")
                        .read_text())
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        found = data.get("schema_version") if isinstance(data, dict) else type(data).__name__
        raise ToolselectError(
            f"not a {SCHEMA_VERSION} file (schema_version: {found!r})", file=path,
            fix="point --toolselect-baseline at a baseline this plugin wrote",
        )
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        raise ToolselectError(
            f"the baseline is malformed: {error.message}", file=path, place=where.lstrip(".") or None,
            fix="restore it from version control, or delete it to record a new one",
        )
    for nodeid, case in data["cases"].items():
        # the schema cannot compare two items; the gate's statistics need passes <= reps
        for i, (passes, reps) in enumerate(case.get("history", ())):
            if passes > reps:
                raise ToolselectError(
                    f"the baseline is malformed: {passes} passes out of {reps} reps",
                    file=path, place=f"cases.{nodeid}.history[{i}]",
                    fix="restore it from version control, or delete it to record a new one",
                )


def subject_mismatch(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """The subject fields that differ (empty: the baseline belongs to this run's subject)."""
    keys = sorted(set(stored) | set(current))
    return [k for k in keys if stored.get(k) != current.get(k)]


def entry(record: Mapping[str, Any], history: Iterable[Iterable[int]] | None = None) -> dict[str, Any]:
    """A case's baseline entry from its run record (history: the runs kept, this one last)."""
    runs = [[int(p), int(r)] for p, r in history] if history is not None else []
    if not runs:
        runs = [[record["passes"], record["reps"]]]
    return {
        "status": record["status"],
        "passes": record["passes"],
        "reps": record["reps"],
        "first_tool": record["first_tool"],
        "failing_checks": sorted(record["failing_checks"]),
        "case_fingerprint": record["case_fingerprint"],
        "tools_fingerprint": record["tools_fingerprint"],
        "history": runs,
    }


def merged_history(old: Mapping[str, Any] | None, record: Mapping[str, Any],
                   keep: int = DEFAULT_HISTORY) -> list[list[int]]:
    """The runs to store for a case: the old entry's runs plus this one, the last `keep`.

    The history restarts with this run when the case or what it was offered changed
    (its case or tools fingerprint): passes of another question or other tool
    descriptions say nothing about how marginal this one is.
    """
    if keep < 1:
        raise ValueError(f"keep at least one run, got {keep}")
    this = [int(record["passes"]), int(record["reps"])]
    # a fingerprint the entry does not hold (a hand-written entry) is not a change,
    # as in the run record's case_changed and tools_changed
    if old is None or any(old.get(k) not in (None, record.get(k))
                          for k in ("case_fingerprint", "tools_fingerprint")):
        return [this]
    stored = old.get("history")
    # an entry written before the history existed counts as its one run
    runs = [[int(p), int(r)] for p, r in stored] if stored else [[int(old["passes"]),
                                                                  int(old["reps"])]]
    return [*runs, this][-keep:]


def build(subject: Mapping[str, Any], records: Iterable[Mapping[str, Any]],
          old: Baseline | None, gone: Iterable[str] = (), *,
          history: int = DEFAULT_HISTORY,
          group_entries: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The new baseline document: this run's entries over the old ones.

    Cases that errored or were not run keep their old entries (nothing lost);
    cases known to be gone are dropped. A case run again keeps its last `history`
    runs (merged_history), so a case that wobbles on main is known as marginal.
    """
    cases: dict[str, dict[str, Any]] = dict(old.cases) if old is not None else {}
    for nodeid in gone:
        cases.pop(nodeid, None)
    for rec in records:
        if rec.get("status") is not None:
            before = cases.get(rec["nodeid"])
            cases[rec["nodeid"]] = entry(rec, merged_history(before, rec, history))
    groups: dict[str, Any] = dict(old.groups) if old is not None else {}
    groups.update(group_entries or {})
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "subject": dict(subject),
        "cases": {k: cases[k] for k in sorted(cases)},
    }
    if groups:
        document["groups"] = {k: dict(groups[k]) for k in sorted(groups)}
    return document


def write(path: Path, document: Mapping[str, Any]) -> None:
    """Write atomically: a temp file in the same folder, fsync, then os.replace.

    Killed at any point, the file is either the old baseline or the complete new one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise

