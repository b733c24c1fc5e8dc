"""toolselect.yaml / [tool.toolselect] loading: the model, the servers, the defaults."""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_toolselect.messages.errors import ToolselectError, nearest
from pytest_toolselect.messages.masking import argument_secrets, declared_secrets
from pytest_toolselect.positions.sourced import MAX_DEPTH, PathT, Sourced, too_deep
from pytest_toolselect.positions.sourcemap import (
    compile_schema,
    describe,
    load_file,
    load_schema,
    nesting_depth,
    read_text,
    validate,
)
from pytest_toolselect.terms.check_names import LINT_RULES

from .cases import IdentifierSettings, merge_identifiers
from .option_table import DEFAULT_DISCOVERY_TIMEOUT, OPTIONS


@dataclass(frozen=True)
class ServerSpec:
    """Where one server's tools come from: exactly one of command, url, tools_file."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    #: declared environment only (plus the mcp SDK's safe default set at start)
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    tools_file: str | None = None
    #: seconds for start + initialize + tools/list (None: --toolselect-discovery-timeout's)
    timeout: float | None = None
    #: where it was declared when not in the toolselect config: an MCP client's file and
    #: line (servers_from), e.g. ".mcp.json:4"
    source: str | None = None

    @property
    def limit(self) -> float:
        """The discovery deadline in seconds."""
        return self.timeout if self.timeout is not None else DEFAULT_DISCOVERY_TIMEOUT

    @property
    def secrets(self) -> tuple[str, ...]:
        """The values of its `env:` and `headers:` that hold secrets (masked in its messages),
        with the values of the variables they, its `args:` and its `url:` read as ``${NAME}``,
        and the values of its `args:` flags named like credentials."""
        from .envrefs import read_variables, resolved_values

        # args and a URL are shown in messages as written: private are what they read, and
        # in args the value of a flag named like a credential (--password X)
        written = [*self.args, *([self.url] if self.url else [])]
        return tuple(sorted({*declared_secrets([*resolved_values((*self.env, *self.headers)),
                                                *read_variables(written)]),
                             *argument_secrets(self.args)}))

    @property
    def kind(self) -> str:
        if self.command:
            return "stdio"
        if self.url:
            return "http"
        return "tools_file"


@dataclass(frozen=True)
class Config:
    #: the file it was read from (None: no config file)
    path: Path | None
    #: relative paths in the config resolve against this folder
    root: Path
    servers: dict[str, ServerSpec] = field(default_factory=dict)
    #: e.g. "mcp__{server}__{tool}"; None keeps tool names as the servers give them
    tool_name_format: str | None = None
    system: str | None = None
    identifiers: IdentifierSettings = field(default_factory=IdentifierSettings)
    #: {model: {input_per_mtok, output_per_mtok, cache_read_per_mtok?, cache_write_per_mtok?}}
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    #: lint rules silenced per tool: server -> tool (as the server names it) -> rules
    lint_allow: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    #: option values set in the config file, by option name without the prefix
    #: (model, reps, baseline, ...); the options resolver reads them
    options: dict[str, Any] = field(default_factory=dict)


# -- loading ---------------------------------------------------------------------------

CONFIG_FILE_NAMES = ("toolselect.yaml", "toolselect.yml")
SCHEMA_NAME = "toolselect_config.v1"
#: where [tool.toolselect] sits in pyproject.toml, for the places errors name
_PYPROJECT_TABLE: PathT = ("tool", "toolselect")
_KIND_SCHEMA = {
    "str": {"type": "string"}, "path": {"type": "string"}, "int": {"type": "integer"},
    "float": {"type": "number"}, "bool": {"type": "boolean"},
}


def load_config(rootdir: Path, explicit: Path | None = None) -> Config:
    """The toolselect config: ``explicit`` if given, else toolselect.yaml (or .yml) at the
    rootdir, else ``[tool.toolselect]`` in its pyproject.toml, else an empty Config."""
    rootdir = Path(rootdir)
    if explicit is not None:
        path = Path(explicit)
        from pytest_toolselect.positions.bounded import not_regular

        kind = not_regular(path)
        if kind is not None:
            raise ToolselectError(f"the config path is {kind}, not a file", file=path,
                                  fix="point --toolselect-config at the config file itself")
        if not path.is_file():
            raise ToolselectError(
                "config file not found", file=path,
                fix="check the path given to --toolselect-config (or ini toolselect_config); "
                "a relative path is taken from the current directory",
            )
        if path.suffix.lower() == ".toml":
            found = _load_pyproject(path, required=True)
            assert found is not None
            return found
        return _load_yaml_config(path)
    present = [rootdir / n for n in CONFIG_FILE_NAMES if (rootdir / n).is_file()]
    if len(present) > 1:
        raise ToolselectError(
            f"both {present[0].name} and {present[1].name} exist: which one is meant is unclear",
            file=present[1], fix="keep one of them",
        )
    if present:
        return _load_yaml_config(present[0])
    pyproject = rootdir / "pyproject.toml"
    if pyproject.is_file():
        found = _load_pyproject(pyproject, required=False)
        if found is not None:
            return found
    return client_only(rootdir)


def client_only(root: Path) -> Config:
    """No config file: every default, and the servers of the MCP client files in ``root``
    (``.mcp.json``, ...), as a config that names no servers reads them."""
    root = root.absolute()
    return Config(path=None, root=root,
                  servers=_servers_from(Sourced(file=str(root), data={}), root, {}))


def _load_yaml_config(path: Path) -> Config:
    src = load_file(path, what="config file")
    if src.data is None:
        # an empty (or all-comments) toolselect.yaml means "all defaults", like an empty ini:
        # it names no servers, so the MCP client files beside it are read
        src.data = {}
    return _build_config(src, path)


def _load_pyproject(path: Path, *, required: bool) -> Config | None:
    try:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            import tomli as tomllib
    except ModuleNotFoundError:
        if required:
            raise ToolselectError(
                "reading a .toml config needs Python 3.11+ or the tomli package",
                file=path, fix="pip install tomli, or use toolselect.yaml",
            ) from None
        return None  # no TOML reader: pyproject configs are skipped, as documented
    text = read_text(path, what="config file")
    try:
        doc = tomllib.loads(text)
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively
        raise too_deep(str(path), _deep_toml_line(text)) from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        raise ToolselectError(
            f"invalid TOML: {msg[: m.start()].strip() if m else msg}"
            + (f" at column {m.group(2)}" if m else ""),
            file=path, line=int(m.group(1)) if m else None,
            fix="check the quoting and brackets on this line",
        ) from None
    tool = doc.get("tool")
    table = tool.get("toolselect") if isinstance(tool, dict) else None
    if table is None:
        if required:
            raise ToolselectError(
                "no [tool.toolselect] table in this file", file=path,
                fix="add a [tool.toolselect] table, or point to a toolselect.yaml",
            )
        return None
    src = Sourced(file=str(path), data=table, lines=_toml_lines(text), prefix=_PYPROJECT_TABLE)
    if not isinstance(table, dict):
        raise src.error((), f"tool.toolselect must be a table; got {describe(table)}",
                        "write it as a [tool.toolselect] table")
    if nesting_depth(table) > MAX_DEPTH:
        # the YAML and JSON readers cap depth while parsing; TOML's is checked here
        raise too_deep(str(path), _deep_toml_line(text))
    return _build_config(src, path)


def _build_config(src: Sourced, path: Path) -> Config:
    data = src.data
    if not isinstance(data, dict):
        raise src.error(
            (), f"the top of a config file must be a mapping (model, servers, ...); "
            f"got {describe(data)}", "start it with model: or servers:",
        )
    if "config" in data:
        raise src.error(
            ("config",), "config cannot be set inside the config file",
            "pass --toolselect-config, or set ini toolselect_config, instead",
        )
    validate(_config_validator(), src)

    servers = {name: _server(name, spec) for name, spec in data.get("servers", {}).items()}
    servers.update(_servers_from(src, path.absolute().parent, servers))
    fmt = data.get("tool_name_format")
    if fmt is not None:
        _check_tool_name_format(fmt, src)
    lint_allow = _lint_allow(data.get("lint_allow") or {}, servers, src)
    options: dict[str, Any] = {}
    for opt in OPTIONS:
        if opt.name in data:
            value = _typed(opt.kind, data[opt.name])
            problem = opt.check(value) if opt.check else None
            if problem:
                raise src.error((opt.name,), f"{opt.name} {problem}; got {value!r}",
                                f"change the value; {opt.name} sets {opt.help}")
            options[opt.name] = value
    return Config(
        path=path.absolute(),
        root=path.absolute().parent,
        servers=servers,
        tool_name_format=fmt,
        system=data.get("system"),
        identifiers=merge_identifiers(None, data.get("identifiers")),
        prices={m: {k: float(v) for k, v in p.items()} for m, p in data.get("prices", {}).items()},
        lint_allow=lint_allow,
        options=options,
    )


def _servers_from(src: Sourced, root: Path, declared: dict[str, ServerSpec]) -> dict[str, ServerSpec]:
    """The servers of the MCP client files ``servers_from`` names, or, when the config names
    no servers at all, of the client files found in its folder (client_servers)."""
    from .client_servers import FOUND_WITHOUT_NAMING, client_servers

    named = src.data.get("servers_from")
    if named is None and "servers" not in src.data:
        files: list[tuple[Path, int | None]] = [
            (Path(p), None) for p in FOUND_WITHOUT_NAMING if (root / p).is_file()]
    else:
        listed = [named] if isinstance(named, str) else list(named or [])
        files = [(Path(p), i if not isinstance(named, str) else None) for i, p in enumerate(listed)]
    found: dict[str, ServerSpec] = {}
    for written, index in files:
        path = written if written.is_absolute() else root / written
        place: PathT = ("servers_from",) if index is None else ("servers_from", index)
        if "servers_from" in src.data and not path.is_file():
            raise src.error(place, f"{str(written)!r} is not a file",
                            "name an MCP client's config file, relative to this config's folder "
                            "(e.g. .mcp.json, .vscode/mcp.json, .cursor/mcp.json)")
        # the project a client file belongs to: .vscode/ and .cursor/ sit inside it
        workspace = path.parent.parent if path.parent.name in (".vscode", ".cursor") else path.parent
        for name, fields in client_servers(path, str(written), workspace).items():
            spec = ServerSpec(name=name, **fields)
            if name in declared:
                raise src.error(("servers", name), f"the server {name!r} is declared here and in "
                                f"{spec.source}", "keep one of the two")
            if name in found:
                # found without naming: the second client file is the place to change
                named_here = "servers_from" in src.data
                raise ToolselectError(f"the server {name!r} is declared in {found[name].source} "
                                      f"and in {spec.source}", file=src.file if named_here else path,
                                      line=src.line_of(("servers_from",)) if named_here else None,
                                      fix="keep one of the two, or name one file in servers_from")
            found[name] = spec
    return found


def _lint_allow(data: dict[str, dict[str, list[str]]], servers: dict[str, ServerSpec],
                src: Sourced) -> dict[str, dict[str, tuple[str, ...]]]:
    """lint_allow, checked: its servers are configured ones and its rules exist."""
    for server, tools in data.items():
        if server not in servers:
            raise src.error(("lint_allow", server), f"lint_allow names server {server!r}, which "
                            "the config does not define", f"use one of: {', '.join(servers) or '(none)'}")
        for name, rules in tools.items():
            for i, rule in enumerate(rules):
                if rule not in LINT_RULES:
                    raise src.error(("lint_allow", server, name, i), f"lint_allow: {rule!r} is not "
                                    "a lint rule", f"use one of: {', '.join(LINT_RULES)}")
    return {s: {t: tuple(r) for t, r in tools.items()} for s, tools in data.items()}


def _typed(kind: str, value: Any) -> Any:
    """A schema-checked option value as its option's Python type (YAML 3 for a float is fine)."""
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        return bool(value)
    return str(value)


