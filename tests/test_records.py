"""The typed records: to_json() and from_json() are each other's inverse, and nothing else
passes for a record."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.records.baseline_entry import GroupEntry
from pytest_toolselect.records.probe_call import ProbeCall
from pytest_toolselect.records.run_records import (
    CaseRecord,
    CheckEntry,
    Escalation,
    GroupRecord,
    LintRecord,
    as_case_record,
)
from pytest_toolselect.records.tool_changes import ToolChange
from pytest_toolselect.terms.vocabulary import Status, Verdict

text = st.text(max_size=12)
maybe_text = st.none() | text
names = st.lists(text, max_size=3)
counts = st.integers(min_value=0, max_value=50)
leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text
json_value = st.recursive(leaf, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(text, inner, max_size=3), max_leaves=8)
json_object = st.dictionaries(text, json_value, max_size=4)

case_fields = {
    "nodeid": text, "key": text, "order": st.none() | counts, "case_id": text, "question": text,
    "category": maybe_text, "intent": maybe_text, "why": maybe_text,
    "expect_tool": st.none() | names, "allow_no_tool": st.booleans(),
    "case_fingerprint": maybe_text, "verdict": st.sampled_from(list(Verdict)) | st.sampled_from(
        [v.value for v in Verdict]), "error": maybe_text,
}
unscored = st.builds(CaseRecord, status=st.none(), passes=counts, reps=counts, **case_fields)
#: an unscored case whose calls were billed (every rep cut, an unreadable reply)
billed_unscored = st.builds(
    CaseRecord, status=st.none(), passes=counts, reps=counts, model=maybe_text,
    usage=st.dictionaries(text, counts, max_size=3),
    costs=st.lists(st.none() | st.floats(allow_nan=False), min_size=1, max_size=3),
    texts=st.lists(text, max_size=3), inconclusive=counts, **case_fields)
tool_changes = st.builds(ToolChange, text, st.sampled_from(["added", "removed", "changed"]),
                         maybe_text)
checks = st.lists(st.lists(st.builds(CheckEntry, text, st.booleans(), text), max_size=3), max_size=3)
scored = st.builds(
    CaseRecord, status=st.sampled_from([s.value for s in Status]), passes=counts, reps=counts,
    toolset=st.none() | st.dictionaries(text, text, max_size=3),
    tool_texts=st.dictionaries(text, text, max_size=3),
    tools_diff=st.none() | st.lists(tool_changes, max_size=2), renamed_from=maybe_text,
    dropped_from=st.none() | st.lists(counts, min_size=2, max_size=2), in_baseline=st.booleans(),
    first_tools=st.lists(maybe_text, max_size=3), model=maybe_text,
    usage=st.dictionaries(text, counts, max_size=3),
    costs=st.lists(st.none() | st.floats(allow_nan=False), max_size=3),
    texts=st.lists(text, max_size=3), cached=st.lists(st.booleans(), max_size=3),
    inconclusive=counts, truncated=counts,
    dropped_schema_keys=names, first_tool=maybe_text,
    calls=st.lists(st.lists(json_object, max_size=2), max_size=3), failing_checks=names,
    failing_detail=st.dictionaries(text, text, max_size=3), checks=checks,
    tools_fingerprint=maybe_text, tools_changed=st.booleans(), case_changed=st.booleans(),
    escalation=st.none() | st.builds(Escalation, counts, maybe_text, st.booleans()),
    test_failure=maybe_text, unevaluated_checks=names, context=st.lists(text, max_size=2),
    **case_fields)
case_records = unscored | billed_unscored | scored
#: a group's baseline entry as a file may hold it: any of the probe's keys, in any order, and
#: a key of a hand edit
group_entries = st.fixed_dictionaries({}, optional={
    "kind": st.just("group"), "control": st.booleans(),
    "over_call_share": st.none() | st.floats(0, 1),
    "effects": st.dictionaries(text, st.floats(-1, 1), max_size=2),
    "first_twin_share": st.none() | st.floats(0, 1), "reps": st.none() | counts,
    "group_fingerprint": text, "note": json_object,
}).flatmap(lambda d: st.permutations(list(d.items())).map(dict)).map(GroupEntry.from_json)
probe_calls = st.builds(
    ProbeCall, group=text, cell=text, factor=text, treated=maybe_text, position=text, rep=counts,
    domain=maybe_text, control=st.booleans(), calls=st.lists(text, max_size=2).map(tuple),
    outcome=maybe_text, error=maybe_text, skipped=st.booleans(), truncated=st.booleans(),
    usage=st.dictionaries(text, counts, max_size=2),
    cost_usd=st.none() | st.floats(0, 10), inconclusive=st.booleans())
group_records = st.builds(
    GroupRecord, nodeid=text, order=counts, file=text, group_id=text, control=st.booleans(),
    calls=st.lists(probe_calls, max_size=3).map(tuple), entry=st.none() | group_entries,
    verdict=st.sampled_from(list(Verdict)),
    over_call_share=st.none() | st.floats(0, 1), key=text)
lint_records = st.builds(
    LintRecord, server=text, entry=names, findings=st.lists(json_object, max_size=3), new=names,
    tools=names, coverage=st.none() | json_object, heatmap=json_object,
    threshold=st.floats(0, 1))


@given(case_records)
def test_a_case_record_comes_back_from_its_json(rec: CaseRecord) -> None:
    data = rec.to_json()
    # what travels is plain JSON: it survives the trip through text unchanged
    assert json.loads(json.dumps(data)) == data
    assert CaseRecord.from_json(data) == rec
    assert CaseRecord.from_json(json.loads(json.dumps(data))).to_json() == data


@given(group_records)
def test_a_group_record_comes_back_from_its_json(rec: GroupRecord) -> None:
    data = rec.to_json()
    assert data["kind"] == "group"
    assert GroupRecord.from_json(data) == rec
    assert GroupRecord.from_json(json.loads(json.dumps(data))).to_json() == data


@given(lint_records)
def test_a_lint_record_comes_back_from_its_json(rec: LintRecord) -> None:
    data = rec.to_json()
    assert LintRecord.from_json(data) == rec
    assert LintRecord.from_json(json.loads(json.dumps(data))).to_json() == data


@given(case_records)
def test_the_json_of_a_case_has_one_shape_per_kind(rec: CaseRecord) -> None:
    keys = list(rec.to_json())
    assert keys[:11] == ["nodeid", "key", "order", "case_id", "question", "category", "intent",
                         "why", "expect_tool", "allow_no_tool", "case_fingerprint"]
    if rec.status is None:
        # not scored: the case and its verdict, and what its calls cost when they were billed
        assert keys[11:] == ["status", "verdict", "error", "passes", "reps",
                             *(["model", "usage", "costs", "texts", "inconclusive"]
                               if rec.costs else [])]
    else:
        assert keys[11:] == [
            "toolset", "tool_texts", "tools_diff", "renamed_from", "dropped_from", "in_baseline",
            "status", "verdict", "passes", "reps", "first_tools", "model", "usage", "costs",
            "texts", "cached", "inconclusive", "truncated", "dropped_schema_keys", "first_tool",
            "calls", "failing_checks",
            "failing_detail", "checks", "tools_fingerprint", "tools_changed", "case_changed",
            "error", *(["escalation"] if rec.escalation is not None else []),
            *(["test_failure"] if rec.test_failure is not None else []),
            *(["unevaluated_checks"] if rec.unevaluated_checks else []),
            *(["context"] if rec.context else [])]


@given(case_records)
def test_an_edit_of_the_json_leaves_the_record_be(rec: CaseRecord) -> None:
    before = rec.to_json()
    data = rec.to_json()
    if data.get("expect_tool") is not None:
        data["expect_tool"].append("added")
    for rep in data.get("calls", []):
        rep.append({"name": "added"})
    for rep in data.get("checks", []):
        rep.clear()
    if "usage" in data:
        data["usage"]["added"] = 1
    assert rec.to_json() == before


@given(case_records)
def test_reading_a_whole_record_is_reading_its_json(rec: CaseRecord) -> None:
    # a saved document's case holds every key a record has: read leniently, it is the record
    assert as_case_record(rec.to_json()) == rec
    assert as_case_record(rec) is rec


def _scored_json() -> dict[str, Any]:
    rec = CaseRecord(nodeid="a.toolselect.yaml::c", key="a.toolselect.yaml::c", order=0,
                     case_id="c", question="q", category=None, intent=None, why="w",
                     expect_tool=["t"], allow_no_tool=False, case_fingerprint="sha256:1",
                     status="held", verdict="held", passes=1, reps=1,
                     checks=[[CheckEntry("tool_choice", True, "")]])
    return rec.to_json()


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.pop("verdict"), "missing verdict"),
    (lambda d: d.update(surprise=1), "unknown surprise"),
    (lambda d: d["checks"][0][0].pop("passed"), "not a CheckEntry record: missing passed"),
    (lambda d: d.update(escalation={"extra_reps": 1}), "missing stopped, recording"),
])
def test_from_json_refuses_what_is_not_a_record(edit: Any, message: str) -> None:
    data = _scored_json()
    edit(data)
    with pytest.raises(ValueError, match=message):
        CaseRecord.from_json(data)


@given(st.text(max_size=20).filter(lambda w: w not in {v.value for v in Verdict}))
def test_a_word_outside_the_vocabulary_is_no_record(word: str) -> None:
    data = _scored_json()
    with pytest.raises(ValueError, match=r"verdict .* is none of regression, failed"):
        CaseRecord.from_json({**data, "verdict": word})
    with pytest.raises(ValueError, match=r"status .* is none of held, flaky, failing"):
        CaseRecord.from_json({**data, "status": word or "x"})


@given(case_records)
def test_a_record_holds_the_vocabulary_and_writes_plain_text(rec: CaseRecord) -> None:
    # read once where they enter, the words are members; what leaves is plain str (execnet
    # carries no subclass of str, and the schemas name the words)
    assert isinstance(rec.verdict, Verdict) and (rec.status is None or isinstance(rec.status, Status))
    data = rec.to_json()
    assert type(data["verdict"]) is str and (data["status"] is None or type(data["status"]) is str)


def test_group_and_lint_records_refuse_other_shapes() -> None:
    with pytest.raises(ValueError, match="missing server"):
        LintRecord.from_json({"entry": []})
    group = GroupRecord("n", 0, "f", "g", False, (), None, "held", None, "k").to_json()
    with pytest.raises(ValueError, match="kind 'case'"):
        GroupRecord.from_json({**group, "kind": "case"})


def test_a_hand_made_record_reads_as_absent_keys_always_meant() -> None:
    rec = as_case_record({"nodeid": "c0", "status": "held", "verdict": "held"})
    assert (rec.key, rec.passes, rec.reps, rec.first_tools, rec.order) == ("c0", 0, 0, [], None)
    assert as_case_record({"nodeid": "c0", "key": "k", "verdict": "error"}).key == "k"


@pytest.mark.parametrize(("passes", "reps"), [(1, 1), (3, 3), (0, 1), (0, 3), (1, 2), (2, 3)])
def test_a_record_without_a_verdict_is_judged_as_the_gate_judges_without_a_baseline(
        passes: int, reps: int) -> None:
    status = gate.status_of(passes, reps)
    read = as_case_record({"nodeid": "c0", "status": status.value})
    assert read.verdict == gate.classify(passes, reps, None, have_baseline=False)
    assert as_case_record({"nodeid": "c0"}).verdict is Verdict.ERROR
