"""The terminal summary's pure parts: one case described in full."""

from __future__ import annotations

from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.report.terminal import describe


def test_a_multi_line_error_stays_under_its_label() -> None:
    rec = {"question": "q", "expect_tool": ["find_company"], "why": "w", "status": None,
           "error": "MCP server 'x' exited during initialize\nTraceback (most recent call last):\n  boom"}
    lines = describe(CaseRecord.read(rec))
    start = lines.index("error:    MCP server 'x' exited during initialize")
    # each line its own entry, so the summary's indentation applies to every one
    assert lines[start + 1:start + 3] == ["          Traceback (most recent call last):", "            boom"]
    assert all("\n" not in line for line in lines)