def _server(name: str, spec: dict[str, Any]) -> ServerSpec:
    return ServerSpec(
        name=name,
        command=spec.get("command"),
        args=tuple(spec.get("args", ())),
        env=tuple(spec.get("env", {}).items()),
        # relative paths stay as written; users of the spec resolve them against Config.root
        cwd=spec.get("cwd"),
        url=spec.get("url"),
        headers=tuple(spec.get("headers", {}).items()),
        tools_file=spec.get("tools_file"),
        timeout=float(spec["timeout"]) if "timeout" in spec else None,
    )


def _check_tool_name_format(fmt: str, src: Sourced) -> None:
    """{tool} is required, {server} allowed, nothing else; proven by formatting once."""
    import string

    place = ("tool_name_format",)
    example = "e.g. tool_name_format: mcp__{server}__{tool}"
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(fmt) if f is not None]
    except ValueError as exc:
        raise src.error(
            place, f"tool_name_format {fmt!r} is not a valid format string: {exc}",
            f"write {{tool}} and {{server}} in braces and double any literal brace; {example}",
        ) from None
    unknown = [f for f in fields if f not in ("tool", "server")]
    if unknown:
        near = nearest(unknown[0], ("tool", "server"))
        raise src.error(
            place,
            f"tool_name_format uses {{{unknown[0]}}}; only {{tool}} and {{server}} are known",
            f"did you mean {{{near}}}?" if near else example,
        )
    if "tool" not in fields:
        raise src.error(place, f"tool_name_format {fmt!r} must contain {{tool}}", example)
    try:
        fmt.format(tool="tool", server="server")
    except (ValueError, IndexError, KeyError, AttributeError) as exc:
        raise src.error(
            place, f"tool_name_format {fmt!r} cannot be formatted: {exc}", example
        ) from None


