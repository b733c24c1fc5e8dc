"""Features are plugin objects, as pytest's own are: each registered only when it applies,
owning its options' reading, its state and its hooks (not fields of the shared RunState)."""

from __future__ import annotations

import ast
import json
from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_architecture import ROOT

from conftest import FIND, PLANNED, Project, case
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


#: what turns each feature of a case's reps off, beside a named baseline and a model that
#: answers differently when asked again: (flags, adaptive reps registered, attribution registered)
CASE_STEPS = [
    ((), True, True),
    (("--toolselect-adaptive=off",), False, True),
    (("--toolselect-attribution=off",), True, False),
    (("--toolselect-update-baseline",), True, False),  # re-recorded: nothing is compared
    (("--toolselect-model=local/bm25",), False, True),  # deterministic: asked again, the same
    (("--toolselect-rule=legacy",), False, True),  # a rule with no test to repeat
]


@pytest.mark.parametrize(("flags", "adaptive", "attributed"), CASE_STEPS)
def test_adaptive_reps_and_attribution_are_plugin_objects_registered_when_they_apply(
        project: Project, flags: tuple[str, ...], adaptive: bool, attributed: bool) -> None:
    from pytest_toolselect.plugin.adaptive_reps import ADAPTIVE_REPS, AdaptiveReps
    from pytest_toolselect.plugin.attribution import ATTRIBUTION, Attribution

    project.config(model="script/planned")
    project.pytester.makeconftest(PLANNED)
    project.cases([case(*FIND)])
    config = project.pytester.parseconfigure("--toolselect-baseline=base.json",
                                             "--toolselect-attribution=on", *flags)
    found = config.pluginmanager.get_plugin("toolselect-adaptive-reps")
    assert (found is not None) == adaptive, flags
    assert config.stash.get(ADAPTIVE_REPS, None) is found
    if found is not None:
        assert isinstance(found, AdaptiveReps) and found.max_extra > 0
    found = config.pluginmanager.get_plugin("toolselect-attribution")
    assert (found is not None) == attributed, flags
    assert config.stash.get(ATTRIBUTION, None) is found
    if found is not None:  # its caps, read once from its option
        assert isinstance(found, Attribution) and found.cap(1000) == 450 and found.cap(2) == 180
    # no baseline named: neither applies
    bare = project.pytester.parseconfigure("--toolselect-attribution=on", *flags)
    assert not {"toolselect-adaptive-reps", "toolselect-attribution"} & {
        name for name, _ in bare.pluginmanager.list_name_plugin()}


def test_the_features_code_of_a_case_s_reps_is_reached_through_its_plugin_object() -> None:
    # the runner asks a case's plan, its extra reps and its attribution of the registered
    # objects (run/contracts.py's steps); no other module calls the feature's code itself
    entries = {"escalation": {"plan_for", "escalate"}, "attribution": {"attribute", "Spend"}}
    owners = {"escalation": ROOT / "plugin" / "adaptive_reps.py",
              "attribution": ROOT / "plugin" / "attribution.py"}
    callers: dict[str, set[str]] = {name: set() for name in entries}
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            for module, names in entries.items():
                if path.name == f"{module}.py" and path.parent.name == "run":
                    continue  # the feature's own module
                if (isinstance(node, ast.ImportFrom) and (node.module or "").endswith(module)
                        and {a.name for a in node.names} & names):
                    callers[module].add(str(path.relative_to(ROOT)))
                if (isinstance(node, ast.Attribute) and node.attr in names
                        and isinstance(node.value, ast.Name) and node.value.id == module):
                    callers[module].add(str(path.relative_to(ROOT)))
    assert callers == {m: {str(p.relative_to(ROOT))} for m, p in owners.items()}


def test_the_attribution_s_calls_are_its_plugin_object_s_state(project: Project) -> None:
    # the per-run cap counts the calls this process made: the object holds them, not the runner
    project.config(model="script/planned")
    project.pytester.makeconftest(PLANNED + SPENT)
    project.cases([case(*FIND)])
    (project.path / "plan.json").write_text(json.dumps({FIND[1]: [FIND[2][0]]}))
    first = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=3")
    assert first.ret == 0, first.stdout.str()
    assert not (project.path / "spent.json").exists()  # recorded: nothing compared
    (project.path / "plan.json").write_text(json.dumps({FIND[1]: ["list_officers"]}))
    second = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=3",
                                        "--toolselect-attribution=on", "--toolselect-json=out.json")
    assert second.ret in (0, 1), second.stdout.str()
    (record,) = json.loads((project.path / "out.json").read_text())["cases"]
    calls = record["attribution"]["calls"]
    assert calls > 0
    assert json.loads((project.path / "spent.json").read_text()) == calls


