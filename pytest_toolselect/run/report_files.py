"""Writing the results document and its renderings (the one place reports touch the disk)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_toolselect.gate.atomic import joined, write_text
from pytest_toolselect.inputs.report_formats import format_named

if TYPE_CHECKING:
    import json

    from pytest_toolselect.report.document import ResultsDocument


def json_pieces(document: ResultsDocument) -> Iterator[str]:
    """The ``json`` format's writer: the document as the file holds it, compact (a large
    run's document is read by machines, and indenting added half its size), in pieces.

    The sections are encoded as ``to_json()`` orders them, and the cases one at a time in
    their place (a compact object is its keys and values joined by commas, so the text is
    the whole document's, byte for byte)."""
    import json

    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
    yield from joined(_document_pieces(encoder, document))
    yield "\n"


def _document_pieces(encoder: json.JSONEncoder, document: ResultsDocument) -> Iterator[str]:
    yield "{"
    for n, (key, value) in enumerate(document.to_json(cases=False).items()):
        yield ("," if n else "") + encoder.encode(key) + ":"
        if key != "cases":
            yield from encoder.iterencode(value)
            continue
        yield "["
        for i, case in enumerate(document.cases):
            if i:
                yield ","
            yield from encoder.iterencode(dict(case))
        yield "]"
    yield "}"


def chunks(kind: str, document: ResultsDocument) -> Iterator[str]:
    """The document as one format of ``inputs.report_formats.FORMATS``, by its row's writer,
    in pieces to be written as they come: a run of 20,000 cases never holds its whole JSON
    or HTML as one string."""
    import importlib


    module, _, function = format_named(kind).writer.partition(":")
    out: str | Iterable[str] = getattr(importlib.import_module(module), function)(document)
    if isinstance(out, str):
        yield out
    else:
        yield from out


def render(kind: str, document: ResultsDocument) -> str:
    """The document as one format's whole text."""
    return "".join(chunks(kind, document))


def write_reports(document: ResultsDocument, paths: Mapping[str, Path]) -> list[str]:
    """Each asked-for report, written atomically (a reader never sees half a file).

    A report that cannot be written does not stop the others; the problems come back
    as sentences for the terminal summary.
    """
    problems = []
    for kind, path in paths.items():
        try:
            write_text(path, chunks(kind, document))
        except OSError as e:
            problems.append(f"could not write the {kind} report to {path}: {e.strerror or e}")
    return problems
