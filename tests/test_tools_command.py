"""`toolselect tools` and `toolselect init` end to end: a real stdio MCP server and a tools file,
discovered as the gate does, from the project's folder and from another one (--config)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import REGISTRY_TOOLS, Project

TOOLSELECT = Path(sys.executable).with_name("toolselect")
BILLING = [{"name": "refund_invoice",
            "description": "Refund an invoice in full or in part.\nSecond line not shown.",
            "inputSchema": {"type": "object", "required": ["invoice_id"],
                            "properties": {"invoice_id": {"type": "string"},
                                           "amount": {"anyOf": [{"type": "number"},
                                                                {"type": "null"}]},
                                           "lines": {"type": "array", "items": {"type": "integer"}}}}}]


@pytest.fixture
def two_servers(project: Project) -> Project:
    project.config({"registry": {"tools_file": project.tools_file()},
                    "billing": project.stdio_server(BILLING)})
    return project


def test_tools_lists_every_server_with_parameters_types_and_required(two_servers: Project) -> None:
    result = two_servers.pytester.run(TOOLSELECT, "tools", timeout=300)
    assert result.ret == 0, result.stderr.str()
    result.stdout.fnmatch_lines([
        "registry: 3 tools",
        "  find_company(name*: string)",
        "      Search the company register by company name; returns matching companies*",
        "  list_officers(company_number*: string)",
        "*",
        "*",
        "*",
        "billing: 1 tool",
        "  refund_invoice(invoice_id*: string, amount: number|null, lines: array[integer])",
        "      Refund an invoice in full or in part.",
        "",
        "* required",
    ])
    assert "Second line" not in result.stdout.str()


def test_tools_json_is_the_full_list_as_offered_and_server_picks_one(two_servers: Project,
                                                                     tmp_path: Path) -> None:
    # from another folder, with --config
    config = two_servers.path / "toolselect.yaml"
    result = two_servers.pytester.run(TOOLSELECT, "tools", "--config", config, "--json", "-",
                                      timeout=300)
    assert result.ret == 0, result.stderr.str()
    listed = json.loads(result.stdout.str())
    assert [(t["server"], t["name"]) for t in listed] == [
        *(("registry", t["name"]) for t in REGISTRY_TOOLS), ("billing", "refund_invoice")]
    assert listed[-1]["description"] == BILLING[0]["description"]
    assert listed[-1]["input_schema"]["required"] == ["invoice_id"]
    # to a file: the file holds the list, and stdout only says where it went
    to_file = two_servers.pytester.run(TOOLSELECT, "tools", "--json", tmp_path / "t.json",
                                       timeout=300)
    assert to_file.ret == 0, to_file.stderr.str()
    assert json.loads((tmp_path / "t.json").read_text()) == listed
    assert to_file.stdout.str() == f"wrote 4 tools of 2 servers to {tmp_path / 't.json'}"
    one = two_servers.pytester.run(TOOLSELECT, "tools", "--server", "billing", timeout=300)
    assert "refund_invoice" in one.stdout.str() and "find_company" not in one.stdout.str()
    wrong = two_servers.pytester.run(TOOLSELECT, "tools", "--server", "biling", timeout=300)
    assert wrong.ret == 2
    assert "no server named 'biling'" in wrong.stderr.str() and "did you mean billing?" in wrong.stderr.str()


def test_init_writes_a_starter_that_runs_lints_and_gates_as_written(two_servers: Project) -> None:
    result = two_servers.pytester.run(TOOLSELECT, "init", timeout=300)
    assert result.ret == 0, result.stderr.str()
    assert "4 cases, one per tool" in result.stdout.str()
    starter = two_servers.path / "starter.toolselect.yaml"
    text = starter.read_text()
    assert text.startswith("# Written by toolselect init") and "edit each question" in text
    for name in ("find_company", "list_officers", "lookup_vat", "refund_invoice"):
        assert f"    expect_tool: [{name}]" in text
    assert '    question: "Refund an invoice in full or in part"' in text
    assert "    # expect_args: [{path: invoice_id, equals: <string>}]" in text
    again = two_servers.pytester.run(TOOLSELECT, "init", timeout=300)
    assert again.ret == 2 and "never overwrites" in again.stderr.str()
    assert starter.read_text() == text
    # as written: the lint finds no error, pytest runs every case and records a baseline,
    # and the next run gates against it
    lint = two_servers.pytester.run(TOOLSELECT, "lint", timeout=300)
    assert lint.ret == 0, lint.stdout.str() + lint.stderr.str()
    first = two_servers.pytester.runpytest("starter.toolselect.yaml", "--toolselect-baseline=b.json")
    first.assert_outcomes(passed=4)
    assert len(two_servers.read_baseline("b.json")["cases"]) == 4
    gate = two_servers.pytester.runpytest("starter.toolselect.yaml", "--toolselect-baseline=b.json")
    gate.assert_outcomes(passed=4)
    assert "4 held" in gate.stdout.str()
