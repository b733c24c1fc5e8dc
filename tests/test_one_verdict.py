"""One verdict that pytest's own machinery cannot turn green.

One regressed suite (case-file cases and decorated cases) runs under every mechanism that
can change a test's outcome (docs/gate.md, "What pytest cannot change"): each run exits 1
with the terminal, JUnit, the JSON and the markdown all saying so, or is refused at its
start with one usage error (exit 4) that names the cause. The baseline is recorded once for
the module; each row runs in its own copy of the project, in a subprocess, as users run it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conftest import FIND, NESTED_XDIST, OFFICERS, OUT_OF_SCOPE, PLANNED, Project, case

FIND_AGAIN = FIND[1] + " (the one in Leeds)"
VAT = "Check the VAT registration number GB123456789"
DECORATED = f'''
from pytest_toolselect import case


@case(question={FIND_AGAIN!r}, expect_tool=["find_company"], why="finds the company")
def test_find(toolselect_result):
    pass


@case(question={OFFICERS[1] + " please"!r}, expect_tool=["list_officers"], why="officers")
def test_officers(toolselect_result):
    pass
'''
HELD = {FIND[1]: ["find_company"], FIND_AGAIN: ["find_company"], OFFICERS[1]: ["list_officers"],
        OFFICERS[1] + " please": ["list_officers"], VAT: ["lookup_vat"],
        # out of scope, and the model calls a tool anyway: failing on the baseline too
        OUT_OF_SCOPE[1]: ["find_company"]}
#: both find cases regress (every rep); the VAT case wobbles (flaky: not blocking)
REGRESSED = {**HELD, FIND[1]: ["lookup_vat"], FIND_AGAIN: ["lookup_vat"],
             VAT: ["lookup_vat", "find_company"]}
BLOCKING = {"registry.toolselect.yaml::find", "test_dec.py::test_find"}
ARGS = ("--toolselect-baseline=base.json", "--toolselect-json=out.json",
        "--toolselect-markdown=out.md", "--junitxml=out.xml")


def _pytest(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # attribution off: the scripted model's regression with unchanged tools would be drift
    env = {**os.environ, "PYTEST_ADDOPTS": "-p no:hypothesispytest --toolselect-attribution=off"}
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=where, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The suite with its baseline recorded (every case as it was on main), regressed since."""
    project = Project(None, tmp_path_factory.mktemp("one_verdict"))
    (project.path / "conftest.py").write_text(PLANNED)
    project.config(model="script/planned", reps=2, adaptive="off")
    project.cases([case(*FIND), case(*OFFICERS), case("vat", VAT, ["lookup_vat"]),
                   case(*OUT_OF_SCOPE)])
    (project.path / "test_dec.py").write_text(DECORATED)
    (project.path / "plan.json").write_text(json.dumps(HELD))
    first = _pytest(project.path, "-p", "no:randomly", "--toolselect-baseline=base.json")
    assert first.returncode == 0, first.stdout + first.stderr
    assert len(json.loads((project.path / "base.json").read_text())["cases"]) == 6
    (project.path / "plan.json").write_text(json.dumps(REGRESSED))
    return project.path


def _copy(recorded: Path, where: Path) -> Path:
    shutil.copytree(recorded, where, ignore=shutil.ignore_patterns("__pycache__"))
    return where


#: a conftest that gives every test an outcome mark at collection
MARK_ALL = '''
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.{mark})
'''
#: marks applied while the test runs, which no check at the start can see
AT_RUN_TIME = '''
import pytest

@pytest.fixture(autouse=True)
def _late(request):
    {body}
'''

#: a conftest hook that has the last word on what pytest reports, unless the plugin keeps it
SESSION_PASSES = '''
import pytest

@pytest.hookimpl({opts})
def pytest_sessionfinish(session):
    {before}session.exitstatus = 0
'''
REPORT_PASSES = '''
import pytest

@pytest.hookimpl(hookwrapper=True{opts})
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome, report.longrepr = "passed", None
'''
STATUS_PASSES = '''
def pytest_report_teststatus(report):
    return "passed", ".", "PASSED"
'''
CALL_XFAILS = '''
import pytest

def pytest_runtest_call(item):
    pytest.xfail("the conftest says so")
'''
#: a conftest that runs the tests itself and leaves every one out
RUNS_NOTHING = '''
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item):
    return True
'''
#: a worker that dies in the middle of a regressed case: the model was asked (its setup
#: passed), its verdict never reported (in real life an OOM kill)
WORKER_DIES = '''
import os

def pytest_runtest_call(item):
    if item.nodeid == "test_dec.py::test_find":
        os._exit(1)
'''
#: a conftest that runs one regressed case itself and reports nothing
PROTOCOL_SKIPS_ONE = '''
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item):
    return True if item.nodeid == "registry.toolselect.yaml::find" else None
'''
#: a conftest that drops a regressed case from the items without deselecting it
DROPS_ONE = '''
def pytest_collection_modifyitems(items):
    items[:] = [i for i in items if i.nodeid != "registry.toolselect.yaml::find"]
'''
#: a conftest that takes the gate's record off one regressed case's reports
STRIPS_THE_RECORD = '''
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    if report.nodeid == "registry.toolselect.yaml::find" and hasattr(report, "toolselect"):
        del report.toolselect
'''

