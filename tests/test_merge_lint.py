"""`toolselect merge` of shards that ran `--toolselect-lint` items: the one run's lint section,
comment, HTML, verdict, exit status and baseline, as the unsharded run gives them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lint_data import DISTINCT, TWIN, tool

from conftest import Project, case
from pytest_toolselect import cli
from pytest_toolselect.cli.merge import REFUSED
from pytest_toolselect.lint.findings import merged_document
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.plugin.shard import shard_of
from pytest_toolselect.records.run_records import LintRecord
from pytest_toolselect.report.merge_lint import merge_lint

BY_NAME = {t["name"]: t for t in DISTINCT}
#: a near-duplicate of send_email (on the weather server) that the mail server gains
EMAIL_TWIN = tool("email_send", "Send an email message to a recipient, with a subject line and a "
                  "text body.", to="Recipient address, e.g. 'bo@example.com'.", body="The text.")
SERVERS = {
    "weather": [BY_NAME[n] for n in ("get_weather", "send_email", "create_calendar_event",
                                     "translate_text")] + [TWIN],
    "mail": [BY_NAME[n] for n in ("resize_image", "run_sql", "play_song")],
    "network": [tool("ping", "Ping a host.", host="Host name, e.g. example.com.")],
}
QUESTIONS = {
    "translate": ("Translate this passage of text into German", ["translate_text"]),
    "song": ("Play the song Blue in Green on the living room speaker", ["play_song"]),
    "sql": ("Run this SELECT statement on the analytics warehouse", ["run_sql"]),
    "event": ("Create a calendar event at 10:00 titled standup", ["create_calendar_event"]),
    "picture": ("Resize the picture to 200 pixels wide", ["resize_image"]),
    "ping": ("Ping the host example.com", ["ping"]),
}
SHARDS = 2


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    # local/bm25 and the linter call no provider: no key is needed, none may be used
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _write_servers(folder: Path, servers: dict[str, list[dict[str, Any]]]) -> None:
    for name, tools in servers.items():
        (folder / f"{name}.tools.json").write_text(json.dumps({"tools": tools}))


def _suite(project: Project, folder: Path) -> None:
    """Three servers, cases over them; a recorded baseline, then the mail server gains a
    near-duplicate of a weather tool: a new cross-server pair blocks both their items."""
    folder.mkdir(exist_ok=True)
    _write_servers(folder, SERVERS)
    (folder / "toolselect.yaml").write_text(json.dumps({
        "model": "local/bm25", "lint": True,
        "servers": {n: {"tools_file": f"{n}.tools.json"} for n in SERVERS}}))
    (folder / "registry.toolselect.yaml").write_text(json.dumps({
        "schema_version": "toolselect_cases.v1",
        "cases": [case(cid, q, expect) for cid, (q, expect) in QUESTIONS.items()]}))
    recorded = _pytest(project, folder, f"--toolselect-baseline={folder / 'base.json'}")
    assert recorded.ret == 0, recorded.stdout.str()
    _write_servers(folder, {"mail": [*SERVERS["mail"], EMAIL_TWIN]})


def _pytest(project: Project, folder: Path, *args: str) -> pytest.RunResult:
    # from the project's folder: the suite is that folder, or a folder below it
    where = [] if folder == project.path else [folder.name, f"--rootdir={project.path}"]
    return project.pytester.runpytest(*where, *args)


def _shards(project: Project, folder: Path, *args: str) -> list[Path]:
    out = []
    for k in range(1, SHARDS + 1):
        path = project.path / f"shard-{k}.json"
        result = _pytest(project, folder, *args, f"--toolselect-shard={k}/{SHARDS}",
                         f"--toolselect-json={path}")
        assert result.ret in (0, 1), result.stdout.str()
        out.append(path)
    return out


def _merge(paths: list[Path], *args: str, capsys: pytest.CaptureFixture[str]) -> int:
    status = cli.main(["merge", *map(str, paths), *args])
    capsys.readouterr()
    return status


def _lint_card(html: str) -> str:
    return html.split('<section class="card" id="lint-card">')[1].split("</section>")[0]


def test_lint_items_are_sharded_by_their_node_id_one_server_in_one_shard(project: Project) -> None:
    # the premise of the merge: each server is linted whole, in exactly one shard
    _suite(project, project.path)
    linted = []
    for path in _shards(project, project.path, "--toolselect-baseline=base.json"):
        linted.append(sorted(json.loads(path.read_text()).get("lint", {}).get("servers", {})))
    assert sorted(s for shard in linted for s in shard) == sorted(SERVERS)
    assert all(linted)  # both shards lint: the merge joins two sections
    for k, servers in enumerate(linted, 1):
        assert all(shard_of(f"toolselect.yaml::toolselect-lint[{s}]", SHARDS) == k for s in servers)


def test_merged_shards_give_the_unsharded_runs_lint_comment_html_verdict_and_exit(
        project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    _suite(project, project.path)
    path = project.path
    whole = project.pytester.runpytest("--toolselect-baseline=base.json", "--toolselect-json=whole.json",
                                       "--toolselect-markdown=whole.md", "--toolselect-html=whole.html")
    assert whole.ret == 1  # the new pair fails the weather and mail items
    whole.assert_outcomes(passed=len(QUESTIONS) + 1, failed=2)
    shards = _shards(project, path, "--toolselect-baseline=base.json")
    status = _merge(shards, "--markdown", "merged.md", "--json", "merged.json", "--html", "merged.html",
                    capsys=capsys)
    assert status == whole.ret
    merged, alone = (json.loads((path / n).read_text()) for n in ("merged.json", "whole.json"))
    assert merged["lint"] == alone["lint"]
    assert merged["lint"]["new"] == ["confusable-pair:send_email+email_send"]
    # the cases held: the lint alone blocks, in the merged verdict as in the unsharded one
    assert merged["verdict"] == alone["verdict"] == {"blocking": True, "reasons": ["1 new lint finding"],
                                                     "blocking_cases": [], "exit_status": 1}
    assert (path / "merged.md").read_text() == (path / "whole.md").read_text()
    assert "### toolselect lint" in (path / "merged.md").read_text()
    assert _lint_card((path / "merged.html").read_text()) == _lint_card((path / "whole.html").read_text())


def test_merged_exit_status_follows_the_lint_even_without_the_failed_items_count(
        project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    # an older shard file has only its exit status; a lint item that blocked still blocks
    _suite(project, project.path)
    shards = _shards(project, project.path, "--toolselect-baseline=base.json")
    for path in shards:
        doc = json.loads(path.read_text())
        doc["provenance"].pop("failed_items")
        doc["provenance"]["exit_status"] = 0
        path.write_text(json.dumps(doc))
    assert _merge(shards, capsys=capsys) == 1


def test_a_merged_baseline_update_records_the_lint_as_the_unsharded_update_does(
        project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    _suite(project, project.path)
    path = project.path
    shards = _shards(project, path, "--toolselect-baseline=base.json")
    shutil.copy(path / "base.json", path / "base-whole.json")
    shutil.copy(path / "base.json", path / "base-merged.json")
    project.pytester.runpytest("--toolselect-baseline=base-whole.json", "--toolselect-update-baseline")
    _merge(shards, "--update-baseline", str(path / "base-merged.json"), capsys=capsys)
    before, whole, merged = (project.read_baseline(n) for n in ("base.json", "base-whole.json",
                                                                 "base-merged.json"))
    assert merged == whole
    pair = "confusable-pair:send_email+email_send"
    assert pair in merged["lint"]["mail"] and pair in merged["lint"]["weather"]
    assert pair not in before["lint"]["mail"]  # accepted now: the next run does not block on it
    assert sorted(merged["lint"]) == sorted(SERVERS)


def test_shards_run_from_another_folder_merge_to_the_runs_lint(
        project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # the CI jobs start pytest above the suite's folder; the merge runs in a third folder
    suite = project.path / "suite"
    _suite(project, suite)
    monkeypatch.chdir(suite)
    whole = project.pytester.runpytest(f"--rootdir={suite}", "--toolselect-baseline=base.json",
                                       f"--toolselect-json={project.path / 'whole.json'}")
    assert whole.ret == 1
    monkeypatch.chdir(project.path)
    shards = _shards(project, suite, "--toolselect-baseline=suite/base.json")
    elsewhere = project.path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert _merge(shards, "--json", "merged.json", capsys=capsys) == whole.ret
    merged = json.loads((elsewhere / "merged.json").read_text())
    alone = json.loads((project.path / "whole.json").read_text())
    assert merged["lint"] == alone["lint"] and merged["verdict"] == alone["verdict"]
    assert [c["key"] for c in merged["cases"]] == [c["key"] for c in alone["cases"]]


# -- mismatched inputs ---------------------------------------------------------------------------


def _lint_only(project: Project, name: str) -> Path:
    """A run of the lint items alone (no case: two such runs share no case key)."""
    out = project.path / name
    project.pytester.runpytest("--toolselect-lint", f"--toolselect-json={out}")
    return out


@pytest.fixture
def lint_suite(project: Project) -> Project:
    _write_servers(project.path, SERVERS)
    project.config({n: {"tools_file": f"{n}.tools.json"} for n in SERVERS}, model="local/bm25")
    return project


def test_a_server_linted_in_two_shards_alike_is_merged_once(
        lint_suite: Project, capsys: pytest.CaptureFixture[str]) -> None:
    a = _lint_only(lint_suite, "a.json")
    shutil.copy(a, lint_suite.path / "b.json")
    # two whole runs, not shards of one split: merged only when told --partial
    assert _merge([a, lint_suite.path / "b.json"], "--json", "m.json", capsys=capsys) == REFUSED
    assert _merge([a, lint_suite.path / "b.json"], "--json", "m.json", "--partial", capsys=capsys) == 1
    assert (json.loads((lint_suite.path / "m.json").read_text())["lint"]
            == json.loads(a.read_text())["lint"])


def test_a_server_linted_in_two_shards_differently_is_an_error_naming_both_files(
        lint_suite: Project, capsys: pytest.CaptureFixture[str]) -> None:
    a = _lint_only(lint_suite, "a.json")
    # ping is described properly now: the findings differ (the tool list's size, on every
    # server, and ping's own), the heatmap does not
    _write_servers(lint_suite.path, {"network": [tool("ping", "Send ICMP echo requests to a host and "
                                                  "report whether it answers and how fast.",
                                                  host="Host name, e.g. example.com.")]})
    b = _lint_only(lint_suite, "b.json")
    assert cli.main(["merge", str(a), str(b), "--partial"]) == REFUSED
    err = capsys.readouterr().err
    assert f"{b}: server mail was linted in two shards with different results (also in {a})" in err
    assert "Traceback" not in err


def test_shards_whose_tools_differ_are_refused_naming_both_files(
        lint_suite: Project, capsys: pytest.CaptureFixture[str]) -> None:
    a = _lint_only(lint_suite, "a.json")
    _write_servers(lint_suite.path, {"mail": [*SERVERS["mail"], EMAIL_TWIN]})
    b = _lint_only(lint_suite, "b.json")
    assert cli.main(["merge", str(a), str(b), "--partial"]) == REFUSED
    err = capsys.readouterr().err
    assert f"{b}: its lint's heatmap of the confusable tools differs from {a}'s" in err


def test_a_lint_section_from_an_older_version_is_refused(
        lint_suite: Project, capsys: pytest.CaptureFixture[str]) -> None:
    a = _lint_only(lint_suite, "a.json")
    doc = json.loads(a.read_text())
    del doc["lint"]["entries"]
    a.write_text(json.dumps(doc))
    assert cli.main(["merge", str(a)]) == REFUSED
    err = capsys.readouterr().err
    assert str(a) in err and "written by an older version" in err and "run the shards again" in err


def test_a_shard_run_without_the_lint_flag_is_refused(
        project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    _suite(project, project.path)
    shards = _shards(project, project.path, "--toolselect-baseline=base.json")
    # the second job forgot the flag (its config key turned off): its servers were never linted
    config = json.loads((project.path / "toolselect.yaml").read_text())
    (project.path / "toolselect.yaml").write_text(json.dumps({**config, "lint": False}))
    project.pytester.runpytest("--toolselect-baseline=base.json", f"--toolselect-shard=2/{SHARDS}",
                               f"--toolselect-json={shards[1]}")
    assert cli.main(["merge", *map(str, shards)]) == REFUSED
    err = capsys.readouterr().err
    assert f"{shards[1]}: its settings differs from {shards[0]}'s" in err


# -- the rule, over generated lints ------------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c", "d", "e"])
FINDING = st.tuples(st.sampled_from(["confusable-pair", "thin-description", "untested-tool",
                                     "tool-list-size"]),
                    st.sampled_from(["error", "warning", "info"]),
                    st.sets(NAMES, min_size=1, max_size=3), st.booleans())


@given(st.lists(FINDING, max_size=12), st.sets(NAMES, min_size=1),
       st.lists(st.integers(1, 4), min_size=5, max_size=5), st.randoms())
def test_any_split_of_the_servers_into_shards_merges_to_the_whole_section(
        raw: list[tuple[str, str, set[str], bool]], servers: set[str], owners: list[int],
        rnd: Any) -> None:
    findings = []
    for n, (rule, severity, named, new) in enumerate(raw):
        mine = sorted(named & servers)
        if mine:
            findings.append(({"id": f"{rule}:t{n}", "rule": rule, "severity": severity,
                              "servers": mine, "tools": [f"t{n}"], "message": "m", "fix": "f",
                              "data": {}}, new and severity == "error"))
    heatmap = {"tools": [], "servers": [], "matrix": [], "threshold": 0.55}
    records = {}
    for s in sorted(servers):
        found = [f for f, _ in findings if s in f["servers"]]
        records[s] = LintRecord(
            server=s, entry=sorted(f["id"] for f in found if f["severity"] != "info"), findings=found,
            new=[f["id"] for f, new in findings if new and s in f["servers"]], tools=[f"{s}-tool"],
            coverage={"tools": 1, "tested": 0, "untested": [f"{s}-tool"]} if s < "c" else None,
            heatmap=heatmap, threshold=0.55)
    whole = _section(records)
    shards: dict[int, dict[str, LintRecord]] = {}
    for s in sorted(servers):
        shards.setdefault(owners["abcde".index(s)], {})[s] = records[s]
    sections = [(f"shard-{k}.json", _section(part)) for k, part in shards.items()]
    rnd.shuffle(sections)
    assert merge_lint(sections) == whole
    # a server seen twice alike changes nothing
    assert merge_lint([*sections, sections[0]]) == whole


def _section(records: dict[str, LintRecord]) -> dict[str, Any]:
    """The results document's lint section of these records, as a document holds it."""
    section = merged_document(records)
    assert section is not None
    return section.to_json()


def test_a_server_seen_twice_differently_names_both_files() -> None:
    record = LintRecord(server="a", entry=["thin-description:x"], findings=[
        {"id": "thin-description:x", "rule": "thin-description", "severity": "warning", "servers": ["a"],
         "tools": ["x"], "message": "m", "fix": "f", "data": {}}], new=[], tools=["x"], coverage=None,
        heatmap={"tools": [], "servers": [], "matrix": [], "threshold": 0.55}, threshold=0.55)
    one = _section({"a": record})
    other = json.loads(json.dumps(one))
    other["entries"]["a"] = []
    with pytest.raises(ToolselectError) as caught:
        merge_lint([("one.json", one), ("two.json", other)])
    assert caught.value.file == "two.json" and "also in one.json" in caught.value.message
