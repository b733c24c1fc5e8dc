"""The stored baseline is a value: read once per process, migrated to this run's keys as a
new value, never changed in place by whoever reads it."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import FIND, OFFICERS, WRONG, Project, case
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.gate.baseline import Baseline, build
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.records.baseline_entry import ENTRY_KEYS, CaseEntry, GroupEntry
from pytest_toolselect.run.lifecycle import migrate
from pytest_toolselect.run.state import RunState

segment = st.text(alphabet="abcdefgh_-", min_size=1, max_size=5)
keys = st.builds(lambda folder, name, cid: f"{folder}{name}.toolselect.yaml::{cid}",
                 st.sampled_from(["", "suite/", "repo/suite/", "other/"]), segment, segment)


entries = st.builds(
    lambda passes, extra, fp: CaseEntry(gate.status_of(passes, passes + extra), passes,
                                        passes + extra, case_fingerprint=fp),
    st.integers(0, 5), st.integers(0, 3), st.none() | st.sampled_from(["sha256:a", "sha256:b"]))


@given(stored=st.dictionaries(keys, entries, max_size=8), current=st.lists(keys, max_size=8),
       groups=st.lists(keys, unique=True, max_size=3))
def test_migrating_gives_a_new_value_and_leaves_the_stored_one_as_read(
        stored: dict[str, CaseEntry], current: list[str], groups: list[str]) -> None:
    base = Baseline(path=Path("base.json"), subject=Subject.from_json({"model": "m"}), cases=stored,
                    groups={k: GroupEntry.from_json({"kind": "group", "control": bool(i % 2)})
                            for i, k in enumerate(groups)})
    before = copy.deepcopy(base.to_json())
    state = RunState()
    state.collected.update(current)
    state.anchor_of.update({k.partition("::")[0]: Path("/repo/suite") for k in current})
    moved = migrate(state, base)
    assert base.to_json() == before
    # the same entries, in the same order, each under its old key or the current one
    assert list(moved.cases.values()) == list(base.cases.values())
    assert list(moved.groups.values()) == list(base.groups.values())
    for old, new in zip(base.cases, moved.cases, strict=True):
        assert new == old or (new in current and new.endswith(old.rpartition("/")[2]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        moved.cases = {}  # type: ignore[misc]



json_values = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
               | st.lists(st.integers(), max_size=2))


@given(extra=st.dictionaries(st.text(min_size=1).filter(lambda k: k not in ENTRY_KEYS),
                             json_values, max_size=4),
       control=st.booleans())
def test_a_group_entry_not_run_is_written_back_as_it_was_read(
        extra: dict[str, object], control: bool) -> None:
    # keys the schema allows beside the probe's own (a hand edit) are not lost on a rewrite
    stored = {"kind": "group", **extra, "control": control, "reps": 3}
    base = Baseline.from_json(Path("base.json"), {"subject": {"model": "m"}, "cases": {},
                                                  "groups": {"g.groups.json::g": stored}})
    rebuilt = build(base.subject, [], base)
    assert rebuilt.to_json()["groups"] == {"g.groups.json::g": stored}
    assert list(rebuilt.to_json()["groups"]["g.groups.json::g"]) == list(stored)
    assert isinstance(rebuilt.groups["g.groups.json::g"], GroupEntry)
    # what to_json gives is the caller's: changing it leaves the value as it was
    for value in rebuilt.to_json()["groups"]["g.groups.json::g"].values():
        if isinstance(value, list):
            value.append(0)
    assert rebuilt.to_json()["groups"] == {"g.groups.json::g": stored}


COUNTING = '''
import json, os
import pytest_toolselect.gate.baseline as stored_baseline

_load = stored_baseline.load
reads = []

def counted(path):
    reads.append(str(path))
    return _load(path)

stored_baseline.load = counted

def pytest_unconfigure(config):
    stored_baseline.load = _load
    with open(os.path.join(os.environ["READS_DIR"], f"{os.getpid()}.json"), "w") as f:
        json.dump(reads, f)
'''


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_each_process_reads_the_baseline_once_however_many_cases_look_it_up(
        project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory,
        workers: list[str]) -> None:
    project.config()
    project.cases([case(*FIND), case(*OFFICERS), case(*WRONG)])
    assert project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=base.json").ret == 0
    doc = json.loads((project.path / "base.json").read_text())
    # as an older version wrote it, from a parent folder: node ids, migrated on read
    doc["cases"] = {f"{project.path.name}/{k}": v for k, v in doc["cases"].items()}
    (project.path / "base.json").write_text(json.dumps(doc))
    (project.path / "conftest.py").write_text(COUNTING)
    reads = tmp_path_factory.mktemp("reads")
    monkeypatch.setenv("READS_DIR", str(reads))
    result = project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=base.json",
                                        *workers)
    out = result.stdout.str()
    assert result.ret == 0, out  # the wrong case still fails, as on the baseline: no block
    assert "2 held, 1 still failing" in out and "no longer a case" not in out, out
    per_process = [json.loads(p.read_text()) for p in reads.iterdir()]
    assert len(per_process) == (3 if workers else 1)
    assert all(r == [str(project.path / "base.json")] for r in per_process), per_process


def test_an_update_reads_it_again_only_under_the_lock(project: Project,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path_factory: pytest.TempPathFactory
                                                       ) -> None:
    project.config()
    project.cases([case(*FIND), case(*OFFICERS)])
    assert project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=base.json").ret == 0
    (project.path / "conftest.py").write_text(COUNTING)
    reads = tmp_path_factory.mktemp("reads")
    monkeypatch.setenv("READS_DIR", str(reads))
    result = project.pytester.runpytest("-p", "no:randomly", "--toolselect-baseline=base.json",
                                        "--toolselect-update-baseline")
    assert result.ret == 0, result.stdout.str()
    (only,) = [json.loads(p.read_text()) for p in reads.iterdir()]
    # at the start, then the file as it is on disk when the write holds the lock
    assert only == [str(project.path / "base.json")] * 2
