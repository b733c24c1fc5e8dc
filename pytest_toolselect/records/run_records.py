"""The records a run hands its gate and its reports: a case's, a preference group's, a
server's lint findings.

Each is a frozen dataclass, so a reader names a field instead of guessing a key.
``to_json()`` is the record as plain JSON data: what travels from an xdist worker to the
controller on the test report, and what the JSON schemas describe where a report or the
baseline writes it (key for key, in the same order). ``from_json()`` rebuilds a record from
exactly that data and refuses anything else, so the two cannot drift apart.

A saved results document's case, or a record made by hand, is read with
``as_case_record()`` once, where it enters a function that also reads live records: an
absent key reads as what an absent key always meant (no key: the node id; no count: 0).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pytest_toolselect.terms.vocabulary import Status, Verdict

from .attribution import Attribution
from .baseline_entry import GroupEntry
from .probe_call import ProbeCall
from .strict import require_keys
from .tool_changes import ToolChange

#: what a group record says it is, beside the case records it travels with
GROUP_KIND = "group"


@dataclass(frozen=True, slots=True)
class CheckEntry:
    """One check of one rep: its name, whether it passed, and what it saw."""

    name: str
    passed: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckEntry:
        require_keys(cls, data, ("name", "passed", "detail"))
        return cls(data["name"], data["passed"], data["detail"])


@dataclass(frozen=True, slots=True)
class Escalation:
    """Adaptive reps: the extra reps asked, why the asking stopped early (None: the rule
    settled it), and whether the case was being recorded for the first time."""

    extra_reps: int
    stopped: str | None
    recording: bool

    def to_json(self) -> dict[str, Any]:
        return {"extra_reps": self.extra_reps, "stopped": self.stopped, "recording": self.recording}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Escalation:
        require_keys(cls, data, ("extra_reps", "stopped", "recording"))
        return cls(data["extra_reps"], data["stopped"], data["recording"])


#: the keys of every case record, in order
_CASE_KEYS = ("nodeid", "key", "order", "case_id", "question", "category", "intent", "why",
              "expect_tool", "allow_no_tool", "case_fingerprint")
#: a case not scored (an error, or not run): the baseline keeps its entry
_UNSCORED_KEYS = ("status", "verdict", "error", "passes", "reps")
#: an unscored case whose calls were billed (every rep cut, an unreadable reply): what they cost
_BILLED_KEYS = ("model", "usage", "costs", "texts", "inconclusive")
#: a scored case, after the case keys
_SCORED_KEYS = ("toolset", "tool_texts", "tools_diff", "renamed_from", "dropped_from",
                "in_baseline", "status", "verdict", "passes", "reps", "first_tools", "model",
                "usage", "costs", "texts", "cached", "inconclusive", "truncated", "dropped_schema_keys",
                "first_tool",
                "calls", "failing_checks", "failing_detail", "checks", "tools_fingerprint",
                "tools_changed", "case_changed", "error")
#: present only when there is something to say
_OPTIONAL_KEYS = ("escalation", "test_failure", "unevaluated_checks", "found_by", "offered",
                  "tool_defs", "attribution", "context")


@dataclass(frozen=True, slots=True)
class CaseRecord:
    """One case of this run: the case, its verdict and, when it was scored, every rep.

    ``status`` None means not scored (an error, or the cost cap): the record then holds the
    case and its verdict only, and the fields of a scored run keep their empty defaults.
    """

    nodeid: str
    #: the baseline key (a path relative to the config's folder); the node id when unknown
    key: str
    #: the item's place in the whole suite (None: a record that never had one)
    order: int | None
    case_id: str
    question: str
    category: str | None
    intent: str | None
    why: str | None
    expect_tool: list[str] | None
    allow_no_tool: bool
    case_fingerprint: str | None
    status: Status | None
    verdict: Verdict
    passes: int = 0
    reps: int = 0
    error: str | None = None
    # a scored run only ----------------------------------------------------------------
    #: each offered tool's fingerprint by name (the system prompt as one more)
    toolset: dict[str, str] | None = None
    #: tool texts by fingerprint this process met first (each travels once)
    tool_texts: dict[str, str] = field(default_factory=dict)
    #: the tools added, removed or changed since the baseline's toolset
    tools_diff: list[ToolChange] | None = None
    renamed_from: str | None = None
    #: the baseline's pooled [passes, reps] of a case dropped without significance
    dropped_from: list[int] | None = None
    in_baseline: bool = False
    first_tools: list[str | None] = field(default_factory=list)
    model: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    costs: list[float | None] = field(default_factory=list)
    #: per billed call (as costs), the first turn's text: clipped, credentials masked
    texts: list[str] = field(default_factory=list)
    #: per rep: answered from the response cache
    cached: list[bool] = field(default_factory=list)
    #: reps cut at max_tokens before any tool call: billed (their costs follow the scored
    #: reps'), never scored
    inconclusive: int = 0
    truncated: int = 0
    dropped_schema_keys: list[str] = field(default_factory=list)
    first_tool: str | None = None
    #: per rep, its (clipped) tool calls as JSON
    calls: list[list[dict[str, Any]]] = field(default_factory=list)
    failing_checks: list[str] = field(default_factory=list)
    failing_detail: dict[str, str] = field(default_factory=dict)
    checks: list[list[CheckEntry]] = field(default_factory=list)
    tools_fingerprint: str | None = None
    tools_changed: bool = False
    case_changed: bool = False
    escalation: Escalation | None = None
    #: a decorated test whose own assertion failed (scored, and failed by its body)
    test_failure: str | None = None
    #: failing checks its baseline entry was not evaluated with, set aside by the verdict
    unevaluated_checks: list[str] = field(default_factory=list)
    #: per rep, a harness's step before its choice (its tool search), None where there was none
    found_by: list[str | None] = field(default_factory=list)
    #: the tool fingerprints in the order offered, the system prompt's last (the baseline
    #: keeps it, so the tool set can be offered again)
    offered: list[str] | None = None
    #: each tool whole (name, description, input schema) by fingerprint, for those this
    #: process met first (each travels once, as tool_texts)
    tool_defs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: what re-asking the model with the baseline's tools found (gate/attribution.py)
    attribution: Attribution | None = None
    #: the case's given calls and results, a clipped and masked line each (a case past the
    #: first call: exchange.context.context_lines)
    context: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # the words arrive as text from a file or a worker's report: read once, here
        if self.status is not None:
            object.__setattr__(self, "status", _word(Status, self.status, "status"))
        object.__setattr__(self, "verdict", _word(Verdict, self.verdict, "verdict"))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: _copy(getattr(self, k)) for k in _CASE_KEYS}
        if self.status is None:
            out.update((k, _copy(getattr(self, k))) for k in _UNSCORED_KEYS)
            if self.costs:
                out.update((k, _copy(getattr(self, k))) for k in _BILLED_KEYS)
            return out
        out.update((k, _copy(getattr(self, k))) for k in _SCORED_KEYS)
        if self.escalation is not None:
            out["escalation"] = self.escalation.to_json()
        if self.test_failure is not None:
            out["test_failure"] = self.test_failure
        if self.unevaluated_checks:
            out["unevaluated_checks"] = list(self.unevaluated_checks)
        if any(f is not None for f in self.found_by):
            out["found_by"] = list(self.found_by)
        for k in ("offered", "tool_defs", "attribution", "context"):
            if getattr(self, k):
                out[k] = _copy(getattr(self, k))
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseRecord:
        if data.get("status") is None:
            require_keys(cls, data, (*_CASE_KEYS, *_UNSCORED_KEYS), _BILLED_KEYS)
            return cls(**{k: _copy(data[k]) for k in (*_CASE_KEYS, *_UNSCORED_KEYS)},
                       **{k: _copy(data[k]) for k in _BILLED_KEYS if k in data})
        require_keys(cls, data, (*_CASE_KEYS, *_SCORED_KEYS), _OPTIONAL_KEYS)
        fields = {k: _copy(data[k]) for k in (*_CASE_KEYS, *_SCORED_KEYS)}
        fields["checks"] = [[CheckEntry.from_json(c) for c in rep] for rep in data["checks"]]
        fields["tools_diff"] = _changes(data["tools_diff"], ToolChange.from_json)
        escalation = data.get("escalation")
        attribution = data.get("attribution")
        return cls(**fields,
                   escalation=Escalation.from_json(escalation) if escalation is not None else None,
                   test_failure=data.get("test_failure"),
                   unevaluated_checks=list(data.get("unevaluated_checks") or []),
                   found_by=list(data.get("found_by") or []),
                   offered=_copy(data.get("offered")), tool_defs=_copy(data.get("tool_defs") or {}),
                   attribution=Attribution.from_json(attribution) if attribution is not None else None,
                   context=list(data.get("context") or []))

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> CaseRecord:
        """A record from a saved results document's case or a hand-made record: what is
        absent reads as absent always did (no key: the node id; no count: 0; no list:
        empty; no verdict: the status judged as an ordinary test's, an error when there is
        none), and keys a record does not hold (a document's outcome) are passed over."""
        nodeid = str(data.get("nodeid", ""))
        escalation = data.get("escalation")
        attribution = data.get("attribution")
        return cls(
            nodeid=nodeid, key=data.get("key", nodeid), order=data.get("order"),
            case_id=data.get("case_id", ""), question=data.get("question", ""),
            category=data.get("category"), intent=data.get("intent"), why=data.get("why"),
            expect_tool=_copy(data.get("expect_tool")),
            allow_no_tool=bool(data.get("allow_no_tool")),
            case_fingerprint=data.get("case_fingerprint"), status=data.get("status"),
            verdict=data.get("verdict") or _unjudged(data.get("status")), passes=data.get("passes", 0),
            reps=data.get("reps", 0), error=data.get("error"),
            toolset=_copy(data.get("toolset")), tool_texts=dict(data.get("tool_texts") or {}),
            tools_diff=_changes(data.get("tools_diff"), ToolChange.read),
            renamed_from=data.get("renamed_from"), dropped_from=_copy(data.get("dropped_from")),
            in_baseline=bool(data.get("in_baseline")),
            first_tools=list(data.get("first_tools") or []), model=data.get("model"),
            usage=dict(data.get("usage") or {}), costs=list(data.get("costs") or []),
            texts=list(data.get("texts") or []),
            cached=list(data.get("cached") or []), inconclusive=data.get("inconclusive", 0),
            truncated=data.get("truncated", 0),
            dropped_schema_keys=list(data.get("dropped_schema_keys") or []),
            first_tool=data.get("first_tool"), calls=_copy(list(data.get("calls") or [])),
            failing_checks=list(data.get("failing_checks") or []),
            failing_detail=dict(data.get("failing_detail") or {}),
            checks=[[CheckEntry(c["name"], c["passed"], c.get("detail", "")) for c in rep]
                    for rep in data.get("checks") or []],
            tools_fingerprint=data.get("tools_fingerprint"),
            tools_changed=bool(data.get("tools_changed")),
            case_changed=bool(data.get("case_changed")),
            escalation=(Escalation(escalation.get("extra_reps", 0), escalation.get("stopped"),
                                   bool(escalation.get("recording"))) if escalation else None),
            test_failure=data.get("test_failure"),
            unevaluated_checks=list(data.get("unevaluated_checks") or []),
            found_by=list(data.get("found_by") or []),
            offered=_copy(data.get("offered")), tool_defs=_copy(data.get("tool_defs") or {}),
            attribution=Attribution.read(attribution) if attribution else None,
            context=list(data.get("context") or []),
        )


def _changes(data: Any, read: Callable[[Mapping[str, Any]], ToolChange]) -> list[ToolChange] | None:
    return None if data is None else [read(c) for c in data]


#: a status's verdict without a baseline (gate.classify's), for a record that names no verdict
_UNJUDGED = {Status.HELD: Verdict.PASSED, Status.FLAKY: Verdict.FLAKY, Status.FAILING: Verdict.FAILED}


def _unjudged(status: object) -> Verdict:
    return Verdict.ERROR if status is None else _UNJUDGED[_word(Status, status, "status")]


def as_case_record(rec: CaseRecord | Mapping[str, Any]) -> CaseRecord:
    """A live record as it is; a mapping (a saved document's case, a hand-made record) read."""
    return rec if isinstance(rec, CaseRecord) else CaseRecord.read(rec)


_GROUP_KEYS = ("kind", "nodeid", "order", "file", "group_id", "control", "calls", "entry",
               "verdict", "over_call_share", "key")


@dataclass(frozen=True, slots=True)
class GroupRecord:
    """One preference group of this run: its calls, its baseline entry (None: no call was
    scored) and its verdict."""

    nodeid: str
    order: int
    file: str
    group_id: str
    control: bool
    calls: tuple[ProbeCall, ...]
    entry: GroupEntry | None
    verdict: Verdict
    over_call_share: float | None
    key: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdict", _word(Verdict, self.verdict, "verdict"))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": GROUP_KIND}
        out.update((k, _copy(getattr(self, k))) for k in _GROUP_KEYS[1:])
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GroupRecord:
        require_keys(cls, data, _GROUP_KEYS)
        if data["kind"] != GROUP_KIND:
            raise ValueError(f"not a GroupRecord record: kind {data['kind']!r}")
        entry = data["entry"]
        return cls(**{k: _copy(data[k]) for k in _GROUP_KEYS[1:] if k not in ("calls", "entry")},
                   calls=tuple(ProbeCall.from_json(c) for c in data["calls"]),
                   entry=GroupEntry.from_json(entry) if entry is not None else None)


