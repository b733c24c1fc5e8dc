"""The lint rules, as pure functions: calibration on the examples and on distinct tools, and
each rule's stated property (hypothesis where the rule is a property)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from lint_data import DISTINCT, TWIN

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.inputs.cases import Case, IdentifierSettings
from pytest_toolselect.inputs.config import load_config
from pytest_toolselect.lint.findings import ERROR, INFO, WARNING, Finding
from pytest_toolselect.lint.run import discover_all, find_case_files, lint, load_cases, toolset_of
from pytest_toolselect.lint.similarity import THRESHOLD, similarity
from pytest_toolselect.lint.tool_rules import (
    TOOL_LIMITS,
    ToolSet,
    coverage,
    descriptions,
    names,
    parameters,
    ranking_collisions,
    size,
)
from pytest_toolselect.plugin.lint_items import new_errors, stored_ids

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def as_tool(entry: dict[str, Any], server: str = "s") -> Tool:
    return Tool(entry["name"], entry["description"], entry.get("inputSchema", {}), server)


def toolset(*tools: Tool, **kw: Any) -> ToolSet:
    servers: dict[str, tuple[Tool, ...]] = {}
    for t in tools:
        servers[t.server or "s"] = (*servers.get(t.server or "s", ()), t)
    return ToolSet(servers, **kw)


def rules_of(findings: list[Finding]) -> list[tuple[str, tuple[str, ...]]]:
    return [(f.rule, f.tools) for f in findings]


# -- calibration ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def examples_lint() -> Any:
    config = load_config(EXAMPLES)
    tools = discover_all(config)
    cases = load_cases(find_case_files(config.root), config)
    return lint(toolset_of(config, tools, cases, "local/bm25"), config.identifiers)


def deliberate_pairs() -> set[frozenset[str]]:
    """The overlap case file's interchangeable tools: every pair one case accepts together."""
    doc = yaml.safe_load((EXAMPLES / "overlap.toolselect.yaml").read_text())
    return {frozenset(p) for c in doc["cases"] for p in itertools.combinations(c["expect_tool"], 2)}


def test_every_deliberate_overlap_of_the_examples_is_confusable(examples_lint: Any) -> None:
    wanted = deliberate_pairs()
    assert len(wanted) == 2  # company search and VAT check, across the two servers
    found = {frozenset(f.tools) for f in examples_lint.findings if f.rule == "confusable-pair"}
    assert wanted <= found
    # and nothing else on the examples: their other tools are written to be told apart
    assert found == wanted


def test_a_clearly_distinct_tool_set_has_no_confusable_pair() -> None:
    tools = [as_tool(t) for t in DISTINCT]
    report = lint(toolset(*tools), IdentifierSettings())
    assert not [f for f in report.findings if f.rule == "confusable-pair"]
    assert max(report.similarity[i][j] for i, j in itertools.combinations(range(len(tools)), 2)) < THRESHOLD


def test_a_paraphrase_of_a_distinct_tool_is_found_with_its_shared_terms() -> None:
    tools = [as_tool(t) for t in [*DISTINCT, TWIN]]
    report = lint(toolset(*tools), IdentifierSettings())
    pairs = [f for f in report.findings if f.rule == "confusable-pair"]
    assert [f.tools for f in pairs] == [("get_weather", "weather_forecast")]
    assert pairs[0].severity == ERROR
    assert {"weather", "forecast"} <= set(pairs[0].data["shared_terms"])
    assert pairs[0].data["similarity"] >= THRESHOLD


def test_a_sentence_naming_another_tool_is_a_difference_not_a_likeness() -> None:
    a = Tool("find_person", "Search people by name. To find a company by name, use find_firm.")
    b = Tool("find_firm", "Search companies by name. To find a person by name, use find_person.")
    plain = similarity([Tool("find_person", "Search people by name."),
                        Tool("find_firm", "Search companies by name.")])
    assert similarity([a, b]).matrix[0][1] == plain.matrix[0][1]


WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=4, max_size=9)


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, min_size=3, max_size=12), st.lists(WORDS, min_size=2, max_size=6, unique=True))
def test_a_copy_under_another_name_is_always_confusable(words: list[str], others: list[str]) -> None:
    text = " ".join(words) + "."
    tools = [Tool("alpha_tool", text), Tool("beta_tool", text),
             *(Tool(f"other_{i}", f"{w} {w}.") for i, w in enumerate(others))]
    found = lint(toolset(*tools), IdentifierSettings()).findings
    assert ("alpha_tool", "beta_tool") in [f.tools for f in found if f.rule == "confusable-pair"]


def test_a_copy_made_of_stopwords_only_is_confusable_too() -> None:
    # no term survives, yet the two tools say the same thing: a model cannot tell them apart
    tools = [Tool("alpha_tool", "than than than."), Tool("beta_tool", "than than than."),
             Tool("other_0", "resize resize."), Tool("other_1", "weather weather.")]
    found = lint(toolset(*tools), IdentifierSettings()).findings
    assert ("alpha_tool", "beta_tool") in [f.tools for f in found if f.rule == "confusable-pair"]


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=8), st.lists(WORDS, min_size=1, max_size=8))
def test_similarity_is_symmetric_bounded_and_zero_without_a_shared_term(x: list[str], y: list[str]) -> None:
    a, b = Tool("one", " ".join(x)), Tool("two", " ".join(w + "q" for w in y))
    sim = similarity([a, b])
    assert sim.matrix[0][1] == sim.matrix[1][0]
    assert 0.0 <= sim.matrix[0][1] <= 1.0 + 1e-9
    if not set(x) & {w + "q" for w in y}:
        assert sim.matrix[0][1] == 0.0


