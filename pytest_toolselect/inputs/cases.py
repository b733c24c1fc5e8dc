"""Selection cases: the Case model, and loading and validating case files."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

# sourcemap imports only the standard library; yaml and jsonschema load inside its functions
from pytest_toolselect.exchange.context import GivenTurn, context_to_data
from pytest_toolselect.exchange.json_value import JSONDict, JSONObject
from pytest_toolselect.messages.allerrors import raise_all
from pytest_toolselect.messages.errors import ToolselectError, nearest
from pytest_toolselect.positions.sourced import PathT, Sourced
from pytest_toolselect.positions.sourcemap import (
    compile_schema,
    describe,
    load_file,
    load_schema,
    schema_problems,
    validate,
)

from .arg_paths import misspelt as _misspelt
from .arg_paths import path_problem
from .labels import problem, refused

if TYPE_CHECKING:
    from pytest_toolselect.exchange.tool import Tool


@dataclass(frozen=True)
class IdentifierSettings:
    """What counts as an identifier, and which equivalences grounding allows."""

    #: parameter names (or dotted paths) always treated as identifiers
    params: tuple[str, ...] = ()
    #: parameter names never treated as identifiers, whatever their values look like
    ignore_params: tuple[str, ...] = ()
    #: 4138203 and 04138203 name the same thing
    leading_zeros: bool = True
    #: a digit-bearing value under an identifier parameter must be grounded in the question
    #: even where a case does not set forbid_ungrounded (forbid_ungrounded: false opts out)
    ground_params: bool = True


@dataclass(frozen=True)
class Decoy:
    """A value that must not be used as an identifier, and the parameters it guards."""

    value: str
    #: parameter names or dotted paths; () guards the identifier parameters
    params: tuple[str, ...] = ()

    @classmethod
    def of(cls, item: str | Decoy | JSONObject) -> Decoy:
        if isinstance(item, Decoy):
            return item
        if isinstance(item, Mapping):
            return cls(str(item["value"]), tuple(item.get("params", ())))
        return cls(str(item))

    def data(self) -> str | JSONDict:
        """As written in a case file: the plain string when it guards the default."""
        return {"value": self.value, "params": list(self.params)} if self.params else self.value


@dataclass(frozen=True)
class Case:
    """One selection case, in canonical (snake_case) form."""

    id: str
    question: str
    why: str = ""
    servers: tuple[str, ...] | None = None
    category: str | None = None
    intent: str | None = None
    tags: tuple[str, ...] = ()
    #: None: no tool_choice check; (): the model must call nothing
    expect_tool: tuple[str, ...] | None = None
    allow_no_tool: bool = False
    #: None: any number of calls; n: the expected tools are called exactly n times
    expect_calls: int | None = None
    forbid_tools: tuple[str, ...] = ()
    #: each a matcher mapping: {path, equals|one_of|contains|matches|absent|equals_text}
    expect_args: tuple[dict[str, Any], ...] = ()
    #: True: every identifier; None: identifier parameters (identifiers.ground_params); False: none
    forbid_ungrounded: bool | None = None
    forbid_any_identifier: bool = False
    #: plain strings or Decoy (Decoy.of reads either)
    decoys: tuple[str | Decoy, ...] = ()
    identifiers: IdentifierSettings = field(default_factory=IdentifierSettings)
    #: every call to an offered tool must validate against its input schema
    valid_arguments: bool = True
    #: no call may pass a parameter its tool's schema does not declare
    undeclared_arguments: bool = True
    #: overrides the servers' instructions as the system prompt ("" sends none)
    system: str | None = None
    #: the turns before the scored one (exchange.context), replayed after the question
    context: tuple[GivenTurn, ...] = ()
    #: where it was written, for messages
    source: str = ""
    line: int | None = None

    def fingerprint_data(self) -> JSONDict:
        """The parts of the case that decide its verdict (not its place in a file)."""
        return {
            "question": self.question,
            "servers": list(self.servers) if self.servers is not None else None,
            "expect_tool": list(self.expect_tool) if self.expect_tool is not None else None,
            "allow_no_tool": self.allow_no_tool,
            **({} if self.expect_calls is None else {"expect_calls": self.expect_calls}),
            "forbid_tools": list(self.forbid_tools),
            "expect_args": list(self.expect_args),
            "forbid_ungrounded": bool(self.forbid_ungrounded),
            "forbid_any_identifier": self.forbid_any_identifier,
            "decoys": [Decoy.of(d).data() for d in self.decoys],
            "identifiers": self._identifiers_data(),
            "system": self.system,
            # only when off: cases written before the check keep their fingerprint
            **({} if self.valid_arguments else {"valid_arguments": False}),
            **({} if self.undeclared_arguments else {"undeclared_arguments": False}),
            # only when given: first-turn cases keep their fingerprint
            **({"context": context_to_data(self.context)} if self.context else {}),
        }

    def _identifiers_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "params": list(self.identifiers.params),
            "ignore_params": list(self.identifiers.ignore_params),
            "leading_zeros": self.identifiers.leading_zeros,
        }
        # only when off: grounding identifier parameters is the default, and cases
        # written before it keep their fingerprint
        if not self.grounds_params:
            data["ground_params"] = False
        return data

    @property
    def grounds_params(self) -> bool:
        """Whether identifier parameters must be grounded (the default check)."""
        if self.forbid_ungrounded is None:
            return self.identifiers.ground_params
        return self.forbid_ungrounded


@dataclass(frozen=True)
class CaseFile:
    path: str
    servers: tuple[str, ...] | None
    cases: tuple[Case, ...]
    #: the line of the file's own `servers:` (None: the file names none)
    servers_line: int | None = None


# -- loading ---------------------------------------------------------------------------

SCHEMA_VERSION = "toolselect_cases.v1"

#: the gate reference's camelCase spellings, accepted so its cases load unchanged
CASE_ALIASES: dict[str, str] = {
    "expectTool": "expect_tool",
    "allowNoTool": "allow_no_tool",
    "expectCalls": "expect_calls",
    "forbidTools": "forbid_tools",
    "expectArgs": "expect_args",
    "forbidUngrounded": "forbid_ungrounded",
    "forbidAnyIdentifier": "forbid_any_identifier",
    "validArguments": "valid_arguments",
    "undeclaredArguments": "undeclared_arguments",
}
MATCHER_ALIASES: dict[str, str] = {"oneOf": "one_of", "equalsText": "equals_text",
                                   "byValue": "by_value"}
#: by schema title, for "did you mean" on a misspelled alias
_ALIASES_BY_TITLE = {"case": CASE_ALIASES, "matcher": MATCHER_ALIASES}


def merge_identifiers(
    base: IdentifierSettings | None, override: Mapping[str, Any] | None
) -> IdentifierSettings:
    """``override``'s keys replace ``base``'s (a case's settings over the config's)."""
    merged = base or IdentifierSettings()
    if not override:
        return merged
    changes: dict[str, Any] = {}
    if "params" in override:
        changes["params"] = tuple(override["params"])
    if "ignore_params" in override:
        changes["ignore_params"] = tuple(override["ignore_params"])
    for key in ("leading_zeros", "ground_params"):
        if key in override:
            changes[key] = bool(override[key])
    return replace(merged, **changes)


#: a further check of a built case that the schema cannot express, given its source and place
#: (scoring's contradiction check: inputs do not know the identifier rule it needs)
CaseCheck = Callable[["Case", Sourced, PathT], None]


def read_case_file(path: Path, config_identifiers: IdentifierSettings | None, *,
                   check: CaseCheck) -> CaseFile:
    """Read, validate and build one case file, each case through ``check``; any problem
    raises ToolselectError.

    ``check`` has no default, so no case file is read unchecked by accident: readers load
    through ``scoring.contradictions.load_case_file``, which passes the contradiction check."""
    src = load_file(
        Path(path), what="case file", split_hint="split it into several *.toolselect.yaml files"
    )
    data = src.data
    start = f"start it with schema_version: {SCHEMA_VERSION} and a cases: list"
    if data is None:
        raise src.error((), "the case file is empty", f"{start}, or delete it")
    if not isinstance(data, dict):
        raise src.error(
            (), "the top of a case file must be a mapping with schema_version, servers and "
            f"cases; got {describe(data)}", start,
        )
    if "schema_version" not in data:
        raise src.error((), "missing schema_version",
                        f"add schema_version: {SCHEMA_VERSION} as the first line", line=1)
    if data["schema_version"] != SCHEMA_VERSION:
        raise src.error(
            ("schema_version",),
            f"schema_version must be {SCHEMA_VERSION}; got {describe(data['schema_version'])}",
            f"write schema_version: {SCHEMA_VERSION}, the case format this plugin reads",
        )
    cases = data.get("cases")
    if isinstance(cases, list):
        for i, item in enumerate(cases):
            if isinstance(item, dict):
                cases[i] = _normalize_case(item, src, ("cases", i))
    found = schema_problems(_file_validator(), src, aliases=_ALIASES_BY_TITLE)
    problems = [e for _, e in found]  # every case's mistakes at once, not the first alone
    in_case = {p[1] for p, _ in found if len(p) >= 2 and p[0] == "cases"}
    if any(len(p) < 2 or p[0] != "cases" for p, _ in found):
        raise_all(problems)  # the file's own shape is wrong: its cases cannot be read
    file_servers = tuple(data["servers"]) if "servers" in data else None
    built: list[Case] = []
    first_seen: dict[str, int] = {}
    for i, item in enumerate(data["cases"]):
        if i in in_case:
            continue  # its schema mistakes are said; the checks below need a valid case
        try:
            case = _build_case(item, src, ("cases", i), file_servers, config_identifiers, check)
        except ToolselectError as e:
            problems.append(e)
            continue
        if case.id in first_seen:
            j = first_seen[case.id]
            problems.append(src.error(
                ("cases", i, "id"),
                f"duplicate case id {case.id!r}: cases[{j}] on line "
                f"{src.line_of(('cases', j, 'id'))} and cases[{i}] on line "
                f"{src.line_of(('cases', i, 'id'))}",
                "give each case a unique id; ids name the pytest items",
            ))
            continue
        first_seen[case.id] = i
        built.append(case)
    raise_all(problems)
    return CaseFile(path=str(path), servers=file_servers, cases=tuple(built),
                    servers_line=src.line_of(("servers",)) if file_servers is not None else None)


def read_case(
    data: Mapping[str, Any],
    *,
    check: CaseCheck,
    source: str = "<case>",
    default_servers: tuple[str, ...] | None = None,
    config_identifiers: IdentifierSettings | None = None,
    require_why: bool = True,
) -> Case:
    """One case mapping (case-file keys; camelCase aliases accepted) as a validated Case.

    ``check`` has no default, like ``read_case_file``'s: readers use
    ``scoring.contradictions.parse_case``."""
    src = Sourced(file=source, data=None)
    if not isinstance(data, Mapping):
        raise src.error((), f"a case must be a mapping of case keys; got {describe(data)}",
                        "pass a dict such as {'id': ..., 'question': ..., 'why': ...}")
    plain = _normalize_case(_plain(data), src, ())
    src.data = plain
    validate(_case_validator(require_why), src, aliases=_ALIASES_BY_TITLE)
    return _build_case(plain, src, (), default_servers, config_identifiers, check)


# -- helpers ---------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """Python values (tuples, other mappings) as the JSON shapes the schema checks."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _rename(obj: dict[str, Any], aliases: Mapping[str, str], src: Sourced,
            path: PathT) -> dict[str, Any]:
    """Aliases renamed to canonical keys (keeping their order); both spellings is an error."""
    if not any(k in aliases for k in obj):
        return obj
    out: dict[str, Any] = {}
    for key, value in obj.items():
        canonical = aliases.get(key, key)
        if canonical in out:
            other = src.renames.get((path, canonical), canonical)
            raise src.error(
                path,
                f"both {other!r} and {key!r} are given: they are the same key",
                f"keep one of them; {canonical} is the usual spelling",
                line=src.lines.get((*src.written(path), key)),
            )
        if canonical != key:
            src.renames[(path, canonical)] = key
        out[canonical] = value
    return out


