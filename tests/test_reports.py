"""The results document (tool_selection.v1) and the pull-request comment, from real runs.

One run holds every outcome a case can have against a baseline: passed (held, fixed,
new), failed (a regression), xfailed (still failing, new failing), warned (flaky),
error (its server is gone) and skipped (the cost cap). Its JSON must validate, its
markdown is golden, and hostile text from the question and the model stays inert.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import PLANNED, REGISTRY_TOOLS, Project, case
from pytest_toolselect.positions.sourcemap import load_schema
from pytest_toolselect.report import markdown
from pytest_toolselect.report.document import ResultsDocument
from pytest_toolselect.terms.vocabulary import Verdict

GOLDEN = Path(__file__).parent / "golden" / "every_outcome.md"
HOSTILE = "</details><script>alert(1)</script> ``` `x` | <img src=x onerror=alert(2)> [l](javascript:1)"

FIND, OFFICERS = "find_company", "list_officers"
Q = {
    "held": "Find Acme Widgets in the register",
    "regressed": "Look up the company called Globex",
    "fixed": "Search the register for Initech",
    "still": "Which company is called Umbrella?",
    "flaky": "Find the company named Hooli",
    "new": "Find the company named Stark Industries",
    "hostile": f"Find the company called {HOSTILE}",
    "broken": "Find the company called Wayne Enterprises",
    "pricey": "Find the company called Tyrell",
}


def render(doc: dict[str, Any], limit: int = markdown.LIMIT) -> str:
    """The comment for a document as a results file holds it, read once as `toolselect report` reads it."""
    return markdown.render(ResultsDocument.from_json(doc), limit)


def _project(project: Project) -> None:
    (project.path / "conftest.py").write_text(PLANNED)
    project.config(
        servers={"registry": {"tools_file": project.tools_file()},
                 "down": {"command": "toolselect-no-such-server-command"},
                 # a real MCP server: it takes a second to start, so the priced case's calls come
                 # after every other case's and the cost cap stops exactly its second rep
                 "slow": project.stdio_server(REGISTRY_TOOLS)},
        model="script/planned",
    )


def _cases(project: Project, *, second_run: bool) -> None:
    cases = [case("held", Q["held"], [FIND], intent="find"),
             case("regressed", Q["regressed"], [FIND], intent="find", category="lookup"),
             case("fixed", Q["fixed"], [FIND], category="lookup"),
             case("still", Q["still"], [FIND], category="lookup"),
             case("flaky", Q["flaky"], [FIND])]
    if second_run:
        cases += [case("new", Q["new"], [FIND], category="fresh"),
                  case("hostile", Q["hostile"], [FIND], category="fresh",
                       why=f"the model must not be trusted: {HOSTILE}"),
                  case("broken", Q["broken"], [FIND], servers=["down"]),
                  case("pricey", Q["pricey"], [FIND], servers=["slow"])]
    project.cases(cases, servers=["registry"])


def _priced(step: Any) -> dict[str, Any]:
    """A plan step as a priced call (the cost cap is blind to unpriced ones)."""
    step = step if isinstance(step, dict) else {"tool": step}
    return {"cost": 0.001, "usage": {"input_tokens": 100, "output_tokens": 10}, **step}


def _plan(project: Project, plan: dict[str, Any]) -> None:
    (project.path / "plan.json").write_text(
        json.dumps({Q[k]: [_priced(step) for step in v] for k, v in plan.items()}))


def _pytest(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # attribution off: the scripted model's regression with unchanged tools would be drift
    env = {**os.environ, "PYTEST_ADDOPTS": "-p no:hypothesispytest -p no:cacheprovider "
           "--toolselect-attribution=off"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", *args], cwd=where,
                          env=env, capture_output=True, text=True, timeout=300, check=False)


#: the module's run of every outcome (a subprocess with a real MCP server) is shared: these
#: tests run on one worker (--dist loadgroup), so it is made once
SHARES_EVERY_OUTCOME = pytest.mark.xdist_group("test_reports.every_outcome")


@pytest.fixture(scope="module")
def every_outcome(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str, int]:
    """Record a baseline, then run the second round with --toolselect-json and -markdown.

    Run once for the module, in a subprocess, as a user runs it (the tests only read its files).
    """
    project = Project(None, tmp_path_factory.mktemp("every_outcome"))
    _project(project)
    _cases(project, second_run=False)
    _plan(project, {"held": [FIND], "regressed": [FIND], "fixed": [OFFICERS], "still": [OFFICERS],
                    "flaky": [FIND]})
    # fixed reps: the golden document shows one outcome of each kind (adaptive reps would ask
    # the regressed and flaky cases again; tests/test_adaptive_reps.py covers that)
    args = ["--toolselect-baseline=base.json", "--toolselect-reps=2", "--toolselect-concurrency=1",
            "--toolselect-adaptive=off"]
    first = _pytest(project.path, *args)
    assert "3 passed, 2 xfailed" in first.stdout, first.stdout
    _cases(project, second_run=True)
    _plan(project, {
        "held": [FIND], "regressed": [OFFICERS], "fixed": [FIND], "still": [None],
        "flaky": [FIND, OFFICERS], "new": [FIND],
        "hostile": [{"tool": OFFICERS, "args": {"company_number": HOSTILE}}],
        "pricey": [{"tool": FIND, "cost": 5.0}],
    })
    second = _pytest(project.path, *args, "--toolselect-max-cost-usd=1", "--toolselect-json=out.json",
                     "--toolselect-markdown=comment.md")
    return project, second.stdout, second.returncode


@SHARES_EVERY_OUTCOME
def test_a_run_with_every_outcome_gives_a_valid_document(every_outcome: tuple[Project, str, int]) -> None:
    project, stdout, status = every_outcome
    assert "1 failed, 4 passed, 1 skipped, 2 xfailed, 1 warning, 1 error" in stdout, stdout
    assert status == 2  # the cost cap left calls unmade
    doc = json.loads((project.path / "out.json").read_text())
    jsonschema.Draft202012Validator(load_schema("tool_selection.v1")).validate(doc)
    by_id = {c["case_id"]: c for c in doc["cases"]}
    assert {k: by_id[k]["verdict"] for k in by_id} == {
        "held": "held", "regressed": "regression", "fixed": "fixed", "still": "still_failing",
        "flaky": "flaky", "new": "new", "hostile": "new_failing", "broken": "error",
        "pricey": "skipped"}
    assert {c["outcome"] for c in doc["cases"]} == {"passed", "failed", "xfailed", "warned", "error",
                                                     "skipped"}
    assert doc["verdict"]["blocking"] is True
    assert doc["verdict"]["reasons"][:2] == ["1 regression", "1 error (not scored)"]
    # every call, with its arguments, and every check with its detail
    hostile = by_id["hostile"]
    assert hostile["calls"] == [[{"name": OFFICERS, "arguments": {"company_number": HOSTILE}}]] * 2
    names = [c["name"] for c in hostile["checks"][0]]
    assert "tool_choice" in names and all(c["detail"] for c in hostile["checks"][0])
    assert "toolselect-no-such-server-command" in by_id["broken"]["error"]
    assert by_id["regressed"]["baseline"]["status"] == "held"
    assert doc["summary"]["categories"]["lookup"] == {"held": 1, "scored": 3, "baseline_held": 1,
                                                      "baseline_scored": 3}
    assert doc["summary"]["intent_disagreements"] == {"find": {FIND: 2, OFFICERS: 2}}
    assert doc["cost"]["capped"] is True and doc["cost"]["cap_usd"] == 1
    assert doc["provenance"]["command"][0] == "pytest"
    assert "--toolselect-markdown=comment.md" in doc["provenance"]["command"]
    assert doc["preference"] is None


def _stable(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with what differs between machines and runs set to fixed values."""
    doc["provenance"].update(created="2026-01-01T00:00:00+00:00", plugin_version="0.0.0",
                             git={"commit": "0" * 40, "dirty": False})
    for c in doc["cases"]:
        if c["error"]:
            c["error"] = re.sub(r"/\S+", "<path>", c["error"])
    return doc


