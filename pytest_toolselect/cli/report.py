"""``toolselect report``: a saved run rendered as markdown or HTML."""

from __future__ import annotations

import argparse
from typing import Any, Literal

from pytest_toolselect.inputs import report_formats
from pytest_toolselect.inputs.report_formats import DEFAULT_FORMAT
from pytest_toolselect.report.document import ResultsDocument
from pytest_toolselect.run.report_files import render

from .saved_run import OK, emit, load_results

#: which commands can write a format: a row's flag
Command = Literal["in_report", "in_merge"]


def add_format_flags(parser: Any, command: Command) -> None:
    """A ``--<name> OUT`` flag for each report format `command` can write."""
    for row in report_formats.FORMATS:  # read when called: the table as it is now
        if getattr(row, command):
            parser.add_argument(f"--{row.name}", metavar="OUT", help=row.cli_help)


def asked(args: argparse.Namespace, command: Command) -> list[tuple[str, str]]:
    """(format, where) for each format flag given, in the table's order."""
    return [(row.name, out) for row in report_formats.FORMATS
            if getattr(row, command) and (out := getattr(args, row.name)) is not None]


def run(args: argparse.Namespace) -> int:
    document = ResultsDocument.from_json(load_results(args.results))
    wanted = asked(args, "in_report")
    # every rendering first: a renderer that fails leaves no report half-written
    texts = [(render(kind, document), out) for kind, out in wanted or [(DEFAULT_FORMAT, "-")]]
    for text, out in texts:
        emit(text, out, [args.results])
    return OK