def _normalize_case(item: dict[str, Any], src: Sourced, path: PathT) -> dict[str, Any]:
    # aliases become canonical keys before validation, so the schema lists only ours
    item = _rename(item, CASE_ALIASES, src, path)
    matchers = item.get("expect_args")
    if isinstance(matchers, list):
        for j, m in enumerate(matchers):
            if isinstance(m, dict):
                matchers[j] = _rename(m, MATCHER_ALIASES, src, (*path, "expect_args", j))
    return item


@functools.cache
def _file_validator() -> Any:
    return compile_schema(load_schema(SCHEMA_VERSION))


@functools.cache
def _case_validator(require_why: bool) -> Any:
    root = load_schema(SCHEMA_VERSION)
    defs = root["$defs"]
    if not require_why:
        defs["case"]["required"] = [k for k in defs["case"]["required"] if k != "why"]
    # the case item subschema, with the definitions it refers to
    return compile_schema({"$schema": root["$schema"], "$defs": defs, "$ref": "#/$defs/case"})


def _label_problems(item: dict[str, Any], src: Sourced, path: PathT) -> list[ToolselectError]:
    named = [(k, item.get(k), (*path, k)) for k in ("category", "intent")]
    named += [("tag", t, (*path, "tags", j)) for j, t in enumerate(item.get("tags", ()))]
    return [src.error(at, *problem(field_name, label)) for field_name, label, at in named
            if isinstance(label, str) and refused(label)]