@SHARES_EVERY_OUTCOME
def test_the_comment_is_golden(every_outcome: tuple[Project, str, int]) -> None:
    project = every_outcome[0]
    doc = json.loads((project.path / "out.json").read_text())
    # the file the run wrote is the document's rendering
    assert (project.path / "comment.md").read_text() == render(doc)
    text = render(_stable(doc))
    if not GOLDEN.exists():  # first run on a new checkout of the golden: write it, then fail
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text)
        pytest.fail(f"wrote {GOLDEN}; review it and run again")
    assert text == GOLDEN.read_text(), f"the comment changed; if on purpose, delete {GOLDEN} and rerun"


@SHARES_EVERY_OUTCOME
def test_the_comment_says_blocking_first_and_what_blocks(every_outcome: tuple[Project, str, int]) -> None:
    project = every_outcome[0]
    text = (project.path / "comment.md").read_text()
    lines = text.splitlines()
    assert lines[0] == "## ❌ toolselect: blocking"
    assert lines[2].startswith("Blocks the merge: 1 regression; 1 error")
    regressions = text.index("### Regressions (1)")
    # the regression in full, before any collapsed section
    block = text[regressions:text.index("<details>")]
    for part in ("question: Look up the company called Globex", "expected: <code>find_company</code>",
                 "called: <code>list_officers()</code> (×2 of 2 reps)", "failing: <code>tool_choice",
                 "why: regressed has a reason", "passes: 0/2 reps (baseline 2/2)"):
        assert part in block
    for title in ("Fixed (1)", "New failing (1)", "Flaky (1)", "Still failing (1)", "Not run (1)",
                  "Intent disagreements (1)"):
        assert f"<details><summary>{title}" in text
    assert "| lookup | 1/3 (33%) | 1/3 (33%) | +0 pts |" in text
    assert "### Cost" in text and "the cap stopped the run" in text


