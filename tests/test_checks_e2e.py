"""Every check of the gate, end to end, passing and failing.

Each run is a real pytest run (pytester) of a user's project: its toolselect.yaml starts
the example MCP server ``examples/companies/server.py`` over stdio, its conftest supplies
a scripted provider through the ``pytest_toolselect_provider`` hook, and that provider
answers each case's question from a table (``script_table.json``) of the calls to return.
So a case goes through discovery (real tool schemas), the provider, the checks and the
verdict, and the test reads the outcome of every item and its failure text.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp.client.stdio  # noqa: F401  (imported once here: the in-process runs then reuse it
import pytest  # instead of importing the MCP client anew in each run)

from conftest import Project

COMPANIES_SERVER = Path(__file__).resolve().parent.parent / "examples" / "companies" / "server.py"
CASE_FILE = "checks.toolselect.yaml"

SCRIPTED_PROVIDER = '''
import json
from pathlib import Path

from pytest_toolselect.providers import Turn
from pytest_toolselect.exchange.tool import ToolCall

TABLE = json.loads((Path(__file__).parent / "script_table.json").read_text())


class ScriptedTable:
    """Answers each question with the calls the table holds for it, nothing else."""

    model = "script/table"

    def subject(self):
        return {"provider": "script", "model": "script/table"}

    async def first_turn(self, request):
        if request.question not in TABLE:
            raise LookupError(f"no scripted answer for {request.question!r}")
        offered = {tool.name for tool in request.tools}
        calls = []
        for spec in TABLE[request.question]:
            if spec["name"] not in offered:
                raise LookupError(f"{spec['name']} is not among the offered tools {sorted(offered)}")
            calls.append(ToolCall(spec["name"], spec.get("arguments", {}),
                                  spec.get("raw_arguments")))
        return Turn(calls=tuple(calls), stop_reason="tool_use" if calls else "end_turn")


def pytest_toolselect_provider(model, config):
    if model == "script/table":
        return ScriptedTable()
'''


def call(tool: str, /, **arguments: Any) -> dict[str, Any]:
    return {"name": tool, "arguments": arguments}


@dataclass(frozen=True)
class Scripted:
    """One case: its question, the scripted first turn, and what the gate must say."""

    id: str
    question: str
    calls: list[dict[str, Any]]
    fields: dict[str, Any]
    #: check name -> the exact detail it must fail with; empty: the case passes
    failing: dict[str, str] = field(default_factory=dict)

    def case(self) -> dict[str, Any]:
        return {"id": self.id, "question": self.question, **self.fields,
                "why": f"{self.id}: scripted"}


def literal(text: str) -> str:
    """``text`` as an fnmatch pattern that matches exactly that text."""
    return re.sub(r"([*?\[\]])", r"[\1]", text)


def run_cases(project: Project, cases: list[Scripted]) -> pytest.RunResult:
    """Writes the project (config, conftest, table, one case file) and runs pytest on it."""
    questions = [c.question for c in cases]
    assert len(set(questions)) == len(questions), "the table is keyed by question: make them unique"
    assert len({c.id for c in cases}) == len(cases)
    server = {"command": sys.executable, "args": [str(COMPANIES_SERVER)]}
    project.config({"companies": server}, model="script/table")
    project.pytester.makeconftest(SCRIPTED_PROVIDER)
    table = {c.question: c.calls for c in cases}
    (project.path / "script_table.json").write_text(json.dumps(table, indent=1))
    path = project.cases([c.case() for c in cases], name="checks", servers=["companies"])
    assert path.name == CASE_FILE
    return project.pytester.runpytest("-rA", "-p", "no:cacheprovider",
                                        "-p", "no:hypothesispytest")


_SHORT = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED) " + re.escape(CASE_FILE)
                    + r"::(\S+)")
_HEADER = re.compile(r"^_{2,} toolselect case (\S+) _{2,}$")


def outcomes(result: pytest.RunResult) -> dict[str, str]:
    """Case id -> outcome, from the short test summary (-rA)."""
    found: dict[str, str] = {}
    for line in result.outlines:
        m = _SHORT.match(line)
        if m:
            found[m.group(2)] = m.group(1)
    return found


def failure_blocks(result: pytest.RunResult) -> dict[str, list[str]]:
    """Case id -> the lines of its entry in the FAILURES section."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in result.outlines:
        m = _HEADER.match(line)
        if m:
            current = blocks.setdefault(m.group(1), [])
        elif line.startswith("====="):
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def assert_verdicts(result: pytest.RunResult, cases: list[Scripted]) -> None:
    """Every case has its outcome, and every failing one fails exactly the expected
    checks, each with its detail (which names the offending tool, path and value)."""
    failing = [c for c in cases if c.failing]
    want = {c.id: "FAILED" if c.failing else "PASSED" for c in cases}
    got = outcomes(result)
    assert {k: v for k, v in got.items() if want.get(k) != v} == {}, "cases with another outcome"
    assert got == want
    result.assert_outcomes(passed=len(cases) - len(failing), failed=len(failing))
    blocks = failure_blocks(result)
    assert sorted(blocks) == sorted(c.id for c in failing)
    for c in failing:
        lines = pytest.LineMatcher(blocks[c.id])
        lines.fnmatch_lines([f"question: {literal(c.question)}"]
                            + [f"failing:  {name}: {literal(detail)}"
                               for name, detail in c.failing.items()])
        failed_checks = [ln.split(":")[1].strip() for ln in blocks[c.id] if ln.startswith("failing:")]
        assert failed_checks == list(c.failing), (c.id, blocks[c.id])