def _build_case(item: dict[str, Any], src: Sourced, path: PathT,
                default_servers: tuple[str, ...] | None,
                config_identifiers: IdentifierSettings | None,
                check: CaseCheck | None = None) -> Case:
    """A validated case mapping as a Case, after the checks a schema cannot express."""
    matchers = item.get("expect_args", [])
    problems: list[ToolselectError] = []  # each mistake of the case, not the first alone
    for j, m in enumerate(matchers):
        if "matches" in m:
            try:
                re.compile(m["matches"])
            except re.error as exc:
                at = f" at position {exc.pos}" if exc.pos is not None else ""
                problems.append(src.error(
                    (*path, "expect_args", j, "matches"),
                    f"matches {m['matches']!r} is not a valid regular expression: {exc.msg}{at}",
                    "fix the pattern, a Python regular expression: escape . ( ) [ ] { } * + ? with a "
                    "backslash to match them literally, or use contains for plain text",
                ))
        if m.get("optional") and ("absent" in m or m["path"] == "any"):
            problems.append(src.error(
                (*path, "expect_args", j, "optional"),
                "optional lets a call leave one argument out; it cannot go with "
                + ("absent" if "absent" in m else "path: any"),
                "drop optional (absent: true already allows the argument left out)"
                if "absent" in m else "name the argument's path"))
        if m.get("by_value") and not ("equals" in m or "one_of" in m):
            problems.append(src.error(
                (*path, "expect_args", j, "by_value"),
                "by_value compares numbers by value in equals or one_of, and this matcher has "
                "neither", "drop by_value, or use equals / one_of"))
    for tool in [t for t in item.get("forbid_tools", []) if t in item.get("expect_tool", [])]:
        problems.append(src.error(
            (*path, "forbid_tools"),
            f"tool {tool!r} is both expected (expect_tool) and forbidden (forbid_tools)",
            "remove it from one of the two lists",
        ))
    if "expect_calls" in item and not item.get("expect_tool"):
        problems.append(src.error((*path, "expect_calls"),
                                  "expect_calls counts the calls of the expected tools, and the "
                                  "case expects none", "name them in expect_tool, or drop "
                                  "expect_calls"))
    problems += _label_problems(item, src, path)
    context: tuple[GivenTurn, ...] = ()
    if "context" in item:
        from .given import read_context

        context, found = read_context(item["context"], src, (*path, "context"))
        problems += found
    raise_all(problems)
    servers = item.get("servers")
    case = Case(
        id=item["id"],
        question=item["question"],
        why=item.get("why", ""),
        servers=tuple(servers) if servers is not None else default_servers,
        category=item.get("category"),
        intent=item.get("intent"),
        tags=tuple(item.get("tags", ())),
        expect_tool=tuple(item["expect_tool"]) if "expect_tool" in item else None,
        allow_no_tool=item.get("allow_no_tool", False),
        expect_calls=item.get("expect_calls"),
        forbid_tools=tuple(item.get("forbid_tools", ())),
        expect_args=tuple(dict(m) for m in matchers),
        forbid_ungrounded=item.get("forbid_ungrounded"),
        forbid_any_identifier=item.get("forbid_any_identifier", False),
        decoys=tuple(Decoy.of(d) if isinstance(d, Mapping) else d for d in item.get("decoys", ())),
        identifiers=merge_identifiers(config_identifiers, item.get("identifiers")),
        valid_arguments=item.get("valid_arguments", True),
        undeclared_arguments=item.get("undeclared_arguments", True),
        system=item.get("system"),
        context=context,
        source=src.file,
        line=src.line_of(path),
    )
    if check is not None:
        check(case, src, path)
    return case


