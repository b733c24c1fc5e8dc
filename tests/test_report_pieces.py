"""A run's reports are written a case at a time: the document's cases are made from the
records as the writers read them (masked as each is made) and never held together, and what
is written in pieces is the whole document's text, byte for byte."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_html_report import document, large_run, record

from conftest import FIND, OFFICERS, Project, case
from pytest_toolselect.messages.masking import redact_data
from pytest_toolselect.records.report_input import ResultsInput
from pytest_toolselect.report import html as html_page
from pytest_toolselect.report import results
from pytest_toolselect.report.document import ResultsDocument
from pytest_toolselect.run import report_files as files
from pytest_toolselect.terms.vocabulary import Verdict

#: every JSON type, strings from every Unicode category (surrogates cannot be encoded as UTF-8)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12)
OBJECT = st.dictionaries(TEXT, JSON, max_size=5)


def whole_json(doc: ResultsDocument) -> str:
    """The document as one compact JSON text (what the writer wrote before it wrote pieces)."""
    return json.dumps(doc.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"


def run_input(n: int, secret: str = "") -> ResultsInput:
    """A run's input to results.build: n cases, mostly held, a secret in a few of them."""
    recs = [record(f"cases.toolselect.yaml::held-{i:04d}", Verdict.HELD,
                   why=f"held because {secret} {i}") for i in range(n)]
    recs.append(record("cases.toolselect.yaml::broke", Verdict.REGRESSION, question=secret))
    recs.append(record("cases.toolselect.yaml::moved", Verdict.HELD, tools_changed=True))
    base = document(recs)  # the same settings and provenance as the reports' own tests
    return ResultsInput.read({
        "provenance": {**base["provenance"], "command": ["pytest", f"--token={secret}"]},
        "subject": base["subject"], "settings": base["settings"], "records": recs,
        "baseline_cases": {}, "baseline_path": None, "baseline_mode": None, "preference": None})


@settings(max_examples=60, deadline=None)
@given(provenance=OBJECT, cases=st.lists(OBJECT, max_size=4), preference=JSON,
       tool_texts=st.dictionaries(TEXT, TEXT, max_size=3))
def test_the_json_written_in_pieces_is_the_whole_document(
        provenance: dict[str, Any], cases: list[dict[str, Any]], preference: Any,
        tool_texts: dict[str, str]) -> None:
    doc = dataclasses.replace(ResultsDocument.from_json(large_run(held=3)),
                              provenance=provenance, cases=tuple(cases), preference=preference,
                              tool_texts=tool_texts)
    text = "".join(files.json_pieces(doc))
    assert text == whole_json(doc)
    assert json.loads(text) == json.loads(whole_json(doc))


@settings(max_examples=25, deadline=None)
@given(secret=st.text(st.characters(exclude_categories=["Cs"]), min_size=4, max_size=10)
       .filter(lambda s: s.strip() == s and len(set(s)) > 1))
def test_masking_each_case_as_it_is_made_masks_as_the_whole_document_did(secret: str) -> None:
    data = run_input(3, secret)

    def mask(value: Any) -> Any:
        return redact_data(value, [secret])

    made = results.build_masked(data, mask)
    # what masking the whole document, then reading it back, gave
    whole = ResultsDocument.from_json(mask(results.build(data).to_json()))
    assert "".join(files.json_pieces(made)) == whole_json(whole)
    assert html_page.render(made) == html_page.render(whole)


def test_a_run_s_reports_are_written_holding_one_case_at_a_time(tmp_path: Path) -> None:
    alive, most = 0, 0

    class Case(dict[str, Any]):
        """A case of the document, counted while it exists."""

        def __init__(self, data: dict[str, Any]) -> None:
            nonlocal alive, most
            super().__init__(data)
            alive += 1
            most = max(most, alive)

        def __del__(self) -> None:
            nonlocal alive
            alive -= 1

    data = run_input(150)
    doc = results.build(data, Case)
    problems = files.write_reports(doc, {"json": tmp_path / "r.json", "html": tmp_path / "r.html"})
    assert problems == []
    # the writers read every case, and never held more than the one they wrote (and the next)
    assert 0 < most <= 2 and alive == 0
    # what they wrote is the whole document's text
    whole = results.build(data)
    assert (tmp_path / "r.json").read_text() == whole_json(whole)
    read_back = ResultsDocument.from_json(json.loads((tmp_path / "r.json").read_text()))
    assert (tmp_path / "r.html").read_text() == html_page.render(read_back)
    assert 'id="f-held"' in html_page.render(read_back)  # a page that folds its held cases


