"""Features are plugin objects, as pytest's own are: each registered only when it applies,
owning its options' reading, its state and its hooks (not fields of the shared RunState)."""

from __future__ import annotations

import ast
from dataclasses import fields

import pytest
from test_architecture import ROOT

from conftest import FIND, Project, case
from pytest_toolselect.run.state import RunState

#: feature -> (its plugin's registered name, the arguments that turn it on)
FEATURES = {
    "dry run": ("toolselect-dry-run", ("--toolselect-dry-run",)),
    "shard": ("toolselect-shard", ("--toolselect-shard=1/2",)),
}


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_a_feature_s_plugin_is_registered_only_when_it_applies(project: Project,
                                                               feature: str) -> None:
    name, args = FEATURES[feature]
    project.config(model="local/bm25")
    project.cases([case(*FIND)])
    on = project.pytester.parseconfigure(*args)
    assert on.pluginmanager.has_plugin(name), feature
    off = project.pytester.parseconfigure()
    assert not off.pluginmanager.has_plugin(name), feature
    # its state is its own: nothing of it is a field of the shared RunState
    assert not {f.name for f in fields(RunState)} & {"dry_run_lines", "exit_status", "start_problems"}


def test_the_plugin_decides_no_feature_by_its_option_in_the_session_hooks() -> None:
    # SessionHooks reads no feature's option: the feature's own object does (or is absent)
    tree = ast.parse((ROOT / "plugin" / "machinery.py").read_text(encoding="utf-8"))
    hooks = next(c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "SessionHooks")
    read = {n.attr for n in ast.walk(hooks) if isinstance(n, ast.Attribute)}
    read |= {n.value for n in ast.walk(hooks) if isinstance(n, ast.Constant)
             and isinstance(n.value, str)}
    assert not read & {"dry_run", "shard", "dry_run_lines"}, read & {"dry_run", "shard"}
