"""``toolselect merge``: the shards of one run (``--toolselect-shard K/N``) as one verdict."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_toolselect.gate.baseline import build, load, subject_mismatch, write
from pytest_toolselect.inputs.report_formats import DEFAULT_FORMAT
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.report.document import ResultsDocument
from pytest_toolselect.report.merge_shards import (
    baseline_group_entries,
    baseline_lint_entries,
    baseline_lint_tools,
    baseline_records,
    merge_documents,
)
from pytest_toolselect.report.printable import printable
from pytest_toolselect.run.report_files import render

from .report import add_format_flags, asked
from .saved_run import emit, load_results

if TYPE_CHECKING:
    from pytest_toolselect.report.document import ResultsDocument

#: the exit status of a refused merge (pytest's usage error)
REFUSED = 4

EPILOG = """\
example (the last job of a CI matrix, after every shard uploaded its results):
  toolselect merge results-*.json --markdown comment.md --html report.html
  toolselect merge results-*.json --update-baseline toolselect-baseline.json   # on main

exit status: the unsharded run's: 0 pass, 1 a blocking finding, 2 the cost cap stopped a
shard; 4 refused (as pytest's usage error): a shard missing or given twice, a malformed or
mismatched file
"""


def add_merge(commands: Any, formatter: Any) -> None:
    merge = commands.add_parser(
        "merge", formatter_class=formatter, help="join the shards of one run into one verdict",
        description="Join the results of a suite run as N shards (pytest --toolselect-shard K/N "
                    "--toolselect-json results-K.json) into the one run they add up to: its exit "
                    "status, its pull-request comment, its HTML report and, with --update-baseline, "
                    "its baseline. With no output flag the comment goes to stdout.",
        epilog=EPILOG)
    merge.add_argument("results", metavar="RESULTS.json", nargs="+", help="every shard's results")
    add_format_flags(merge, "in_merge")
    merge.add_argument("--update-baseline", metavar="BASELINE",
                       help="write the shards' entries over BASELINE (recorded when it does not exist), "
                            "as one run's --toolselect-update-baseline would")
    merge.add_argument("--partial", action="store_true",
                       help="merge the shards given even if some are missing (the verdict is of "
                            "those shards' cases alone, and says which shards it lacks)")
    merge.set_defaults(run=run_merge)


def run_merge(args: argparse.Namespace) -> int:
    try:
        document = merge_documents([(path, ResultsDocument.from_json(load_results(path)))
                                    for path in args.results], partial=args.partial)
    except ToolselectError as e:
        # 2 is the cost cap's: refused input is pytest's usage error, as a refused run's
        print(printable(f"toolselect: error: {e}"), file=sys.stderr)
        return REFUSED
    wanted = asked(args, "in_merge")
    if not wanted and args.update_baseline is None:
        wanted = [(DEFAULT_FORMAT, "-")]
    # every rendering first: a renderer that fails leaves no report half-written
    texts = [(render(kind, document), out) for kind, out in wanted]
    if args.update_baseline is not None:
        # the baseline's builder reads the merged cases as the document holds them
        write_baseline(Path(args.update_baseline), document)
    for text, out in texts:
        emit(text, out, args.results)
    return int(document.provenance["exit_status"])


def write_baseline(path: Path, document: ResultsDocument) -> None:
    old = load(path)
    # the merged document's subject and cases, read once as the values a run hands build
    subject = document.subject
    if old is not None and subject_mismatch(old.subject, subject):
        raise ToolselectError("this baseline belongs to another subject than the merged run",
                              file=str(path), fix="pass the baseline the shards compared against")
    history = int(document.settings.get("history") or 1)
    records = baseline_records([CaseRecord.read(c) for c in document.cases],
                               document.tool_texts or {}, document.tools or {})
    write(path, build(subject, records, old,
                      document.baseline.gone if old is not None else (), history=history,
                      group_entries=baseline_group_entries(document),
                      lint_entries=baseline_lint_entries(document),
                      lint_tools=baseline_lint_tools(document)))
