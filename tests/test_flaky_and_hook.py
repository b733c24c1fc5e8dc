"""Flaky cases and the provider hook, with a scripted provider from the user's conftest."""

from __future__ import annotations

import pytest

from conftest import FIND, Project, case

SCRIPTED = '''
from pytest_toolselect.providers import Turn
from pytest_toolselect.exchange.tool import ToolCall

class Alternating:
    """Answers rep 0 with the first tool, then the second: a model that wobbles."""
    model = "script/alternating"
    #: it picks a tool and fills no arguments (valid_arguments has nothing to check)
    fills_arguments = False

    def subject(self):
        return {"provider": "script", "model": self.model}

    async def first_turn(self, request):
        tool = request.tools[request.rep % 2]
        return Turn(calls=(ToolCall(tool.name, {}),))

def pytest_toolselect_provider(model, config):
    if model == "script/alternating":
        return Alternating()
'''


def test_flaky_passes_with_a_warning(project: Project) -> None:
    project.config(model="script/alternating")
    project.pytester.makeconftest(SCRIPTED)
    project.cases([case(*FIND)])
    result = project.pytester.runpytest("--toolselect-reps=3")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines([
        "*ToolselectFlakyWarning*registry.toolselect.yaml::find*",
        "*flaky (reps disagree): 1*",
        "*passes:   2/3 reps*",
    ])
    assert result.ret == 0


def test_fail_on_flaky(project: Project) -> None:
    project.config(model="script/alternating")
    project.pytester.makeconftest(SCRIPTED)
    project.cases([case(*FIND)])
    result = project.pytester.runpytest("--toolselect-reps=3", "--toolselect-fail-on-flaky")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*called:   find_company()   (x2 of 3 reps)*",
                                 "*called:   list_officers()   (x1 of 3 reps)*"])


def test_held_on_baseline_then_flaky_is_not_a_regression(project: Project) -> None:
    project.config(model="script/alternating")
    project.pytester.makeconftest(SCRIPTED)
    project.cases([case(*FIND)])
    project.baseline({"registry.toolselect.yaml::find": {"status": "held"}},
                     subject={"provider": "script", "model": "script/alternating",
                              "system_hash": None})
    result = project.pytester.runpytest("--toolselect-reps=3", "--toolselect-baseline=base.json")
    result.assert_outcomes(passed=1, warnings=1)


def test_unknown_model_is_one_usage_error_at_the_start(project: Project) -> None:
    project.config(model="nothing-without-a-provider")
    project.cases([case(*FIND)])
    result = project.pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*model 'nothing-without-a-provider': a model string is*"])
