"""Preference groups (``tool_preference_groups.v1``): the models, loading, validation, resolving.

A group is one user request, two tools that serve it equally well (twins A and B) and
distractors that do not. ``"expect": "none"`` makes it a control: its request needs no
tool, so any call is over-calling. A twin or distractor is either written out
(``{name, description}``) or names a real tool (``{server, tool}``) so a team can probe
the tools it ships; the session resolves references with :func:`resolve_group`.

This module is imported when pytest collects a groups file, so it imports only the
standard library and the plugin's light modules (yaml and jsonschema load inside
``sourcemap``'s functions, numpy never).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from pytest_toolselect.exchange.json_value import JSONDict
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.messages.errors import ToolselectError, nearest
from pytest_toolselect.positions.sourced import PathT, Sourced
from pytest_toolselect.positions.sourcemap import (
    compile_schema,
    describe,
    load_file,
    load_schema,
    validate,
)

SCHEMA_VERSION = "tool_preference_groups.v1"

TWIN_KEYS = ("A", "B")
PAIR = "pair"
CONTROL = "none"
EXPECT_VALUES = (PAIR, CONTROL)
#: the fields that feed a factor; a twin without the field is not treated by that factor
FACTOR_FIELDS = ("vendor_name", "detail", "example", "exclusion")
CUE_KEYS = ("assertive", "social_proof")


def _empty_schema() -> dict[str, Any]:
    # what an inline tool without input_schema is offered as: it takes no arguments
    return {"type": "object", "properties": {}}


@dataclass(frozen=True)
class ToolSpec:
    """One tool of a group as the file gives it: written out, or a reference to a real tool.

    A reference (``server`` and ``tool`` set) has an empty ``name`` until
    :func:`resolve_group` fills in the real tool; ``server``/``tool`` stay set afterwards so
    the result can say where the tool came from.
    """

    name: str = ""
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=_empty_schema, hash=False)
    server: str | None = None
    tool: str | None = None

    @property
    def is_reference(self) -> bool:
        return self.tool is not None

    @property
    def resolved(self) -> bool:
        return bool(self.name)

    def as_tool(self) -> Tool:
        return Tool(name=self.name, description=self.description,
                    input_schema=dict(self.input_schema), server=self.server or "")

    def fingerprint_data(self) -> JSONDict:
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema, "server": self.server, "tool": self.tool}


@dataclass(frozen=True)
class Twin(ToolSpec):
    """A twin: a tool that serves the group's request, plus the fields its factors use."""

    vendor_name: str | None = None
    detail: str | None = None
    example: str | None = None
    exclusion: str | None = None

    def fingerprint_data(self) -> JSONDict:
        return {**super().fingerprint_data(),
                **{k: getattr(self, k) for k in FACTOR_FIELDS}}