HELD = '''
import json

from pytest_toolselect.run.session import RUN_SESSION


def pytest_sessionfinish(session):
    plugin = session.config.pluginmanager.get_plugin("toolselect-not-run")
    records = session.config.stash[RUN_SESSION].state.records.values()
    with open("held.json", "w") as f:
        json.dump({"expected": sorted(plugin.expected),
                   "toolsets": len({id(r.toolset) for r in records}),
                   "offered": len({id(r.offered) for r in records}),
                   "records": len(records)}, f)
'''


def test_the_controller_holds_what_the_cases_share_once_and_lets_go_what_they_no_longer_need(
        project: Project) -> None:
    project.config(model="local/bm25")
    project.cases([case(*FIND), case(*OFFICERS), case("twice", FIND[1], FIND[2])])
    project.pytester.makeconftest(HELD)
    result = project.pytester.runpytest("-p", "no:randomly", "--toolselect-json", "out.json")
    result.assert_outcomes(passed=3)
    held = json.loads((project.path / "held.json").read_text())
    # every case was judged: none is kept to be named as never run
    assert held["expected"] == [] and held["records"] == 3
    # the cases of one server share one tool set and one order offered
    assert held["toolsets"] == held["offered"] == 1
    doc = json.loads((project.path / "out.json").read_text())
    assert len(doc["cases"]) == 3 and len({json.dumps(c["toolset"]) for c in doc["cases"]}) == 1


@settings(max_examples=40, deadline=None)
@given(checks=st.lists(TEXT, max_size=6), status=st.sampled_from(["held", "flaky", "failing"]),
       first=st.none() | TEXT)
def test_baseline_entries_share_their_words_and_write_back_as_read(
        checks: list[str], status: str, first: str | None) -> None:
    from pytest_toolselect.records.baseline_entry import CaseEntry

    # each entry as a file's JSON decodes it: its own string objects
    data = [json.loads(json.dumps({"status": status, "passes": 1, "reps": 1, "first_tool": first,
                                   "checks": checks})) for _ in range(3)]
    entries = [CaseEntry.from_json(d) for d in data]
    assert all(e.to_json() == d for e, d in zip(entries, data, strict=True))
    # one check list and one key list for every entry that holds the same
    assert len({id(e.checks) for e in entries}) == 1 and len({id(e.keys) for e in entries}) == 1
    assert all(a is b for a, b in zip(entries[0].checks or (), entries[2].checks or (),
                                      strict=True))


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(TEXT, max_size=9000), value=JSON)
def test_text_written_in_joined_pieces_is_the_whole_text(pieces: list[str], value: Any) -> None:
    from pytest_toolselect.gate.atomic import PIECES_PER_WRITE, joined

    batches = list(joined(iter(pieces)))
    assert "".join(batches) == "".join(pieces)
    assert len(batches) == -(-len(pieces) // PIECES_PER_WRITE)  # a write per few thousand
    # the baseline's writer: its encoder's tokens, joined, are json.dumps' text
    encoder = json.JSONEncoder(indent=2, ensure_ascii=False)
    assert "".join(joined(encoder.iterencode(value))) == json.dumps(value, indent=2,
                                                                     ensure_ascii=False)


def test_a_baseline_is_written_as_json_dumps_would_have_written_it(tmp_path: Path) -> None:
    from pytest_toolselect.gate import baseline as gate_baseline

    source = Path(__file__).parent.parent / "examples" / "baseline.json"
    base = gate_baseline.load(source)
    assert base is not None and base.cases
    out = tmp_path / "written.json"
    gate_baseline.write(out, base)
    expected = json.dumps(base.to_json(), indent=2, sort_keys=False, ensure_ascii=False) + "\n"
    assert out.read_text(encoding="utf-8") == expected
    reread = gate_baseline.load(out)
    assert reread is not None and reread.to_json() == base.to_json()
