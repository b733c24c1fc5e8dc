"""The ``toolselect`` command: render or compare saved runs, outside a pytest run.

It reads the ``tool_selection.v1`` documents that ``pytest --toolselect-json`` writes
and imports only what it needs for that (no pytest, no provider SDKs), so it starts fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.report.printable import printable

from .example import add_parser as add_example
from .init import add_parser as add_init
from .lint import add_parser as add_lint
from .merge import add_merge
from .report import add_format_flags
from .report import run as run_report
from .saved_run import OK, USAGE
from .tools import add_parser as add_tools

EPILOG = """\
examples:
  pytest --toolselect-json results.json          # save a run
  toolselect report results.json                 # its markdown on stdout
  toolselect report results.json --html report.html --markdown comment.md
  toolselect compare haiku.json sonnet.json      # two models on one suite, side by side
  toolselect merge results-*.json                # the shards of one run as one verdict
  toolselect lint                                # the tool set alone: no key, no network
  toolselect tools                               # every tool the servers offer
  toolselect init                                # a starter case file, one case per tool
  toolselect example                             # two example MCP servers to try it on

exit status: 0 done, 2 bad input (a missing or malformed file, a wrong flag)
"""


# -- the parser --------------------------------------------------------------------------------------

class _Version(argparse.Action):
    """--version, looking the version up only when asked (startup stays cheap)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("pytest-toolselect")
        except PackageNotFoundError:
            found = "(not installed)"
        # on stdout, as argparse's own version action does
        sys.stdout.write(f"{parser.prog} {found}\n")
        parser.exit()


def run_compare(args: argparse.Namespace) -> int:
    """``toolselect compare``: several saved runs side by side."""
    from pytest_toolselect.report.document import ResultsDocument
    from pytest_toolselect.report.side_by_side import render

    from .saved_run import emit, load_results

    documents = [(path, ResultsDocument.from_json(load_results(path))) for path in args.results]
    emit(render(documents, markdown=args.markdown), "-", args.results)
    return OK


def build_parser() -> argparse.ArgumentParser:
    formatter: Callable[..., argparse.HelpFormatter] = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="toolselect", formatter_class=formatter, epilog=EPILOG,
        description="Render or compare saved pytest-toolselect runs (the tool_selection.v1 files "
                    "that pytest --toolselect-json writes), without running pytest.")
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    report = commands.add_parser(
        "report", formatter_class=formatter, help="render a saved run as markdown or HTML",
        description="Render a saved run with the plugin's own renderers: the markdown pull-request "
                    "comment and the self-contained HTML report. With neither flag, the markdown "
                    "goes to stdout.",
        epilog="example:\n  toolselect report results.json --markdown comment.md --html report.html")
    report.add_argument("results", metavar="RESULTS.json", help="a run's results (pytest --toolselect-json)")
    add_format_flags(report, "in_report")
    report.set_defaults(run=run_report)

    compare = commands.add_parser(
        "compare", formatter_class=formatter, help="put several runs side by side (say, several models)",
        description="Put several runs of one suite side by side: held/scored per category and run, "
                    "then the cases whose status, first tool or verdict differ between the runs, then "
                    "the cases only some runs hold. Columns are named by each run's model (with its "
                    "file name when two runs share a model).",
        epilog="example:\n  toolselect compare haiku.json sonnet.json gpt.json --markdown > compare.md")
    compare.add_argument("results", metavar="RESULTS.json", nargs="+",
                         help="two or more runs' results (pytest --toolselect-json)")
    compare.add_argument("--markdown", action="store_true",
                         help="markdown tables (default: plain text, aligned columns)")
    compare.set_defaults(run=run_compare, parser=compare)

    add_merge(commands, formatter)
    add_lint(commands, formatter)
    add_tools(commands, formatter)
    add_init(commands, formatter)
    add_example(commands, formatter)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return USAGE
    if args.command == "compare" and len(args.results) < 2:
        args.parser.error("compare needs at least two results files")
    try:
        return int(args.run(args))
    except BrokenPipeError:
        # the reader went away (toolselect ... | head): not an error of ours, and no traceback
        # when Python flushes stdout on exit
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OK
    except ToolselectError as e:
        print(printable(f"toolselect: error: {e}"), file=sys.stderr)
        return USAGE


if __name__ == "__main__":
    sys.exit(main())
