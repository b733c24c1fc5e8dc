"""What a baseline's history counts and what a report says of it: cached replays, restarted
histories, renamed cases, the config's system prompt and the labels of marginal drops."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import FIND, OFFICERS, PLANNED, Project, case

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

RIGHT, WRONG_TOOL = "find_company", "lookup_vat"
ARGS = ("--toolselect-baseline=base.json", "--toolselect-reps=3")
FIND_ID = "registry.toolselect.yaml::find"


def plan(project: Project, steps: dict[str, list[Any]]) -> None:
    (project.path / "plan.json").write_text(json.dumps(steps))


def planned(project: Project, **options: Any) -> None:
    project.config(model="script/planned", **options)
    project.pytester.makeconftest(PLANNED)


# -- the config's system prompt is gated per case, not part of the subject ----------------------


def test_an_edited_system_prompt_is_gated_not_refused(project: Project) -> None:
    planned(project, system="You answer questions about companies.")
    project.cases([case(*FIND), case(*OFFICERS)])
    plan(project, {FIND[1]: [RIGHT], OFFICERS[1]: ["list_officers"]})
    project.pytester.runpytest(*ARGS).assert_outcomes(passed=2)
    # the pull request rewrites the system prompt, and the model now picks the wrong tool
    planned(project, system="You answer questions about VAT numbers first.")
    plan(project, {FIND[1]: [WRONG_TOOL], OFFICERS[1]: ["list_officers"]})
    result = project.pytester.runpytest(*ARGS)
    assert result.ret == 1, result.stdout.str()
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "regressions (held on the baseline, fail now: these block): 1" in out
    assert "the tools offered or the system prompt changed" in out
    assert "system prompt" in out


def test_a_baseline_with_a_system_hash_in_its_subject_still_loads(project: Project) -> None:
    planned(project)
    project.cases([case(*FIND)])
    plan(project, {FIND[1]: [RIGHT]})
    project.baseline({FIND_ID: {"status": "held"}},
                     subject={"provider": "script", "model": "script/planned",
                              "system_hash": "sha256:0123456789abcdef"})
    result = project.pytester.runpytest("--toolselect-baseline=base.json")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=1)
    assert "baseline: compared with" in result.stdout.str()
