"""Ways pytest's machinery used to turn the gate's verdict into another exit status, each
run as a user runs it: a real xfail mark, a rerun plugin, warning filters, --runxfail."""

from __future__ import annotations

import gc
import json
import xml.etree.ElementTree as ET

import pytest

from conftest import FIND, OFFICERS, OUT_OF_SCOPE, PLANNED, Project, case

DECORATED_XFAIL = f'''
import pytest
from pytest_toolselect import case


@pytest.mark.xfail(reason="known to be shaky")
@case(question={FIND[1]!r}, expect_tool=["find_company"], why="finds")
def test_find(toolselect_result):
    pass
'''


def _scripted(project: Project, plan: dict[str, list[str | None]], **config: object) -> None:
    project.pytester.makeconftest(PLANNED)
    project.config(model="script/planned", **config)
    (project.path / "plan.json").write_text(json.dumps(plan))


def test_an_xfail_mark_on_a_decorated_case_cannot_hide_its_regression(project: Project) -> None:
    _scripted(project, {FIND[1]: ["lookup_vat"]})
    project.pytester.makepyfile(test_cases=DECORATED_XFAIL)
    project.baseline({"test_cases.py::test_find": {"status": "held"}}, subject={
        "provider": "script", "model": "script/planned"})
    result = project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=base.json",
                                        "--toolselect-json=out.json")
    # refused at the start, once, naming the item and the mark: no call is made
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert "test_cases.py::test_find (xfail)" in err and "gate's verdict" in err, err
    assert err.count("test_cases.py::test_find (xfail)") == 1
    assert not (project.path / "out.json").exists()


#: a model that answers wrong for its first `wrong` calls in this process, right after:
#: a rerun of a failing case would see only right answers
FIRST_WRONG = '''
from pytest_toolselect.providers import Turn
from pytest_toolselect.exchange.tool import ToolCall

CALLS = []

class FirstWrong:
    model = "script/first-wrong"
    fills_arguments = False  # it names tools only

    def subject(self):
        return {"provider": "script", "model": self.model}

    async def first_turn(self, request):
        CALLS.append(request.rep)
        tool = "lookup_vat" if len(CALLS) <= 5 else "find_company"
        return Turn(calls=(ToolCall(tool, {}),), usage={})

def pytest_toolselect_provider(model, config):
    if model == "script/first-wrong":
        return FirstWrong()
'''


def test_a_rerun_adds_its_reps_to_the_evidence_instead_of_replacing_it(project: Project) -> None:
    project.pytester.makeconftest(FIRST_WRONG)
    project.config(model="script/first-wrong", reps=5, adaptive="off")
    project.cases([case(*FIND)])
    project.baseline({"registry.toolselect.yaml::find": {"status": "held", "passes": 30, "reps": 30}},
                     subject={"provider": "script", "model": "script/first-wrong"})
    result = project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=base.json",
                                        "--reruns", "1", "--toolselect-json=out.json")
    doc = json.loads((project.path / "out.json").read_text())
    (entry,) = doc["cases"]
    # 0 of 5, then 5 of 5 on the rerun: 5 of 10 against 30 of 30 is a regression
    assert (entry["passes"], entry["reps"]) == (5, 10), entry
    assert entry["verdict"] == "regression"
    assert result.ret == 1, result.stdout.str()
    assert doc["verdict"]["blocking_cases"] == ["registry.toolselect.yaml::find"]
    outcomes = result.parseoutcomes()
    assert (outcomes.get("failed"), outcomes.get("rerun")) == (1, 1), outcomes


@pytest.mark.parametrize("filters", [["-W", "error"], ["-o", "filterwarnings=error"]],
                         ids=["W-error", "ini"])
def test_a_warning_filter_turns_no_notice_into_a_failure(project: Project, filters: list[str]) -> None:
    _scripted(project, {FIND[1]: ["find_company", "lookup_vat"], OFFICERS[1]: ["list_officers"]},
              reps=2, adaptive="off")
    # a flaky case (not blocking), and a forbidden tool no server offers (a notice)
    project.cases([case(*FIND), case(*OFFICERS, forbid_tools=["no_such_tool"])])
    project.baseline({"registry.toolselect.yaml::find": {"status": "held"},
                      "registry.toolselect.yaml::officers": {"status": "held"}},
                     subject={"provider": "script", "model": "script/planned"})
    # an in-process run shares this worker's heap: garbage an earlier test left (an unclosed
    # socket) collected during the run would be an unraisable warning, an error under the
    # filter, of whichever case ran then. It is not this run's: collect it first
    gc.collect()
    result = project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=base.json",
                                        "--toolselect-json=out.json", *filters)
    out = result.stdout.str()
    doc = json.loads((project.path / "out.json").read_text())
    assert doc["verdict"] == {"blocking": False, "reasons": [], "blocking_cases": [], "exit_status": 0}
    assert result.ret == 0, out
    result.assert_outcomes(passed=2, warnings=2)
    assert "Traceback" not in out and "pluggy/_" not in out and "error" not in out.lower(), out
    assert "ToolselectUnofferedWarning" in out and "ToolselectFlakyWarning" in out


def test_runxfail_shows_a_still_failing_case_as_the_gate_does(project: Project) -> None:
    _scripted(project, {OUT_OF_SCOPE[1]: ["find_company"]})
    project.cases([case(*OUT_OF_SCOPE)])
    project.baseline({"registry.toolselect.yaml::weather": {"status": "failing"}},
                     subject={"provider": "script", "model": "script/planned"})
    result = project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=base.json",
                                        "--runxfail", "--junitxml=out.xml", "--toolselect-json=out.json")
    assert result.ret == 0
    result.assert_outcomes(xfailed=1)
    (testcase,) = ET.parse(project.path / "out.xml").getroot().iter("testcase")
    skipped = testcase.find("skipped")
    assert skipped is not None and skipped.get("type") == "pytest.xfail", ET.tostring(testcase)
    assert json.loads((project.path / "out.json").read_text())["cases"][0]["outcome"] == "xfailed"
