"""``toolselect init``: a starter case file from the discovered tools, one case each, valid as written."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.gate.atomic import write_text
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.messages.plural import plural

from .ini import require_plugin
from .saved_run import OK
from .tools import add_common, discovered, parameters

DEFAULT_OUT = "starter.toolselect.yaml"
EPILOG = """\
examples:
  toolselect init                                # writes starter.toolselect.yaml here
  toolselect init --server companies -o companies.toolselect.yaml
  toolselect init --from-transcript ~/.claude/projects/-srv-app/3f2a....jsonl
  toolselect init --from-transcript chat.json --at 2 --at -1 -o chat.toolselect.yaml

From a transcript (a Claude Code session file, or an OpenAI-style messages JSON), each case
is the user's question, the calls and results before the chosen call as its context, and
that call as its expectation, with the recorded arguments to review. No server is started.

It also adds required_plugins = pytest-toolselect to the pytest configuration (pytest.ini,
pyproject.toml, tox.ini or setup.cfg; a pytest.ini when there is none), so a run without
the plugin fails instead of passing.

exit status: 0 written, 2 bad input (the file exists, a bad config, a server that does not start)
"""


def add_parser(commands: Any, formatter: Any) -> None:
    init = commands.add_parser(
        "init", formatter_class=formatter, epilog=EPILOG,
        help="write a starter case file from the discovered tools",
        description="Discover the servers as `toolselect tools` does and write a case file with "
                    "one case per tool, its question the tool's own description: it runs, lints "
                    "and gates as written; edit each question into what a user would ask, and "
                    "say why the case exists. Never overwrites a file.")
    add_common(init)
    init.add_argument("-o", "--output", metavar="PATH", default=DEFAULT_OUT,
                      help=f"the case file to write (default: {DEFAULT_OUT}, beside the config; "
                           "from a transcript, <its name>.toolselect.yaml here)")
    init.add_argument("--from-transcript", metavar="FILE", dest="transcript",
                      help="start cases past the first call from a recorded conversation: a Claude "
                           "Code session file (~/.claude/projects/*/*.jsonl) or an OpenAI-style "
                           "messages JSON")
    init.add_argument("--at", metavar="N", type=int, action="append",
                      help="with --from-transcript: the tool call to expect, counted from 1 "
                           "(negative: from the end); repeat for one case per call (default: the last)")
    init.set_defaults(run=run)


def question_of(tool: Tool, width: int = 200) -> str:
    """A question the case can run as written: the first sentence of the tool's description
    (what the tool says it is for), or its name in words when it has none."""
    import re

    text = " ".join((tool.description or "").split())
    sentence = re.split(r"(?<=[.;!?])\s", text, maxsplit=1)[0].rstrip(".;!? ")
    if len(sentence) > width:
        sentence = sentence[:width].rsplit(" ", 1)[0]
    return sentence or tool.name.replace("_", " ").replace("-", " ")


def _case(tool: Tool) -> list[str]:
    import json

    args = [f"{{path: {name}, equals: <{kind}>}}" for name, kind, required in parameters(tool)
            if required]
    # JSON strings are YAML strings: any description reads back as the same text
    lines = [f"  - id: {tool.name.replace('_', '-')}",
             f"    question: {json.dumps(question_of(tool), ensure_ascii=False)}",
             f"    expect_tool: [{tool.name}]"]
    if args:
        lines.append(f"    # expect_args: [{', '.join(args)}]")
    lines += ["    category: starter",
              f"    why: {json.dumps(f'starter: {tool.name} is the tool for this; say why a user asks it')}"]
    return lines


def starter(found: dict[str, tuple[Tool, ...]]) -> str:
    """The case file's text: one case per tool, valid as written.

    It runs, lints and gates at once; each question is the tool's own description, so the
    header and every case say what to edit (the question, as a user asks it, and the why).
    """
    out = ["# Written by toolselect init: one case per tool, each question taken from the tool's",
           "# own description. It runs as it is; edit each question into what your users ask,",
           "# its why into the reason the case exists, and add expect_args where it matters.",
           "# The fields are described in docs/writing-cases.md.",
           "schema_version: toolselect_cases.v1",
           f"servers: [{', '.join(found)}]",
           "cases:"]
    for server, tools in found.items():
        out.append(f"  # --- {server} " + "-" * max(3, 60 - len(server)))
        for tool in tools:
            out += _case(tool)
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def run(args: argparse.Namespace) -> int:


    if args.transcript is not None:
        return from_transcript(args)
    if args.at:
        raise ToolselectError("--at chooses a call of a transcript", fix="give --from-transcript FILE")
    config, found = discovered(args.config, args.server)
    if not any(found.values()):
        # a file of no cases is one its own loader refuses: nothing is written
        raise ToolselectError(f"the servers {', '.join(found)} offer no tools: there is no case to "
                              "start", fix="check that each server lists its tools (toolselect tools)")
    out = Path(args.output)
    if not out.is_absolute():
        out = (config.root if args.output == DEFAULT_OUT else Path.cwd()) / out
    if out.exists():
        raise ToolselectError(f"{out} exists: init never overwrites a file",
                              fix="give another name with -o, or remove the file")
    write_text(out, starter(found))
    count = sum(len(t) for t in found.values())
    print(f"wrote {out}: {plural(count, 'case')}, one per tool, each asking its "
          "tool's description; edit the questions into what your users ask")

    # a run without the plugin would collect no case and could pass: pytest refuses it
    print(require_plugin(config.root))
    return OK


def from_transcript(args: argparse.Namespace) -> int:
    """Cases from a recorded conversation: read, chosen and written without starting a server."""

    from .context_case import context_file
    from .transcripts import read_transcript

    source = Path(args.transcript).expanduser()
    text = context_file(read_transcript(source), args.at or [-1])
    name = args.output if args.output != DEFAULT_OUT else f"{source.stem}.toolselect.yaml"
    out = Path(name) if Path(name).is_absolute() else Path.cwd() / name
    if out.exists():
        raise ToolselectError(f"{out} exists: init never overwrites a file",
                              fix="give another name with -o, or remove the file")
    write_text(out, text)
    count = text.count("\n  - id: ")
    print(f"wrote {out}: {plural(count, 'case')} from {source.name}, each the call "
          "the conversation made next; review each expectation and its why")
    return OK