# -- against the offered tools ---------------------------------------------------------


def check_offered(case: Case, tools: Sequence[Tool]) -> None:
    """What a case file cannot check alone: the tools it names and the argument paths it
    matches must exist among the tools its servers offer, else the case can never pass
    (an expected tool that is not offered) or a check can never fail (a misspelled
    forbidden tool). Raises ToolselectError naming the case and the fix."""
    offered = {t.name: t for t in tools}
    names = ", ".join(offered) or "none"

    def error(place: str, message: str, fix: str) -> ToolselectError:
        return ToolselectError(message, file=case.source or None, line=case.line,
                               place=f"case {case.id!r}, {place}", fix=fix)

    # tool_name_format renames every tool: the name on its server is not what the model sees
    renamed = {t.original_name: t.name for t in tools if t.original_name and t.original_name != t.name}

    def hint(name: str, near: str | None) -> str:
        if name in renamed:
            return f"; tool_name_format renames it to {renamed[name]!r}"
        return f"; did you mean {near!r}?" if near else ""

    problems: list[ToolselectError] = []
    for i, name in enumerate(case.expect_tool or ()):
        if name not in offered:
            near = renamed.get(name) or nearest(name, offered)
            problems.append(error(
                f"expect_tool[{i}]",
                f"expect_tool names {name!r}, which the case's servers do not offer, so the case "
                "can never pass" + hint(name, near),
                f"write {near}" if name in renamed else f"write one of the offered tools: {names}",
            ))
    for i, name in enumerate(case.forbid_tools):
        # a forbidden name that is not offered may be deliberate (a tool of another server, or
        # one a model might invent, as write_file beside read_file); only a misspelling of an
        # offered tool, or its name before tool_name_format, is a mistake that disables the check
        if name in offered:
            continue
        near = renamed.get(name) or _misspelt(name, offered)
        if near:
            problems.append(error(f"forbid_tools[{i}]",
                                  f"forbid_tools names {name!r}, which is not offered"
                                  f"{hint(name, near)}", f"rename it to {near}"))
    for t, turn in enumerate(case.context):
        for i, given in enumerate(turn.calls):
            if given.name not in offered:
                near = renamed.get(given.name) or nearest(given.name, offered)
                place = f"context[{t}]" if len(turn.calls) == 1 else f"context[{t}].calls[{i}]"
                problems.append(error(
                    place, f"the context calls {given.name!r}, which the case's servers do not "
                    "offer, so the replayed turn names a tool the model never saw"
                    + hint(given.name, near),
                    f"write {near}" if given.name in renamed
                    else f"write one of the offered tools: {names}"))
    targets = [offered[n] for n in case.expect_tool or () if n in offered]
    for j, m in enumerate(case.expect_args):
        path = m.get("path")
        # absent: true on an undeclared argument is a real guard against invented arguments
        if not targets or not isinstance(path, str) or path == "any" or "absent" in m:
            continue
        found = [path_problem(t.input_schema, path.split("."), t.input_schema) for t in targets]
        if all(found):
            reason, near = next(p for p in found if p)
            target_names = ", ".join(t.name for t in targets)
            problems.append(error(
                f"expect_args[{j}].path",
                f"path {path!r} leads to no argument of {target_names}: {reason}, so this matcher can never "
                "hold" + (f"; did you mean {near!r}?" if near else ""),
                f"write path: {near}" if near else "match an argument the tool declares, or use path: any",
            ))
    raise_all(problems)  # every mistake of the case at once


# the schema walk behind check_offered's path errors (kept under its old name for tests)
_path_problem = path_problem
