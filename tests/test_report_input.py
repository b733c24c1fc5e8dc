"""What the run hands its reports: SuiteChange and Escalations come back from their JSON,
and the results document is the same whether built from the run's typed input or from the
plain data a saved document (or a hand-made input) holds."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_records import case_records

from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.records.baseline_entry import CaseEntry
from pytest_toolselect.records.report_input import Escalations, ResultsInput, SuiteChange
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.report.document import ResultsDocument
from pytest_toolselect.report.results import build
from pytest_toolselect.report.words import escalation_line
from pytest_toolselect.terms.vocabulary import Status, Verdict

counts = st.integers(min_value=0, max_value=500)
shares = st.floats(min_value=0, max_value=1)
changes = st.floats(min_value=-1, max_value=1)
suites = st.builds(SuiteChange, cases=counts, held_now=counts, held_baseline=counts,
                   rate_now=shares, rate_baseline=shares, change=changes, low=changes,
                   high=changes, level=st.just(0.95), method=st.just("newcombe-hybrid-score"),
                   dropped=st.booleans(), blocks=st.booleans())
verdicts = st.sampled_from(gate.VERDICT_ORDER)
escalations = st.builds(Escalations, cases=counts, calls=counts, stopped=counts,
                        verdicts=st.dictionaries(verdicts, st.integers(1, 50), max_size=4))


@given(suites)
def test_a_suite_change_comes_back_from_its_json(suite: SuiteChange) -> None:
    data = suite.to_json()
    # key for key as results documents have always held it
    assert list(data) == ["cases", "held_now", "held_baseline", "rate_now", "rate_baseline",
                          "change", "low", "high", "level", "method", "dropped", "blocks"]
    assert json.loads(json.dumps(data)) == data
    assert SuiteChange.from_json(json.loads(json.dumps(data))) == suite
    # the terminal prints a live one as the markdown prints a saved document's
    assert gate.suite_line(suite) == gate.suite_line(SuiteChange.from_json(data))


@given(escalations)
def test_escalations_come_back_from_their_json(esc: Escalations) -> None:
    data = esc.to_json()
    assert list(data) == ["cases", "calls", "stopped", "verdicts"]
    assert Escalations.from_json(json.loads(json.dumps(data))) == esc
    assert escalation_line(esc) == escalation_line(data)


@given(st.lists(st.tuples(st.sampled_from([Status.HELD, Status.FAILING, None]),
                          st.sampled_from([Verdict.HELD, Verdict.FLAKY, None])), max_size=30),
       st.booleans())
def test_the_measured_suite_is_the_documents_suite(pairs: list[tuple[Any, Any]],
                                                   fail_on_drop: bool) -> None:
    records = [CaseRecord.read({"nodeid": f"c{i}", "status": now}) for i, (now, _) in enumerate(pairs)]
    base = {f"c{i}": was for i, (_, was) in enumerate(pairs) if was is not None}
    measured = gate.measure_suite(records, base, fail_on_drop=fail_on_drop)
    if measured is None:
        return
    # what the results document holds reads back to the measured suite
    assert SuiteChange.from_json(json.loads(json.dumps(measured.to_json()))) == measured
    assert measured.blocks == (fail_on_drop and measured.dropped)


@pytest.mark.parametrize(("cls", "data", "message"), [
    (SuiteChange, {"cases": 1}, "missing held_now"),
    (Escalations, {"cases": 1, "calls": 2, "stopped": 0, "verdicts": {}, "more": 1}, "unknown more"),
])
def test_from_json_refuses_other_shapes(cls: Any, data: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cls.from_json(data)


#: records whose verdict is one the gate gives (the document asks each its pytest outcome)
run_records = st.tuples(case_records, verdicts).map(
    lambda p: dataclasses.replace(p[0], verdict=p[1]))


@settings(max_examples=60)
@given(st.lists(run_records, max_size=4), st.none() | suites, st.none() | escalations,
       st.booleans(), st.booleans())
def test_the_document_is_the_same_from_the_typed_input_and_from_plain_data(
        records: list[CaseRecord], suite: SuiteChange | None, esc: Escalations | None,
        capped: bool, written: bool) -> None:
    shared: dict[str, Any] = {
        "provenance": {"created": "2026-01-02T03:04:05+00:00", "exit_status": 0},
        "subject": {"provider": "local", "model": "local/bm25"},
        "settings": {"reps": 1, "fail_on_flaky": True, "update_baseline": False},
        "baseline_path": "main.json", "baseline_mode": "compared", "baseline_written": written,
        "cache_savings": {"m": 0.5}, "cost_cap": 2.0, "capped": capped, "probe_blocks": False,
        "preference": None, "lint": None,
    }
    stored = {r.key: {"status": Status.HELD, "passes": 1, "reps": 1} for r in records[:1]}
    typed = ResultsInput(**shared, records=tuple(records), gone=("gone.yaml::x",),
                         suite=suite, escalations=esc,
                         baseline_cases={k: CaseEntry.from_json(e) for k, e in stored.items()})
    plain = {**shared, "records": [r.to_json() for r in records], "gone": ["gone.yaml::x"],
             "baseline_cases": stored,
             "suite": suite.to_json() if suite else None,
             "escalations": esc.to_json() if esc else None}
    document = build(typed).to_json()
    assert json.dumps(document) == json.dumps(build(ResultsInput.read(plain)).to_json())
    assert document["summary"]["suite"] == (suite.to_json() if suite else None)
    assert ("escalations" in document["summary"]) == (esc is not None)
    # the file read back (toolselect report, merge, the run's masked copy) writes the same
    # file, key for key
    read = ResultsDocument.from_json(json.loads(json.dumps(document)))
    assert json.dumps(read.to_json()) == json.dumps(document)