# -- descriptions, parameters, identifiers -------------------------------------------------------


def test_missing_and_thin_descriptions() -> None:
    found = descriptions(toolset(Tool("a", "  "), Tool("b", "Gets b."),
                                 Tool("c", "Get the c of a thing, by its name, with its date.")))
    assert [(f.rule, f.severity, f.tools) for f in found] == [
        ("missing-description", ERROR, ("a",)), ("thin-description", WARNING, ("b",))]


def test_parameters_without_description_nested_included() -> None:
    schema = {"type": "object", "properties": {
        "q": {"type": "string", "description": "what to find"},
        "filters": {"type": "object", "properties": {"since": {"type": "string"}}}}}
    found = parameters(toolset(Tool("t", "x", schema)), IdentifierSettings())
    assert [(f.rule, f.subject) for f in found] == [
        ("parameter-without-description", "filters"), ("parameter-without-description", "filters.since")]


@pytest.mark.parametrize(("param", "finding"), [
    ({"type": "string", "description": "The company number."}, True),
    ({"type": "string", "description": "The company number, e.g. 04138203."}, False),
    ({"type": "string", "description": "The company number.", "pattern": "^[0-9]{8}$"}, False),
    ({"type": "string", "description": "The company number.", "format": "uuid"}, False),
])
def test_an_identifier_parameter_needs_a_format_or_an_example(param: dict[str, Any], finding: bool) -> None:
    tool = Tool("t", "x", {"type": "object", "properties": {"company_number": param}})
    found = [f for f in parameters(toolset(tool), IdentifierSettings())
             if f.rule == "identifier-without-format"]
    assert bool(found) is finding


def test_identifier_parameters_are_those_the_grounding_check_declares() -> None:
    # not an identifier by its name; declared one by the settings; ignored by them again
    tool = Tool("t", "x", {"type": "object", "properties": {"handle": {"type": "string",
                                                                       "description": "h"}}})

    def flagged(settings: IdentifierSettings) -> list[str]:
        return [f.subject for f in parameters(toolset(tool), settings)
                if f.rule == "identifier-without-format"]

    assert flagged(IdentifierSettings()) == []
    assert flagged(IdentifierSettings(params=("handle",))) == ["handle"]
    assert flagged(IdentifierSettings(params=("handle",), ignore_params=("handle",))) == []


# -- names ---------------------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(st.from_regex(r"[a-zA-Z0-9_-]{1,64}", fullmatch=True))
def test_a_provider_valid_name_is_never_flagged(name: str) -> None:
    assert not [f for f in names(toolset(Tool(name, "d"))) if f.rule == "invalid-name"]


@settings(max_examples=80, deadline=None)
@given(st.from_regex(r"[a-z_]{1,20}", fullmatch=True), st.sampled_from(["\n", " ", ".", "/", "é", ":"]))
def test_a_name_with_a_character_providers_refuse_is_flagged(name: str, bad: str) -> None:
    for wrong in (name + bad, bad + name):
        assert [f.rule for f in names(toolset(Tool(wrong, "d")))].count("invalid-name") == 1


def test_a_name_over_64_characters_after_tool_name_format_is_flagged() -> None:
    tool = Tool("t" * 60, "d", server="server")
    assert not names(toolset(tool))
    found = names(toolset(tool, tool_name_format="mcp__{server}__{tool}"))
    assert [f.rule for f in found] == ["invalid-name"]


def test_names_colliding_after_tool_name_format_and_builtins() -> None:
    a, b = Tool("search", "d", server="one"), Tool("search", "d", server="two")
    found = names(toolset(a, b, tool_name_format="{tool}"))
    assert [(f.rule, f.servers) for f in found] == [("name-collision", ("one", "two"))]
    assert not names(toolset(a, b, tool_name_format="{server}_{tool}"))
    assert [f.rule for f in names(toolset(Tool("Read", "d"), Tool("web_search", "d")))] == [
        "shadows-builtin", "shadows-builtin"]


# -- size, coverage, ranking -----------------------------------------------------------------------


def test_more_tools_than_a_provider_accepts() -> None:
    limit = TOOL_LIMITS["openai"]
    many = [Tool(f"tool_{i}", "d") for i in range(limit + 1)]
    found, figures = size(toolset(*many))
    assert figures["tools"] == limit + 1 and figures["tokens"] > 0
    assert [f.severity for f in found if f.rule == "too-many-tools"] == [WARNING]
    found, _ = size(toolset(*many, model="openai/gpt-4o-mini"))
    assert [f.severity for f in found if f.rule == "too-many-tools"] == [ERROR]
    found, _ = size(toolset(*many[:limit]))
    assert [f.rule for f in found] == ["tool-list-size"] and found[0].severity == INFO


