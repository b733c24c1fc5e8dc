"""The toolselect command on saved runs: real runs (pytester) in, the installed command run on them."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import FIND, OFFICERS, OUT_OF_SCOPE, PLANNED, WRONG, Project, case
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.report import side_by_side as compare
from pytest_toolselect.report.document import (
    BaselineInfo,
    DocumentCost,
    DocumentSummary,
    DocumentVerdict,
    ResultsDocument,
)
from pytest_toolselect.run.report_files import render as render_document

#: the console script pip installed next to this Python
TOOLSELECT = Path(sys.executable).with_name("toolselect")

VAT = ("vat", "Check the VAT registration number GB123456789", ["lookup_vat"])
#: a case only the second run holds (added to the suite between the runs)
EXTRA = ("extra", "Look up who is registered under VAT number GB987654321", ["lookup_vat"])
#: per question, the tools the scripted model calls on rep 1 and 2
PLAN = {FIND[1]: ["find_company"], OFFICERS[1]: ["find_company"], OUT_OF_SCOPE[1]: ["lookup_vat"],
        WRONG[1]: ["list_officers"], VAT[1]: ["lookup_vat", "find_company"], EXTRA[1]: ["lookup_vat"]}


def toolselect(*args: str | Path, cwd: Path, module: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest_toolselect.cli"] if module else [str(TOOLSELECT)]
    return subprocess.run([*command, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                           timeout=300)


def run_main(*args: str | Path, cwd: Path, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """The command's main() in this process (cheaper than a new interpreter): status, stdout, stderr."""
    from pytest_toolselect.cli import main

    monkeypatch.chdir(cwd)
    capsys.readouterr()
    try:
        status = main([str(a) for a in args])
    except SystemExit as e:
        status = int(e.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def suite(project: Project, *, extra: bool = False) -> None:
    cases = [case(*FIND, category="grounding"), case(*OFFICERS, category="grounding"),
             case(*OUT_OF_SCOPE, category="out-of-scope"), case(*WRONG, category="near-miss"),
             case(*VAT)]
    if extra:
        cases.append(case(*EXTRA, category="paraphrase"))
    project.cases(cases)


def saved_run(project: Project, name: str, *args: str) -> dict[str, Any]:
    """Run the suite with pytest as a user would, keep its results file, return the document."""
    result = project.pytester.runpytest(f"--toolselect-json={name}", "-p", "no:randomly", *args)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    return json.loads((project.path / name).read_text())


def two_models(project: Project) -> tuple[dict[str, Any], dict[str, Any]]:
    """local/bm25 on the suite, then a scripted model with two reps on the suite plus one case."""
    project.config()
    project.pytester.makeconftest(PLANNED)
    (project.path / "plan.json").write_text(json.dumps(PLAN))
    suite(project)
    bm25 = saved_run(project, "bm25.json", "--toolselect-model=local/bm25")
    suite(project, extra=True)
    planned = saved_run(project, "planned.json", "--toolselect-model=script/planned", "--toolselect-reps=2")
    return bm25, planned


def held_scored(document: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """Held and scored per category, counted from the document's cases."""
    out: dict[str, tuple[int, int]] = {}
    for c in document["cases"]:
        held, scored = out.get(c["category"] or "(none)", (0, 0))
        out[c["category"] or "(none)"] = (held + (c["status"] == "held"), scored + (c["status"] is not None))
    return out


def cell(held: int, scored: int) -> str:
    return f"{held}/{scored} ({held / scored:.0%})"


def value(document: Mapping[str, Any], nodeid: str) -> str:
    c = next(c for c in document["cases"] if c["nodeid"] == nodeid)
    return f"{c['status']} {c['passes']}/{c['reps']}, {c['first_tool'] or '(nothing)'}, {c['verdict']}"


def section(text: str, title: str) -> list[list[str]]:
    """The rows of a plain-text table under a title line, split on the column gaps."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rows = []
    for line in lines[start + 2:]:
        if not line.strip():
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    assert set(rows[1][0]) == {"-"}, rows  # the rule under the header
    return [rows[0], *rows[2:]]


def nodeid(name: str) -> str:
    return f"registry.toolselect.yaml::{name}"


# -- compare ----------------------------------------------------------------------------------------

def test_compare_puts_two_models_side_by_side(project: Project) -> None:
    bm25, planned = two_models(project)
    assert (bm25["subject"]["model"], planned["subject"]["model"]) == ("local/bm25", "script/planned")

    done = toolselect("compare", "bm25.json", "planned.json", cwd=project.path)
    assert (done.returncode, done.stderr) == (0, "")
    table = section(done.stdout, "Held / scored, by category")
    assert table[0] == ["category", "local/bm25", "script/planned"]
    ours, theirs = held_scored(bm25), held_scored(planned)
    expected = [[name, cell(*ours[name]) if name in ours else "-", cell(*theirs[name])]
                for name in sorted(theirs)]
    total = [tuple(map(sum, zip(*counts.values(), strict=True))) for counts in (ours, theirs)]
    assert table[1:] == [*expected, ["total", *(cell(*t) for t in total)]]
    # what the scripted plan makes of the suite: bm25 gets 4 of 5, the plan 3 of 6
    assert table[1:] == [["(none)", "1/1 (100%)", "0/1 (0%)"], ["grounding", "2/2 (100%)", "1/2 (50%)"],
                         ["near-miss", "0/1 (0%)", "1/1 (100%)"], ["out-of-scope", "1/1 (100%)", "0/1 (0%)"],
                         ["paraphrase", "-", "1/1 (100%)"], ["total", "4/5 (80%)", "3/6 (50%)"]]

    differ = section(done.stdout, "Cases that differ (4)")
    assert differ[0] == ["case", "local/bm25", "script/planned"]
    assert differ[1:] == [[nodeid(n), value(bm25, nodeid(n)), value(planned, nodeid(n))]
                          for n in ("officers", "weather", "wrong", "vat")]
    assert differ[1][1].startswith("held 1/1, list_officers") and differ[1][2].startswith(
        "failing 0/2, find_company")
    assert differ[4][2].startswith("flaky 1/2")
    # the case both runs got right the same way is not listed
    assert nodeid("find") not in done.stdout
    only = section(done.stdout, "Cases in only some runs (1)")
    assert only[1:] == [[nodeid("extra"), "(absent)", value(planned, nodeid("extra"))]]

    # the same as markdown tables, for a pull request
    done = toolselect("compare", "bm25.json", "planned.json", "--markdown", cwd=project.path)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert "| category | local/bm25 | script/planned |" in lines
    assert "| grounding | 2/2 (100%) | 1/2 (50%) |" in lines
    assert "| **total** | **4/5 (80%)** | **3/6 (50%)** |" in lines
    assert (f"| `{nodeid('officers')}` | {value(bm25, nodeid('officers'))} | "
            f"{value(planned, nodeid('officers'))} |") in lines
    assert f"| `{nodeid('extra')}` | (absent) | {value(planned, nodeid('extra'))} |" in lines


def test_compare_three_runs_names_a_repeated_model_by_its_file(project: Project) -> None:
    bm25, planned = two_models(project)
    # the same scripted model, now answering the officers question right on both reps
    (project.path / "plan.json").write_text(json.dumps({**PLAN, OFFICERS[1]: ["list_officers"]}))
    again = saved_run(project, "planned-b.json", "--toolselect-model=script/planned",
                      "--toolselect-reps=2")
    done = toolselect("compare", "bm25.json", "planned.json", "planned-b.json", cwd=project.path,
                      module=True)
    assert (done.returncode, done.stderr) == (0, "")
    runs = ["local/bm25", "script/planned (planned.json)", "script/planned (planned-b.json)"]
    table = section(done.stdout, "Held / scored, by category")
    assert table[0] == ["category", *runs]
    assert table[-1] == ["total", "4/5 (80%)", "3/6 (50%)", "4/6 (67%)"]
    differ = {row[0]: row[1:] for row in section(done.stdout, "Cases that differ")[1:]}
    docs = (bm25, planned, again)
    assert differ[nodeid("officers")] == [value(d, nodeid("officers")) for d in docs]
    assert differ[nodeid("officers")][2].startswith("held 2/2, list_officers")
    assert nodeid("find") not in differ
    only = section(done.stdout, "Cases in only some runs (1)")
    assert only[1] == [nodeid("extra"), "(absent)", value(planned, nodeid("extra")),
                       value(again, nodeid("extra"))]


def test_compare_needs_two_runs(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    status, out, err = run_main("compare", "one.json", cwd=pytester.path, capsys=capsys,
                                monkeypatch=monkeypatch)
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == "toolselect compare: error: compare needs at least two results files"


def test_labels_disambiguate_a_shared_model_by_file_name_then_path() -> None:
    assert compare.labels(["a", "b"], ["x.json", "y.json"]) == ["a", "b"]
    assert compare.labels(["a", "a", "b"], ["one/x.json", "two/y.json", "z.json"]) == [
        "a (x.json)", "a (y.json)", "b"]
    assert compare.labels(["a", "a"], ["one/x.json", "two/x.json"]) == [
        "a (one/x.json)", "a (two/x.json)"]
    assert compare.labels(["a", "a"], ["x.json", "x.json"]) == ["a (x.json #1)", "a (x.json #2)"]


def test_markdown_cells_keep_a_pipe_in_a_node_id_inside_its_cell() -> None:
    doc = _document("m/one", [_case("t.py::test_q[a|b]", "held", "find_company")])
    other = _document("m/two", [_case("t.py::test_q[a|b]", "failing", "lookup_vat")])
    text = compare.render([("one.json", doc), ("two.json", other)], markdown=True)
    row = next(line for line in text.splitlines() if "test_q" in line)
    assert row == ("| `t.py::test_q[a\\|b]` | held 1/1, find_company, held "
                   "| failing 0/1, lookup_vat, still_failing |")
    # unescaped pipes: the row's cell borders, one per column and the two ends
    assert len(re.findall(r"(?<!\\)\|", row)) == 4


def test_runs_that_agree_say_so() -> None:
    doc = _document("m/one", [_case("a.yaml::c", "held", "find_company")])
    text = compare.render([("one.json", doc), ("two.json", _document("m/two", doc.cases))])
    assert "Cases that differ (0)" in text
    assert "none: every case common to the runs has the same status and first tool" in text
    assert "only some runs" not in text


def test_a_verdict_alone_is_not_a_difference() -> None:
    # held against a baseline in one run, passed without one in the other: the same behaviour
    doc = _document("m/one", [_case("a.yaml::c", "held", "find_company")])
    other = _document("m/two", [{**doc.cases[0], "verdict": "passed"}])
    text = compare.render([("one.json", doc), ("two.json", other)])
    assert "Cases that differ (0)" in text


def _case(nodeid: str, status: str | None, first: str | None) -> dict[str, Any]:
    held = status == "held"
    return {"nodeid": nodeid, "category": None, "status": status, "passes": int(held), "reps": 1,
            "first_tool": first, "verdict": "held" if held else "still_failing"}


def _document(model: str, cases: Sequence[Mapping[str, Any]]) -> ResultsDocument:
    """A run of these cases and nothing else the comparison reads."""
    return ResultsDocument(
        provenance={"created": "2026-01-01T00:00:00+00:00"}, subject=Subject.from_json({"model": model}),
        settings={}, baseline=BaselineInfo(None, None, False, ()),
        verdict=DocumentVerdict(False, ()), summary=DocumentSummary(0, {}, {}, (), {}, None),
        cost=DocumentCost(0.0, 0.0, 0.0, {}, {}, None, False),
        cases=tuple(dict(c) for c in cases), preference=None, tool_texts=None)


def render(kind: str, document: dict[str, Any]) -> str:
    """A report of a results file's document, read once as `toolselect report` reads it."""
    return render_document(kind, ResultsDocument.from_json(document))


# -- report -----------------------------------------------------------------------------------------

@pytest.fixture
def results(project: Project) -> Path:
    """One real run's results file (local/bm25)."""
    project.config()
    suite(project)
    saved_run(project, "results.json")
    return project.path / "results.json"


def test_report_writes_markdown_and_html_files(results: Path) -> None:
    document = json.loads(results.read_text())
    done = toolselect("report", results, "--markdown", "out/comment.md", "--html", "out/report.html",
                      cwd=results.parent)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    out = results.parent / "out"
    assert (out / "comment.md").read_text() == render("markdown", document)
    assert (out / "report.html").read_text() == render("html", document)
    # written atomically: no temporary file left beside them
    assert sorted(p.name for p in out.iterdir()) == ["comment.md", "report.html"]


def test_report_prints_the_markdown_by_default(results: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    document = json.loads(results.read_text())
    expected = render("markdown", document)
    assert "local/bm25" in expected
    done = toolselect("report", results.name, cwd=results.parent)
    assert (done.returncode, done.stdout, done.stderr) == (0, expected, "")
    # "-" names stdout too
    assert run_main("report", results.name, "--markdown", "-", cwd=results.parent, capsys=capsys,
                    monkeypatch=monkeypatch) == (0, expected, "")
    assert sorted(p.name for p in results.parent.glob("*.md")) == []


def test_report_never_writes_over_its_input(results: Path) -> None:
    before = results.read_bytes()
    done = toolselect("report", results.name, "--markdown", results.name, cwd=results.parent)
    assert done.returncode == 2
    assert done.stderr == "toolselect: error: results.json: would overwrite an input file " \
                          "(choose another path for the report)\n"
    assert results.read_bytes() == before


def test_report_to_a_path_it_cannot_write_is_one_clear_line(
        results: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (results.parent / "afile").write_text("")
    status, out, err = run_main("report", results.name, "--markdown", "afile/comment.md",
                                cwd=results.parent, capsys=capsys, monkeypatch=monkeypatch)
    assert (status, out) == (2, "")
    assert re.fullmatch(r"toolselect: error: afile/comment\.md: cannot write the report: .+ "
                        r"\(choose a path in a folder you can write\)\n", err), err


# -- bad input --------------------------------------------------------------------------------------

RESULTS_FIX = "(pass the file that pytest --toolselect-json RESULTS.json writes"


def _bad(results: Path, kind: str) -> tuple[str, str]:
    """A bad input of one kind, written beside a real results file: (file name, expected message)."""
    folder = results.parent
    text = results.read_text()
    if kind == "missing":
        return "nothing.json", f"nothing.json: no such file {RESULTS_FIX})"
    if kind == "truncated":
        (folder / "cut.json").write_text(text[: len(text) // 2])
        return "cut.json", "cut.json:*: not valid JSON: * the file may be truncated " + RESULTS_FIX + ")"
    if kind == "baseline":
        (folder / "base.json").write_text(json.dumps({
            "schema_version": "toolselect_baseline.v1",
            "subject": json.loads(text)["subject"], "cases": {}}))
        return "base.json", ("base.json: this is a toolselect_baseline.v1 file (a baseline, --toolselect-"
                             f"baseline), not a run's results (tool_selection.v1) {RESULTS_FIX})")
    if kind == "preference":
        (folder / "pref.json").write_text(json.dumps({"schema_version": "tool_preference.v1"}))
        return "pref.json", ("pref.json: this is a tool_preference.v1 file (the preference probe's results), "
                             f"not a run's results (tool_selection.v1) {RESULTS_FIX}; it holds the "
                             "probe's results under 'preference')")
    if kind == "schema":
        document = json.loads(text)
        document["cases"][2]["status"] = "passed"
        (folder / "edited.json").write_text(json.dumps(document))
        return "edited.json", ("edited.json: at cases[2].status: the results file is malformed: 'passed' "
                               "is not one of ['held', 'flaky', 'failing', None] "
                               "(pass the file as pytest --toolselect-json wrote it)")
    if kind == "folder":
        (folder / "runs").mkdir()
        return "runs", f"runs: is a folder, not a results file {RESULTS_FIX})"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["missing", "truncated", "baseline", "preference", "schema", "folder"])
def test_bad_input_is_one_clear_line_and_status_2(
        results: Path, kind: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    name, message = _bad(results, kind)
    pattern = re.escape("toolselect: error: " + message).replace(r"\*", ".*") + "\n"
    # the installed command, as a user runs it
    done = toolselect("report", name, cwd=results.parent)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert "Traceback" not in done.stderr
    assert re.fullmatch(pattern, done.stderr), done.stderr
    # compare checks every file the same way, in this process (cheaper)
    status, out, err = run_main("compare", results.name, name, cwd=results.parent, capsys=capsys,
                                monkeypatch=monkeypatch)
    assert (status, out) == (2, "")
    assert re.fullmatch(pattern, err), err


def test_a_broken_probe_document_inside_is_refused_by_its_own_schema(results: Path) -> None:
    from pytest_toolselect.cli.saved_run import load_results
    from pytest_toolselect.messages.errors import ToolselectError

    document = json.loads(results.read_text())
    document["preference"] = {"schema_version": "tool_preference.v1"}  # no summary to render
    (results.parent / "edited.json").write_text(json.dumps(document))
    with pytest.raises(ToolselectError) as e:
        load_results(str(results.parent / "edited.json"))
    assert e.value.place == "preference" and "'subject' is a required property" in str(e.value)


# -- the command itself ------------------------------------------------------------------------------

def test_version_and_help(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import version

    done = toolselect("--version", cwd=pytester.path)
    assert (done.returncode, done.stdout) == (0, f"toolselect {version('pytest-toolselect')}\n")

    def run(*args: str) -> tuple[int, str, str]:
        return run_main(*args, cwd=pytester.path, capsys=capsys, monkeypatch=monkeypatch)

    status, out, _ = run("--help")
    assert status == 0
    assert re.search(r"report\s+render a saved run", out)
    assert re.search(r"compare\s+put several runs side by side", out)
    status, out, _ = run("report", "--help")
    assert status == 0 and "--markdown OUT" in out and "--html OUT" in out
    status, out, _ = run("compare", "--help")
    assert status == 0 and "RESULTS.json [RESULTS.json ...]" in out
    # no command: the help, as a usage error
    status, _, err = run()
    assert status == 2 and "usage: toolselect" in err


HEAVY = ("pytest", "_pytest", "litellm", "anthropic", "numpy", "mcp", "openai", "bm25s", "yaml", "httpx")


def test_the_command_imports_nothing_heavy(results: Path) -> None:
    copy_ = results.with_name("again.json")
    document = json.loads(results.read_text())
    copy_.write_text(json.dumps(copy.deepcopy(document)))
    code = ("import sys, json, contextlib, io\n"
            "from pytest_toolselect.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    codes = [main(['compare', {results.name!r}, 'again.json']),\n"
            f"             main(['report', {results.name!r}])]\n"
            f"print(json.dumps([codes, [m for m in {HEAVY!r} if m in sys.modules]]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=results.parent,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[0, 0], []]
