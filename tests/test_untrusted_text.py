"""Control characters from a question or a model's reply are shown, never applied.

An escape sequence that reached the terminal or a CI log could clear the screen, forge a
link or hide a failing line; a carriage return could overwrite one; a bidirectional
control could show a tool name reversed. Every output shows them as ``<U+XXXX>``.
"""

from __future__ import annotations

import json

from conftest import FIND, OFFICERS, PLANNED, Project, case
from pytest_toolselect.report import html, markdown
from pytest_toolselect.report.document import ResultsDocument
from pytest_toolselect.report.printable import printable
from pytest_toolselect.terms.vocabulary import Verdict

#: a forged link around a made-up tool name, a screen clear, a carriage return, a reversal
LINK = "\x1b]8;;https://evil.example\x07find_company\x1b]8;;\x07"
ARGUMENT = "0123\x1b[2J\x1b[1A\rall checks passed \u202eevil\u202c \x9b31m\x00"
QUESTION = f"{FIND[1]} \x1b[8mhidden\x1b[0m"
RAW = ("\x1b", "\x07", "\r", "\x00", "\x9b", "\u202e", "\u202c")


def test_printable_shows_controls_and_keeps_lines() -> None:
    assert printable("a\tb\nc") == "a\tb\nc"
    assert printable("\x1b[2J\r\u202e\x7f\x9b") == "<U+001B>[2J<U+000D><U+202E><U+007F><U+009B>"
    assert printable("Société Générale 株式会社") == "Société Générale 株式会社"


def test_no_control_character_reaches_any_output(project: Project) -> None:
    project.config(model="script/planned")
    project.pytester.makeconftest(PLANNED)
    (project.path / "plan.json").write_text(json.dumps({
        QUESTION: [{"tool": LINK, "args": {"company_number": ARGUMENT}}],
        OFFICERS[1]: [{"tool": OFFICERS[2][0], "args": {"company_number": ARGUMENT}}],
    }))
    project.cases([case("find", QUESTION, FIND[2], why=f"because \x1b[31m{ARGUMENT}"),
                   case("officers", OFFICERS[1], OFFICERS[2],
                        expect_args=[{"path": "company_number", "equals": "01234567"}])])
    result = project.pytester.runpytest(
        "-vv", "-rA", "--color=no", "-p", "no:randomly", "--toolselect-json=out.json",
        "--toolselect-markdown=comment.md", "--toolselect-html=report.html", "--junitxml=junit.xml")
    terminal = result.stdout.str() + result.stderr.str()
    # a tool name holding control characters is no name: that reply is its item's error
    result.assert_outcomes(failed=1, errors=1)
    # the question, the odd name and the argument are shown, visible for what they are
    assert "<U+001B>[8mhidden" in terminal
    assert r"the tool name '\x1b]8;;https://evil.example\x07find_company\x1b]8;;\x07'" in terminal
    assert "<U+000D>all checks passed <U+202E>evil<U+202C>" in terminal
    outputs = {"terminal": terminal}
    for name in ("comment.md", "report.html", "junit.xml"):
        outputs[name] = (project.path / name).read_text()
    for where, text in outputs.items():
        for char in RAW:
            assert char not in text, f"{char!r} reached the {where}"
    # the results file is data: it keeps what the model sent, exactly
    doc = json.loads((project.path / "out.json").read_text())
    cases = {c["case_id"]: c for c in doc["cases"]}
    assert repr(LINK) in cases["find"]["error"]
    assert cases["officers"]["calls"][0][0]["arguments"]["company_number"] == ARGUMENT


def test_reports_render_controls_visibly() -> None:
    from test_html_report import document, record


    doc = document([record("c.yaml::a", Verdict.FAILED, question=QUESTION, why=ARGUMENT)])
    read = ResultsDocument.from_json(doc)
    comment, page = markdown.render(read), html.render(read)
    for char in RAW:
        assert char not in comment and char not in page
    assert "&lt;U+001B&gt;\\[8mhidden" in comment
    assert "&lt;U+001B&gt;[8mhidden" in page