# (row id, extra files, pytest args, expected exit status)
ROWS: list[tuple[str, dict[str, str], tuple[str, ...], int]] = [
    ("plain", {}, (), 1),
    ("xfail-in-source", {"test_dec.py": DECORATED.replace(
        "@case(question", "@pytest.mark.xfail(reason='known')\n@case(question", 1).replace(
        "from pytest_toolselect", "import pytest\nfrom pytest_toolselect")}, (), 4),
    ("xfail-by-conftest", {"conftest_extra": MARK_ALL.format(mark="xfail")}, (), 4),
    ("skip-by-conftest", {"conftest_extra": MARK_ALL.format(mark="skip")}, (), 4),
    ("skipif-by-conftest", {"conftest_extra": MARK_ALL.format(mark="skipif(True, reason='x')")}, (), 4),
    ("xfail-mark-under-xdist", {"conftest_extra": MARK_ALL.format(mark="xfail")}, ("-n", "2"), 4),
    ("xfail-at-run-time", {"conftest_extra": AT_RUN_TIME.format(
        body="request.applymarker(pytest.mark.xfail(reason='late'))")}, (), 1),
    ("skip-at-run-time", {"conftest_extra": AT_RUN_TIME.format(body="pytest.skip('late')")}, (), 1),
    ("reruns", {}, ("--reruns", "1"), 1),
    ("repeat", {}, ("--count", "2"), 4),
    ("W-error", {}, ("-W", "error"), 1),
    ("filterwarnings-error", {"pytest.ini": "[pytest]\nfilterwarnings =\n    error\n"}, (), 1),
    ("runxfail", {}, ("--runxfail",), 1),
    ("xfail-strict", {}, ("-o", "xfail_strict=true"), 1),
    ("no-randomly", {}, ("-p", "no:randomly"), 1),
    ("no-own-dependencies", {}, ("-p", "no:xdist", "-p", "no:rerunfailures"), 1),
    ("exitfirst", {}, ("-x",), 1),
    ("maxfail", {}, ("--maxfail=1",), 1),
    ("exitfirst-xdist", {}, ("-x", "-n", "2"), 1),
    ("xfail-strict-and-runxfail", {}, ("-o", "xfail_strict=true", "--runxfail"), 1),
    ("no-warnings-plugin", {}, ("-p", "no:warnings", "--strict-markers"), 1),
    ("xfail-mark-by-subfolder-conftest-trylast", {
        "sub/conftest.py": MARK_ALL.replace(
            "def ", "@pytest.hookimpl(trylast=True)\ndef ").format(mark="xfail"),
        "sub/test_sub.py": DECORATED.replace("def test_", "def test_sub_")}, (), 4),
    ("xfail-in-the-body", {"test_dec.py": DECORATED.replace(
        "    pass\n", "    pytest.xfail('late')\n").replace(
        "from pytest_toolselect", "import pytest\nfrom pytest_toolselect")}, (), 1),
    ("xfail-by-runtest-call-hook", {"conftest_extra": CALL_XFAILS}, (), 1),
    ("makereport-hookwrapper-passes", {"conftest_extra": REPORT_PASSES.format(opts="")}, (), 1),
    ("makereport-hookwrapper-tryfirst-passes",
     {"conftest_extra": REPORT_PASSES.format(opts=", tryfirst=True")}, (), 1),
    ("teststatus-says-passed", {"conftest_extra": STATUS_PASSES}, (), 1),
    ("sessionfinish-sets-0", {"conftest_extra": SESSION_PASSES.format(opts="", before="")}, (), 1),
    ("sessionfinish-trylast-sets-0",
     {"conftest_extra": SESSION_PASSES.format(opts="trylast=True", before="")}, (), 1),
    ("sessionfinish-wrapper-sets-0", {"conftest_extra": SESSION_PASSES.format(
        opts="wrapper=True, tryfirst=True", before="yield\n    ")}, (), 1),
    ("worker-dies-xdist", {"conftest_extra": WORKER_DIES}, ("-n", "2"), 1),
    ("worker-dies-no-restart-xdist", {"conftest_extra": WORKER_DIES},
     ("-n", "2", "--max-worker-restart", "0"), 1),
    ("protocol-skips-one-xdist", {"conftest_extra": PROTOCOL_SKIPS_ONE}, ("-n", "2"), 1),
    ("protocol-skips-one", {"conftest_extra": PROTOCOL_SKIPS_ONE}, (), 1),
    ("dropped-by-conftest", {"conftest_extra": DROPS_ONE}, (), 1),
    ("dropped-by-conftest-xdist", {"conftest_extra": DROPS_ONE}, ("-n", "2"), 1),
    ("module-skipped-at-collection", {"test_dec.py": "import pytest\n\npytest.importorskip("
     "'no_such_module_here')\n" + DECORATED}, (), 1),
    ("module-skipped-at-collection-xdist", {"test_dec.py": "import pytest\n\npytest.importorskip("
     "'no_such_module_here')\n" + DECORATED}, ("-n", "2"), 1),
    ("record-stripped-from-reports", {"conftest_extra": STRIPS_THE_RECORD}, (), 1),
    ("record-stripped-from-reports-xdist", {"conftest_extra": STRIPS_THE_RECORD}, ("-n", "2"), 1),
    *[(f"xdist-{mode}", {}, ("-n", "2", "--dist", mode), 1)
      for mode in ("load", "loadscope", "loadfile", "loadgroup", "worksteal", "no")],
]


