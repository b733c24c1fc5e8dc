"""The baseline file (toolselect_baseline.v1): load, check the subject, build, write atomically."""

from __future__ import annotations

import itertools
import json
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pytest_toolselect.exchange.json_value import JSONDict
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.positions.bounded import kind_of
from pytest_toolselect.positions.sourced import format_path
from pytest_toolselect.positions.sourcemap import describe, parse_text, read_text
from pytest_toolselect.records.baseline_entry import CaseEntry, GroupEntry
from pytest_toolselect.records.fingerprint import fingerprint as fingerprint  # re-exported
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.terms.check_names import CHECK_NAMES

from .atomic import joined, write_text
from .evidence import fresh_run, replayed
from .subject import Subject
from .toolsdiff import rebuild
from .verdict_rules import DEFAULT_HISTORY

SCHEMA_VERSION = "toolselect_baseline.v1"


#: the tables of a baseline beside its cases, as the file names them
_TABLES = ("groups", "lint", "toolsets", "descriptions", "lint_tools", "offered", "tools")
#: the same tables in the order ``build`` writes them
_WRITTEN = ("groups", "lint", "lint_tools", "toolsets", "descriptions", "offered", "tools")


@dataclass(frozen=True)
class Baseline:
    """A stored baseline as read: an immutable value, its case entries typed. Its tables
    are read-only mappings (a change raises); a migrated baseline is a new value
    (``with_keys``), and a new file is built from it (``build``), never by changing it."""

    #: the file it was read from (None: built by ``build``, to be written)
    path: Path | None
    subject: Subject
    cases: Mapping[str, CaseEntry] = field(default_factory=dict)
    #: preference groups' entries (the probe's gate), by key (see keys.py)
    groups: Mapping[str, GroupEntry] = field(default_factory=dict)
    #: lint findings' ids (error and warning level) by server name (--toolselect-lint)
    lint: Mapping[str, list[str]] = field(default_factory=dict)
    #: False when the file did not exist (this run records it)
    existed: bool = True
    #: per tools fingerprint, each offered tool's fingerprint by name (toolsdiff)
    toolsets: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: per tool fingerprint, its bounded description (the system prompt's text)
    descriptions: Mapping[str, str] = field(default_factory=dict)
    #: per linted server, each tool's accepted description and schema fingerprint (rug pulls)
    lint_tools: Mapping[str, Mapping[str, Mapping[str, str]]] = field(default_factory=dict)
    #: per tools fingerprint, the fingerprints of its tools in the order offered (the
    #: system prompt's last); with ``tools``, the tool set as it was offered
    offered: Mapping[str, list[str]] = field(default_factory=dict)
    #: per tool fingerprint, the tool whole: name, description, input schema (shared by
    #: every entry offered it)
    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: the tables the file holds, in its order (None: those not empty, in the order
    #: ``_TABLES`` names them); an empty one a file holds is written back
    tables: tuple[str, ...] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # read-only views of private copies: whoever holds the value cannot change it
        for name in ("cases", *_TABLES):
            value = getattr(self, name)
            if not isinstance(value, MappingProxyType):
                object.__setattr__(self, name, MappingProxyType(dict(value)))
        bad = [k for k, v in self.cases.items() if not isinstance(v, CaseEntry)]
        if bad:
            raise TypeError(f"baseline entries must be CaseEntry values: {bad[:3]!r}")
        bad = [k for k, v in self.groups.items() if not isinstance(v, GroupEntry)]
        if bad:
            raise TypeError(f"a baseline's group entries must be GroupEntry values: {bad[:3]!r}")
        if not isinstance(self.subject, Subject):
            raise TypeError(f"a baseline's subject must be a Subject value: {self.subject!r}")
        unknown = [t for t in self.tables or () if t not in _TABLES]
        if unknown:
            raise ValueError(f"a baseline holds no table named {unknown[0]!r}")

    @classmethod
    def from_json(cls, path: Path, data: Mapping[str, Any]) -> Baseline:
        """A baseline document (checked against the schema) as a value."""
        return cls(path=path, subject=Subject.from_json(data["subject"]),
                   cases={k: CaseEntry.from_json(e) for k, e in data["cases"].items()},
                   **{name: data.get(name, {}) for name in _TABLES if name != "groups"},
                   groups={k: GroupEntry.from_json(e) for k, e in data.get("groups", {}).items()},
                   tables=tuple(k for k in data if k in _TABLES))

    def to_json(self) -> dict[str, Any]:
        """The document this value was read from (or ``build`` made), key for key."""
        out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "subject": self.subject.to_json(),
                               "cases": self.cases_json()}
        tables = self.tables if self.tables is not None else [n for n in _TABLES if getattr(self, n)]
        out.update({name: _plain(getattr(self, name)) for name in tables})
        return out

    def cases_json(self) -> dict[str, JSONDict]:
        """The entries as the file holds them (what a saved document's reader gets)."""
        return {k: e.to_json() for k, e in self.cases.items()}

    def tool_set(self, tools_fingerprint: str | None) -> tuple[tuple[Tool, ...], str | None] | None:
        """The tools and system prompt an entry was recorded with, or None: the file was
        written before the baseline kept them (update it on main to keep them)."""
        order = self.offered.get(tools_fingerprint or "")
        return None if order is None else rebuild(order, self.tools)

    @property
    def empty(self) -> bool:
        """No entry of any kind: such a file gates nothing and counts as absent."""
        return not (self.cases or self.groups or self.lint)

    def with_keys(self, cases: Mapping[str, str], groups: Mapping[str, str]) -> Baseline:
        """The same baseline with entries moved to new keys ({old: new}, order kept)."""
        if not cases and not groups:
            return self
        return replace(self, cases={cases.get(k, k): v for k, v in self.cases.items()},
                       groups={groups.get(k, k): v for k, v in self.groups.items()})


#: a baseline is written by the plugin, so it may be far larger than a hand-written file
#: (about 600 bytes per case); past this it is refused before it is read
MAX_BYTES = 256 * 1024 * 1024
#: counts no run of the gate comes near; larger ones are hand edits or corruption
MAX_REPS = 1_000_000
_RESTORE = "restore it from version control, or delete it to record a new one"


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json keeps the last of two equal keys; in a baseline that hides a corrupted merge
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def load(path: Path) -> Baseline | None:
    """The baseline at path, or None when there is no file yet.

    A file that exists but cannot be read as a complete baseline is refused, never
    re-recorded over: losing a team's baseline silently would un-gate every case.
    """
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None  # no file there (a parent that is a file: the write will say so)
    except OSError as e:
        raise ToolselectError(f"cannot read the baseline: {e.strerror or e}", file=path,
                              fix="check that it is a readable file") from None
    if stat.S_ISDIR(mode):
        raise ToolselectError("the baseline path is a folder, not a file", file=path,
                              fix="point --toolselect-baseline at a file in it")
    kind = kind_of(mode)
    if kind is not None:  # a FIFO or a device: nothing to read, and nothing to write over
        raise ToolselectError(f"the baseline path is {kind}, not a file", file=path,
                              fix="point --toolselect-baseline at a regular file")
    # the mode bits as well as access(): root reads a mode-000 file, a user cannot, and a
    # file one of them cannot read is the same file to both
    if stat.S_IMODE(mode) & 0o444 == 0 or not os.access(path, os.R_OK):
        raise ToolselectError(
            f"the baseline cannot be read: permission denied (mode {stat.S_IMODE(mode):03o})",
            file=path, fix="make it readable (chmod u+r), then run again")
    try:
        text = read_text(path, what="baseline", max_bytes=MAX_BYTES)
    except ToolselectError as e:
        # binary, not UTF-8, unreadable or huge: the same story as broken JSON
        raise ToolselectError(f"{e.message}; it may be corrupted", file=path, line=e.line,
                              fix=_RESTORE) from None
    try:
        # the C parser: a baseline of thousands of cases loads in milliseconds
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        msg = e.msg.removesuffix(" at")  # "Invalid control character at"
        raise ToolselectError(
            f"the baseline is not valid JSON ({msg} at line {e.lineno}, column {e.colno}); "
            "it may be truncated or corrupted", file=path, fix=_RESTORE,
        ) from None
    except _DuplicateKey as e:
        # the line-aware parser finds the same duplicate, with its line and place
        raise _malformed(path, text, None, f"the key {e.args[0]!r} appears twice in one object",
                         adopt=True) from None
    except RecursionError:
        # the line-aware parser stops at its depth cap, and says where
        raise _malformed(path, text, None, "it is nested too deep", adopt=True) from None
    _validate(data, path, text)
    return Baseline.from_json(path, data)


def _plain(value: Any) -> Any:
    """A table as plain JSON (its read-only views as dicts, its group entries as theirs)."""
    if isinstance(value, GroupEntry):
        return value.to_json()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _malformed(path: Path, text: str, where: tuple[str | int, ...] | None, message: str,
               adopt: bool = False) -> ToolselectError:
    """A malformed-baseline error at a JSON path, with its line, found by a second,
    line-aware parse (slow, but only ever run on a broken file). With ``adopt``, the fault
    is one that parse stops at too (a duplicate key, deep nesting): its message and line
    are taken as they are more precise."""
    line = None
    try:
        line = parse_text(text, file=str(path), json_syntax=True).line_of(where or ())
    except ToolselectError as e:
        line = e.line
        if adopt:
            where = None
            message = e.message + (f" (at {e.place})" if e.place else "")
    return ToolselectError(f"the baseline is malformed: {message}", file=path, line=line,
                           place=format_path(where) if where else None, fix=_RESTORE)


def _validate(data: Any, path: Path, text: str) -> None:
    from importlib.resources import files

    import jsonschema

    schema = json.loads(files("pytest_toolselect").joinpath("schemas/toolselect_baseline.v1.json")
                        .read_text())
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        if not isinstance(data, dict):
            found = f"its top is {describe(data)}, not a mapping"
        elif "schema_version" not in data:
            found = "it has no schema_version"
        else:
            found = f"its schema_version is {describe(data['schema_version'])}"
        raise ToolselectError(
            f"not a {SCHEMA_VERSION} file: {found}", file=path,
            place="schema_version" if isinstance(data, dict) else "(top level)",
            fix="point --toolselect-baseline at a baseline this plugin wrote",
        )
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        raise _malformed(path, text, tuple(error.absolute_path), error.message)
    for nodeid, case in data["cases"].items():
        # the schema cannot compare two items; the gate's statistics need passes <= reps
        runs: list[tuple[tuple[str | int, ...], int, int]] = [
            (("cases", nodeid), case["passes"], case["reps"])]
        runs += [(("cases", nodeid, "history", i), p, r)
                 for i, (p, r) in enumerate(case.get("history", ()))]
        for where, passes, reps in runs:
            if passes > reps:
                raise _malformed(path, text, where, f"{passes} passes out of {reps} reps")
            if reps > MAX_REPS:
                raise _malformed(path, text, where, f"{reps} reps in one run (at most {MAX_REPS})")


def subject_mismatch(stored: Subject, current: Subject) -> list[str]:
    """The subject fields that differ (empty: the baseline belongs to this run's subject)."""
    return stored.differing(current)


def entry(rec: CaseRecord, history: Iterable[Iterable[int]] | None = None) -> CaseEntry:
    """A case's baseline entry from its run record (history: the runs kept, this one last)."""
    assert rec.status is not None, "only a scored case has an entry"
    runs = tuple((int(p), int(r)) for p, r in history) if history is not None else ()
    return CaseEntry(
        status=rec.status, passes=rec.passes, reps=rec.reps, first_tool=rec.first_tool,
        failing_checks=tuple(sorted(rec.failing_checks)),
        case_fingerprint=rec.case_fingerprint, tools_fingerprint=rec.tools_fingerprint,
        history=runs or ((rec.passes, rec.reps),),
        # the checks this version runs: one an upgrade adds later never blocks this entry
        checks=tuple(CHECK_NAMES),
    )


def merged_history(old: CaseEntry | None, rec: CaseRecord, keep: int = DEFAULT_HISTORY) -> list[list[int]]:
    """The runs to store for a case: the old entry's runs plus this one, the last `keep`.

    The history restarts with this run when the case or what it was offered changed
    (its case or tools fingerprint): passes of another question or other tool
    descriptions say nothing about how marginal this one is.
    """
    if keep < 1:
        raise ValueError(f"keep at least one run, got {keep}")
    # only reps the model was really asked are evidence (a cache replay is not)
    fresh = fresh_run(rec)
    this = [[int(p), int(r)] for p, r in [fresh]] if fresh is not None else []
    # a fingerprint the entry does not hold (a hand-written entry) is not a change,
    # as in the run record's case_changed and tools_changed
    if old is None or any(then not in (None, now) for then, now in (
            (old.case_fingerprint, rec.case_fingerprint),
            (old.tools_fingerprint, rec.tools_fingerprint))):
        # a first entry needs a run: a replayed one is the best evidence there is
        return this or [[int(rec.passes), int(rec.reps)]]
    # an entry written before the history existed counts as its one run
    return [*([p, r] for p, r in old.runs), *this][-keep:]


def build(subject: Subject, records: Iterable[CaseRecord], old: Baseline | None,
          gone: Iterable[str] = (), *, history: int = DEFAULT_HISTORY,
          group_entries: Mapping[str, GroupEntry] | None = None,
          lint_entries: Mapping[str, Iterable[str]] | None = None,
          lint_tools: Mapping[str, Mapping[str, Mapping[str, str]]] | None = None) -> Baseline:
    """The new baseline: this run's entries over the old ones, a new value (``write`` it).

    Cases that errored or were not run keep their old entries (nothing lost);
    cases known to be gone are dropped. A case run again keeps its last `history`
    runs (merged_history), so a case that wobbles on main is known as marginal.
    Records are the run's own, or a merged results document's cases (read as records).
    """
    cases: dict[str, CaseEntry] = dict(old.cases) if old is not None else {}
    for nodeid in gone:
        cases.pop(nodeid, None)
    recs = list(records)
    for rec in recs:
        if rec.status is not None:
            before = cases.get(rec.key)
            if before is None and old is not None and rec.renamed_from:
                # a renamed case carries its old entry's history to its new key
                before = old.cases.get(rec.renamed_from)
            if before is not None and replayed(rec) and not (rec.case_changed
                                                             or rec.tools_changed):
                cases[rec.key] = before  # a replay is no new evidence
                continue
            cases[rec.key] = entry(rec, merged_history(before, rec, history))
    cases = {k: cases[k] for k in sorted(cases)}
    tables: dict[str, Any] = {}
    groups: dict[str, GroupEntry] = dict(old.groups) if old is not None else {}
    groups.update(group_entries or {})
    if groups:
        tables["groups"] = {k: groups[k] for k in sorted(groups)}
    # a server linted this run replaces its entry; the others keep theirs
    lint = dict(old.lint) if old is not None else {}
    lint.update({s: sorted(ids) for s, ids in (lint_entries or {}).items()})
    if lint:
        tables["lint"] = {k: lint[k] for k in sorted(lint)}
    accepted: dict[str, Mapping[str, Mapping[str, str]]] = (dict(old.lint_tools) if old is not None
                                                            else {})
    accepted.update({s: dict(t) for s, t in (lint_tools or {}).items() if t})
    if accepted:
        tables["lint_tools"] = {s: {t: dict(accepted[s][t]) for t in sorted(accepted[s])}
                                for s in sorted(accepted)}
    tables.update(_tool_tables(cases, recs, old))
    # the tables in the order the file has always been written in
    return Baseline(path=None, subject=subject, cases=cases, **tables,
                    tables=tuple(t for t in _WRITTEN if t in tables))


def _tool_tables(cases: Mapping[str, CaseEntry], records: Iterable[CaseRecord],
                 old: Baseline | None) -> dict[str, Any]:
    """The toolsets and descriptions the entries' tools fingerprints refer to (this run's
    over the old file's), and nothing else: the file stays bounded and deterministic."""
    toolsets = dict(old.toolsets) if old is not None else {}
    texts = dict(old.descriptions) if old is not None else {}
    offered = dict(old.offered) if old is not None else {}
    defs: dict[str, Any] = {k: _plain(v) for k, v in old.tools.items()} if old is not None else {}
    for rec in records:
        if rec.toolset is not None and rec.tools_fingerprint is not None:
            toolsets[rec.tools_fingerprint] = rec.toolset
            if rec.offered is not None:
                offered[rec.tools_fingerprint] = list(rec.offered)
        texts.update(rec.tool_texts)
        defs.update(rec.tool_defs)
    used = sorted({c.tools_fingerprint for c in cases.values() if c.tools_fingerprint}
                  & set(toolsets))
    out: dict[str, Any] = {}
    if used:
        out["toolsets"] = {fp: dict(sorted(toolsets[fp].items())) for fp in used}
        tool_fps = sorted({t for fp in used for t in toolsets[fp].values()} & set(texts))
        out["descriptions"] = {t: texts[t] for t in tool_fps}
    # the tool sets whole, each tool once however many entries were offered it; a set
    # with a tool whose definition never travelled is left out (it could not be rebuilt)
    kept = [fp for fp in used if fp in offered and all(t in defs for t in offered[fp])]
    if kept:
        out["offered"] = {fp: list(offered[fp]) for fp in kept}
        out["tools"] = {t: defs[t] for t in sorted({t for fp in kept for t in offered[fp]})}
    return out


def write(path: Path, baseline: Baseline) -> None:
    """Write atomically (see atomic.write_text): killed at any point, the file is either
    the old baseline or the complete new one; two runs writing at once leave one of their
    two documents; the file keeps the permissions it had. The text is written as it is
    encoded: a baseline of 20,000 cases is never held as one string, nor as its tokens."""
    encoder = json.JSONEncoder(indent=2, ensure_ascii=False)
    write_text(path, itertools.chain(joined(encoder.iterencode(baseline.to_json())), ["\n"]))
