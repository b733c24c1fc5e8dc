"""One run report: the terminal summary, the results document, the markdown comment, the HTML
report and ``toolselect merge`` say the same counts (categories, confusions, cost and
unpriced calls, blocking cases), because they all read ``report.run_report``."""

from __future__ import annotations

import html
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.messages.plural import plural
from pytest_toolselect.records.baseline_entry import CaseEntry
from pytest_toolselect.records.report_input import ResultsInput, SummaryInput
from pytest_toolselect.records.run_records import CaseRecord
from pytest_toolselect.report import html as html_report
from pytest_toolselect.report import markdown, results
from pytest_toolselect.report.document import ResultsDocument
from pytest_toolselect.report.merge_shards import merge_documents
from pytest_toolselect.report.terminal import lines, summarize
from pytest_toolselect.terms.vocabulary import Verdict

SUBJECT = {"provider": "script", "model": "script/planned"}
PROVENANCE = {"created": "2026-01-01T00:00:00+00:00", "plugin_version": None, "pytest_version": "9",
              "python_version": "3.11", "command": ["pytest"], "git": None, "exit_status": None}
SETTINGS = {"reps": 3, "rule": "fisher-0.005", "history": 1, "fail_on_flaky": False,
            "fail_on_still_failing": False, "fail_on_suite_drop": False, "update_baseline": False}


def _terminal(records: list[dict[str, Any]]) -> list[str]:
    data = SummaryInput(
        records=tuple(map(CaseRecord.read, records)), model_line="toolselect: model m",
        baseline_path=None, baseline_mode=None, baseline_written=False, gone=(),
        cache_savings={}, cost_cap=None, verbose=False, cache=None, suite=None, escalations=None)
    return list(lines(summarize(data)))


def _document(records: list[dict[str, Any]], base: dict[str, Any] | None = None,
              shard: dict[str, Any] | None = None) -> dict[str, Any]:
    return results.build(ResultsInput.read({
        "provenance": PROVENANCE, "subject": SUBJECT, "settings": SETTINGS, "records": records,
        "baseline_cases": base or {}, "shard": shard})).to_json()