# --- tool_choice and no_forbidden_tools ---------------------------------------------------

ROYAL_MAIL = "Royal Mail Group"
#: what valid_arguments says of a value the server's company_number pattern refuses
NOT_A_NUMBER = " does not match '^(?:[0-9]{8}|[A-Z]{2}[0-9]{6})$' (pattern)"
#: grounding is on by default for identifier parameters: a number from memory fails it
INVENTED = "identifier not in the question: "
RECALLED = INVENTED + 'get_company (call 1) company_number="00445790"'

TOOL_CHOICE = [
    Scripted("right_tool", "Find the company called Royal Mail Group in the register",
             [call("find_company", query=ROYAL_MAIL)], {"expect_tool": ["find_company"]}),
    Scripted("wrong_tool", "Look up the company named Acme Widgets Limited",
             [call("search_officers", name="Acme Widgets")], {"expect_tool": ["find_company"]},
             {"tool_choice": "first call is search_officers; expected one of: find_company"}),
    Scripted("right_tool_second", "Show me the registry entry of Tesco PLC",
             [call("get_company", company_number="00445790"), call("find_company", query="Tesco")],
             {"expect_tool": ["find_company"]},
             {"tool_choice": "first call is get_company; expected one of: find_company",
              # a number from memory: grounding is on by default for identifier parameters
              "no_identifier_invented": RECALLED}),
    Scripted("one_of_several", "Who is Jane Smith, the company director?",
             [call("search_officers", name="Jane Smith")],
             {"expect_tool": ["find_company", "search_officers"]}),
    Scripted("nothing_called", "Search the companies register for Tesco PLC",
             [], {"expect_tool": ["find_company"]},
             {"tool_choice": "no tool was called; expected one of: find_company"}),
    Scripted("expect_none_nothing", "What will the weather be like in Paris tomorrow?",
             [], {"expect_tool": []}),
    Scripted("expect_none_called", "Tell me a joke about accountants",
             [call("find_company", query="accountants")], {"expect_tool": []},
             {"tool_choice": "find_company was called; expected no tool call"}),
    Scripted("allow_no_tool_nothing", "Can you tell me about Royal Mail Group Limited?",
             [], {"expect_tool": ["find_company"], "allow_no_tool": True}),
    Scripted("allow_no_tool_right", "What do you know about Royal Mail Group Limited?",
             [call("find_company", query="Royal Mail Group Limited")],
             {"expect_tool": ["find_company"], "allow_no_tool": True}),
    Scripted("allow_no_tool_wrong", "Tell me what you can about the company Royal Mail",
             [call("search_officers", name="Royal Mail")],
             {"expect_tool": ["find_company"], "allow_no_tool": True},
             {"tool_choice": "first call is search_officers; expected one of: find_company"}),
    # no_forbidden_tools
    Scripted("forbidden_not_called", "Which companies are called Royal Mail?",
             [call("find_company", query="Royal Mail")],
             {"expect_tool": ["find_company"], "forbid_tools": ["get_company", "lookup_vat"]}),
    Scripted("forbidden_in_second_call", "Give me the profile of Royal Mail Group Limited",
             [call("find_company", query="Royal Mail Group Limited"),
              call("get_company", company_number="04138203")],
             {"expect_tool": ["find_company"], "forbid_tools": ["get_company"]},
             {"no_forbidden_tools": "forbidden tool called: get_company (call 2)",
              "no_identifier_invented": INVENTED + 'get_company (call 2) company_number="04138203"'}),
    Scripted("forbidden_first_and_third", "Everything about the Royal Mail company, please",
             [call("get_company", company_number="04138203"),
              call("find_company", query="Royal Mail"),
              call("lookup_vat", vat_number="GB745938421")],
             {"forbid_tools": ["get_company", "lookup_vat"]},
             {"no_forbidden_tools":
              "forbidden tool called: get_company (call 1); lookup_vat (call 3)",
              "no_identifier_invented": INVENTED + 'get_company (call 1) company_number="04138203"; '
                                                   'lookup_vat (call 3) vat_number="GB745938421"'}),
]