_LINT_KEYS = ("server", "entry", "findings", "new", "tools", "coverage", "heatmap", "threshold")


@dataclass(frozen=True, slots=True)
class LintRecord:
    """One server's lint: the finding ids the baseline keeps, every finding (as JSON, the
    results document's shape), the new blocking ones, and what the lint saw."""

    server: str
    #: the ids the baseline keeps (every finding but the informational)
    entry: list[str]
    findings: list[dict[str, Any]]
    #: ids of error-level findings the baseline does not hold, when they block
    new: list[str]
    tools: list[str]
    coverage: dict[str, Any] | None
    heatmap: dict[str, Any]
    threshold: float
    #: what the baseline keeps of the server's tools (lint/rugpull.py's snapshot)
    snapshot: dict[str, dict[str, str]] = field(default_factory=dict)
    #: ids of error-level findings the baseline did not hold that an update run accepted
    accepted: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {k: _copy(getattr(self, k)) for k in (*_LINT_KEYS, "snapshot", "accepted")}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LintRecord:
        require_keys(cls, data, _LINT_KEYS, ("snapshot", "accepted"))
        return cls(**{k: _copy(data[k]) for k in _LINT_KEYS}, snapshot=_copy(data.get("snapshot", {})),
                   accepted=_copy(data.get("accepted", [])))


def _word(vocabulary: type[Enum], word: object, name: str) -> Any:
    try:
        return vocabulary(word)
    except ValueError:
        words = ", ".join(str(w.value) for w in vocabulary)
        raise ValueError(f"not a record: {name} {word!r} is none of {words}") from None


def _copy(value: Any) -> Any:
    """A field's value as fresh JSON data: an edit of a to_json() dict (or of the data a
    record was read from) leaves the record as it was; a vocabulary's word is plain text."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    if isinstance(value, (CheckEntry, Escalation, ToolChange, Attribution, ProbeCall, GroupEntry)):
        return value.to_json()
    return value