#: writes the registered attribution object's count of its calls as the run ends
SPENT = '''

def pytest_unconfigure(config):
    found = config.pluginmanager.get_plugin("toolselect-attribution")
    if found is not None and found.spend.calls:
        Path("spent.json").write_text(json.dumps(found.spend.calls))
'''


#: RunState's fields: what more than one module of the run and the plugin reads or writes
#: (a list that only shrinks; a feature's or a hooks object's own state is not here)
SHARED = {"records", "group_records", "lint_records", "collected", "case_fingerprints", "defined",
          "narrowed", "keys", "anchor_of", "baseline_notes", "baseline_written", "replaced_subject",
          "pytest_session", "report_problems", "other_failed"}


def test_run_state_holds_only_what_several_modules_share() -> None:
    names = {f.name for f in fields(RunState)}
    assert names <= SHARED, names - SHARED
    # each field is touched (as `state.<field>`, or by RunState's own methods for the
    # workers' hand-off) in at least two modules besides run/state.py
    users: dict[str, set[str]] = {name: set() for name in names}
    for path in ROOT.rglob("*.py"):
        if path.name == "state.py" and path.parent.name == "run":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr in names
                    and isinstance(node.value, (ast.Name, ast.Attribute))
                    and (node.value.id if isinstance(node.value, ast.Name)
                         else node.value.attr) == "state"):
                users[node.attr].add(str(path.relative_to(ROOT)))
    alone = {name: sorted(found) for name, found in users.items() if len(found) < 2}
    assert not alone, alone


_keys = st.sets(st.text(max_size=12), max_size=5)


@settings(max_examples=50, deadline=None)
@given(_keys, st.dictionaries(st.text(max_size=12), st.text(max_size=12), max_size=4),
       st.dictionaries(st.text(max_size=8), _keys, max_size=3),
       _keys, st.dictionaries(st.text(max_size=8), _keys, max_size=3))
def test_what_a_worker_s_collection_found_reaches_the_controller_whole(
        collected: set[str], fingerprints: dict[str, str], defined: dict[str, set[str]],
        had: set[str], had_defined: dict[str, set[str]]) -> None:
    worker = RunState(collected=collected, case_fingerprints=fingerprints, defined=defined)
    sent = json.loads(json.dumps(worker.dump_collection()))  # plain data, as xdist sends it
    controller = RunState(collected=set(had), defined={f: set(k) for f, k in had_defined.items()})
    controller.read_collection(sent)
    assert controller.collected == had | collected
    assert controller.case_fingerprints == fingerprints
    assert controller.defined == {f: had_defined.get(f, set()) | defined.get(f, set())
                                  for f in {*had_defined, *defined}}


def test_the_dry_run_bounds_what_the_registered_features_may_ask(project: Project) -> None:
    # the dry run reads each feature's bound from its object: a run that re-records the
    # baseline compares nothing, so attribution asks nothing (and the dry run says none)
    project.config(model="script/planned")
    project.pytester.makeconftest(PLANNED)
    project.cases([case(*FIND)])
    base = ("--toolselect-dry-run", "--toolselect-baseline=base.json", "--toolselect-reps=3",
            "--toolselect-attribution=on")
    compared = project.pytester.runpytest(*base)
    assert compared.ret == 0, compared.stdout.str()
    compared.stdout.fnmatch_lines(["*and up to 30 more if adaptive reps ask again*",
                                   "  and up to 90 calls if a case would block*"])
    updating = project.pytester.runpytest(*base, "--toolselect-update-baseline")
    assert updating.ret == 0, updating.stdout.str()
    updating.stdout.fnmatch_lines(["*and up to 30 more if adaptive reps ask again*"])
    assert "if a case would block" not in updating.stdout.str()