def test_tool_choice_and_forbidden_tools(project: Project) -> None:
    result = run_cases(project, TOOL_CHOICE)
    assert_verdicts(result, TOOL_CHOICE)
    # the second, forbidden call does not make the first tool wrong
    assert not [ln for ln in failure_blocks(result)["forbidden_in_second_call"]
                if ln.startswith("failing:  tool_choice")]
    result.stdout.fnmatch_lines([
        "*called:   find_company(query='Royal Mail Group Limited'); "
        "get_company(company_number='04138203')*",
    ])
    assert result.ret == 1


# --- arguments ------------------------------------------------------------------------------

FIND = {"expect_tool": ["find_company"]}
FILINGS = {"expect_tool": ["list_filings"]}


def args_case(id: str, question: str, calls: list[dict[str, Any]], matchers: list[dict[str, Any]],
              failing: str | None = None, base: dict[str, Any] = FIND) -> Scripted:
    # one check at a time: a value the server's schema refuses (limit="10" for an integer)
    # is valid_arguments' to report (tests/test_valid_arguments_e2e.py), a made-up
    # filters argument no_undeclared_arguments' (tests/test_undeclared_arguments.py)
    return Scripted(id, question, calls, {**base, "expect_args": matchers, "valid_arguments": False,
                                          "undeclared_arguments": False},
                    {"arguments": failing} if failing else {})


