"""The upgrade rule as properties: a check a baseline entry was never evaluated with never
blocks the case by itself; the baseline records the checks and reads old entries."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.gate import baseline
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.positions.sourcemap import load_schema
from pytest_toolselect.records.baseline_entry import CaseEntry
from pytest_toolselect.records.report_input import SummaryInput
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.report.terminal import lines, summarize
from pytest_toolselect.terms.check_names import CHECK_NAMES, CHECKS_BEFORE_LIST
from pytest_toolselect.terms.vocabulary import Verdict

NEW = sorted(set(CHECK_NAMES) - set(CHECKS_BEFORE_LIST))
runs = st.tuples(st.integers(1, 5), st.integers(0, 5)).map(lambda r: (min(r[1], r[0]), r[0]))
check_sets = st.sets(st.sampled_from(CHECK_NAMES), max_size=3).map(sorted)
reps_failing = st.lists(check_sets, min_size=1, max_size=8)
rules = st.sampled_from(list(gate.RULES))


@st.composite
def entries(draw: st.DrawFn) -> CaseEntry:
    history = draw(st.lists(runs, min_size=1, max_size=5))
    passes, reps = history[-1]
    entry: dict[str, Any] = {"status": gate.status_of(passes, reps), "passes": passes,
                             "reps": reps, "history": [list(r) for r in history]}
    if draw(st.booleans()):
        entry["checks"] = draw(st.sets(st.sampled_from(CHECK_NAMES)).map(sorted))
    return CaseEntry.from_json(entry)


def _only(failing: list[list[str]], known: frozenset[str]) -> list[list[str]]:
    return [[c for c in f if c in known] for f in failing]


@given(reps_failing, entries(), rules)
def test_a_case_is_judged_on_the_checks_its_entry_was_evaluated_with(
        failing: list[list[str]], entry: CaseEntry, rule: str) -> None:
    verdict, aside = gate.judge(failing, entry, have_baseline=True, rule=rule)
    known = gate.evaluated_checks(entry)
    on_known = gate.judge(_only(failing, known), entry, have_baseline=True, rule=rule)[0]
    # it blocks exactly when the checks the entry knows block
    assert (verdict == Verdict.REGRESSION) == (on_known == Verdict.REGRESSION)
    if on_known in (Verdict.HELD, Verdict.FIXED):
        # held on what the entry knows: held, or new failing when only new checks failed
        failed_new = any(set(f) - known for f in failing)
        assert verdict == (Verdict.NEW_FAILING if failed_new else on_known)
    else:
        assert verdict == on_known
    # what is set aside are checks the entry does not know, and only when they mattered
    assert set(aside) <= set(CHECK_NAMES) - known
    full = gate.classify(sum(1 for f in failing if not f), len(failing), entry,
                         have_baseline=True, rule=rule)
    assert (aside == []) == (verdict == full)


@given(reps_failing, entries(), rules)
def test_an_entry_that_knows_every_check_is_judged_as_always(
        failing: list[list[str]], entry: CaseEntry, rule: str) -> None:
    entry = CaseEntry.from_json({**entry.to_json(), "checks": list(CHECK_NAMES)})
    passes = sum(1 for f in failing if not f)
    assert gate.judge(failing, entry, have_baseline=True, rule=rule) == (
        gate.classify(passes, len(failing), entry, have_baseline=True, rule=rule), [])


@given(reps_failing, st.none() | entries(), st.booleans())
def test_without_an_entry_or_a_baseline_nothing_is_set_aside(
        failing: list[list[str]], entry: CaseEntry | None, have: bool) -> None:
    if entry is not None and have:
        return
    passes = sum(1 for f in failing if not f)
    assert gate.judge(failing, entry, have_baseline=have) == (
        gate.classify(passes, len(failing), entry, have_baseline=have), [])


def test_an_old_entry_is_read_as_the_checks_before_the_list() -> None:
    old = CaseEntry.from_json({"status": "held", "passes": 3, "reps": 3})
    assert gate.evaluated_checks(old) == frozenset(CHECKS_BEFORE_LIST)
    assert "valid_arguments" not in gate.evaluated_checks(old)
    # a held case that fails only valid_arguments now: new failing, not a regression
    assert gate.judge([["valid_arguments"]] * 3, old, have_baseline=True) == (
        Verdict.NEW_FAILING, ["valid_arguments"])
    # one that also fails an old check on every rep regresses as it did
    assert gate.judge([["tool_choice", "valid_arguments"]] * 3, old, have_baseline=True) == (
        Verdict.REGRESSION, [])
    assert gate.judge([["valid_arguments"]] * 3,
                      CaseEntry.from_json({**old.to_json(), "checks": list(CHECK_NAMES)}),
                      have_baseline=True) == (Verdict.REGRESSION, [])


def _record(**kw: Any) -> CaseRecord:
    fields: dict[str, Any] = {
        "nodeid": "a.toolselect.yaml::c", "key": "a.toolselect.yaml::c", "order": 0,
        "case_id": "c", "question": "q", "category": None, "intent": None, "why": "w",
        "expect_tool": ["t"], "allow_no_tool": False, "case_fingerprint": "sha256:1",
        "status": "held", "verdict": "held", "passes": 1, "reps": 1}
    fields.update(kw)
    return CaseRecord(**fields)


def test_an_entry_records_the_checks_and_both_shapes_are_valid_baselines() -> None:
    entry = baseline.entry(_record(tools_fingerprint="sha256:2")).to_json()
    assert entry["checks"] == list(CHECK_NAMES)
    schema = load_schema("toolselect_baseline.v1")
    subject = {"provider": "local", "model": "local/bm25"}
    for e in (entry, {k: v for k, v in entry.items() if k != "checks"}):
        jsonschema.Draft202012Validator(schema).validate(
            {"schema_version": "toolselect_baseline.v1", "subject": subject, "cases": {"c": e}})


def test_an_old_baseline_loads_and_its_entries_are_rewritten_with_the_list(tmp_path: Any) -> None:
    path = tmp_path / "base.json"
    old_entry = {"status": "held", "passes": 1, "reps": 1, "history": [[1, 1]]}
    path.write_text(json.dumps({"schema_version": "toolselect_baseline.v1",
                                "subject": {"provider": "local", "model": "local/bm25"},
                                "cases": {"a.toolselect.yaml::c": old_entry,
                                          "a.toolselect.yaml::kept": old_entry}}))
    loaded = baseline.load(path)
    assert loaded is not None and loaded.cases["a.toolselect.yaml::c"].checks is None
    assert "checks" not in loaded.cases["a.toolselect.yaml::c"].to_json()
    doc = baseline.build(loaded.subject, [_record()], loaded).to_json()
    assert doc["cases"]["a.toolselect.yaml::c"]["checks"] == list(CHECK_NAMES)
    # an entry this run did not touch keeps what it was evaluated with
    assert doc["cases"]["a.toolselect.yaml::kept"] == old_entry


def _summary(records: list[CaseRecord], mode: str = "compared", written: bool = False
             ) -> list[str]:
    data = SummaryInput(
        records=tuple(records), model_line="toolselect: model m", baseline_path="base.json",
        baseline_mode=mode, baseline_written=written, gone=(), cache_savings={}, cost_cap=None,
        verbose=False, cache=None, suite=None, escalations=None)
    return list(lines(summarize(data)))


def test_the_summary_says_it_once_for_the_run() -> None:
    hit = [_record(nodeid=f"a::{i}", key=f"a::{i}", status="failing", verdict="new_failing",
                   passes=0, failing_checks=["valid_arguments"],
                   unevaluated_checks=["valid_arguments"]) for i in range(3)]
    out = _summary([*hit, _record()])
    said = [line for line in out if line.startswith("new checks:")]
    assert said == ["new checks: valid_arguments failed in 3 cases whose baseline entries were "
                    "not evaluated with them; they do not block those cases (new failing) until "
                    "the baseline is updated (--toolselect-update-baseline)"]
    updated = _summary(hit, mode="updated", written=True)
    assert [line for line in updated if line.startswith("new checks:")] == [
        "new checks: valid_arguments failed in 3 cases whose baseline entries were not evaluated "
        "with them; they do not block those cases (the updated baseline evaluates them from now "
        "on)"]
    assert not [line for line in _summary([_record()]) if line.startswith("new checks:")]
    assert NEW == ["no_undeclared_arguments", "valid_arguments"]
