"""The one table of report formats: the options, the run's writer, `toolselect report` and
`toolselect merge` all read `inputs.report_formats.FORMATS`, so a row added is a format
rendered, and a flag of each command its row says can write it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pytest_toolselect.cli import build_parser
from pytest_toolselect.cli.report import asked
from pytest_toolselect.inputs import report_formats
from pytest_toolselect.inputs.option_table import BY_NAME
from pytest_toolselect.inputs.report_formats import FORMATS, ReportFormat
from pytest_toolselect.run.report_files import render, write_reports
from pytest_toolselect.run.settings import Options


def plain_text(document: Any) -> str:
    return f"plain {document!r}\n"


TXT = ReportFormat("txt", "write the results as plain text", "the plain text",
                   f"{__name__}:plain_text", in_report=True, in_merge=False)


@pytest.fixture
def with_txt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_formats, "FORMATS", (*FORMATS, TXT))


def test_a_row_added_is_rendered_written_and_a_flag_where_its_row_says(with_txt: None,
                                                                       tmp_path: Path) -> None:
    assert render("txt", "DOC") == "plain 'DOC'\n"  # type: ignore[arg-type]
    assert write_reports("DOC", {"txt": tmp_path / "r.txt"}) == []  # type: ignore[arg-type]
    assert (tmp_path / "r.txt").read_text() == "plain 'DOC'\n"
    parser = build_parser()
    args = parser.parse_args(["report", "r.json", "--txt", "out.txt", "--html", "-"])
    assert asked(args, "in_report") == [("html", "-"), ("txt", "out.txt")]
    with pytest.raises(SystemExit):
        parser.parse_args(["merge", "r.json", "--txt", "out.txt"])


def test_every_format_is_an_option_a_field_and_a_flag_where_its_row_says() -> None:
    fields = {f.name for f in dataclasses.fields(Options)}
    parser = build_parser()
    for row in FORMATS:
        assert BY_NAME[row.name].help == row.option_help and BY_NAME[row.name].kind == "path"
        assert row.name in fields
        for command, can in (("report", row.in_report), ("merge", row.in_merge)):
            if can:
                args = parser.parse_args([command, "r.json", f"--{row.name}", "o"])
                assert asked(args, f"in_{command}") == [(row.name, "o")]  # type: ignore[arg-type]
            else:
                with pytest.raises(SystemExit):
                    parser.parse_args([command, "r.json", f"--{row.name}", "o"])


def test_an_unknown_format_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown report kind 'pdf'"):
        render("pdf", "DOC")  # type: ignore[arg-type]
