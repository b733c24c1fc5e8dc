"""``toolselect report``: a saved run rendered as markdown or HTML."""

from __future__ import annotations

import argparse

from pytest_toolselect.report.document import ResultsDocument
from pytest_toolselect.run.report_files import render

from .saved_run import OK, emit, load_results


def run(args: argparse.Namespace) -> int:
    document = ResultsDocument.from_json(load_results(args.results))
    wanted = [(kind, out) for kind, out in (("markdown", args.markdown), ("html", args.html))
              if out is not None]
    # every rendering first: a renderer that fails leaves no report half-written
    texts = [(render(kind, document), out) for kind, out in wanted or [("markdown", "-")]]
    for text, out in texts:
        emit(text, out, [args.results])
    return OK