def _write(where: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        if name == "conftest_extra":
            (where / "conftest.py").write_text((where / "conftest.py").read_text() + text)
        else:
            (where / name).parent.mkdir(exist_ok=True)
            (where / name).write_text(text)


def _agree(where: Path, result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The terminal, JUnit, the JSON and the markdown all say what the exit status says."""
    out = result.stdout + result.stderr
    doc = json.loads((where / "out.json").read_text())
    blocking = result.returncode == 1
    assert doc["verdict"]["blocking"] is blocking, out
    assert doc["verdict"]["exit_status"] == result.returncode
    assert doc["provenance"]["exit_status"] == result.returncode
    markdown = (where / "out.md").read_text()
    assert markdown.startswith("## ❌ toolselect: blocking" if blocking else "## ✅"), markdown[:200]
    suite = ET.parse(where / "out.xml").getroot().find("testsuite")
    assert suite is not None
    failed_cases = {tc.get("classname", "").replace(".", "/") + "::" + tc.get("name", "")
                    for tc in suite.iter("testcase")
                    if tc.find("failure") is not None or tc.find("error") is not None}
    assert (int(suite.get("failures", 0)) + int(suite.get("errors", 0)) > 0) is blocking, out
    last = result.stdout.strip().splitlines()[-1]
    assert (" failed" in last or " error" in last) is blocking, last
    # every case the verdict blocks on is a failure in JUnit, and only those
    keys = set(doc["verdict"]["blocking_cases"])
    assert len(failed_cases) == len(keys), (failed_cases, keys)
    return doc


@pytest.mark.parametrize(("files", "args", "status"), [
    pytest.param(*r[1:], id=r[0], marks=NESTED_XDIST if "-n" in r[2] else ()) for r in ROWS])
def test_no_mechanism_turns_a_regressed_run_green(recorded: Path, tmp_path: Path, files: dict[str, str],
                                                  args: tuple[str, ...], status: int) -> None:
    where = _copy(recorded, tmp_path / "p")
    _write(where, files)
    result = _pytest(where, *ARGS, *args)
    out = result.stdout + result.stderr
    assert result.returncode == status, out
    if status == 4:
        # refused at the start, once, naming why: nothing ran, no report claims a verdict
        assert out.count("toolselect case") + out.count("the same case runs") >= 1, out
        assert not (where / "out.json").exists() and not (where / "out.md").exists(), out
        assert "plan.json" not in out
        return
    doc = _agree(where, result)
    by_key = {c["key"]: c for c in doc["cases"]}
    if "-x" in args or "--maxfail=1" in args:
        # stopped at the first failure: blocking, and the verdict says the run was partial
        assert set(doc["verdict"]["blocking_cases"]) & BLOCKING, doc["verdict"]
        assert any("stopped before every item ran" in r for r in doc["verdict"]["reasons"])
    else:
        assert set(doc["verdict"]["blocking_cases"]) >= BLOCKING, doc["verdict"]
        # the wobbling case is not blocking, whatever a warning filter does with its notice
        assert by_key["registry.toolselect.yaml::vat"]["verdict"] == "flaky"
        assert by_key["registry.toolselect.yaml::vat"]["outcome"] == "warned"
        assert by_key["registry.toolselect.yaml::weather"]["outcome"] == "xfailed"
        assert "registry.toolselect.yaml::vat" not in doc["verdict"]["blocking_cases"]
    if files.get("conftest_extra") == CALL_XFAILS or "pytest.xfail(" in files.get("test_dec.py", ""):
        # an xfail once the model was asked is no failure of the test's own: a held case passes
        officers = by_key["test_dec.py::test_officers"]
        assert officers["outcome"] == "passed", officers
    if args == ("--reruns", "1"):
        # the rerun's reps add to the evidence: 0 of 4, never the last attempt alone
        for key in BLOCKING:
            assert (by_key[key]["passes"], by_key[key]["reps"]) == (0, 4), by_key[key]


def test_runs_over_the_last_runs_cache_still_block(recorded: Path, tmp_path: Path) -> None:
    # each run after a failing one: --lf and --ff pick the failures from the cache, --sw
    # starts at the last one (one copy of the project, so the cost stays one run each)
    where = _copy(recorded, tmp_path / "p")
    assert _pytest(where, *ARGS).returncode == 1
    for select in (("--lf",), ("--sw",), ("--ff", "-x")):
        result = _pytest(where, *ARGS, *select)
        assert result.returncode == 1, (select, result.stdout)
        doc = _agree(where, result)
        assert set(doc["verdict"]["blocking_cases"]) & BLOCKING, select
        # nothing the filter left out is taken out of the baseline
        assert len(json.loads((where / "base.json").read_text())["cases"]) == 6


#: the model's provider fails on every call
PROVIDER_DOWN = '''

async def _down(self, request):
    raise RuntimeError("the provider is down")

Planned.first_turn = _down
'''
SETUP_SKIPS = '''
import pytest

def pytest_runtest_setup(item):
    pytest.skip("the conftest says so")
'''


@pytest.mark.parametrize(("files", "args"), [
    ({"conftest_extra": PROVIDER_DOWN}, ()),
    ({"conftest_extra": PROVIDER_DOWN}, ("--toolselect-update-baseline",)),
    ({"conftest_extra": SETUP_SKIPS}, ()),
    ({"conftest_extra": RUNS_NOTHING}, ()),
    pytest.param({"conftest_extra": RUNS_NOTHING}, ("-n", "2"), marks=NESTED_XDIST),
], ids=["provider-down", "provider-down-update", "setup-skips", "protocol-runs-nothing",
        "protocol-runs-nothing-xdist"])
def test_a_run_where_no_case_ran_fails_and_keeps_the_baseline(
        recorded: Path, tmp_path: Path, files: dict[str, str], args: tuple[str, ...]) -> None:
    # every case item is an error, shown as one everywhere; the baseline is left as it was
    where = _copy(recorded, tmp_path / "p")
    _write(where, files)
    before = (where / "base.json").read_bytes()
    result = _pytest(where, *ARGS, *args)
    assert result.returncode == 1, result.stdout + result.stderr
    doc = _agree(where, result)
    assert {c["outcome"] for c in doc["cases"]} == {"error"}, doc["cases"]
    assert len(doc["verdict"]["blocking_cases"]) == 6
    assert (where / "base.json").read_bytes() == before


def test_an_update_stopped_by_x_keeps_every_case_it_did_not_reach(recorded: Path, tmp_path: Path) -> None:
    # a plain test fails after the case file's items and -x stops the run before test_dec.py
    where = _copy(recorded, tmp_path / "p")
    (where / "test_a_plain.py").write_text("def test_plain():\n    assert False\n")
    result = _pytest(where, *ARGS, "--toolselect-update-baseline", "-x", "-p", "no:randomly")
    assert result.returncode == 1, result.stdout + result.stderr
    doc = json.loads((where / "out.json").read_text())
    assert doc["verdict"]["exit_status"] == 1 and doc["verdict"]["blocking"], doc["verdict"]
    assert any("stopped before every item ran" in r for r in doc["verdict"]["reasons"])
    assert not {c["key"] for c in doc["cases"]} & {"test_dec.py::test_find", "test_dec.py::test_officers"}
    kept = json.loads((where / "base.json").read_text())["cases"]
    assert {"test_dec.py::test_find", "test_dec.py::test_officers"} <= set(kept), sorted(kept)
    assert len(kept) == 6