def _inert(markdown: str) -> None:
    """No raw tag from the run survives, no code span or fence can open, tables keep their cells."""
    for tag in re.findall(r"<[^>]*>", markdown):
        assert re.fullmatch(r"</?(details|summary|code|sub)>", tag), tag
    assert "<script" not in markdown and "onerror" not in markdown.replace("onerror=alert", "")
    assert markdown.count("<details>") == markdown.count("</details>")
    # every backtick from the run is escaped (the only bare ones are the probe's fences)
    assert "`" not in markdown.replace("\\`", "")


@SHARES_EVERY_OUTCOME
def test_hostile_text_renders_inert(every_outcome: tuple[Project, str, int]) -> None:
    project = every_outcome[0]
    text = (project.path / "comment.md").read_text()
    _inert(text)
    assert "&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "\\`\\`\\`" in text and "\\|" in text


@SHARES_EVERY_OUTCOME
def test_the_comment_is_deterministic_and_capped(every_outcome: tuple[Project, str, int]) -> None:
    project = every_outcome[0]
    doc = json.loads((project.path / "out.json").read_text())
    assert render(doc) == render(json.loads(json.dumps(doc)))
    # a thousand regressions do not fit a comment: it is cut, says so, and stays well-formed
    many = dict(doc)
    regressed = next(c for c in doc["cases"] if c["verdict"] == "regression")
    many["cases"] = [{**regressed, "nodeid": f"big.toolselect.yaml::case-{i}", "question": "q " * 200}
                     for i in range(1000)] + [c for c in doc["cases"] if c["verdict"] == "fixed"]
    text = render(many, limit=20_000)
    assert len(text) <= 20_000
    assert re.search(r"Cut to stay under 20,000 characters: \d+ regressions", text)
    assert text.count("<details>") == text.count("</details>")
    _inert(text)


def test_a_report_that_cannot_be_written_fails_the_run_and_says_why(project: Project) -> None:
    project.config()
    project.cases([case("find", "Find the company called Acme Widgets in the company register",
                        [FIND])])
    (project.path / "taken").mkdir()  # a folder where the markdown file should go
    result = project.pytester.runpytest("--toolselect-markdown=taken", "--toolselect-json=out.json")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["toolselect: could not write the markdown report to *taken: *"])
    # the other report is written all the same
    assert json.loads((project.path / "out.json").read_text())["summary"]["total"] == 1


# -- pure tests of render() on documents made by the plugin's own builder ----------------------------


def _pure_doc(**extra: Any) -> dict[str, Any]:
    from test_html_report import document, record


    return document([record("c.yaml::a", Verdict.REGRESSION, **extra)],
                    baseline={"c.yaml::a": {"status": "held", "passes": 1, "reps": 1,
                                            "first_tool": FIND, "failing_checks": []}})


def test_mentions_and_issue_references_stay_inert() -> None:
    # GitHub links @name and #123 in the rendered HTML, backslash escapes or not: each would
    # notify a user or add a reference to an issue every time the comment is posted
    doc = _pure_doc(question="Ask @octocat and @org/team about #12 and owner/repo#7",
                    error=None, why="see GH #3")
    doc["cases"][0]["calls"] = [[{"name": FIND, "arguments": {"email": "ops@example.com"}}]]
    text = render(doc)
    outside_code = re.sub(r"<code>.*?</code>", "", text)
    assert not re.search(r"(?<!\w)@\w", outside_code)
    assert not re.search(r"#\d", outside_code.replace("\\#", "#"))
    assert "@\u2060octocat" in text and "#\u206012" in text and "repo#\u20607" in text
    # a code span is not linked by GitHub: an argument is shown as it was sent
    assert "- called: <code>find_company(email='ops@example.com')</code>" in text


def test_bidi_controls_are_shown_not_applied() -> None:
    from test_html_report import preference_doc

    doc = _pure_doc(question="pay \u202eevil\u202c now", category="cat\u2067x\u2069")
    doc["preference"] = preference_doc()
    doc["preference"]["summary"].update(groups_not_run=["G\u202e1\nG2"], n_scored=1, n_truncated=0,
                                        partial_groups=[], same_choice_rate=None, modal_share=None)
    text = render(doc)
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", text)
    assert "pay &lt;U+202E&gt;evil&lt;U+202C&gt; now" in text
    assert "cat&lt;U+2067&gt;x&lt;U+2069&gt;" in text
    # inside the probe's fence: shown as code points, the line break gone
    assert "groups with no scored call: G<U+202E>1 G2" in text


def test_the_cap_holds_whatever_the_version_string() -> None:
    doc = _pure_doc(question="q " * 200)
    one = doc["cases"][0]
    doc["cases"] = [{**one, "nodeid": f"c.yaml::case-{i}"} for i in range(300)]
    doc["provenance"]["plugin_version"] = '"' * 2000  # each quote is six characters escaped
    text = render(doc, limit=20_000)
    assert len(text) <= 20_000
    assert "Cut to stay under 20,000 characters" in text
    assert text.rstrip().endswith("</sub>")


def test_a_change_under_half_a_point_is_plus_zero() -> None:
    from pytest_toolselect.report.markdown import _category_table
    from pytest_toolselect.report.run_report import CategoryCount

    row = CategoryCount(held=99, scored=300, baseline_held=100, baseline_scored=301)  # -0.2 pts
    assert "| +0 pts |" in "\n".join(_category_table({"c": row}))
    row = CategoryCount(held=90, scored=300, baseline_held=100, baseline_scored=300)
    assert "| -3 pts |" in "\n".join(_category_table({"c": row}))


def test_a_long_error_keeps_its_cause_at_the_end() -> None:
    # a server that dies says why in its last stderr line, after its command line: a deep
    # checkout's paths must not push the cause out of the comment or the page
    from pytest_toolselect.report import html

    cause = "fatal: the registry refused the token"
    error = (f"MCP server 'leaky' (stdio: /{'deep/' * 300}python3 server.py): exited during initialize\n"
             f"last lines of its stderr:\n  {cause}")
    doc = _pure_doc(error=error)
    comment = render(doc).replace("\\", "")  # markdown punctuation is escaped
    assert cause in comment
    assert "chars cut) …" in comment and "deep/deep" in comment  # both ends, the middle named as cut
    page = html.render(ResultsDocument.from_json(doc))
    assert cause in page and "chars cut) …" in page
    # a short error is shown whole
    assert "chars cut" not in render(_pure_doc(error=f"exited during initialize: {cause}"))