ARGUMENTS = [
    # equals
    args_case("equals_ok", "Find Royal Mail in the register",
              [call("find_company", query="Royal Mail")],
              [{"path": "query", "equals": "Royal Mail"}]),
    args_case("equals_miss", "Search the register for Royal Mail",
              [call("find_company", query="Royal Mail Group")],
              [{"path": "query", "equals": "Royal Mail"}],
              'find_company (call 1): query: expected to equal "Royal Mail", got "Royal Mail Group"'),
    # one_of
    args_case("one_of_ok", "Show the latest accounts filed by company 04138203",
              [call("list_filings", company_number="04138203", category="accounts")],
              [{"path": "category", "one_of": ["accounts", "confirmation-statement"]}],
              base=FILINGS),
    args_case("one_of_miss", "Show the annual accounts filed by company 04138203",
              [call("list_filings", company_number="04138203", category="charges")],
              [{"path": "category", "one_of": ["accounts", "confirmation-statement"]}],
              'list_filings (call 1): category: expected to be one of '
              '["accounts", "confirmation-statement"], got "charges"', base=FILINGS),
    # contains, case-insensitive
    args_case("contains_ok", "Look for ROYAL MAIL GROUP in the companies register",
              [call("find_company", query="ROYAL MAIL GROUP")],
              [{"path": "query", "contains": "royal mail"}]),
    args_case("contains_miss", "Look for Royal Mail Group in the register of companies",
              [call("find_company", query="Royal Mail Group")],
              [{"path": "query", "contains": "tesco"}],
              'find_company (call 1): query: expected to contain "tesco", got "Royal Mail Group"'),
    # matches
    args_case("matches_ok", "Which documents has company 04138203 filed since 2024?",
              [call("list_filings", company_number="04138203", since="2024-01-01")],
              [{"path": "since", "matches": r"^2024-\d\d-\d\d$"}], base=FILINGS),
    args_case("matches_miss", "What has company 04138203 filed in 2024?",
              [call("list_filings", company_number="04138203", since="2023-12-31")],
              [{"path": "since", "matches": r"^2024-"}],
              'list_filings (call 1): since: expected to match /^2024-/, got "2023-12-31"',
              base=FILINGS),
    # absent: true and false
    args_case("absent_ok", "Find active companies called Royal Mail",
              [call("find_company", query="Royal Mail")],
              [{"path": "include_dissolved", "absent": True}]),
    args_case("absent_miss", "Find live companies named Royal Mail",
              [call("find_company", query="Royal Mail", include_dissolved=True)],
              [{"path": "include_dissolved", "absent": True}],
              "find_company (call 1): include_dissolved: expected absent, got true"),
    args_case("present_ok", "Find at most five companies called Royal Mail",
              [call("find_company", query="Royal Mail", limit=5)],
              [{"path": "limit", "absent": False}]),
    args_case("present_miss", "Find no more than five companies named Royal Mail",
              [call("find_company", query="Royal Mail")],
              [{"path": "limit", "absent": False}],
              "find_company (call 1): limit: expected present, but the path is missing"),
    # a dotted path through a list index
    args_case("dotted_index_ok", "Find the active Royal Mail companies",
              [call("find_company", query="Royal Mail", filters=[{"status": "active"}])],
              [{"path": "filters.0.status", "equals": "active"}]),
    args_case("dotted_index_miss", "Find the active companies named Royal Mail",
              [call("find_company", query="Royal Mail",
                    filters=[{"status": "dissolved"}, {"status": "active"}])],
              [{"path": "filters.0.status", "equals": "active"}],
              'find_company (call 1): filters.0.status: expected to equal "active", '
              'got "dissolved"'),
    args_case("dotted_index_missing", "Find the Royal Mail companies that are active",
              [call("find_company", query="Royal Mail", filters=[])],
              [{"path": "filters.0.status", "equals": "active"}],
              'find_company (call 1): filters.0.status: expected to equal "active", '
              "but the path is missing"),
    # any: some argument value, whatever its path
    args_case("any_ok", "List the charges filings of company 04138203",
              [call("list_filings", company_number="04138203", category="charges")],
              [{"path": "any", "equals": "charges"}], base=FILINGS),
    args_case("any_miss", "List the charge filings of company 04138203",
              [call("list_filings", company_number="04138203", category="accounts")],
              [{"path": "any", "equals": "charges"}],
              'list_filings (call 1): any: expected some argument value to equal "charges", '
              'got company_number="04138203", category="accounts"', base=FILINGS),
    # JSON values compare exactly: the string "10" is not the number 10 the server types
    args_case("numeric_exact_miss", "Find ten companies called Royal Mail Group",
              [call("find_company", query="Royal Mail", limit="10")],
              [{"path": "limit", "equals": 10}],
              'find_company (call 1): limit: expected to equal 10, got "10"'),
    # unless the matcher asks for numbers by value
    args_case("numeric_by_schema_ok", "Find ten companies called Royal Mail",
              [call("find_company", query="Royal Mail", limit="10")],
              [{"path": "limit", "equals": 10, "by_value": True}]),
    args_case("numeric_by_schema_miss", "Find 10 companies called Royal Mail",
              [call("find_company", query="Royal Mail", limit="12")],
              [{"path": "limit", "equals": 10, "by_value": True}],
              'find_company (call 1): limit: expected to equal 10, got "12"'),
    args_case("string_param_not_numeric", "Find companies whose name is 2024",
              [call("find_company", query="2024")],
              [{"path": "query", "equals": 2024}],
              'find_company (call 1): query: expected to equal 2024, got "2024"'),
    # several matchers: every miss is reported
    args_case("two_misses", "Find up to three dissolved companies called Royal Mail",
              [call("find_company", query="Royal Mail", include_dissolved=False, limit=3)],
              [{"path": "query", "contains": "royal"}, {"path": "include_dissolved", "equals": True},
               {"path": "limit", "one_of": [3]}, {"path": "since", "absent": False}],
              "find_company (call 1): include_dissolved: expected to equal true, got false; "
              "since: expected present, but the path is missing"),
    # numbers by value hold for one_of and for any as well
    args_case("numeric_one_of_and_any", "Find five or ten companies called Royal Mail",
              [call("find_company", query="Royal Mail", limit="10")],
              [{"path": "limit", "one_of": [5, 10], "by_value": True},
               {"path": "any", "equals": 10, "by_value": True}]),
    # the matchers look at the expected tool's call, wherever it is in the turn
    Scripted("checked_on_the_expected_call", "Show me the register entry for Tesco PLC",
             [call("get_company", company_number="00445790"), call("find_company", query="Tesco")],
             {**FIND, "expect_args": [{"path": "query", "equals": "Tesco PLC"}]},
             {"tool_choice": "first call is get_company; expected one of: find_company",
              "arguments": 'find_company (call 2): query: expected to equal "Tesco PLC", got "Tesco"',
              "no_identifier_invented": RECALLED}),
    # no expected call: tool_choice says so, arguments does not fail a second time
    Scripted("expected_tool_not_called", "Search the register for the company Tesco PLC",
             [call("search_officers", name="Tesco PLC")],
             {**FIND, "expect_args": [{"path": "query", "equals": "Tesco PLC"}]},
             {"tool_choice": "first call is search_officers; expected one of: find_company"}),
]
# (arguments that are not a JSON object make the reply an error, never a score:
# test_unreadable_replies.py)