@dataclass(frozen=True)
class Group:
    """One preference group, in canonical form."""

    id: str
    query: str
    twins: Mapping[str, Twin] = field(hash=False)
    distractors: tuple[ToolSpec, ...] = ()
    #: "pair", or "none" for a control
    expect: str = PAIR
    #: cue sentences this group overrides (the file's ``cues`` merged under the group's)
    cues: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: None: not set (the run's default applies); "": send no system prompt
    system: str | None = None
    domain: str | None = None
    source: str = ""
    line: int | None = None

    @property
    def is_control(self) -> bool:
        return self.expect == CONTROL

    @property
    def resolved(self) -> bool:
        return all(t.resolved for t in (*self.twins.values(), *self.distractors))

    def fingerprint_data(self) -> JSONDict:
        """What decides the group's cells (not its place in a file)."""
        return {
            "query": self.query,
            "twins": {k: self.twins[k].fingerprint_data() for k in TWIN_KEYS},
            "distractors": [d.fingerprint_data() for d in self.distractors],
            "expect": self.expect,
            "cues": dict(sorted(self.cues.items())),
            "system": self.system,
        }

    def error(self, message: str, fix: str | None = None) -> ToolselectError:
        return ToolselectError(message, file=self.source or None, line=self.line,
                               place=f"group {self.id!r}", fix=fix)


# -- loading ---------------------------------------------------------------------------


@functools.cache
def _validator() -> Any:
    return compile_schema(load_schema(SCHEMA_VERSION))


def load_groups_file(path: Path) -> tuple[Group, ...]:
    """Read, validate and build one groups file; any problem raises ToolselectError."""
    src = load_file(Path(path), what="groups file",
                    split_hint="split it into several *.groups.json files")
    data = src.data
    start = f"start it with schema_version: {SCHEMA_VERSION} and a groups: list"
    if data is None:
        raise src.error((), "the groups file is empty", f"{start}, or delete it")
    if not isinstance(data, dict):
        raise src.error((), "the top of a groups file must be a mapping with schema_version and "
                        f"groups; got {describe(data)}", start)
    if "schema_version" not in data:
        raise src.error((), "missing schema_version",
                        f"add schema_version: {SCHEMA_VERSION} as the first key", line=1)
    if data["schema_version"] != SCHEMA_VERSION:
        raise src.error(
            ("schema_version",),
            f"schema_version must be {SCHEMA_VERSION}; got {describe(data['schema_version'])}",
            f"write schema_version: {SCHEMA_VERSION}, the groups format this plugin reads",
        )
    _precheck(data, src)
    validate(_validator(), src)

    file_cues: dict[str, str] = dict(data.get("cues", {}))
    file_system: str | None = data.get("system")
    built: list[Group] = []
    first_seen: dict[str, int] = {}
    for i, item in enumerate(data["groups"]):
        path_i: PathT = ("groups", i)
        group = _build_group(item, src, path_i, file_cues, file_system)
        if group.id in first_seen:
            j = first_seen[group.id]
            raise src.error(
                (*path_i, "id"),
                f"duplicate group id {group.id!r}: groups[{j}] on line "
                f"{src.line_of(('groups', j, 'id'))} and groups[{i}] on line "
                f"{src.line_of((*path_i, 'id'))}",
                "give each group a unique id; ids name the pytest items and the results",
            )
        first_seen[group.id] = i
        built.append(group)
    return tuple(built)


def _tool_entries(data: Mapping[str, Any]) -> list[tuple[PathT, dict[str, Any]]]:
    """Every twin and distractor mapping in the file, with its path (whatever else is wrong)."""
    out: list[tuple[PathT, dict[str, Any]]] = []
    groups = data.get("groups")
    if not isinstance(groups, list):
        return out
    for i, g in enumerate(groups):
        if not isinstance(g, dict):
            continue
        twins = g.get("twins")
        if isinstance(twins, dict):
            out.extend(((("groups", i, "twins", k), t) for k, t in twins.items() if isinstance(t, dict)))
        dists = g.get("distractors")
        if isinstance(dists, list):
            out.extend(((("groups", i, "distractors", j), d) for j, d in enumerate(dists)
                        if isinstance(d, dict)))
    return out


def _precheck(data: Mapping[str, Any], src: Sourced) -> None:
    """The mistakes a JSON Schema can only report unreadably (a failed ``not``, an enum
    without a hint), said plainly before the schema runs."""
    groups = data.get("groups")
    if isinstance(groups, list):
        for i, g in enumerate(groups):
            if not isinstance(g, dict) or "expect" not in g:
                continue
            value = g["expect"]
            if value not in EXPECT_VALUES:
                near = nearest(value, EXPECT_VALUES) if isinstance(value, str) else None
                hint = f"; did you mean {near!r}?" if near and near != value else ""
                raise src.error(
                    ("groups", i, "expect"),
                    f"expect must be \"none\" or \"pair\"; got {describe(value)}{hint}",
                    'write expect: "none" for a control (a request that needs no tool), or leave '
                    "expect out for a pair group",
                )
    for path, entry in _tool_entries(data):
        ref = [k for k in ("server", "tool") if k in entry]
        inline = [k for k in ("name", "description", "input_schema") if k in entry]
        if ref and inline:
            raise src.error(
                (*path, inline[0]),
                f"this tool has both {ref[0]!r} (a reference to a real tool) and {inline[0]!r} "
                "(a written-out tool)",
                f"keep server: and tool: to offer the real tool as it is, or remove them and write "
                f"name: and description:; a reference takes its {inline[0]} from the server",
            )


def _build_group(item: Mapping[str, Any], src: Sourced, path: PathT,
                 file_cues: Mapping[str, str], file_system: str | None) -> Group:
    twins = {k: _build_twin(item["twins"][k]) for k in TWIN_KEYS}
    distractors = tuple(_build_spec(d) for d in item.get("distractors", ()))
    group = Group(
        id=item["id"],
        query=item["query"],
        twins=twins,
        distractors=distractors,
        expect=item.get("expect", PAIR),
        cues={**file_cues, **item.get("cues", {})},
        system=item.get("system", file_system),
        domain=item.get("domain"),
        source=src.file,
        line=src.line_of(path),
    )
    _check_names(group, lambda p, m, f: src.error((*path, *p), m, f))
    return group


def _build_spec(entry: Mapping[str, Any]) -> ToolSpec:
    return ToolSpec(**_spec_fields(entry))


def _build_twin(entry: Mapping[str, Any]) -> Twin:
    return Twin(**_spec_fields(entry), **{k: entry[k] for k in FACTOR_FIELDS if k in entry})


def _spec_fields(entry: Mapping[str, Any]) -> dict[str, Any]:
    if "tool" in entry:
        return {"server": entry["server"], "tool": entry["tool"]}
    return {"name": entry["name"], "description": entry["description"],
            "input_schema": dict(entry.get("input_schema") or _empty_schema())}


ErrorAt = Callable[[PathT, str, str], ToolselectError]


def _check_names(group: Group, error_at: ErrorAt) -> None:
    """Every name offered in one cell must be unique, or a call could not be told apart.

    A twin's vendor_name replaces its name in vendor_name cells, so it must differ from
    every other tool's name too. References are checked once resolved.
    """
    owners: dict[str, PathT] = {}
    entries: list[tuple[PathT, ToolSpec]] = [(("twins", k), group.twins[k]) for k in TWIN_KEYS]
    entries += [(("distractors", j), d) for j, d in enumerate(group.distractors)]
    for where, spec in entries:
        if not spec.resolved:
            continue
        if spec.name in owners:
            raise error_at(
                (*where, "name"),
                f"the tool name {spec.name!r} is offered twice in this group (also at "
                f"{_show(owners[spec.name])})",
                "give every twin and distractor a distinct name: a call names one tool",
            )
        owners[spec.name] = (*where, "name")
    for k in TWIN_KEYS:
        twin = group.twins[k]
        vendor = twin.vendor_name
        if vendor is None:
            continue
        if vendor == twin.name:
            raise error_at(("twins", k, "vendor_name"),
                           f"vendor_name {vendor!r} is the twin's own name, so the vendor_name "
                           "factor would change nothing",
                           "give a vendor-branded name, e.g. acme_" + vendor)
        other = owners.get(vendor)
        if other is not None:
            raise error_at(("twins", k, "vendor_name"),
                           f"vendor_name {vendor!r} is the name of another tool in this group "
                           f"({_show(other)}), so a call to it could not be told apart",
                           "choose a vendor name no other tool of the group has")


def _show(path: PathT) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


# -- resolving references --------------------------------------------------------------

_Spec = TypeVar("_Spec", bound=ToolSpec)


def resolve_group(group: Group, lookup: Callable[[str, str], Tool]) -> Group:
    """The group with every ``{server, tool}`` reference replaced by the real tool.

    ``lookup(server, tool)`` returns the tool as the server lists it (the session caches
    discovery); its name, description and input schema are taken, and a twin keeps the
    factor fields written beside the reference. Raises ToolselectError when two tools of
    the group end up with one name.
    """
    if group.resolved:
        return group

    def fill(spec: _Spec) -> _Spec:
        if spec.resolved:
            return spec
        assert spec.server is not None and spec.tool is not None
        real = lookup(spec.server, spec.tool)
        return replace(spec, name=real.name, description=real.description,
                       input_schema=dict(real.input_schema or _empty_schema()))

    twins = {k: fill(group.twins[k]) for k in TWIN_KEYS}
    resolved = replace(group, twins=twins, distractors=tuple(fill(d) for d in group.distractors))

    def error_at(path: PathT, message: str, fix: str) -> ToolselectError:
        return resolved.error(f"{_show(path)}: {message}", fix)

    _check_names(resolved, error_at)
    return resolved
