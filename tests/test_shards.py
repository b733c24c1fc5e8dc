"""--toolselect-shard K/N and `toolselect merge`: N CI jobs that add up to one run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import PLANNED, Project, case
from pytest_toolselect import cli
from pytest_toolselect.cli.merge import REFUSED
from pytest_toolselect.inputs.shard_option import parse_shard
from pytest_toolselect.plugin.shard import shard_of

FIND, OFFICERS = "find_company", "list_officers"
SUBJECT = {"provider": "script", "model": "script/planned", "system_hash": None}


def _collected(project: Project, *args: str) -> list[str]:
    result = project.pytester.runpytest("--collect-only", "-q", *args)
    assert result.ret == 0, result.stdout.str()
    return [line for line in result.stdout.lines if "::" in line]


def _suite(project: Project) -> None:
    project.config()
    for f in range(3):
        project.cases([case(f"c{f}-{n:02d}", f"Find the company called Acme {f} {n}", [FIND])
                       for n in range(11)], name=f"file{f}")
    project.pytester.makepyfile(test_plain="def test_a():\n    pass\n\ndef test_b():\n    pass\n")


def test_shards_partition_the_items_exactly_and_stably(project: Project) -> None:
    _suite(project)
    everything = _collected(project)
    assert len(everything) == 35
    shards = [_collected(project, f"--toolselect-shard={k}/3") for k in (1, 2, 3)]
    again = [_collected(project, f"--toolselect-shard={k}/3") for k in (1, 2, 3)]
    assert shards == again  # the same items land in the same shard, run after run
    assert sorted(i for s in shards for i in s) == sorted(everything)  # none lost, none twice
    assert all(s for s in shards)
    # a shard keeps the suite's order among its items
    for s in shards:
        assert s == [i for i in everything if i in s]


def test_a_case_keeps_its_shard_when_others_are_added(project: Project) -> None:
    _suite(project)
    before = _collected(project, "--toolselect-shard=2/3")
    project.cases([case(f"x{n}", f"Find the company called Beta {n}", [FIND]) for n in range(7)],
                  name="added")
    after = _collected(project, "--toolselect-shard=2/3")
    assert [i for i in after if not i.startswith("added")] == before


@pytest.mark.parametrize("spec", ["0/3", "4/3", "1/0", "two/3", "1-3"])
def test_a_bad_shard_is_one_usage_error(project: Project, spec: str) -> None:
    _suite(project)
    result = project.pytester.runpytest(f"--toolselect-shard={spec}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--toolselect-shard" in result.stderr.str() or "shard" in result.stderr.str()
    # said once, naming the value once
    (line,) = [ln for ln in result.stderr.lines if ln.startswith("ERROR:")]
    assert line.count(repr(spec)) == 1, line


@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=60, unique=True),
       st.integers(1, 9))
def test_every_key_is_in_exactly_one_shard(keys: list[str], n: int) -> None:
    for key in keys:
        owners = [k for k in range(1, n + 1) if shard_of(key, n) == k]
        assert owners == [shard_of(key, n)] and 1 <= owners[0] <= n


@given(st.integers(1, 50), st.integers(1, 50))
def test_parse_shard_accepts_exactly_one_to_n(k: int, n: int) -> None:
    if k <= n:
        assert parse_shard(f"{k}/{n}") == (k, n)
    else:
        with pytest.raises(ValueError):
            parse_shard(f"{k}/{n}")


def test_shards_spread_evenly() -> None:
    counts = [0, 0, 0]
    for i in range(3000):
        counts[shard_of(f"cases/file{i % 17}.toolselect.yaml::case-{i}", 3) - 1] += 1
    assert all(900 <= c <= 1100 for c in counts), counts


# --- merge ----------------------------------------------------------------------------------------

QUESTIONS = {f"q{n:02d}": f"Find the company called Firm {n}" for n in range(12)}


def _scripted(project: Project) -> None:
    (project.path / "conftest.py").write_text(PLANNED)
    project.config(model="script/planned")
    project.cases([case(cid, q, [FIND], category="lookup" if n % 2 else "search")
                   for n, (cid, q) in enumerate(QUESTIONS.items())])
    plan = {q: [FIND] for q in QUESTIONS.values()}
    # two regressions, one case still failing, one flaky (3 reps), the rest held
    plan[QUESTIONS["q01"]] = [OFFICERS]
    plan[QUESTIONS["q05"]] = [OFFICERS]
    plan[QUESTIONS["q07"]] = [OFFICERS]
    plan[QUESTIONS["q09"]] = [FIND, OFFICERS, FIND]
    for q in plan:
        plan[q] = [{"tool": t, "cost": 0.001} for t in plan[q]]
    (project.path / "plan.json").write_text(json.dumps(plan))
    held = {f"registry.toolselect.yaml::{cid}": {"status": "held", "passes": 3, "reps": 3}
            for cid in QUESTIONS}
    held["registry.toolselect.yaml::q07"] = {"status": "failing", "passes": 0, "reps": 3}
    project.baseline(held, subject=SUBJECT)


def _merge(project: Project, *args: str, capsys: pytest.CaptureFixture[str]) -> int:
    status = cli.main(["merge", *(str(project.path / f"shard-{k}.json") for k in (1, 2, 3)), *args])
    capsys.readouterr()
    return status


def test_merging_three_shards_gives_the_unsharded_runs_verdict_comment_and_baseline(
        project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    _scripted(project)
    path = project.path
    whole = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=3",
                                       "--toolselect-json=whole.json", "--toolselect-markdown=whole.md")
    assert whole.ret == 1  # the regressions block
    # a model a conftest hook serves is named as such, not as the litellm route
    whole.stdout.fnmatch_lines(["toolselect: model script/planned (*), reps 3, via the "
                                "pytest_toolselect_provider hook"])
    for k in (1, 2, 3):
        shard = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=3",
                                           f"--toolselect-shard={k}/3", f"--toolselect-json=shard-{k}.json")
        assert shard.ret in (0, 1)
    sizes = [len(json.loads((path / f"shard-{k}.json").read_text())["cases"]) for k in (1, 2, 3)]
    assert sum(sizes) == len(QUESTIONS) and all(sizes)

    status = _merge(project, "--markdown", "merged.md", "--json", "merged.json", "--html", "merged.html",
                    capsys=capsys)
    assert status == whole.ret
    assert (path / "merged.md").read_text() == (path / "whole.md").read_text()
    merged, alone = (json.loads((path / n).read_text()) for n in ("merged.json", "whole.json"))
    for key in ("verdict", "summary", "cases", "subject", "settings"):
        assert merged[key] == alone[key], key
    assert merged["cost"]["total_usd"] == pytest.approx(alone["cost"]["total_usd"])
    assert "<html" in (path / "merged.html").read_text()

    # on main: the merged baseline update is the unsharded run's
    shutil.copy(path / "base.json", path / "base-whole.json")
    shutil.copy(path / "base.json", path / "base-merged.json")
    update = project.pytester.runpytest("--toolselect-baseline=base-whole.json", "--toolselect-reps=3",
                                        "--toolselect-update-baseline")
    assert update.ret == 0
    assert _merge(project, "--update-baseline", "base-merged.json", capsys=capsys) == 1
    assert (json.loads((path / "base-merged.json").read_text())
            == json.loads((path / "base-whole.json").read_text()))
    assert json.loads((path / "base-merged.json").read_text()) != json.loads((path / "base.json").read_text())


def test_merge_refuses_shards_of_different_runs(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    _scripted(project)
    for k, reps in ((1, 3), (2, 3), (3, 1)):
        project.pytester.runpytest("--toolselect-baseline=base.json", f"--toolselect-reps={reps}",
                                   f"--toolselect-shard={k}/3", f"--toolselect-json=shard-{k}.json")
    assert cli.main(["merge", *(str(project.path / f"shard-{k}.json") for k in (1, 2, 3))]) == REFUSED
    err = capsys.readouterr().err
    assert "shard-3.json" in err and "settings differs" in err


def test_merge_refuses_a_case_run_in_two_shards(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    _scripted(project)
    project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-json=a.json")
    shutil.copy(project.path / "a.json", project.path / "b.json")
    both = [str(project.path / "a.json"), str(project.path / "b.json")]
    # two whole runs are no split the merge can check: refused, unless told --partial
    assert cli.main(["merge", *both]) == REFUSED
    assert "not written by a sharded run" in capsys.readouterr().err
    assert cli.main(["merge", *both, "--partial"]) == REFUSED
    assert "ran in two shards" in capsys.readouterr().err


def _shards(project: Project) -> list[str]:
    _scripted(project)
    for k in (1, 2, 3):
        project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-reps=3",
                                   f"--toolselect-shard={k}/3", f"--toolselect-json=shard-{k}.json")
    return [str(project.path / f"shard-{k}.json") for k in (1, 2, 3)]


def test_merge_refuses_a_missing_shard_naming_it_unless_partial(
        project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    paths = _shards(project)
    doc = json.loads(Path(paths[1]).read_text())
    assert (doc["shard"]["index"], doc["shard"]["count"]) == (2, 3)
    assert len(doc["shard"]["keys"]) == len(QUESTIONS)  # the whole suite, not the shard's part
    # shard 1 holds a regression: a merge without it must not pass
    assert any(c["verdict"] == "regression"
               for c in json.loads(Path(paths[0]).read_text())["cases"])
    assert cli.main(["merge", *paths[1:]]) == REFUSED
    err = capsys.readouterr().err
    assert "shard 1/3 is missing" in err and "--partial" in err
    status = cli.main(["merge", *paths[1:], "--partial", "--json", str(project.path / "part.json"),
                       "--markdown", str(project.path / "part.md")])
    capsys.readouterr()
    part = json.loads((project.path / "part.json").read_text())
    assert part["verdict"]["missing_shards"] == ["1/3"]
    assert status == part["verdict"]["exit_status"]
    # the comment says it is not the whole suite's verdict
    assert "Partial: shard <code>1/3</code> not merged" in (project.path / "part.md").read_text()


def test_merge_refuses_a_doubled_shard_naming_it(project: Project,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    paths = _shards(project)
    shutil.copy(paths[1], project.path / "again.json")
    assert cli.main(["merge", *paths, str(project.path / "again.json")]) == REFUSED
    err = capsys.readouterr().err
    assert "shard 2/3 is given twice" in err and "again.json" in err
    # --partial allows a missing shard, never a doubled one
    assert cli.main(["merge", *paths, str(project.path / "again.json"), "--partial"]) == REFUSED



def test_a_case_lands_in_the_same_shard_from_any_folder(project: Project,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # a CI job may start pytest in the repository root or in the suite's folder: a case's
    # shard follows its baseline key, which is relative to its config, not to the rootdir
    _suite(project)
    suite = project.path / "suite"
    suite.mkdir()
    for path in list(project.path.iterdir()):
        if path.is_file() and path.name != "conftest.py":
            shutil.move(str(path), suite / path.name)

    def case_ids(*args: str) -> list[list[str]]:
        return [sorted(i.rpartition("::")[2] for i in _collected(project, *args, f"--toolselect-shard={k}/3")
                       if ".toolselect." in i) for k in (1, 2, 3)]

    from_root = case_ids("suite", "--rootdir", str(project.path))
    monkeypatch.chdir(suite)
    from_suite = case_ids("--rootdir", str(suite))
    assert from_root == from_suite
    assert sum(len(s) for s in from_root) == 33