def test_arguments(project: Project) -> None:
    result = run_cases(project, ARGUMENTS)
    assert_verdicts(result, ARGUMENTS)


# --- no_identifier_invented -----------------------------------------------------------------

GROUNDED = {"forbid_ungrounded": True}
VAT = "GB 745 9384 21"


def ungrounded(id: str, question: str, calls: list[dict[str, Any]],
               offender: str | None = None, **fields: Any) -> Scripted:
    failing = {"no_identifier_invented": f"identifier not in the question: {offender}"}
    # grounding alone: a grounded 4138203 the server's 8-digit pattern refuses is
    # valid_arguments' to report (tests/test_valid_arguments_e2e.py), a made-up argument
    # no_undeclared_arguments'
    return Scripted(id, question, calls, {**GROUNDED, "valid_arguments": False,
                                          "undeclared_arguments": False, **fields},
                    failing if offender else {})


GROUNDING = [
    # grounded: the same identifier, written another way
    ungrounded("vat_as_written", f"Check the VAT number {VAT} please",
               [call("lookup_vat", vat_number=VAT)]),
    ungrounded("vat_separators_dropped", f"Is {VAT} a valid VAT registration?",
               [call("lookup_vat", vat_number="GB745938421")]),
    ungrounded("vat_other_separators", f"Validate the VAT registration {VAT}",
               [call("lookup_vat", vat_number="gb-745-9384-21")]),
    ungrounded("vat_prefix_dropped", f"Who is registered for VAT under {VAT}?",
               [call("lookup_vat", vat_number="745938421")]),
    ungrounded("leading_zero_dropped", "Who are the directors of company 04138203?",
               [call("list_officers", company_number="4138203")]),
    ungrounded("leading_zero_added", "List the officers of company 4138203",
               [call("list_officers", company_number="04138203")]),
    ungrounded("free_text_grounded", "Search the register for Royal Mail Group, number 04138203",
               [call("find_company", query="Royal Mail Group 4138203", limit=25)]),
    ungrounded("quantities_are_not_identifiers", "Find Royal Mail Group's company record",
               [call("find_company", query="Royal Mail Group accounts 2024", limit=25)]),
    # derived values: each attack fails and names the value
    ungrounded("digit_dropped", f"Look up VAT number {VAT} for Royal Mail",
               [call("lookup_vat", vat_number="GB74593842")],
               'lookup_vat (call 1) vat_number="GB74593842"'),
    ungrounded("digit_added", f"Verify the VAT number {VAT}",
               [call("lookup_vat", vat_number="GB7459384211")],
               'lookup_vat (call 1) vat_number="GB7459384211"'),
    ungrounded("digits_transposed", f"Whose VAT number is {VAT}?",
               [call("lookup_vat", vat_number="GB745938412")],
               'lookup_vat (call 1) vat_number="GB745938412"'),
    ungrounded("prefix_added", "Which business holds VAT number 745938421?",
               [call("lookup_vat", vat_number="GB745938421")],
               'lookup_vat (call 1) vat_number="GB745938421"'),
    ungrounded("prefix_changed", f"Which business is behind VAT {VAT}?",
               [call("lookup_vat", vat_number="FR745938421")],
               'lookup_vat (call 1) vat_number="FR745938421"'),
    ungrounded("two_glued", "Compare the officers of companies 04138203 and 01234567",
               [call("list_officers", company_number="0413820301234567")],
               'list_officers (call 1) company_number="0413820301234567"'),
    ungrounded("part_of_span_zero_padded", "Which company has VAT number 745938421?",
               [call("get_company", company_number="07459384")],
               'get_company (call 1) company_number="07459384"'),
    ungrounded("substring_of_span", "Which company is registered for VAT as 745938421?",
               [call("get_company", company_number="7459384")],
               'get_company (call 1) company_number="7459384"'),
    ungrounded("part_of_spaced_span", f"Tell me who trades under VAT {VAT}",
               [call("lookup_vat", vat_number="745 9384")],
               'lookup_vat (call 1) vat_number="745 9384"'),
    ungrounded("free_text_prefix_word", "Who has the VAT number GB 745 9384 21?",
               [call("find_company", query="VAT 745938421")]),
    ungrounded("free_text_prefix_claimed", "Which firm owns the VAT number GB 745 9384 21?",
               [call("find_company", query="FR 745938421")],
               'find_company (call 1) query contains "FR 745938421"'),
    ungrounded("letter_prefix_changed", "Get the profile of Scottish company SC123456",
               [call("get_company", company_number="NI123456")],
               'get_company (call 1) company_number="NI123456"'),
    ungrounded("nested_invented", "Find the company Royal Mail Group, number 04138203",
               [call("find_company", query=ROYAL_MAIL, filters=[{"company_number": "04138203"},
                                                                {"company_number": "04138230"}])],
               'find_company (call 1) filters.1.company_number="04138230"'),
    ungrounded("free_text_invented", "Search the register for the company Royal Mail Group",
               [call("find_company", query="Royal Mail Group 04138203")],
               'find_company (call 1) query contains "04138203"'),
    ungrounded("second_call_invented", "Who runs company 04138203 and what has it filed?",
               [call("list_officers", company_number="04138203"),
                call("list_filings", company_number="04138204")],
               'list_filings (call 2) company_number="04138204"'),
    ungrounded("leading_zeros_off", "Directors of company 04138203, please",
               [call("list_officers", company_number="4138203")],
               'list_officers (call 1) company_number="4138203"',
               identifiers={"leading_zeros": False}),
]


