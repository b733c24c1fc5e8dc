"""The one verdict, as a property: for any records and baseline, the run's verdict
(what the plugin's exit status is), the results document's and ``toolselect merge``'s of
any split of the run into shards give the same exit status and the same blocking cases."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.gate.decision import BLOCKING_OUTCOMES, GateSettings, case_outcome, decide
from pytest_toolselect.positions.sourcemap import load_schema
from pytest_toolselect.records.baseline_entry import CaseEntry
from pytest_toolselect.records.report_input import ResultsInput
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.report import results
from pytest_toolselect.report.document import ResultsDocument
from pytest_toolselect.report.markdown import text as markdown_text
from pytest_toolselect.report.merge_shards import merge_documents
from pytest_toolselect.terms.vocabulary import Status, Verdict

SUBJECT = {"provider": "script", "model": "script/planned"}
PROVENANCE = {"created": "2026-01-01T00:00:00+00:00", "plugin_version": None, "pytest_version": "9",
              "python_version": "3.11", "command": ["pytest"], "git": None, "exit_status": None}


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], list[int]]:
    """Records of one run (scored, errored, capped, decorated bodies that failed), the
    baseline they were judged against, the settings, and each record's shard."""
    flags = {name: draw(st.booleans()) for name in (
        "fail_on_flaky", "fail_on_still_failing", "fail_on_suite_drop", "update_baseline")}
    settings_ = {"reps": 3, "rule": draw(st.sampled_from(gate.RULE_NAMES)), "history": 1, **flags}
    have_baseline = draw(st.booleans())
    n = draw(st.integers(1, 10))
    shards = draw(st.integers(1, 4))
    records, base = [], {}
    for i in range(n):
        key = f"cases.toolselect.yaml::c{i}"
        kind = draw(st.sampled_from(["scored", "scored", "scored", "error", "skipped"]))
        rec: dict[str, Any] = {"nodeid": key, "key": key, "order": i, "case_id": f"c{i}",
                               "question": f"question {i}"}
        entry = None
        if have_baseline and draw(st.booleans()):
            p = draw(st.integers(0, 5))
            entry = {"status": gate.status_of(p, 5), "passes": p, "reps": 5}
            base[key] = entry
        if kind == "scored":
            reps = draw(st.integers(1, 4))
            passes = draw(st.integers(0, reps))
            rec.update(status=gate.status_of(passes, reps), passes=passes, reps=reps,
                       verdict=gate.classify(passes, reps, None if entry is None
                                             else CaseEntry.from_json(entry),
                                             have_baseline=have_baseline,
                                             rule=settings_["rule"]))
            if key.endswith(("1", "4")) and draw(st.booleans()):
                rec["test_failure"] = "AssertionError: the body's own check"
        else:
            rec.update(status=None, verdict=Verdict.ERROR if kind == "error" else Verdict.SKIPPED,
                       error="it did not run")
        records.append(rec)
    split = [draw(st.integers(1, shards)) for _ in records]
    others = [draw(st.integers(0, 1)) for _ in range(shards)]
    return records, base, settings_, [shards, *split, *others]


def _status(base: dict[str, Any]) -> dict[str, Any]:
    return {k: entry.get("status") for k, entry in base.items()}


def _document(records: list[dict[str, Any]], base: dict[str, Any], settings_: dict[str, Any],
              other_failed: int = 0, shard: dict[str, Any] | None = None) -> dict[str, Any]:
    capped = any(r["verdict"] == Verdict.SKIPPED for r in records)
    suite = gate.measure_suite(list(map(CaseRecord.read, records)), _status(base), fail_on_drop=bool(
        settings_["fail_on_suite_drop"] and not settings_["update_baseline"]))
    return results.build(ResultsInput.read({
        "provenance": {**PROVENANCE, "other_failed": other_failed},
        "subject": SUBJECT, "settings": settings_, "records": records,
        "baseline_cases": base, "capped": capped,
        "suite": suite.to_json() if suite else None, "other_failed": other_failed,
        "shard": shard})).to_json()