@functools.cache
def _config_validator() -> Any:
    schema = load_schema(SCHEMA_NAME)
    props = schema["properties"]
    # every option is a config key; the shipped schema lists them, and any option added
    # later is still accepted with its kind's type
    for opt in OPTIONS:
        if opt.name != "config" and opt.name not in props:
            props[opt.name] = {**_KIND_SCHEMA[opt.kind], "description": f"a {opt.kind}"}
    return compile_schema(schema)


_TOML_PART = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)')
_TOML_HEADER = re.compile(r"^\s*\[\[?([^\]]+)\]\]?\s*(?:#.*)?$")
_TOML_KEY = re.compile(
    r"""^\s*((?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
    r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*'))*)\s*="""
)


def _toml_parts(dotted: str) -> tuple[str, ...]:
    return tuple(a or b or c for a, b, c in _TOML_PART.findall(dotted))


def _toml_lines(text: str) -> dict[PathT, int]:
    """Lines of [tool.toolselect] keys and tables (tomllib keeps none), best effort:
    headers and ``key =`` lines are found; values inside inline tables share their line."""
    base = _PYPROJECT_TABLE
    lines: dict[PathT, int] = {}
    table: tuple[str, ...] = ()
    in_string = False
    for n, line in enumerate(text.splitlines(), 1):
        quotes = line.count('"""') + line.count("'''")
        if in_string:
            in_string = quotes % 2 == 0  # a multi-line string closes on an odd count
            continue
        header = _TOML_HEADER.match(line)
        if header:
            table = _toml_parts(header.group(1))
            if table[:2] == base:
                lines.setdefault(table[2:], n)
        else:
            key = _TOML_KEY.match(line)
            if key:
                full = table + _toml_parts(key.group(1))
                if full[:2] == base:
                    lines.setdefault(full[2:], n)
        in_string = quotes % 2 == 1
    return lines


def _deep_toml_line(text: str) -> int | None:
    """The line where brackets first nest past MAX_DEPTH (strings skipped roughly)."""
    depth, quote, line = 0, "", 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return line
        elif c in "]}":
            depth -= 1
    return None