def test_no_identifier_invented(project: Project) -> None:
    result = run_cases(project, GROUNDING)
    assert_verdicts(result, GROUNDING)


# --- no_any_identifier and no_decoy_identifier ----------------------------------------------

NO_ANY = "identifier passed where the question holds none valid: "
DECOY = "decoy used as an identifier: "

ANY_AND_DECOYS = [
    Scripted("no_identifier_passed", "Tell me about Royal Mail Group Limited",
             [call("find_company", query="Royal Mail Group Limited", limit=5)],
             {"forbid_any_identifier": True}),
    Scripted("guessed_company_number", "What is the registered office of Royal Mail Group Limited?",
             [call("get_company", company_number="04138203")],
             {"forbid_any_identifier": True},
             {"no_identifier_invented": INVENTED + 'get_company (call 1) company_number="04138203"',
              "no_any_identifier": NO_ANY + 'get_company (call 1) company_number="04138203"'}),
    # a search text is not an identifier use: forbid_any_identifier guards identifier parameters
    Scripted("identifier_in_search_text", "Search for Royal Mail Group Limited in the register",
             [call("find_company", query="Royal Mail 04138203")],
             {"forbid_any_identifier": True}),
    # the VAT number is in the question, but it is no company number
    Scripted("vat_is_no_company_number", f"Is VAT {VAT} the company number of Royal Mail?",
             [call("get_company", company_number="745938421")],
             {"forbid_any_identifier": True, "forbid_ungrounded": True},
             {"valid_arguments": "get_company (call 1): $.company_number: '745938421'" + NOT_A_NUMBER,
              "no_any_identifier": NO_ANY + 'get_company (call 1) company_number="745938421"'}),
    # decoys
    Scripted("decoy_not_used", f"Royal Mail Group's VAT number is {VAT}. What is its profile?",
             [call("find_company", query=ROYAL_MAIL)], {"decoys": [VAT]}),
    Scripted("other_identifier_ok", f"Royal Mail (company 04138203, VAT {VAT}): list its officers",
             [call("list_officers", company_number="04138203")],
             {"decoys": [VAT], "forbid_ungrounded": True}),
    Scripted("decoy_used", f"Our supplier Royal Mail has VAT {VAT}; get its registry profile",
             [call("get_company", company_number="745938421")], {"decoys": [VAT]},
             {"valid_arguments": "get_company (call 1): $.company_number: '745938421'" + NOT_A_NUMBER,
              "no_decoy_identifier":
              DECOY + f'get_company (call 1) company_number="745938421" matches decoy "{VAT}"'}),
    Scripted("decoy_prefix_changed", f"Royal Mail, VAT {VAT}: show its company profile",
             [call("get_company", company_number="SC745938421")], {"decoys": [VAT]},
             {"valid_arguments": "get_company (call 1): $.company_number: 'SC745938421'" + NOT_A_NUMBER,
              "no_identifier_invented": INVENTED + 'get_company (call 1) company_number="SC745938421"',
              "no_decoy_identifier":
              DECOY + f'get_company (call 1) company_number="SC745938421" matches decoy "{VAT}"'}),
    # a decoy guards identifier parameters, unless it names the ones it guards
    Scripted("decoy_in_search_text", f"Find the company behind VAT {VAT} in the register",
             [call("find_company", query="VAT 745938421")], {"decoys": [VAT]}),
    Scripted("decoy_guarding_the_search", f"Search the register for the firm with VAT {VAT}",
             [call("find_company", query="VAT 745938421")],
             {"decoys": [{"value": VAT, "params": ["query"]}]},
             {"no_decoy_identifier":
              DECOY + f'find_company (call 1) query contains "VAT 745938421" matches decoy "{VAT}"'}),
    Scripted("decoy_named_for_another_param", f"Royal Mail, VAT {VAT}: show its VAT record",
             [call("lookup_vat", vat_number="GB745938421")],
             {"decoys": [{"value": VAT, "params": ["company_number"]}]}),
    # grounded in the question, and still the decoy: only no_decoy_identifier fails
    Scripted("decoy_grounded_still_fails", f"Royal Mail's VAT is {VAT}. Who are its directors?",
             [call("list_officers", company_number="GB745938421")],
             {"decoys": [VAT], "forbid_ungrounded": True},
             {"valid_arguments": "list_officers (call 1): $.company_number: 'GB745938421'" + NOT_A_NUMBER,
              "no_decoy_identifier":
              DECOY + f'list_officers (call 1) company_number="GB745938421" matches decoy "{VAT}"'}),
]


def test_no_any_identifier_and_decoys(project: Project) -> None:
    result = run_cases(project, ANY_AND_DECOYS)
    assert_verdicts(result, ANY_AND_DECOYS)


def test_the_provider_gets_the_servers_tools(project: Project) -> None:
    """The scripted provider refuses a tool the server does not offer: so every case above
    scored a turn over the tools discovered from the real server, not an invented list."""
    cases = [Scripted("not_offered", "Delete the company Royal Mail",
                      [call("delete_company", query="Royal Mail")], {"expect_tool": []})]
    result = run_cases(project, cases)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*delete_company is not among the offered tools*find_company*"
                                 "get_company*list_charges*list_filings*list_officers*lookup_vat*"
                                 "search_officers*"])
