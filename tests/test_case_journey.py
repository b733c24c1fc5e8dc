"""One case's journey: the baseline read once into an immutable typed value that writes back
key for key, and a case fingerprinted, looked up and planned once on its way to its record."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIND, OFFICERS, PLANNED, WRONG, Project, case
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.gate.baseline import Baseline, load, write
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.positions.sourcemap import load_schema
from pytest_toolselect.records.baseline_entry import KEYS, CaseEntry
from pytest_toolselect.terms.check_names import CHECK_NAMES

REPO = Path(__file__).resolve().parent.parent
SCHEMA = load_schema("toolselect_baseline.v1")
fps = st.text(alphabet="0123456789abcdef", min_size=1, max_size=8).map(lambda h: f"sha256:{h}")
names = st.text(alphabet="abcdefgh_", min_size=1, max_size=6)
runs = st.tuples(st.integers(1, 9), st.integers(0, 9)).map(lambda r: [min(r[0], r[1]), r[0]])


@st.composite
def entry_json(draw: st.DrawFn) -> dict[str, Any]:
    """A baseline entry as a file may hold it: the required keys, any of the others (null
    first_tool or absent alike), in any order."""
    passes, reps = draw(runs)
    optional = {
        "first_tool": draw(st.none() | names),
        "failing_checks": draw(st.lists(st.sampled_from(CHECK_NAMES), unique=True, max_size=3)),
        "case_fingerprint": draw(fps), "tools_fingerprint": draw(fps),
        "history": [*draw(st.lists(runs, max_size=4)), [passes, reps]],
        "checks": draw(st.lists(st.sampled_from(CHECK_NAMES), unique=True)),
    }
    kept = draw(st.lists(st.sampled_from(sorted(optional)), unique=True))
    data = {"status": str(gate.status_of(passes, reps)), "passes": passes, "reps": reps,
            **{k: optional[k] for k in kept}}
    order = draw(st.permutations(sorted(data)))
    return {k: data[k] for k in order}


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(names.map(lambda n: f"cases.toolselect.yaml::{n}"), unique=True,
                         max_size=5))
    doc: dict[str, Any] = {"schema_version": "toolselect_baseline.v1",
                           "subject": {"provider": "local", "model": "local/bm25"},
                           "cases": {k: draw(entry_json()) for k in keys}}
    if draw(st.booleans()):
        doc["groups"] = {"g.toolselect.groups.yaml::g": {"kind": "group", "control": True}}
    if draw(st.booleans()):
        doc["lint"] = {"registry": draw(st.lists(names, max_size=2))}
    if draw(st.booleans()):
        doc["toolsets"] = {draw(fps): {"find": draw(fps)}}
        doc["descriptions"] = {draw(fps): "Find it."}
    return doc


@given(entry_json())
def test_an_entry_round_trips_key_for_key(data: dict[str, Any]) -> None:
    entry = CaseEntry.from_json(data)
    assert entry.to_json() == data and list(entry.to_json()) == list(data)
    assert CaseEntry.from_json(entry.to_json()) == entry
    assert entry.runs == [tuple(r) for r in data.get("history") or [[data["passes"], data["reps"]]]]


@settings(max_examples=60, deadline=None)
@given(doc=documents())
def test_a_baseline_round_trips_through_its_value_and_its_file(
        doc: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)  # the strategy draws valid files
    path = tmp_path_factory.mktemp("b") / "base.json"
    value = Baseline.from_json(path, doc)
    assert value.to_json() == doc
    assert Baseline.from_json(path, value.to_json()) == value
    # the document as json writes it, beside what the value writes
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    loaded = load(path)
    assert loaded is not None and loaded == value
    # written again from the value, the file is byte for byte the same
    before = path.read_bytes()
    write(path, loaded)
    assert path.read_bytes() == before


def test_old_baseline_files_still_load_and_write_back_as_they_were(tmp_path: Path) -> None:
    example = REPO / "examples" / "baseline.json"
    loaded = load(example)
    assert loaded is not None and loaded.to_json() == json.loads(example.read_text())
    # an entry from before the history, the checks list and the fingerprints
    old = {"schema_version": "toolselect_baseline.v1", "subject": {"provider": "local",
                                                                   "model": "local/bm25",
                                                                   "system_hash": None},
           "cases": {"a.toolselect.yaml::c": {"status": "flaky", "passes": 1, "reps": 2}}}
    (tmp_path / "old.json").write_text(json.dumps(old))
    got = load(tmp_path / "old.json")
    assert got is not None and got.to_json() == old
    entry = got.cases["a.toolselect.yaml::c"]
    assert entry.history is None and entry.runs == [(1, 2)] and entry.checks is None
    assert entry.evaluated == gate.evaluated_checks(entry) and "valid_arguments" not in entry.evaluated


def test_the_loaded_baseline_cannot_be_changed_by_whoever_reads_it() -> None:
    loaded = load(REPO / "examples" / "baseline.json")
    assert loaded is not None and loaded.cases
    key, entry = next(iter(loaded.cases.items()))
    with pytest.raises(TypeError):
        loaded.cases[key] = entry  # type: ignore[index]
    with pytest.raises(TypeError):
        del loaded.cases[key]  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        loaded.subject.fields["model"] = "another"  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.subject.fields = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        loaded.groups["g"] = {}  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.passes = 0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.cases = {}  # type: ignore[misc]
    # a value given a dict keeps its own copy: changing the dict later changes nothing
    cases = {key: entry}
    made = Baseline(path=Path("b.json"), subject=Subject.from_json({"model": "m"}), cases=cases)
    cases.clear()
    assert list(made.cases) == [key]


def test_an_entry_is_refused_with_keys_the_file_cannot_hold() -> None:
    with pytest.raises(ValueError, match="unknown"):
        CaseEntry("held", 1, 1, keys=(*KEYS, "extra"))
    with pytest.raises(ValueError, match="missing"):
        CaseEntry("held", 1, 1, keys=("status", "passes"))
    with pytest.raises(TypeError, match="CaseEntry"):
        Baseline(path=Path("b.json"), subject=Subject.from_json({}),
                 cases={"k": {"status": "held"}})  # type: ignore[dict-item]


#: counts, per case, what the plugin computes about it on its way to its record
COUNTING = '''
import json, os
from collections import Counter
import pytest_toolselect.run.escalation as escalation
import pytest_toolselect.run.baseline_access as access
from pytest_toolselect.inputs.cases import Case

counts = {"fingerprint": Counter(), "plan": Counter(), "identity": Counter()}
_data, _plan, _identity = Case.fingerprint_data, escalation.plan_for, access.BaselineAccess.identity

def fingerprint_data(self):
    counts["fingerprint"][self.id] += 1
    return _data(self)

def plan_for(parts, *args):
    counts["plan"][str(args[0].nodeid if hasattr(args[0], "nodeid") else args[0])] += 1
    return _plan(parts, *args)

def identity(self, nodeid, case):
    counts["identity"][nodeid] += 1
    return _identity(self, nodeid, case)

Case.fingerprint_data = fingerprint_data
escalation.plan_for = plan_for
access.BaselineAccess.identity = identity

def pytest_unconfigure(config):
    # the package is the outer suite's too (an in-process run): put it back as it was
    Case.fingerprint_data, escalation.plan_for = _data, _plan
    access.BaselineAccess.identity = _identity
    with open(os.path.join(os.environ["COUNTS_DIR"], f"{os.getpid()}.json"), "w") as f:
        json.dump(counts, f)
'''

def test_each_case_is_fingerprinted_looked_up_and_planned_once(
        project: Project, monkeypatch: pytest.MonkeyPatch,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    project.config(model="script/planned")
    cases = [FIND, OFFICERS, WRONG]
    project.cases([case(*c) for c in cases])
    # two cases miss once (asked again by adaptive reps); WRONG always picks the wrong tool
    (project.path / "plan.json").write_text(json.dumps({
        FIND[1]: ["find_company", "list_officers"] + ["find_company"] * 40,
        OFFICERS[1]: ["list_officers", "find_company"] + ["list_officers"] * 40,
        WRONG[1]: ["find_company"]}))
    project.pytester.makeconftest(PLANNED)
    subject = {"provider": "script", "model": "script/planned"}
    held = {"status": "held", "passes": 3, "reps": 3, "history": [[3, 3]] * 4 + [[2, 3]]}
    # FIND is stored under the id it had before a rename: followed by its content
    first = project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=seed.json",
                                       "--toolselect-reps=1", "--toolselect-adaptive=off")
    assert first.ret in (0, 1), first.stdout.str()
    seed = json.loads((project.path / "seed.json").read_text())["cases"]
    find_fp = seed["registry.toolselect.yaml::find"]["case_fingerprint"]
    project.pytester.makeconftest(PLANNED + COUNTING)
    project.baseline({"registry.toolselect.yaml::find-old": {**held, "case_fingerprint": find_fp},
                      "registry.toolselect.yaml::officers": held,
                      "registry.toolselect.yaml::wrong": held}, subject=subject)
    counts_dir = tmp_path_factory.mktemp("counts")
    monkeypatch.setenv("COUNTS_DIR", str(counts_dir))
    result = project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=base.json",
                                        "--toolselect-reps=3", "--toolselect-json=out.json")
    out = result.stdout.str()
    doc = json.loads((project.path / "out.json").read_text())
    by_key = {c["nodeid"]: c for c in doc["cases"]}
    # the journey did what it does: asked again, followed the rename, judged every case
    assert any("escalation" in c for c in by_key.values()), out
    assert by_key["registry.toolselect.yaml::find"]["renamed_from"] == (
        "registry.toolselect.yaml::find-old"), out
    assert by_key["registry.toolselect.yaml::wrong"]["verdict"] == "regression", out
    (counts,) = [json.loads(p.read_text()) for p in counts_dir.iterdir()]
    ids = [c[0] for c in cases]
    nodeids = [f"registry.toolselect.yaml::{i}" for i in ids]
    assert counts["fingerprint"] == dict.fromkeys(ids, 1), counts
    assert counts["identity"] == dict.fromkeys(nodeids, 1), counts
    assert counts["plan"] == dict.fromkeys(nodeids, 1), counts