def _merge(shards: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Shards as their files hold them, merged, as the merged file holds it."""
    return merge_documents([(path, ResultsDocument.from_json(doc)) for path, doc in shards]).to_json()


def _comment(doc: dict[str, Any]) -> str:
    return markdown.render(ResultsDocument.from_json(doc))


def _page(doc: dict[str, Any]) -> str:
    return html_report.render(ResultsDocument.from_json(doc))


def _scored(nodeid: str, **fields: Any) -> dict[str, Any]:
    firsts = fields.get("first_tools", ["find"])
    passes = fields.pop("passes", len(firsts))
    return {"nodeid": nodeid, "key": nodeid, "order": 0, "case_id": nodeid, "question": "q",
            "expect_tool": ["find"], "status": gate.status_of(passes, len(firsts)),
            "passes": passes, "reps": len(firsts), "verdict": Verdict.PASSED, "model": "m",
            "usage": {"input_tokens": 10, "output_tokens": 2}, "costs": [0.5] * len(firsts),
            **fields}


# -- the two drifts ----------------------------------------------------------------------------


def test_a_case_that_allows_no_call_is_one_label_in_every_report() -> None:
    rec = _scored("a.toolselect.yaml::c", allow_no_tool=True, first_tools=["get"], passes=0,
                  verdict=Verdict.FAILED, failing_checks=["tool_choice"])
    doc = _document([rec])
    assert doc["summary"]["confusion"] == [
        {"expected": "find | (nothing)", "chosen": "get", "count": 1, "correct": False}]
    assert "top confusions (expected -> chosen): find | (nothing) -> get x1" in _terminal([rec])
    assert "expected find | (nothing)\nchose get\n1 rep (off target)" in html.unescape(
        _page(doc))


def test_an_unpriced_rep_is_an_unpriced_call_in_every_report() -> None:
    rec = _scored("a.toolselect.yaml::c", first_tools=["find", "find"], costs=[0.5, None])
    doc = _document([rec])
    assert doc["cost"]["by_model"]["m"] == {
        "calls": 2, "priced_usd": 0.5, "unpriced_calls": 1,
        "usage": {"input_tokens": 10, "output_tokens": 2}}
    assert ("  m: 1 call with no known price, not in the total (add the model under `prices:` "
            "in toolselect.yaml)") in _terminal([rec])
    assert "; 1 call with no known price, not in the total" in _comment(doc)
    assert "m: 2 calls, 1 unpriced" in html.unescape(_page(doc))
    # a merge counts it from the shard's per-rep costs, as the run did
    keys = [rec["key"]]
    merged = _merge([("s.json", _document([rec], shard={"index": 1, "count": 1,
                                                                  "keys": keys}))])
    assert merged["cost"]["by_model"]["m"]["unpriced_calls"] == 1


def test_a_shard_written_before_per_rep_costs_reads_its_cost_per_case() -> None:
    priced = _scored("a::p", first_tools=["find", "find"], costs=[0.5, 0.25])
    unpriced = _scored("a::u", first_tools=["find"], costs=[None])
    doc = _document([priced, unpriced], shard={"index": 1, "count": 1, "keys": ["a::p", "a::u"]})
    for case in doc["cases"]:
        del case["costs"]
    by_model = _merge([("old.json", doc)])["cost"]["by_model"]["m"]
    assert (by_model["calls"], by_model["priced_usd"], by_model["unpriced_calls"]) == (3, 0.75, 1)


# -- every report agrees -----------------------------------------------------------------------

TOOLS = ("find", "get", "list")


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any], list[int]]:
    """Records of one run (scored on one of two models, errored, capped), the baseline, and
    each record's shard of two."""
    n = draw(st.integers(1, 10))
    records, base = [], {}
    for i in range(n):
        key = f"cases.toolselect.yaml::c{i}"
        rec: dict[str, Any] = {"nodeid": key, "key": key, "order": i, "case_id": f"c{i}",
                               "question": f"question {i}",
                               "category": draw(st.sampled_from([None, "lookup", "write"])),
                               "expect_tool": draw(st.one_of(
                                   st.none(), st.lists(st.sampled_from(TOOLS), max_size=2,
                                                       unique=True))),
                               "allow_no_tool": draw(st.booleans())}
        entry = None
        if draw(st.booleans()):
            p = draw(st.integers(0, 3))
            entry = {"status": gate.status_of(p, 3), "passes": p, "reps": 3}
            base[key] = entry
        kind = draw(st.sampled_from(["scored", "scored", "scored", "error", "skipped"]))
        if kind == "scored":
            reps = draw(st.integers(1, 4))
            firsts = draw(st.lists(st.sampled_from([*TOOLS, None]), min_size=reps, max_size=reps))
            passes = draw(st.integers(0, reps))
            rec.update(status=gate.status_of(passes, reps), passes=passes, reps=reps,
                       verdict=gate.classify(passes, reps, None if entry is None
                                             else CaseEntry.from_json(entry),
                                             have_baseline=bool(base), rule="fisher-0.005"),
                       first_tools=firsts, model=draw(st.sampled_from(["m1", "m2"])),
                       usage={"input_tokens": draw(st.integers(1, 99)), "output_tokens": 1},
                       costs=draw(st.lists(st.sampled_from([None, 0.25, 0.5]), min_size=reps,
                                           max_size=reps)))
        else:
            rec.update(status=None, verdict=Verdict.ERROR if kind == "error" else Verdict.SKIPPED,
                       error="it did not run")
        records.append(rec)
    return records, base, [draw(st.integers(1, 2)) for _ in records]


def _terminal_counts(out: list[str]) -> tuple[dict[str, tuple[int, int]], list[str],
                                               dict[str, tuple[int, int]]]:
    cats: dict[str, tuple[int, int]] = {}
    confusions: list[str] = []
    cost: dict[str, tuple[int, int]] = {}
    for line in out:
        if line.startswith("held by category: "):
            for part in line.removeprefix("held by category: ").split(", "):
                name, held, scored = re.fullmatch(r"(.+) (\d+)/(\d+)", part).groups()  # type: ignore[union-attr]
                cats[name] = (int(held), int(scored))
        if line.startswith("top confusions (expected -> chosen): "):
            confusions = line.removeprefix("top confusions (expected -> chosen): ").split(", ")
        if m := re.fullmatch(r"  (m\d): \$[\d.]+ over (\d+) calls?, .*", line):
            cost[m[1]] = (int(m[2]), 0)
        if m := re.fullmatch(r"  (m\d): (\d+) calls? with no known price, .*", line):
            cost[m[1]] = (cost[m[1]][0], int(m[2]))
    return cats, confusions, cost


@settings(max_examples=120, deadline=None)
@given(runs())
def test_every_report_and_any_merge_agree_on_every_count(
        run: tuple[list[dict[str, Any]], dict[str, Any], list[int]]) -> None:
    records, base, split = run
    doc = _document(records, base)
    summary, cost = doc["summary"], doc["cost"]
    json_cats = {k: (v["held"], v["scored"]) for k, v in summary["categories"].items()}
    json_cost = {m: (r["calls"], r["unpriced_calls"]) for m, r in cost["by_model"].items()}
    wrong = [c for c in summary["confusion"] if not c["correct"]]

    # the JSON document's counts are those of the records themselves
    scored = [r for r in records if r["status"] is not None]
    assert sum(v["scored"] for v in summary["categories"].values()) == len(scored)
    assert sum(c["count"] for c in summary["confusion"]) == sum(
        len(r["first_tools"]) for r in scored if r["expect_tool"] is not None)
    assert json_cost == {m: (sum(len(r["costs"]) for r in scored if r["model"] == m),
                             sum(r["costs"].count(None) for r in scored if r["model"] == m))
                         for m in sorted({r["model"] for r in scored})}

    # the terminal
    cats, confusions, term_cost = _terminal_counts(_terminal(records))
    assert cats == {k: v for k, v in json_cats.items() if v[1]}
    assert confusions == [f"{c['expected']} -> {c['chosen']} x{c['count']}" for c in wrong[:10]]
    assert term_cost == json_cost
    # a blocking case is listed in a section of its own (keys are node ids here)
    listed = [li.strip().split(" ")[0] for li in _terminal(records) if li.startswith("  cases.")]
    assert set(doc["verdict"]["blocking_cases"]) <= set(listed)

    # the markdown comment
    md = _comment(doc)
    for name, row in summary["categories"].items():
        row_line = next(li for li in md.splitlines()
                        if li.startswith(f"| {markdown.text(name)} | "))
        cells = [c.strip().split(" ")[0] for c in row_line.strip("|").split(" | ")]
        assert cells[1:3] == [
            f"{row['held']}/{row['scored']}" if row["scored"] else "–",
            f"{row['baseline_held']}/{row['baseline_scored']}" if row["baseline_scored"] else "–",
        ], row_line
    for model, (calls, unpriced) in json_cost.items():
        line = next(li for li in md.splitlines() if li.startswith(f"- {markdown.code(model)}: "))
        assert f" over {plural(calls, 'call')}," in line
        assert (f"; {plural(unpriced, 'call')} with no known price" in line) == bool(unpriced)
    for key in doc["verdict"]["blocking_cases"]:
        assert markdown.code(key) in md

    # the HTML report
    page = html.unescape(_page(doc))
    for name, row in summary["categories"].items():
        if row["scored"]:
            assert f"<title>{name}, this run: {row['held']}/{row['scored']} held</title>" in page
    for c in summary["confusion"]:
        n = c["count"]
        assert (f"expected {c['expected']}\nchose {c['chosen']}\n{n} rep{'' if n == 1 else 's'} "
                f"({'acceptable' if c['correct'] else 'off target'})") in page
    for model, (calls, unpriced) in json_cost.items():
        assert f"{model}: {plural(calls, 'call')}" + (f", {unpriced} unpriced" if unpriced else "") in page
    for key in doc["verdict"]["blocking_cases"]:
        assert key in page

    # toolselect merge of any split into two shards
    keys = sorted(r["key"] for r in records)
    shards = [(f"s{k}.json", _document([r for r, s in zip(records, split, strict=True) if s == k],
                                       base, shard={"index": k, "count": 2, "keys": keys}))
              for k in (1, 2)]
    merged = _merge(shards)
    for part in ("total", "verdicts", "categories", "confusion", "intent_disagreements"):
        assert merged["summary"][part] == summary[part], part
    assert {m: (r["calls"], r["unpriced_calls"]) for m, r in merged["cost"]["by_model"].items()
            } == json_cost
    assert merged["cost"]["total_usd"] == cost["total_usd"]
    assert merged["verdict"]["blocking_cases"] == doc["verdict"]["blocking_cases"]
