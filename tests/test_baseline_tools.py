"""The baseline keeps each entry's tool set whole, each tool once, so it can be offered again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import FIND, NESTED_XDIST, OFFICERS, Project, case
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.gate.baseline import build, load, write
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.gate.toolsdiff import definitions, offered, rebuild, texts, toolset
from pytest_toolselect.records.fingerprint import fingerprint
from pytest_toolselect.records.run_records import CaseRecord

SUBJECT = {"provider": "local", "model": "local/bm25"}
THE_SUBJECT = Subject.from_json(SUBJECT)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
TOOLS = st.lists(st.builds(Tool, st.text(min_size=1, max_size=12),
                           st.text(max_size=3000),
                           st.dictionaries(st.text(max_size=6), JSON, max_size=3)),
                 max_size=6, unique_by=lambda t: t.name)


def _as_offered(tools: tuple[Tool, ...] | list[Tool]) -> list[dict[str, Any]]:
    return [t.to_dict() for t in tools]


@given(TOOLS, st.none() | st.text(max_size=300))
def test_a_tool_set_is_rebuilt_exactly_as_it_was_offered(tools: list[Tool], system: str | None) -> None:
    # no text here is shaped like a key, so nothing is masked: the rebuild is exact
    from pytest_toolselect.messages.masking import redact_data

    if redact_data([t.to_dict() for t in tools], ()) != [t.to_dict() for t in tools] or (
            system is not None and redact_data(system) != system):
        return
    rebuilt = rebuild(offered(tools, system), definitions(tools, system))
    assert rebuilt is not None
    again, prompt = rebuilt
    assert _as_offered(again) == _as_offered(tools) and prompt == system
    # the definitions are keyed by the fingerprints the toolset (and so the diff) names
    assert set(definitions(tools, system)) == set(toolset(tools, system).values())


def rec(nodeid: str, tools: list[Tool], sent: set[str] | None = None) -> CaseRecord:
    skip = sent if sent is not None else set()
    out: dict[str, Any] = {"nodeid": nodeid, "status": "held", "passes": 1, "reps": 1, "first_tool": "find",
           "failing_checks": [], "case_fingerprint": "sha256:" + nodeid,
           "tools_fingerprint": fingerprint(_as_offered(tools)),
           "toolset": toolset(tools, None), "tool_texts": texts(tools, None, skip=skip),
           "offered": offered(tools, None), "tool_defs": definitions(tools, None, skip=skip)}
    skip.update(out["tool_defs"])
    return CaseRecord.read(out)


FIND_IT = Tool("find", "Find a company by name. " * 200, {"type": "object", "properties": {
    "name": {"type": "string", "description": "the name"}}})
OFFICERS_TOOL = Tool("officers", "List a company's officers.", {"type": "object"})
FIND_NOW = Tool("find", "Find a company by its name, now.", FIND_IT.input_schema)


def test_each_tool_is_kept_once_across_entries_and_loads_back(tmp_path: Path) -> None:
    sent: set[str] = set()
    one, two = [FIND_IT, OFFICERS_TOOL], [FIND_NOW, OFFICERS_TOOL]
    # three entries, two tool sets, three distinct tools; each record carries a tool once
    built = build(THE_SUBJECT, [rec("f::a", one, sent), rec("f::b", one, sent),
                                rec("f::c", two, sent)], None)
    doc = built.to_json()
    assert len(doc["tools"]) == 3 and len(doc["offered"]) == 2
    assert set(doc["offered"]) == {doc["cases"][k]["tools_fingerprint"] for k in doc["cases"]}
    # whole, not cut at the description limit of the diff's table
    assert {d["description"] for d in doc["tools"].values()} >= {FIND_IT.description}
    write(tmp_path / "b.json", built)
    loaded = load(tmp_path / "b.json")
    assert loaded is not None
    for key, tools in (("f::a", one), ("f::c", two)):
        got = loaded.tool_set(loaded.cases[key].tools_fingerprint)
        assert got is not None and _as_offered(got[0]) == _as_offered(tools) and got[1] is None
    # an update that runs only c keeps a's and b's tool set (their entries are kept)
    again = build(THE_SUBJECT, [rec("f::c", two, set())], loaded).to_json()
    assert again["tools"] == doc["tools"] and again["offered"] == doc["offered"]
    # c moves away from `two`: FIND_NOW is no longer referred to, and is dropped
    third = build(THE_SUBJECT, [rec("f::c", one, set())], loaded).to_json()
    assert len(third["tools"]) == 2 and len(third["offered"]) == 1


def test_a_baseline_written_before_the_tools_were_kept_loads_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"schema_version": "toolselect_baseline.v1", "subject": SUBJECT,
                                "cases": {"f::a": {"status": "held", "passes": 1, "reps": 1,
                                                   "tools_fingerprint": "sha256:old"}},
                                "toolsets": {"sha256:old": {"find": "sha256:t"}},
                                "descriptions": {"sha256:t": "Find it."}}))
    old = load(path)
    assert old is not None and old.tool_set("sha256:old") is None and old.tools == {}
    # updated on main, the entry run again gains its tools; the migration is the update
    write(path, build(THE_SUBJECT, [rec("f::a", [FIND_NOW])], old))
    migrated = load(path)
    assert migrated is not None
    got = migrated.tool_set(migrated.cases["f::a"].tools_fingerprint)
    assert got is not None and _as_offered(got[0]) == _as_offered([FIND_NOW])


def test_a_declared_secret_never_reaches_the_tools_table() -> None:
    tool = Tool("call", "Calls with tenant hunter2-x9", {"type": "object", "properties": {
        "k": {"type": "string", "default": "sk-live0123456789abcdef"}}})
    (kept,) = definitions([tool], None, secrets=["hunter2-x9"]).values()
    assert "hunter2-x9" not in json.dumps(kept) and "sk-live0123456789abcdef" not in json.dumps(kept)


@pytest.mark.parametrize("workers", [[], pytest.param(["-n", "2"], marks=NESTED_XDIST)])
def test_a_recorded_baseline_offers_the_tools_file_exactly(project: Project, workers: list[str]) -> None:
    project.config(system="Answer about companies.")
    project.cases([case(*FIND), case(*OFFICERS)])
    result = project.pytester.runpytest("--toolselect-baseline=base.json", *workers)
    result.assert_outcomes(passed=2)
    stored = project.read_baseline()
    listed = json.loads((project.path / "registry.tools.json").read_text())["tools"]
    loaded = load(project.path / "base.json")
    assert loaded is not None
    fps = {e["tools_fingerprint"] for e in stored["cases"].values()}
    assert len(fps) == 1 and set(stored["offered"]) == fps
    tools, system = loaded.tool_set(fps.pop()) or ((), None)
    assert system == "Answer about companies."
    assert [(t.name, t.description, t.input_schema) for t in tools] == [
        (t["name"], t.get("description", ""), t.get("inputSchema", {})) for t in listed]
    # one entry per tool and the system prompt, shared by both cases
    assert len(stored["tools"]) == len(listed) + 1
