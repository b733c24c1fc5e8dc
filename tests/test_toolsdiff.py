"""The tools diff (pure) and the baseline's tool tables: bounded, deterministic, optional."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.gate.baseline import Baseline, build, load, write
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.gate.toolsdiff import SYSTEM, TEXT_LIMIT, diff, texts, toolset, word_diff
from pytest_toolselect.records.run_records import CaseRecord

WORDS = st.lists(st.sampled_from(["find", "the", "company", "by", "name", "VAT", "number", "a"]),
                 max_size=30)
NAMES = st.sampled_from(["a", "b", "c", "d", "e"])
SETS = st.dictionaries(NAMES, st.sampled_from(["sha256:1", "sha256:2", "sha256:3"]), max_size=5)


@given(WORDS)
def test_an_unchanged_text_has_no_marks(words: list[str]) -> None:
    shown = word_diff(" ".join(words), " ".join(words))
    assert "[-" not in shown and "{+" not in shown


@given(WORDS, WORDS)
def test_every_added_and_removed_word_is_marked(before: list[str], after: list[str]) -> None:
    shown = word_diff(" ".join(before), " ".join(after), limit=10_000)
    added = " ".join(part.split("+}")[0] for part in shown.split("{+")[1:]).split()
    removed = " ".join(part.split("-]")[0] for part in shown.split("[-")[1:]).split()
    # what is marked turns one word list into the other
    for word in set(after) - set(before):
        assert word in added
    for word in set(before) - set(after):
        assert word in removed
    assert len(after) - len(before) == len(added) - len(removed)


def test_a_long_diff_is_cut() -> None:
    assert len(word_diff("a " * 1000, "b " * 1000, limit=50)) == 50


@given(SETS, SETS)
def test_the_diff_names_exactly_the_tools_that_moved(old: dict[str, str], new: dict[str, str]) -> None:
    changes = {c.tool: c.change for c in diff(old, new, {}, {})}
    assert changes == ({n: "added" for n in set(new) - set(old)}
                       | {n: "removed" for n in set(old) - set(new)}
                       | {n: "changed" for n in set(old) & set(new) if old[n] != new[n]})
    assert diff(old, old, {}, {}) == []


def test_a_schema_change_says_the_text_is_the_same() -> None:
    (change,) = diff({"t": "sha256:1"}, {"t": "sha256:2"}, {"sha256:1": "same"}, {"sha256:2": "same"})
    assert change.diff is not None and "input schema" in change.diff


def test_texts_are_bounded_and_the_system_prompt_is_a_tool() -> None:
    tool = Tool("find", "x" * (TEXT_LIMIT * 3))
    assert toolset([tool], "be brief").keys() == {"find", SYSTEM}
    assert toolset([tool], None).keys() == {"find"}
    assert sorted(len(t) for t in texts([tool], "be brief").values()) == [8, TEXT_LIMIT]


# -- the baseline's tables ----------------------------------------------------------------------

SUBJECT = {"provider": "local", "model": "local/bm25"}
THE_SUBJECT = Subject.from_json(SUBJECT)


def rec(nodeid: str, tools: list[Tool], **extra: Any) -> CaseRecord:
    from pytest_toolselect.records.fingerprint import fingerprint

    return CaseRecord.read({
        "nodeid": nodeid, "status": "held", "passes": 1, "reps": 1, "first_tool": "find",
        "failing_checks": [], "case_fingerprint": "sha256:c",
        "tools_fingerprint": fingerprint([t.to_dict() for t in tools]),
        "toolset": toolset(tools, None), "tool_texts": texts(tools, None), **extra})


def test_tables_hold_only_what_entries_refer_to(tmp_path: Path) -> None:
    one, two = [Tool("find", "Find it.")], [Tool("find", "Find it now.")]
    first = build(THE_SUBJECT, [rec("f::a", one), rec("f::b", one)], None).to_json()
    assert len(first["toolsets"]) == 1 and len(first["descriptions"]) == 1
    old = Baseline.from_json(tmp_path / "b.json", {"subject": SUBJECT, "cases": first["cases"],
                                                    "toolsets": first["toolsets"],
                                                    "descriptions": first["descriptions"]})
    # b moves to other tools; a is not run (its entry, and its toolset, are kept)
    second = build(THE_SUBJECT, [rec("f::b", two, tool_texts={})], old).to_json()
    assert len(second["toolsets"]) == 2
    assert sorted(second["descriptions"].values()) == ["Find it."]  # b's text was never sent
    built = build(THE_SUBJECT, [rec("f::a", two), rec("f::b", two)], old)
    third = built.to_json()
    assert list(third["descriptions"].values()) == ["Find it now."]
    # the same run gives the same bytes; the file loads with its tables
    again = build(THE_SUBJECT, [rec("f::b", two), rec("f::a", two)], old)
    assert json.dumps(third) == json.dumps(again.to_json())
    write(tmp_path / "b.json", built)
    loaded = load(tmp_path / "b.json")
    assert loaded is not None and loaded.toolsets == third["toolsets"]


def test_a_table_written_empty_is_written_back_as_it_was(tmp_path: Path) -> None:
    # a tool set whose texts never travelled: its descriptions table is written, empty
    built = build(THE_SUBJECT, [rec("f::a", [Tool("find", "Find it.")], tool_texts={})], None)
    assert list(built.to_json()) == ["schema_version", "subject", "cases", "toolsets", "descriptions"]
    assert built.to_json()["descriptions"] == {}
    write(tmp_path / "b.json", built)
    loaded = load(tmp_path / "b.json")
    assert loaded is not None
    write(tmp_path / "again.json", loaded)
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_a_baseline_without_tables_loads(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"schema_version": "toolselect_baseline.v1", "subject": SUBJECT,
                                "cases": {"f::a": {"status": "held", "passes": 1, "reps": 1}}}))
    loaded = load(path)
    assert loaded is not None and loaded.toolsets == {} and loaded.descriptions == {}


def test_a_secret_in_a_description_never_reaches_the_baseline() -> None:
    tool = Tool("call", "Calls the API with sk-live0123456789abcdef as its key, tenant hunter2-x9")
    (text,) = texts([tool], None, secrets=["hunter2-x9"]).values()
    assert "sk-live0123456789abcdef" not in text and "hunter2-x9" not in text
    assert text.startswith("Calls the API with ***")
