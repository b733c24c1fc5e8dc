"""``toolselect compare``: several saved runs side by side."""

from __future__ import annotations

import argparse

from pytest_toolselect.report.document import ResultsDocument
from pytest_toolselect.report.side_by_side import render

from .saved_run import OK, emit, load_results


def run(args: argparse.Namespace) -> int:
    documents = [(path, ResultsDocument.from_json(load_results(path))) for path in args.results]
    emit(render(documents, markdown=args.markdown), "-", args.results)
    return OK
