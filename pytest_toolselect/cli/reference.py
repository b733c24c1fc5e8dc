"""The configuration reference (docs/configuration.md), generated from the definitions.

The options come from :data:`options.OPTIONS` and every other key of the config file
from the shipped schema ``toolselect_config.v1``, so the page cannot drift from the
code: ``tests/test_docs.py`` checks that the committed page equals :func:`render`.

Regenerate the page from the repository's root with::

    python -m pytest_toolselect.cli.reference --write
    python -m pytest_toolselect.cli.reference > docs/configuration.md   # the same

:func:`render` is pure (the schema is read from the package, nothing else); this module
is never imported by the plugin itself.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from pytest_toolselect.inputs.option_table import OPTIONS, Option

SCHEMA = "toolselect_config.v1"
#: where --write puts the page, from the repository's root
DEFAULT_PATH = Path("docs") / "configuration.md"
REGENERATE = "python -m pytest_toolselect.cli.reference --write"

#: how a value of each kind is written, when the schema does not describe the option
_KIND_VALUE = {
    "str": "a string",
    "path": "a file path",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
}

#: a full config file; tests/test_docs.py loads both through the plugin's own loader
EXAMPLE_YAML = """\
model: anthropic/claude-haiku-4-5
baseline: .toolselect/main.json
reps: 3
max_cost_usd: 2.50
cache: .toolselect/cache.sqlite
servers:
  companies:                      # MCP over stdio: started only to list its tools
    command: python
    args: [mcp_servers/companies.py]
    env: {COMPANIES_API_KEY: placeholder}
  docs:                           # MCP over streamable HTTP
    url: http://127.0.0.1:8765/mcp
    headers: {Authorization: Bearer placeholder}
  builtins:                       # a static tools file (MCP, OpenAI or Anthropic shapes)
    tools_file: tools/builtins.yaml
tool_name_format: "mcp__{server}__{tool}"
identifiers:
  params: [company_number]
  ignore_params: [page_size]
prices:
  openai/qwen2.5:7b: {input_per_mtok: 0, output_per_mtok: 0}
"""

EXAMPLE_TOML = """\
[tool.toolselect]
model = "anthropic/claude-haiku-4-5"
baseline = ".toolselect/main.json"
reps = 3

