"""``toolselect init``: a starter case file from the discovered tools, one commented case each."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_toolselect.spec.errors import ToolselectError
from pytest_toolselect.spec.tools import Tool

from .tools import add_common, discovered, first_line, parameters

DEFAULT_OUT = "starter.toolselect.yaml"
EPILOG = """\
examples:
  toolselect init                                # writes starter.toolselect.yaml here
  toolselect init --server companies -o companies.toolselect.yaml

exit status: 0 written, 2 bad input (the file exists, a bad config, a server that does not start)
"""


def add_parser(commands: Any, formatter: Any) -> None:
    init = commands.add_parser(
        "init", formatter_class=formatter, epilog=EPILOG,
        help="write a starter case file from the discovered tools",
        description="Discover the servers as `toolselect tools` does and write a case file with "
                    "one commented case per tool: uncomment a case, write the question a user "
                    "would ask, and say why the case exists. Never overwrites a file.")
    add_common(init)
    init.add_argument("-o", "--output", metavar="PATH", default=DEFAULT_OUT,
                      help=f"the case file to write (default: {DEFAULT_OUT}, beside the config)")
    init.set_defaults(run=run)


def _case(tool: Tool) -> list[str]:
    args = [f"{{path: {name}, equals: <{kind}>}}" for name, kind, required in parameters(tool)
            if required]
    lines = [f"  # - id: {tool.name.replace('_', '-')}",
             f"  #   question: <a question a user would ask that needs {tool.name}>",
             f"  #   expect_tool: [{tool.name}]"]
    if args:
        lines.append(f"  #   expect_args: [{', '.join(args)}]")
    lines += ["  #   category: <a label: the summary groups held/scored by it>",
              f"  #   why: <why the model must pick {tool.name} here>"]
    return lines


def starter(found: dict[str, tuple[Tool, ...]]) -> str:
    """The case file's text: one commented case per tool, under an empty ``cases:``.

    Until one case is uncommented pytest refuses the file (a case file holds at least one
    case): a placeholder question must never run as a case and enter a baseline.
    """
    out = ["# A starter case file: uncomment at least one case, write its question and its why.",
           "# The fields are described in docs/writing-cases.md.",
           "schema_version: toolselect_cases.v1",
           f"servers: [{', '.join(found)}]",
           "cases:"]
    for server, tools in found.items():
        out.append(f"  # --- {server} " + "-" * max(3, 60 - len(server)))
        for tool in tools:
            desc = first_line(tool.description, 80)
            if desc:
                out.append(f"  # {tool.name}: {desc}")
            out += _case(tool)
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def run(args: argparse.Namespace) -> int:
    from pytest_toolselect.gate.atomic import write_text

    from .results import OK

    config, found = discovered(args.config, args.server)
    out = Path(args.output)
    if not out.is_absolute():
        out = (config.root if args.output == DEFAULT_OUT else Path.cwd()) / out
    if out.exists():
        raise ToolselectError(f"{out} exists: init never overwrites a file",
                              fix="give another name with -o, or remove the file")
    write_text(out, starter(found))
    print(f"wrote {out}: {sum(len(t) for t in found.values())} commented cases, one per tool; "
          "uncomment at least one before the next pytest run")
    return OK