def test_the_size_is_priced_at_the_configured_model() -> None:
    prices = {"acme/model": {"input_per_mtok": 1_000_000.0, "output_per_mtok": 0.0}}
    _, figures = size(toolset(Tool("t", "x" * 400), model="acme/model", prices=prices))
    assert figures["cost_usd"] == pytest.approx(figures["tokens"] * 1.0)


def test_coverage_names_the_tools_no_case_expects_or_forbids() -> None:
    tools = (Tool("a", "d"), Tool("b", "d"), Tool("c", "d"))
    cases = (Case("one", "q", expect_tool=("a",), forbid_tools=("b",)),)
    found, per_server = coverage(toolset(*tools, cases=cases))
    assert rules_of(found) == [("untested-tool", ("c",))]
    assert per_server == {"s": {"tools": 3, "tested": 2, "untested": ["c"]}}


def test_a_case_credits_only_the_servers_it_is_offered_and_naming_nothing_offered_is_told() -> None:
    one = (Tool("a", "d", server="one"), Tool("b", "d", server="one"))
    two = (Tool("c", "d", server="two"),)
    cases = (Case("misspelt", "q", expect_tool=("c",), servers=("twoo",)),
             Case("elsewhere", "q", expect_tool=("a",), servers=("two",)),
             Case("right", "q", expect_tool=("b",), servers=("one",)))
    found, per_server = coverage(ToolSet({"one": one, "two": two}, cases=cases))
    assert per_server["one"]["untested"] == ["a"] and per_server["two"]["untested"] == ["c"]
    told = {f.subject: f for f in found if f.rule == "case-names-unknown"}
    assert sorted(told) == ["case elsewhere", "case misspelt"]
    assert "twoo" in told["case misspelt"].message and "'two'" in told["case misspelt"].fix
    assert told["case elsewhere"].tools == ("a",) and told["case elsewhere"].severity == ERROR


def test_a_ranking_collision_is_two_tools_scoring_alike_on_a_case() -> None:
    tools = (Tool("list_orders", "List the orders of a customer."),
             Tool("list_invoices", "List the invoices of a customer."),
             Tool("get_weather", "Weather forecast for a city."))
    alike = Case("c1", "What does this customer have?", expect_tool=("list_orders",))
    clear = Case("c2", "Show the orders of this customer", expect_tool=("list_orders",))
    either = Case("c3", "What does this customer have?", expect_tool=("list_orders", "list_invoices"))
    found = ranking_collisions(toolset(*tools, cases=(alike, clear, either)))
    assert [(f.rule, f.subject, set(f.tools)) for f in found] == [
        ("ranking-collision", "c1", {"list_orders", "list_invoices"})]


# -- the baseline's view -----------------------------------------------------------------------------


def test_only_error_findings_the_baseline_does_not_hold_are_new() -> None:
    err = Finding("confusable-pair", ERROR, ("s",), ("a", "b"), "m", "f")
    warn = Finding("thin-description", WARNING, ("s",), ("a",), "m", "f")
    info = Finding("tool-list-size", INFO, ("s",), (), "m", "f")
    assert new_errors([err, warn, info], None) == [err]
    assert new_errors([err, warn, info], [err.id]) == []
    assert stored_ids([err, warn, info]) == sorted([err.id, warn.id])


def test_a_fix_shows_the_words_as_the_descriptions_write_them() -> None:
    a = as_tool({"name": "list_branches", "description": "List the branches of a bank, with "
                 "their addresses and opening hours.", "inputSchema": {"type": "object"}})
    b = as_tool({"name": "bank_branches", "description": "Lists a bank's branches, with their "
                 "addresses, opening hours and companies nearby.", "inputSchema": {"type": "object"}})
    (pair,) = [f for f in lint(toolset(a, b), IdentifierSettings()).findings
               if f.rule == "confusable-pair"]
    assert "branches" in pair.message and "branche," not in pair.message + pair.fix
    assert "companies" in pair.fix and "companie" not in pair.fix.replace("companies", "")


word = st.sampled_from("branches companies addresses queries boxes series status buses "
                       "invoices parties classes ledgers".split())


@given(st.lists(word, min_size=3, max_size=8), st.lists(word, min_size=1, max_size=4),
       st.lists(word, min_size=1, max_size=4))
def test_every_word_a_confusable_finding_shows_is_written_in_a_description(
        common: list[str], only_a: list[str], only_b: list[str]) -> None:
    a = as_tool({"name": "tool_a", "description": " ".join(common + only_a),
                 "inputSchema": {"type": "object"}})
    b = as_tool({"name": "tool_b", "description": " ".join(common + only_b),
                 "inputSchema": {"type": "object"}})
    for f in lint(toolset(a, b), IdentifierSettings()).findings:
        if f.rule != "confusable-pair":
            continue
        written = {"tool", "a", "b", *common, *only_a, *only_b}
        shown = [*f.data["shared_terms"], *(w for ws in f.data["apart"].values() for w in ws)]
        assert set(shown) <= written, shown