def _merge(shards: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Shards as their files hold them, merged, as the merged file holds it."""
    return merge_documents([(path, ResultsDocument.from_json(doc)) for path, doc in shards]).to_json()


@settings(max_examples=150, deadline=None)
@given(runs())
def test_the_run_its_document_and_any_merge_of_its_shards_agree(
        run: tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], list[int]]) -> None:
    records, base, settings_, layout = run
    n, split, others = layout[0], layout[1:1 + len(records)], layout[1 + len(records):]
    schema = load_schema("tool_selection.v1")
    other = sum(others)
    whole = _document(records, base, settings_, other)
    jsonschema.Draft202012Validator(schema).validate(whole)
    typed = [CaseRecord.read(r) for r in records]
    suite = gate.measure_suite(typed, _status(base), fail_on_drop=bool(
        settings_["fail_on_suite_drop"] and not settings_["update_baseline"]))
    decided = decide(typed, GateSettings.read(settings_), suite_blocks=bool(suite and suite.blocks),
                     capped=any(r["verdict"] == Verdict.SKIPPED for r in records), other_failed=other)
    # the run's own verdict (what the plugin sets the exit status to) is the document's
    assert whole["verdict"] == decided.to_json()
    flags = GateSettings.read(settings_)
    blocking = [r["key"] for r in records if case_outcome(CaseRecord.read(r), flags) in BLOCKING_OUTCOMES]
    assert decided.blocking_cases == blocking
    assert decided.exit_status == (2 if any(r["verdict"] == Verdict.SKIPPED for r in records)
                                   else 1 if decided.reasons else 0)
    # each case's outcome in the document is the verdict's
    assert [c["outcome"] for c in whole["cases"]] == [c.outcome for c in decided.cases]

    keys = sorted(r["key"] for r in records)
    shards = []
    for k in range(1, n + 1):
        mine = [r for r, s in zip(records, split, strict=True) if s == k]
        doc = _document(mine, base, settings_, others[k - 1],
                        shard={"index": k, "count": n, "keys": keys})
        jsonschema.Draft202012Validator(schema).validate(doc)
        shards.append((f"shard-{k}.json", doc))
    merged = _merge(shards)
    jsonschema.Draft202012Validator(schema).validate(merged)
    assert merged["verdict"] == whole["verdict"]
    assert merged["provenance"]["exit_status"] == decided.exit_status


def test_an_older_shard_file_without_other_failed_still_fails_on_its_plain_tests() -> None:
    settings_ = {"reps": 1, "rule": "fisher-0.005", "history": 1, "fail_on_suite_drop": False,
                 "update_baseline": False}
    held = {"nodeid": "a.toolselect.yaml::c", "key": "a.toolselect.yaml::c", "order": 0,
            "case_id": "c", "question": "q", "status": Status.HELD, "passes": 1, "reps": 1,
            "verdict": Verdict.PASSED}
    keys = [held["key"]]
    doc = _document([held], {}, settings_, shard={"index": 1, "count": 1, "keys": keys})
    assert _merge([("s.json", doc)])["provenance"]["exit_status"] == 0
    # written before other_failed: its failed_items counted a plain test beside its case
    del doc["provenance"]["other_failed"]
    doc["provenance"]["failed_items"] = 1
    merged = _merge([("s.json", doc)])
    assert merged["provenance"]["exit_status"] == 1 and merged["verdict"]["blocking"]


def _as_expected(rec: dict[str, Any]) -> CaseRecord:
    """What the controller knows of a case before it runs: the case, nothing scored."""
    return CaseRecord.read({k: rec[k] for k in ("nodeid", "key", "order", "case_id", "question")}
                           | {"status": None, "verdict": Verdict.ERROR})


@settings(max_examples=100, deadline=None)
@given(runs(), st.data())
def test_a_case_missing_from_the_records_blocks_in_the_run_its_document_comment_and_merge(
        run: tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], list[int]],
        data: st.DataObject) -> None:
    from pytest_toolselect.gate.expected import NOT_RUN, unjudged
    from pytest_toolselect.report.markdown import render

    records, base, settings_, layout = run
    n, split = layout[0], layout[1:1 + len(records)]
    # any non-empty subset of the expected cases ends without a record (a worker died, a
    # hook ran the tests, a conftest dropped the item)
    lost = data.draw(st.sets(st.sampled_from([r["key"] for r in records]), min_size=1))
    expected = {r["nodeid"]: _as_expected(r) for r in records}
    kept = [r for r in records if r["key"] not in lost]

    def judged(mine: list[dict[str, Any]], of: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records a controller holds once every case it expected is judged or named."""
        named = unjudged({r["nodeid"]: expected[r["nodeid"]] for r in of},
                         {r["nodeid"] for r in mine}, lambda nodeid: f"{nodeid} was lost")
        assert {r.key for r in named} == {r["key"] for r in of} - {r["key"] for r in mine}
        together = [*mine, *(r.to_json() for r in named)]
        return sorted(together, key=lambda r: r["order"])

    whole = _document(judged(kept, records), base, settings_)
    jsonschema.Draft202012Validator(load_schema("tool_selection.v1")).validate(whole)
    verdict = whole["verdict"]
    # the run blocks and names every lost case, whatever else it holds
    assert verdict["blocking"] and verdict["exit_status"] in (1, 2), verdict
    assert lost <= set(verdict["blocking_cases"])
    by_key = {c["key"]: c for c in whole["cases"]}
    for key in lost:
        assert by_key[key]["outcome"] == "error" and by_key[key]["error"].startswith(NOT_RUN)
    typed = [CaseRecord.read(r) for r in judged(kept, records)]
    suite = gate.measure_suite(typed, _status(base), fail_on_drop=bool(
        settings_["fail_on_suite_drop"] and not settings_["update_baseline"]))
    decided = decide(typed, GateSettings.read(settings_), suite_blocks=bool(suite and suite.blocks),
                     capped=any(r.verdict == Verdict.SKIPPED for r in typed))
    assert verdict == decided.to_json()
    # the comment says blocking and names each lost case
    comment = render(ResultsDocument.from_json(whole))
    assert comment.startswith("## ❌"), comment[:200]
    for key in lost:
        assert markdown_text(key) in comment, key

    # each shard judges what it expected; the merge says what the whole run says
    keys = sorted(r["key"] for r in records)
    shards = []
    for k in range(1, n + 1):
        of = [r for r, s in zip(records, split, strict=True) if s == k]
        mine = [r for r in of if r["key"] not in lost]
        shards.append((f"shard-{k}.json", _document(judged(mine, of), base, settings_,
                                                    shard={"index": k, "count": n, "keys": keys})))
    merged = _merge(shards)
    assert merged["verdict"] == verdict
    assert merged["provenance"]["exit_status"] == verdict["exit_status"]


def test_merge_names_a_case_left_out_on_purpose_only_when_no_shard_ran_it() -> None:
    settings_ = {"reps": 1, "rule": "fisher-0.005", "history": 1, "fail_on_suite_drop": False,
                 "update_baseline": False}

    def held(i: int) -> dict[str, Any]:
        key = f"a.toolselect.yaml::c{i}"
        return {"nodeid": key, "key": key, "order": i, "case_id": f"c{i}", "question": "q",
                "status": Status.HELD, "passes": 1, "reps": 1, "verdict": Verdict.PASSED}

    keys = [held(i)["key"] for i in range(3)]

    def shard(k: int, ran: list[int], narrowed: list[int]) -> tuple[str, dict[str, Any]]:
        doc = results.build(ResultsInput.read({
            "provenance": PROVENANCE, "subject": SUBJECT, "settings": settings_,
            "records": [held(i) for i in ran], "shard": {"index": k, "count": 2, "keys": keys},
            "not_run_in_this_run": [keys[i] for i in narrowed]})).to_json()
        assert doc["summary"].get("not_run_in_this_run", []) == [keys[i] for i in narrowed]
        return f"shard-{k}.json", doc

    # -k left c1 out of shard 1, which shard 2 ran; c2 no shard ran
    merged = _merge([shard(1, [0], [1, 2]), shard(2, [1], [2])])
    assert merged["summary"]["not_run_in_this_run"] == [keys[2]]
    assert not merged["verdict"]["blocking"]


@settings(max_examples=60, deadline=None)
@given(runs(), st.data())
def test_a_merge_blocks_on_a_case_of_the_suite_that_no_shard_holds(
        run: tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any], list[int]],
        data: st.DataObject) -> None:
    from pytest_toolselect.gate.expected import NOT_IN_ANY_SHARD

    records, base, settings_, layout = run
    n, split = layout[0], layout[1:1 + len(records)]
    keys = sorted(r["key"] for r in records)
    # a shard's file holds fewer cases than its suite (a writer that lost them), unnamed
    lost = data.draw(st.sets(st.sampled_from(keys), min_size=1))
    shards = []
    for k in range(1, n + 1):
        mine = [r for r, s in zip(records, split, strict=True) if s == k and r["key"] not in lost]
        shards.append((f"shard-{k}.json", _document(mine, base, settings_,
                                                    shard={"index": k, "count": n, "keys": keys})))
    merged = _merge(shards)
    jsonschema.Draft202012Validator(load_schema("tool_selection.v1")).validate(merged)
    assert merged["verdict"]["blocking"] and merged["provenance"]["exit_status"] in (1, 2)
    assert lost <= set(merged["verdict"]["blocking_cases"])
    named = {c["key"]: c for c in merged["cases"]}
    for key in lost:
        assert named[key]["outcome"] == "error" and NOT_IN_ANY_SHARD in named[key]["error"]
