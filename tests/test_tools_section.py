"""Each tool change since the baseline is shown once, in a tools section of the terminal,
the comment and the HTML report; the cases that were offered it point to it."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from conftest import FIND, OFFICERS, WRONG, Project, case
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.report.html_tools import diff_html
from pytest_toolselect.report.notes import tool_changes

NEW_TEXT = "Return tomorrow's weather forecast for a city."


def _break_find_company(project: Project) -> None:
    path = project.path / "registry.tools.json"
    tools = json.loads(path.read_text())
    for tool in tools["tools"]:
        if tool["name"] == "find_company":
            tool["description"] = NEW_TEXT
    path.write_text(json.dumps(tools))


def test_a_tool_change_is_shown_once_and_the_cases_point_to_it(project: Project) -> None:
    project.config()
    project.cases([case(*FIND), case(*OFFICERS), case(*WRONG)])
    project.pytester.runpytest("--toolselect-baseline=base.json")
    _break_find_company(project)
    result = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-html=r.html",
                                        "--toolselect-markdown=c.md")
    assert result.ret == 1
    out = result.stdout.str()
    assert out.count("[-Search the company register") == 1, out  # the word diff, once
    result.stdout.fnmatch_lines(["tools changed since the baseline: 1",
                                 "  changed find_company: [[]-Search * {+Return *   (3 cases)"])
    # every case offered it says what changed by name, and where to look
    pointer = "changed find_company (see 'tools changed since the baseline')"
    assert out.count(pointer) >= 2, out  # the regression and the still failing case
    comment = (project.path / "c.md").read_text()
    assert comment.count("Search the company register") == 1 and "(3 cases)" in comment
    html = (project.path / "r.html").read_text()
    card = html.split('<section class="card" id="tools-card">')[1].split("</section>")[0]
    assert "<del>Search the company register" in card and "<ins>Return tomorrow&#x27;s" in card
    assert "offered to 3 cases" in card
    assert html.count("<del>") == 1 and "[-" not in html


@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=8), max_size=6),
       st.lists(st.tuples(st.booleans(), st.text(max_size=8)), max_size=6))
def test_diff_markup_becomes_del_and_ins_with_everything_escaped(plain: list[str],
                                                                 marks: list[tuple[bool, str]]) -> None:
    words = [w.replace("-]", "").replace("+}", "").replace("[-", "").replace("{+", "") for w in plain]
    runs = [(gone, w.replace("-]", "").replace("+}", "").replace("[-", "").replace("{+", ""))
            for gone, w in marks]
    text = " ".join(words) + "".join((f"[-{w}-]" if gone else f"{{+{w}+}}") for gone, w in runs)
    out = diff_html(text)
    assert out.count("<del>") == sum(1 for gone, _ in runs if gone)
    assert out.count("<ins>") == sum(1 for gone, _ in runs if not gone)
    # no markup but the marks: every other < and > from the text is escaped
    bare = out.replace("<del>", "").replace("</del>", "").replace("<ins>", "").replace("</ins>", "")
    assert "<" not in bare and ">" not in bare


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]),
                          st.lists(st.sampled_from(["t1", "t2"]), unique=True)), max_size=8))
def test_each_distinct_change_is_listed_once_with_every_case_offered_it(
        cases: list[tuple[str, list[str]]]) -> None:
    records = [{"nodeid": f"f::{i}", "tools_diff": [{"tool": t, "change": "changed", "diff": f"d{t}"}
                                                   for t in tools]}
               for i, (_, tools) in enumerate(cases)]
    found = tool_changes([CaseRecord.read(r) for r in records])
    assert len({c["tool"] for c in found}) == len(found)
    for c in found:
        assert c["cases"] == [r["nodeid"] for r in records
                              if any(d["tool"] == c["tool"] for d in r["tools_diff"])]
