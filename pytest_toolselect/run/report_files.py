"""Writing the results document and its renderings (the one place reports touch the disk)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_toolselect.report.document import ResultsDocument


def json_text(document: ResultsDocument) -> str:
    """The ``json`` format's writer: the document as the file holds it."""
    import json

    return json.dumps(document.to_json(), indent=2, ensure_ascii=False) + "\n"


def render(kind: str, document: ResultsDocument) -> str:
    """The document as one format of ``inputs.report_formats.FORMATS``, by its row's writer."""
    import importlib

    from pytest_toolselect.inputs.report_formats import format_named

    module, _, function = format_named(kind).writer.partition(":")
    text: str = getattr(importlib.import_module(module), function)(document)
    return text


def write_reports(document: ResultsDocument, paths: Mapping[str, Path]) -> list[str]:
    """Each asked-for report, written atomically (a reader never sees half a file).

    A report that cannot be written does not stop the others; the problems come back
    as sentences for the terminal summary.
    """
    from pytest_toolselect.gate.atomic import write_text

    problems = []
    for kind, path in paths.items():
        try:
            write_text(path, render(kind, document))
        except OSError as e:
            problems.append(f"could not write the {kind} report to {path}: {e.strerror or e}")
    return problems
