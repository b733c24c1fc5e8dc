"""No green without evidence: a case the run expected and never judged is named and blocks,
a subtest keeps its own outcome, and a worker that dies keeps xdist's own failure. Each
runs as users run it, in a subprocess over the regressed suite of test_one_verdict."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import anthropic  # noqa: F401  (imported before pytester snapshots sys.modules)
import pytest
import test_one_verdict
from fakeapi import FakeAPI, fake_api_fixture  # noqa: F401
from test_one_verdict import ARGS, DROPS_ONE, WORKER_DIES, _copy, _pytest, _write

from conftest import NESTED_XDIST, Project

GROUPS_EXAMPLE = Path(__file__).parent.parent / "examples" / "preference.groups.json"
#: the regressed suite, recorded once for this module too
recorded = test_one_verdict.recorded

#: a held decorated case whose body runs a failing subtest
SUBTEST_FAILS = '''
from pytest_toolselect import case


@case(question="Who are the directors and officers of company 01234567? please",
      expect_tool=["list_officers"], why="officers")
def test_officers(toolselect_result, subtests):
    with subtests.test(msg="the body's own check"):
        assert toolselect_result.case.id == "nothing like it"
'''


@NESTED_XDIST
def test_a_worker_that_dies_names_the_case_it_never_judged(recorded: Path, tmp_path: Path) -> None:
    where = _copy(recorded, tmp_path / "p")
    _write(where, {"conftest_extra": WORKER_DIES})
    result = _pytest(where, *ARGS, "-n", "2")
    out = result.stdout + result.stderr
    # xdist's own failure and exit status stand; nothing breaks inside the plugin
    assert result.returncode == 1, out
    assert "INTERNALERROR" not in out and "crashed while running 'test_dec.py::test_find'" in out
    doc = json.loads((where / "out.json").read_text())
    (lost,) = [c for c in doc["cases"] if c["key"] == "test_dec.py::test_find"]
    assert lost["outcome"] == "error" and lost["error"].startswith("the case did not run"), lost
    assert "worker died" in lost["error"], lost
    assert "test_dec.py::test_find" in doc["verdict"]["blocking_cases"]
    # counted once, as the case: not also as an item outside the gate
    assert not any("other item" in r for r in doc["verdict"]["reasons"]), doc["verdict"]
    markdown = (where / "out.md").read_text()
    assert markdown.startswith("## ❌"), markdown
    assert "test_dec.py::test_find" in markdown and "did not run" in markdown, markdown
    # the baseline keeps the case's entry as it was
    assert "test_dec.py::test_find" in json.loads((where / "base.json").read_text())["cases"]


@NESTED_XDIST
def test_a_plain_suite_keeps_xdists_worker_crashed_failure(pytester: pytest.Pytester) -> None:
    # no toolselect case at all: the plugin is merely installed
    pytester.makepyfile(test_plain="""
        import os

        def test_ok():
            pass

        def test_dies():
            os._exit(1)

        def test_ok_too():
            pass
    """)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:randomly")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "INTERNALERROR" not in out and "crashed while running" in out
    assert result.parseoutcomes().get("failed") == 1, out


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_dropped_case_is_named_as_not_run(recorded: Path, tmp_path: Path,
                                            args: tuple[str, ...]) -> None:
    where = _copy(recorded, tmp_path / "p")
    _write(where, {"conftest_extra": DROPS_ONE})
    result = _pytest(where, *ARGS, "--toolselect-html=out.html", *args)
    assert result.returncode == 1, result.stdout + result.stderr
    doc = json.loads((where / "out.json").read_text())
    (lost,) = [c for c in doc["cases"] if c["key"] == "registry.toolselect.yaml::find"]
    assert lost["outcome"] == "error" and "without being deselected" in lost["error"], lost
    assert "registry.toolselect.yaml::find" in doc["verdict"]["blocking_cases"]
    # named in the terminal (as an error of its own), the comment and the HTML report
    assert "ERROR registry.toolselect.yaml::find" in result.stdout, result.stdout
    assert "without being deselected" in (where / "out.md").read_text()
    html = (where / "out.html").read_text()
    assert "registry.toolselect.yaml::find" in html and "without being deselected" in html


def test_a_failing_subtest_in_a_case_fails_the_run(recorded: Path, tmp_path: Path) -> None:
    where = _copy(recorded, tmp_path / "p")
    _write(where, {"test_dec.py": SUBTEST_FAILS})
    # only the held cases: without the subtest this run passes
    result = _pytest(where, *ARGS, "-k", "officers", "-p", "no:randomly")
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "SUBFAILED" in out and "the body's own check" in out, out
    suite = ET.parse(where / "out.xml").getroot().find("testsuite")
    assert suite is not None and int(suite.get("failures", 0)) >= 1, out
    doc = json.loads((where / "out.json").read_text())
    assert doc["verdict"]["blocking"] and doc["verdict"]["exit_status"] == 1, doc["verdict"]
    # the case itself is the gate's: held, passed
    (officers,) = [c for c in doc["cases"] if c["key"] == "test_dec.py::test_officers"]
    assert officers["outcome"] == "passed", officers
    assert (where / "out.md").read_text().startswith("## ❌")



@pytest.mark.parametrize(("args", "status", "left_out"), [
    (("-k", "not find"), 0, {"registry.toolselect.yaml::find", "test_dec.py::test_find"}),
    (("--deselect", "registry.toolselect.yaml::find"), 1, {"registry.toolselect.yaml::find"}),
    pytest.param(("-k", "not find", "-n", "2"), 0,
                 {"registry.toolselect.yaml::find", "test_dec.py::test_find"}, marks=NESTED_XDIST),
], ids=["k", "deselect", "k-xdist"])
def test_a_run_narrowed_on_purpose_names_what_it_left_out_and_does_not_block_on_it(
        recorded: Path, tmp_path: Path, args: tuple[str, ...], status: int,
        left_out: set[str]) -> None:
    where = _copy(recorded, tmp_path / "p")
    result = _pytest(where, *ARGS, "--toolselect-html=out.html", *args)
    out = result.stdout + result.stderr
    assert result.returncode == status, out
    doc = json.loads((where / "out.json").read_text())
    assert set(doc["summary"]["not_run_in_this_run"]) == left_out, doc["summary"]
    assert not left_out & set(doc["verdict"]["blocking_cases"])
    assert not left_out & {c["key"] for c in doc["cases"]}
    line = next(line for line in result.stdout.splitlines() if "not run in this run" in line)
    assert all(key in line for key in left_out), line
    markdown = (where / "out.md").read_text()
    assert "not run in this run" in markdown and markdown.startswith("## ✅" if status == 0 else "## ❌")
    assert "not run in this run" in (where / "out.html").read_text()


def test_a_file_skipped_at_collection_in_a_narrowed_run_is_named_not_blocking(
        recorded: Path, tmp_path: Path) -> None:
    where = _copy(recorded, tmp_path / "p")
    (where / "test_dec.py").write_text("import pytest\n\npytest.importorskip('no_such_module_here')\n"
                                       + (where / "test_dec.py").read_text())
    result = _pytest(where, *ARGS, "-k", "officers")
    assert result.returncode == 0, result.stdout + result.stderr
    doc = json.loads((where / "out.json").read_text())
    assert {"test_dec.py::test_find", "test_dec.py::test_officers"} <= set(
        doc["summary"]["not_run_in_this_run"]), doc["summary"]
    # without -k the same skip blocks: its cases are expected and never judged
    blocked = _pytest(where, *ARGS)
    assert blocked.returncode == 1
    doc = json.loads((where / "out.json").read_text())
    assert {"test_dec.py::test_find", "test_dec.py::test_officers"} <= set(
        doc["verdict"]["blocking_cases"])
    assert "skipped at collection" in blocked.stdout


@pytest.mark.parametrize("args", [(), pytest.param(("-n", "2"), marks=NESTED_XDIST)],
                         ids=["serial", "xdist"])
def test_a_preference_group_that_never_ran_fails_the_run(
        project: Project, fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch,
        args: tuple[str, ...]) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    project.config({}, model="anthropic/claude-test", api_base=fake_api.url, retry_backoff=0)
    doc = json.loads(GROUPS_EXAMPLE.read_text())
    doc["groups"] = [g for g in doc["groups"] if g["id"] in ("G01", "G02")]
    (project.path / "probe.groups.json").write_text(json.dumps(doc))
    project.pytester.makeconftest('''
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item):
    return True if item.nodeid.endswith("::G02") else None
''')
    result = project.pytester.runpytest_subprocess("-p", "no:randomly", *args)
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "probe.groups.json::G02" in out and "the preference group did not run" in out, out
    result.assert_outcomes(passed=1, errors=1)