[tool.toolselect.servers.companies]
command = "python"
args = ["mcp_servers/companies.py"]
env = { COMPANIES_API_KEY = "placeholder" }
"""

#: what a non-option key does, beyond the value the schema describes
_KEY_NOTES = {
    "servers": "where the tools come from. A case is offered the tools of the servers it (or its "
               "file) names, in that order, or of every server listed here when it names none",
    "servers_from": "servers declared for an MCP client, taken as they are: see "
                    "[servers from a client's file](#servers-from-a-clients-file). When the "
                    "config has neither `servers` nor `servers_from` (an empty file too), "
                    "`.mcp.json`, `.vscode/mcp.json` and `.cursor/mcp.json` in its folder are "
                    "read; with no config file at all, those at the rootdir, once a toolselect "
                    "item needs them",
    "tool_name_format": "renames every offered tool, e.g. to tell apart two servers that offer the "
                        "same tool name (an error otherwise); `expect_tool` and `forbid_tools` use "
                        "the new names",
    "lint_allow": "`toolselect lint` and `--toolselect-lint` drop these findings for that tool "
                  "(a reviewed description, an accepted change); an unknown server or rule is an "
                  "error ([lint](lint.md#silencing-a-rule-for-one-tool))",
    "system": "the system prompt of every case; when unset, the servers' MCP `instructions` are sent "
              "(several servers: each under a `## <server>` heading). A case's own `system` wins",
    "identifiers": "what counts as an identifier for the identifier checks, for every case; "
                   "a case's own `identifiers` keys replace these",
    "prices": "per-million-token prices that win over litellm's bundled price map, for cost "
              "figures and `max_cost_usd`",
}

#: what a server key does, beyond its schema description
_SERVER_NOTES = {
    "env": "the server sees only these variables (plus the mcp SDK's safe default set such as "
           "PATH and HOME), never the rest of the test process's environment; `${NAME}` in a value "
           "reads NAME from the environment when the server starts (`$${NAME}` is the text itself)",
    "headers": "`${NAME}` in a value reads NAME from the environment, e.g. "
               "{Authorization: Bearer ${DOCS_TOKEN}}: a token stays in CI's secrets, out of the file",
    "args": "`${NAME}` in an argument reads NAME from the environment when the server starts, "
            "e.g. [--token, ${DOCS_TOKEN}]; the value read is masked in the server's messages",
    "cwd": "default: the config file's folder",
    "url": "`${NAME}` reads NAME from the environment, e.g. https://mcp.example.com/mcp?key=${DOCS_KEY} "
           "or ${DOCS_MCP_URL}; a credential in the query string is masked in messages",
    "tools_file": "`${NAME}` in the path reads NAME from the environment",
    "timeout": "wins over `discovery_timeout`",
}


def _schema() -> dict[str, Any]:
    text = (files("pytest_toolselect") / "schemas" / f"{SCHEMA}.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _md(text: str) -> str:
    """Text safe inside a markdown table cell: no cell breaks, no HTML tags, no emphasis.

    Code spans (odd pieces between backticks) show their text as written, so only ``|``
    is escaped there (a table splits cells before it reads code spans).
    """
    pieces = text.split("`")
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            piece = (piece.replace("\\", "\\\\").replace("<", "&lt;").replace(">", "&gt;")
                     .replace("*", "\\*"))
        pieces[i] = piece.replace("|", "\\|")
    return "`".join(pieces)


def _default(opt: Option) -> str:
    if opt.default is None:
        return "none"
    if isinstance(opt.default, bool):
        return "`true`" if opt.default else "`false`"
    return f"`{opt.default}`"


def _described(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """The node, or the definition its ``$ref`` names (for its description)."""
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target: Mapping[str, Any] = root["$defs"][ref.rsplit("/", 1)[1]]
        return target
    return node


def _value(opt: Option, props: Mapping[str, Any]) -> str:
    prop = props.get(opt.name)
    if isinstance(prop, Mapping) and prop.get("description"):
        text = str(prop["description"])
    else:
        text = _KIND_VALUE[opt.kind]
    if opt.kind == "bool":
        text += " (the flag takes no value)"
    return _md(text)


def _option_rows(props: Mapping[str, Any]) -> Iterator[str]:
    yield "| flag | ini key | config key | value | default | what it does |"
    yield "|---|---|---|---|---|---|"
    for opt in OPTIONS:
        # the config file cannot name itself (config.py refuses the key)
        key = "(not in the file)" if opt.name == "config" else f"`{opt.name}`"
        yield (f"| `{opt.flag}` | `{opt.ini}` | {key} | {_value(opt, props)} | {_default(opt)} "
               f"| {_md(opt.help)} |")


def _key_rows(names: Sequence[str], props: Mapping[str, Any], root: Mapping[str, Any],
              notes: Mapping[str, str], requires: Mapping[str, Sequence[str]] | None = None
              ) -> Iterator[str]:
    yield "| key | value | notes |"
    yield "|---|---|---|"
    for name in names:
        node = _described(props[name], root)
        extra = [notes[name]] if name in notes else []
        for needed in (requires or {}).get(name, ()):
            extra.append(f"only with `{needed}`")
        yield (f"| `{name}` | {_md(str(node.get('description', '')))} "
               f"| {_md('; '.join(extra)) if extra else ''} |")


def _one_of(node: Mapping[str, Any]) -> list[str]:
    return [k for branch in node.get("oneOf", ()) for k in branch.get("required", ())]


def render() -> str:
    """The markdown of docs/configuration.md."""
    schema = _schema()
    props: Mapping[str, Any] = schema["properties"]
    option_names = {o.name for o in OPTIONS}
    other_keys = [k for k in props if k not in option_names]
    server = schema["$defs"]["server"]
    identifiers = schema["$defs"]["identifiers"]
    price = props["prices"]["additionalProperties"]
    out: list[str] = [
        "# Configuration reference",
        "",
        f"<!-- Generated from pytest_toolselect/inputs/option_table.py and the schema {SCHEMA}: do not edit.",
        f"     Regenerate with `{REGENERATE}` (tests/test_docs.py checks it). -->",
        "",
        "Every option has three spellings. The command line wins over pytest's ini file, the ini "
        "over the toolselect config file, the config file over the default; the run header says "
        "which model was used and where it came from.",
        "",
        "| where | spelling | example |",
        "|---|---|---|",
        "| command line | `--toolselect-<name>`, dashes | `--toolselect-reps 3` |",
        "| pytest ini (`pytest.ini`, `tox.ini`, `setup.cfg`, `[tool.pytest.ini_options]`) "
        "| `toolselect_<name>` | `toolselect_reps = 3` |",
        "| config file (`toolselect.yaml`, or `[tool.toolselect]` in `pyproject.toml`) "
        "| `<name>` | `reps: 3` |",
        "",
        "A relative path is taken from where it was written: the current directory for a flag, "
        "the ini file's folder for an ini key, the config file's folder for a config key. A value "
        "that is not of the option's type, or out of its range, is a usage error naming the "
        "option and where it came from.",
        "",
        "## Options",
        "",
        *_option_rows(props),
        "",
        "## The config file",
        "",
        "Read from `--toolselect-config PATH` (or ini `toolselect_config`) when given; else "
        "`toolselect.yaml` or `toolselect.yml` at pytest's rootdir (both at once is an error); "
        "else the `[tool.toolselect]` table of the rootdir's `pyproject.toml`; else every option "
        "takes its default and there are no servers. A `.toml` file given to "
        "`--toolselect-config` must hold a `[tool.toolselect]` table. On Python 3.10, TOML is read "
        "with the `tomli` package (pytest installs it there). An empty `toolselect.yaml` means all "
        "defaults.",
        "",
        f"The file is validated against the JSON Schema `{SCHEMA}` shipped in the package; an "
        "error names the file, the line, the key's path and, for a misspelled key, the nearest "
        "valid one. Besides the options above (without their prefix), it holds:",
        "",
        *_key_rows(other_keys, props, schema, _KEY_NOTES),
        "",
        "### `servers`",
        "",
        "Each server is a mapping with exactly one of "
        + ", ".join(f"`{k}`" for k in _one_of(server))
        + ". A server is started (or fetched) once per process, only to list its tools and its "
        "`instructions`; no tool is ever called.",
        "",
        *_key_rows(list(server["properties"]), server["properties"], schema, _SERVER_NOTES,
                   server.get("dependentRequired", {})),
        "",
        "### Servers from a client's file",
        "",
        "`servers_from: .mcp.json` (or a list of files) takes the servers a team already "
        "declared for its MCP client, so they are written once. Four shapes are read: Claude "
        "Code's `.mcp.json` and Cursor's `.cursor/mcp.json` (`mcpServers`: `command`, `args`, "
        "`env`, or `type: http` with `url` and `headers`), VS Code's `.vscode/mcp.json` "
        "(`servers`, each with `type` `stdio` or `http`; comments and trailing commas allowed), "
        "and Claude Desktop's `claude_desktop_config.json` (stdio only). Variables are read as "
        "the client reads them: `${VAR}` and `${VAR:-default}` in Claude Code's file, "
        "`${env:VAR}`, `${workspaceFolder}` and `${userHome}` in VS Code's and Cursor's, none in "
        "Claude Desktop's. An environment variable stays a reference, read when the server "
        "starts and masked in its messages. A stdio server starts in the project folder (the "
        "one holding `.vscode/` or `.cursor/`), as its client starts it. A server declared both "
        "here and in a client's file, or in two files, is refused naming both places; an SSE "
        "server, a VS Code `${input:...}` prompt or an `envFile` is refused with its line. "
        "`toolselect tools` names the file and line each server came from.",
        "",
        "### `identifiers`",
        "",
        "The same keys are accepted on a case (`identifiers:` in a case file, or on `@case`); "
        "see [writing cases](writing-cases.md#identifiers).",
        "",
        *_key_rows(list(identifiers["properties"]), identifiers["properties"], schema, {}),
        "",
        "### `prices`",
        "",
        "Keyed by the model string as given (`openai/qwen2.5:7b`) or without its provider prefix. "
        "Missing cache prices count as the input price.",
        "",
        *_key_rows(list(price["properties"]), price["properties"], schema, {}),
        "",
        "## Examples",
        "",
        "`toolselect.yaml`:",
        "",
        "```yaml",
        *EXAMPLE_YAML.rstrip("\n").splitlines(),
        "```",
        "",
        "The start of the same configuration in `pyproject.toml`:",
        "",
        "```toml",
        *EXAMPLE_TOML.rstrip("\n").splitlines(),
        "```",
        "",
    ]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m pytest_toolselect.cli.reference",
        description="Print the configuration reference (docs/configuration.md) as markdown.",
    )
    parser.add_argument("--write", nargs="?", const=str(DEFAULT_PATH), metavar="PATH",
                        help=f"write it to PATH (default {DEFAULT_PATH}) instead of printing it")
    args = parser.parse_args(argv)
    text = render()
    if args.write is None:
        sys.stdout.write(text)
        return 0
    path = Path(args.write)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
