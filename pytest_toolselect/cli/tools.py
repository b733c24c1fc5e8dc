"""``toolselect tools``: every tool the servers offer, discovered as the gate does (no model)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.inputs.client_servers import FOUND_WITHOUT_NAMING
from pytest_toolselect.inputs.config import load_config
from pytest_toolselect.inputs.option_table import DEFAULT_DISCOVERY_TIMEOUT
from pytest_toolselect.lint.run import discover_all
from pytest_toolselect.messages.errors import ToolselectError, nearest
from pytest_toolselect.messages.plural import plural

from .saved_run import OK, emit

EPILOG = """\
examples:
  toolselect tools                               # toolselect.yaml here
  toolselect tools --server companies            # one server's tools
  toolselect tools --json -                      # the full list as offered to the model

exit status: 0 done, 2 bad input (a bad config, an unknown server, a server that does not start)
"""


def add_parser(commands: Any, formatter: Any) -> None:
    tools = commands.add_parser(
        "tools", formatter_class=formatter, epilog=EPILOG,
        help="list the tools every server offers (to write cases against)",
        description="Discover every server in the config (stdio, HTTP, tools files) as the gate does "
                    "and print each tool: its server, name, the first line of its description and "
                    "its parameters with their types (required ones marked *). No model is called.")
    add_common(tools)
    tools.add_argument("--json", metavar="OUT",
                       help="write the full tool list (name, description, input schema) as JSON to "
                            "OUT ('-': stdout)")
    tools.set_defaults(run=run)


def add_config(parser: argparse.ArgumentParser) -> None:
    """--config, shared by every command that discovers the servers (tools, init, lint)."""
    parser.add_argument("--config", metavar="PATH",
                        help="the toolselect config (default: toolselect.yaml in the current "
                             "folder, else [tool.toolselect] in its pyproject.toml)")


def add_common(parser: argparse.ArgumentParser) -> None:
    """--config and --server, shared with ``toolselect init``."""
    add_config(parser)
    parser.add_argument("--server", metavar="NAME", action="append",
                        help="only this server (repeatable)")


def discovered(config_path: str | None, only: list[str] | None) -> tuple[Any, dict[str, tuple[Tool, ...]]]:
    """The config and its servers' tools, by server in config order."""
    config = load_config(Path.cwd(), Path(config_path) if config_path else None)
    if not config.servers:
        raise no_servers(config)
    for name in only or ():
        if name not in config.servers:
            raise ToolselectError(f"no server named {name!r} in {config.path}",
                                  fix=(f"did you mean {guess}?" if (guess := nearest(name, config.servers))
                                       else f"the servers are: {', '.join(config.servers)}"))
    return config, discover_all(config, discovery_timeout(config), only)


def discovery_timeout(config: Any) -> float:
    """The config's discovery timeout (or the default), as every command discovers with."""
    return float(config.options.get("discovery_timeout") or DEFAULT_DISCOVERY_TIMEOUT)


def no_servers(config: Any) -> ToolselectError:
    """Nothing to list or start cases from is a mistake, not an empty success: say where
    servers are read from."""
    clients = ", ".join(str(config.root / f) for f in FOUND_WITHOUT_NAMING)
    if config.path is not None:
        where = f"{config.path} defines no servers, and none of {clients} declares any"
    else:
        where = (f"no toolselect.yaml (or [tool.toolselect] in pyproject.toml) in {config.root}, "
                 f"and none of {clients} declares any")
    return ToolselectError(f"no servers to take tools from: {where}",
                           fix="add servers: to toolselect.yaml (command: for MCP over stdio, "
                               "url: for streamable HTTP, tools_file: for a static list), or "
                               "run where the config is, or pass --config")


def parameters(tool: Tool) -> list[tuple[str, str, bool]]:
    """(name, type, required) of each top-level parameter, in schema order."""
    schema = tool.input_schema or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    out = []
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        kind = prop.get("type") or "|".join(
            str(alt["type"]) for alt in prop.get("anyOf", ()) if isinstance(alt, dict) and "type" in alt
        ) or "any"
        if isinstance(kind, list):
            kind = "|".join(str(k) for k in kind)
        if kind == "array" and isinstance(prop.get("items"), dict) and "type" in prop["items"]:
            kind = f"array[{prop['items']['type']}]"
        out.append((name, str(kind), name in required))
    return out


def first_line(text: str, width: int = 100) -> str:
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def text_lines(found: dict[str, tuple[Tool, ...]],
               sources: dict[str, str | None] | None = None) -> list[str]:
    """Server by server (with the MCP client file it was declared in, if not the config),
    each tool with its description's first line and its parameters."""
    lines: list[str] = []
    for server, tools in found.items():
        source = (sources or {}).get(server)
        lines.append(f"{server}: {plural(len(tools), 'tool')}"
                     + (f" (from {source})" if source else ""))
        for tool in tools:
            params = ", ".join(f"{n}{'*' if req else ''}: {t}" for n, t, req in parameters(tool))
            lines.append(f"  {tool.name}({params})")
            if first_line(tool.description):
                lines.append(f"      {first_line(tool.description)}")
        lines.append("")
    lines.append("* required")
    return lines


def as_json(found: dict[str, tuple[Tool, ...]]) -> list[dict[str, Any]]:
    return [{"server": server, **tool.to_dict()} for server, tools in found.items() for tool in tools]


def run(args: argparse.Namespace) -> int:
    config, found = discovered(args.config, args.server)
    if args.json is not None:
        emit(json.dumps(as_json(found), indent=2, ensure_ascii=False) + "\n", args.json, [])
        if args.json != "-":
            # the file is what was asked for: one line says where it went, not the listing
            count = sum(len(tools) for tools in found.values())
            print(f"wrote {plural(count, 'tool')} of "
                  f"{plural(len(found), 'server')} to {args.json}")
        return OK
    sources = {name: spec.source for name, spec in config.servers.items()}
    emit("\n".join(text_lines(found, sources)) + "\n", "-", [])
    return OK
