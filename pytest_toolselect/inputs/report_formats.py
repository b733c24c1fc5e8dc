"""The report formats as data: one table, read by every place a report is asked for or written.

A format's row gives its ``--toolselect-<option>`` (the option table makes the option from it),
what the run's summary writes for it (``run.summary`` asks each row's option,
``run.report_files`` renders it with the row's writer and names it in a problem), and whether
``toolselect report`` and ``toolselect merge`` can write it (each adds a ``--<name>`` flag per
row that says so). Adding a format is one row, and its field in ``run.settings.Options``.
The writers are named as ``module:function`` (a document to its text, whole or in
pieces), imported when a
report is written, so reading the table imports no renderer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReportFormat:
    #: the format's name: the option ``--toolselect-<name>``, the flag ``--<name>`` of the command
    name: str
    #: the option's help (pytest's --help, the ini key, the configuration reference)
    option_help: str
    #: what it is, as a sentence names it: "the HTML report"
    title: str
    #: ``module:function``: the results document to the file's text, as one string or in
    #: pieces written as they come
    writer: str
    #: ``toolselect report`` can write it from a saved run
    in_report: bool
    #: ``toolselect merge`` can write it from the shards' results
    in_merge: bool

    @property
    def cli_help(self) -> str:
        """The ``--<name> OUT`` flag's help in the commands that write it."""
        return f"write {self.title} to OUT ('-': stdout)"


FORMATS: tuple[ReportFormat, ...] = (
    ReportFormat("json",
                 "write the results as JSON (tool_selection.v1; the preference probe's "
                 "tool_preference.v1 inside it)",
                 "the merged results document", "pytest_toolselect.run.report_files:json_pieces",
                 in_report=False, in_merge=True),
    ReportFormat("markdown",
                 "write the pull-request comment as markdown: the verdict first, then what changed",
                 "the markdown comment", "pytest_toolselect.report.markdown:render",
                 in_report=True, in_merge=True),
    ReportFormat("html",
                 "write a self-contained HTML report: confusion matrix, categories, forest plot, "
                 "cases",
                 "the HTML report", "pytest_toolselect.report.html:pieces",
                 in_report=True, in_merge=True),
)

#: what `toolselect report` and `merge` write when no flag asks for a format
DEFAULT_FORMAT = "markdown"


def format_named(name: str) -> ReportFormat:
    """The row named `name` (ValueError: no such format)."""
    for row in FORMATS:
        if row.name == name:
            return row
    raise ValueError(f"unknown report kind {name!r}")
