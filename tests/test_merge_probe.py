"""`toolselect merge` of shards that ran preference groups: the one run's probe, to the bit.

The shards are real pytest runs of a suite with cases and the example groups file,
answered by a conftest model whose choices depend on the tools offered (so effects,
position bias and agreement vary across groups), and the merge is the real command.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import Project, case
from pytest_toolselect import cli
from pytest_toolselect.cli.merge import REFUSED
from pytest_toolselect.exchange.tool import ToolCall
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.inputs.groups import Group, load_groups_file
from pytest_toolselect.probe.comparison import baseline_entries, compare
from pytest_toolselect.probe.preference import call_record, cells_for, summarize
from pytest_toolselect.providers import Turn
from pytest_toolselect.records.baseline_entry import GroupEntry
from pytest_toolselect.records.probe_call import ProbeCall
from pytest_toolselect.report.merge_probe import merge_preference
from pytest_toolselect.report.probe_report import GroupGate, build_document

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "preference.groups.json"

#: a model that leans: on a hash of the request (and a salt file beside it, to move its
#: leaning between a baseline and a later run) it calls the first-listed tool, the last,
#: both, a distractor or nothing; a description that says IMPORTANT pulls it more often
LEANING = '''
import hashlib
from pathlib import Path
from pytest_toolselect.providers import Turn
from pytest_toolselect.exchange.tool import ToolCall

SALT = Path(__file__).parent / "salt.txt"

class Leaning:
    def __init__(self, model):
        self.model = model

    def subject(self):
        return {"provider": "script", "model": self.model}

    async def first_turn(self, request):
        salt = SALT.read_text() if SALT.exists() else ""
        tools = list(request.tools)
        text = "|".join([salt, request.question, str(request.rep),
                         *(t.name + t.description for t in tools)])
        roll = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") % 100
        loud = [t.name for t in tools if "IMPORTANT" in t.description]
        if loud and roll < 60:
            names = loud[:1]
        elif roll < 45:
            names = [tools[0].name]
        elif roll < 72:
            names = [tools[-1].name]
        elif roll < 80:
            names = [tools[0].name, tools[-1].name]
        elif roll < 88 and len(tools) > 2:
            names = [tools[1].name]
        else:
            names = []
        return Turn(calls=tuple(ToolCall(n, {}) for n in names),
                    usage={"input_tokens": 100 + roll, "output_tokens": 10},
                    cost_usd=0.0001 * (1 + roll % 7))

def pytest_toolselect_provider(model, config):
    if model.startswith("script/leaning"):
        return Leaning(model)
'''

FIND, OFFICERS = "find_company", "list_officers"


def _suite(project: Project, groups: list[str] | None = None, cases: bool = True) -> Path:
    """A suite in its own folder: the leaning model, a few cases and the example groups."""
    folder = project.path / "suite"
    folder.mkdir()
    (folder / "conftest.py").write_text(LEANING)
    suite = Project(None, folder)
    suite.config(model="script/leaning")
    if cases:
        suite.cases([case(f"c{n}", f"Find the company called Firm {n}", [FIND]) for n in range(4)]
                    + [case("o1", "Who are the officers of company 01234567?", [OFFICERS])])
    doc = json.loads(EXAMPLE.read_text())
    if groups is not None:
        doc["groups"] = [g for g in doc["groups"] if g["id"] in groups]
    (folder / "probe.groups.json").write_text(json.dumps(doc))
    return folder


def _salt(folder: Path, text: str) -> None:
    (folder / "salt.txt").write_text(text)


def _run(project: Project, *args: str) -> pytest.RunResult:
    return project.pytester.runpytest("-p", "no:cacheprovider", *args)


def _merge(paths: list[Path], *args: str) -> int:
    return cli.main(["merge", *map(str, paths), *args])


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _shards(project: Project, where: list[str], common: list[str], n: int = 2,
            name: str = "shard") -> list[Path]:
    out = []
    for k in range(1, n + 1):
        path = project.path / f"{name}-{k}.json"
        shard = _run(project, *where, *common, f"--toolselect-shard={k}/{n}", f"--toolselect-json={path}")
        assert shard.ret in (0, 1), shard.stdout.str()
        out.append(path)
    return out


def test_two_shards_merged_give_the_unsharded_runs_probe_verdict_comment_and_baseline(
        project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _suite(project)
    base = project.path / "base.json"
    common = [str(folder), f"--toolselect-baseline={base}", "--toolselect-reps=2", "--toolselect-seed=7",
              "--toolselect-min-effect-change=0.05"]
    _salt(folder, "main")
    recorded = _run(project, *common, "--toolselect-update-baseline")
    assert recorded.ret == 0, recorded.stdout.str()
    assert len(_read(base)["groups"]) == 17

    _salt(folder, "pull request")  # the model leans another way now
    whole = _run(project, *common, f"--toolselect-json={project.path / 'whole.json'}",
                 f"--toolselect-markdown={project.path / 'whole.md'}")
    shards = _shards(project, [], common)
    probes = [_read(p)["preference"] for p in shards]
    assert all(p is not None and p["groups"] for p in probes)  # each shard ran some groups
    assert sum(len(p["groups"]) for p in probes) == 17

    status = _merge(shards, "--json", str(project.path / "merged.json"),
                    "--markdown", str(project.path / "merged.md"),
                    "--html", str(project.path / "merged.html"))
    capsys.readouterr()
    merged, alone = _read(project.path / "merged.json"), _read(project.path / "whole.json")
    assert status == whole.ret
    # the probe whole: every call in the run's order, the summary with its bootstrap CIs,
    # the per-domain slices and the comparison with the baseline, equal to the last bit
    assert merged["preference"] == alone["preference"]
    summary, comparison = merged["preference"]["summary"], merged["preference"]["comparison"]
    # and they are figures worth comparing: CIs with width, groups on both sides
    assert any(e["ci"][0] < e["ci"][1] for e in summary["factor_effects"].values())
    assert summary["same_choice_rate"] is not None and 0 < summary["same_choice_rate"] < 1
    assert comparison is not None and comparison["effect_changes"]
    for key in ("verdict", "summary", "cases", "subject", "settings"):
        assert merged[key] == alone[key], key
    assert merged["cost"]["probe_usd"] == alone["cost"]["probe_usd"] > 0
    assert merged["cost"]["total_usd"] == pytest.approx(alone["cost"]["total_usd"])
    assert (project.path / "merged.md").read_text() == (project.path / "whole.md").read_text()
    assert "Preference probe" in (project.path / "merged.md").read_text()
    assert 'id="preference-card"' in (project.path / "merged.html").read_text()

    # on main: the merged baseline update is the unsharded run's, groups included
    shutil.copy(base, project.path / "base-merged.json")
    update = _run(project, *common, "--toolselect-update-baseline")
    assert update.ret == 0, update.stdout.str()
    assert _merge(shards, "--update-baseline", str(project.path / "base-merged.json")) in (0, 1)
    capsys.readouterr()
    assert _read(project.path / "base-merged.json") == _read(base)


def test_shards_run_from_the_suites_folder_merge_from_a_third_into_the_runs_figures(
        project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = _suite(project, cases=False)
    base = project.path / "base.json"
    common = [f"--toolselect-baseline={base}", "--toolselect-reps=2", "--toolselect-seed=7",
              "--toolselect-min-effect-change=0.05"]
    _salt(folder, "main")
    assert _run(project, str(folder), *common, "--toolselect-update-baseline").ret == 0
    _salt(folder, "pull request")
    whole = _run(project, str(folder), *common, f"--toolselect-json={project.path / 'whole.json'}")

    # the shards start in the suite's own folder, as another CI job might
    monkeypatch.chdir(folder)
    shards = _shards(project, ["--rootdir", str(folder)], common)
    monkeypatch.chdir(tmp_path_factory.mktemp("merge-job"))
    assert _merge(shards, "--json", "merged.json") == whole.ret == 0
    capsys.readouterr()
    # a shard's own probe gate, over its share of the groups, blocked that job; over every
    # group the changes do not block, and the merge follows the whole run, not the shard
    own = [_read(p) for p in shards]
    assert [d["provenance"]["failed_items"] for d in own] == [0, 0]
    assert 1 in [d["provenance"]["exit_status"] for d in own]
    assert any(d["preference"]["comparison"]["blocking"] for d in own)
    merged, alone = _read(Path("merged.json"))["preference"], _read(project.path / "whole.json")["preference"]
    assert merged["summary"] == alone["summary"]
    assert merged["comparison"] == alone["comparison"] and merged["comparison"] is not None
    assert merged["results"] == alone["results"]
    assert [r["key"] for r in merged["groups"]] == [r["key"] for r in alone["groups"]]


@pytest.fixture
def small(project: Project) -> Project:
    _suite(project, groups=["G01", "G02", "G03", "G04", "G05", "C01", "C02"], cases=False)
    return project


def _refused(paths: list[Path], capsys: pytest.CaptureFixture[str]) -> str:
    assert _merge(paths) == REFUSED
    return capsys.readouterr().err


def test_a_plain_test_that_fails_in_a_shard_fails_the_merge(
        small: Project, capsys: pytest.CaptureFixture[str]) -> None:
    (small.path / "suite" / "test_plain.py").write_text("def test_no():\n    assert False\n")
    assert _run(small, "suite").ret == 1
    shards = _shards(small, ["suite"], [])
    assert sorted(_read(p)["provenance"]["failed_items"] for p in shards) == [0, 1]
    assert _merge(shards, "--json", str(small.path / "merged.json")) == 1
    capsys.readouterr()
    assert _read(small.path / "merged.json")["provenance"]["failed_items"] == 1


def test_merge_refuses_a_group_in_two_shards_naming_both_files(
        small: Project, capsys: pytest.CaptureFixture[str]) -> None:
    one, two = _shards(small, ["suite"], [])
    copy = small.path / "again.json"
    shutil.copy(one, copy)
    err = _refused([one, two, copy], capsys)
    assert "is given twice" in err and "again.json" in err and "shard-1.json" in err
    # whole runs (no shard K/N) given with --partial: the group itself is found twice
    for path in (one, copy):
        doc = _read(path)
        del doc["shard"]
        path.write_text(json.dumps(doc))
    assert _merge([one, copy], "--partial") == REFUSED
    err = capsys.readouterr().err
    assert "ran in two shards" in err and "again.json" in err and "shard-1.json" in err


def test_merge_refuses_shards_with_another_seed(small: Project, capsys: pytest.CaptureFixture[str]) -> None:
    one = _shards(small, ["suite"], ["--toolselect-seed=1"], name="seed1")[0]
    two = _shards(small, ["suite"], ["--toolselect-seed=2"], name="seed2")[1]
    err = _refused([one, two], capsys)
    assert "seed2-2.json" in err and "seed" in err and "--toolselect-seed" in err


def test_merge_refuses_shards_of_another_model(small: Project, capsys: pytest.CaptureFixture[str]) -> None:
    one = _shards(small, ["suite"], [])[0]
    two = _shards(small, ["suite"], ["--toolselect-model=script/leaning-2"], name="other")[1]
    err = _refused([one, two], capsys)
    assert "other-2.json" in err and "subject differs" in err


def test_merge_refuses_a_probe_written_before_shards_could_join(
        small: Project, capsys: pytest.CaptureFixture[str]) -> None:
    one, two = _shards(small, ["suite"], [])
    old = _read(two)
    del old["preference"]["comparison"]
    for row in old["preference"]["groups"]:
        del row["key"], row["order"]
    two.write_text(json.dumps(old))
    err = _refused([one, two], capsys)
    assert "shard-2.json" in err and "older version" in err and "run the shards again" in err


# --- the rule, over generated runs: any split into shards merges into the unsharded probe ---

GROUPS = load_groups_file(EXAMPLE)
#: few resamples keep the property fast; the bootstrap is the same code at any count
RESAMPLES = 200


def _calls(groups: list[Group], reps: int, rng: random.Random) -> list[ProbeCall]:
    """Every cell x rep of each group, in the run's order, answered at random: a twin, both,
    a distractor, nothing, a failed call or one the cost cap stopped."""
    out = []
    for g in groups:
        for cell in cells_for(g):
            for rep in range(reps):
                names = [t.name for t in cell.tools]
                pick = rng.choice(["first", "last", "both", "middle", "none", "error", "skip"])
                if pick in ("error", "skip"):
                    out.append(call_record(cell, g, rep, error="boom" if pick == "error" else None,
                                           skipped=pick == "skip"))
                    continue
                called = {"first": names[:1], "last": names[-1:], "both": [names[0], names[-1]],
                          "middle": names[1:2], "none": []}[pick]
                out.append(call_record(cell, g, rep, Turn(
                    calls=tuple(ToolCall(n) for n in called), usage={"input_tokens": 10},
                    cost_usd=rng.choice([None, rng.random() / 1000]))))
    return [ProbeCall.from_json(c) for c in json.loads(json.dumps([c.to_json() for c in out]))]


def _document(groups: list[Group], calls: list[ProbeCall], stored: dict[str, GroupEntry],
              seed: int, mec: float | None) -> dict[str, Any]:
    """The probe document a run of these groups writes (its calls in the run's order)."""
    ids = {g.id for g in groups}
    mine = [c for c in calls if c.group in ids]
    summary = summarize(mine, groups, seed, RESAMPLES)
    current = {f"probe.groups.json::{k}": v for k, v in baseline_entries(summary, groups).items()}
    comparison = (compare(stored, current, seed=seed, resamples=RESAMPLES, min_effect_change=mec)
                  if stored else None)
    rows = {g.id: GroupGate(key=f"probe.groups.json::{g.id}", order=GROUPS.index(g),
                            entry=current.get(f"probe.groups.json::{g.id}"),
                            baseline=stored.get(f"probe.groups.json::{g.id}")) for g in groups}
    return json.loads(json.dumps(build_document(
        mine, summary, groups, max_tokens=64, reps=2, subject=Subject.from_json({"model": "m"}), gate=rows,
        comparison=comparison)))


@settings(max_examples=25, deadline=None, database=None)
@given(st.lists(st.integers(0, 3), min_size=len(GROUPS), max_size=len(GROUPS)),
       st.integers(0, 2**32 - 1), st.integers(0, 2**16), st.integers(1, 2),
       st.sampled_from([None, 0.0, 0.1]), st.booleans(), st.randoms(use_true_random=False))
def test_any_split_into_shards_merges_into_the_unsharded_probe(
        shard_of: list[int], answers: int, seed: int, reps: int, mec: float | None,
        with_baseline: bool, order: random.Random) -> None:
    # shard 0 holds the groups this run left out (a -k, a file not passed)
    groups = [g for g, k in zip(GROUPS, shard_of, strict=True) if k]
    if not groups:
        return
    rng = random.Random(answers)
    calls = _calls(groups, reps, rng)
    stored: dict[str, GroupEntry] = {}
    if with_baseline:
        before = _calls(GROUPS, 1, rng)
        stored = {f"probe.groups.json::{k}": v for k, v in
                  baseline_entries(summarize(before, GROUPS, seed, RESAMPLES), GROUPS).items()}
    whole = _document(groups, calls, stored, seed, mec)
    shards = [_document([g for g, k in zip(GROUPS, shard_of, strict=True) if k == n],
                        calls, stored, seed, mec) for n in (1, 2, 3)
              if n in shard_of]
    order.shuffle(shards)  # the files come in any order
    merged = merge_preference([(f"shard-{i}.json", d) for i, d in enumerate(shards)],
                              min_effect_change=mec)
    assert merged == whole
