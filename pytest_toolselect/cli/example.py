"""``toolselect example``: the two example MCP servers, written into a folder to try the gate on.

They are the repository's own examples (examples/companies, examples/finance), shipped in the
package so that the getting-started page works from an empty folder with only what pip installs.
"""

from __future__ import annotations

import argparse
from importlib.resources import files
from pathlib import Path
from typing import Any

from pytest_toolselect.gate.atomic import write_text
from pytest_toolselect.messages.errors import ToolselectError

from .saved_run import OK

#: the servers, as folders of the package's demo/ and of the folder written
SERVERS = ("companies", "finance")
EPILOG = """\
example:
  mkdir gate && cd gate && toolselect example     # companies/server.py, finance/server.py

exit status: 0 written, 2 a file is there already (nothing is overwritten)
"""


def add_parser(commands: Any, formatter: Any) -> None:
    example = commands.add_parser(
        "example", formatter_class=formatter, epilog=EPILOG,
        help="write two example MCP servers into a folder, to try the gate on",
        description="Write the two example MCP servers (built with the mcp SDK: a company "
                    "register and a credit database whose tools overlap) into FOLDER, as "
                    "companies/server.py and finance/server.py. Never overwrites a file.")
    example.add_argument("folder", metavar="FOLDER", nargs="?", default=".",
                         help="where to write them (default: the current folder)")
    example.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    targets = {name: folder / name / "server.py" for name in SERVERS}
    there = [str(path) for path in targets.values() if path.exists()]
    if there:
        raise ToolselectError(f"{' and '.join(there)} {'exists' if len(there) == 1 else 'exist'}: "
                              "example never overwrites a file",
                              fix="run it in an empty folder, or name one: toolselect example FOLDER")
    for name, path in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, (files("pytest_toolselect") / "demo" / name / "server.py").read_text("utf-8"))
    print(f"wrote {', '.join(str(p) for p in targets.values())}: two MCP servers built with the "
          "mcp SDK, started only to list their tools (declare them in .mcp.json)")
    return OK
