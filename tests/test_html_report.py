"""The HTML report: pure tests of render() on built documents, then the example suite's
report opened in a real headless Chromium (no network, charts drawn, the filter works).

The browser tests need the ``playwright`` package and a Chromium binary (``$CHROMIUM``,
else /usr/bin/chromium); without them they skip, unless TOOLSELECT_REQUIRE_BROWSER=1
(CI), where a missing browser is a failure. Screenshots go to $TOOLSELECT_ARTIFACTS
(default: test-artifacts/ at the repository root).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.records.report_input import ResultsInput
from pytest_toolselect.report import html as html_page
from pytest_toolselect.report import results
from pytest_toolselect.report.document import ResultsDocument
from pytest_toolselect.report.html import CSP, script_json
from pytest_toolselect.report.html_base import CALL_CLIP, CLIP
from pytest_toolselect.run import report_files as files
from pytest_toolselect.terms.vocabulary import Verdict

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = jsonschema.Draft202012Validator(
    json.loads((ROOT / "pytest_toolselect" / "schemas" / "tool_selection.v1.json").read_text()))
SVG_NS = "{http://www.w3.org/2000/svg}"

#: text a model or a case file could carry, aimed at every way out of the markup
HOSTILE = ("</script><script>alert(1)</script> <img src=x onerror=alert(1)> `${alert(1)}` "
           "</details><details open> \u2028\u2029 \"quoted\" 'single' & <!-- --> </svg><svg onload=alert(1)>")

_STATUS = {Verdict.HELD: "held", Verdict.PASSED: "held", Verdict.NEW: "held", Verdict.FIXED: "held",
           Verdict.FLAKY: "flaky", Verdict.REGRESSION: "failing", Verdict.FAILED: "failing",
           Verdict.NEW_FAILING: "failing", Verdict.STILL_FAILING: "failing", Verdict.ERROR: None,
           Verdict.SKIPPED: None, Verdict.DRIFT: "failing"}


def record(nodeid: str, verdict: str, *, expect: list[str] | None = None,
           chosen: list[str | None] | None = None, **extra: Any) -> dict[str, Any]:
    """One case as the session hands it to results.build."""
    status = _STATUS[verdict]
    expect = ["find_company"] if expect is None else expect
    chosen = (["find_company"] if status == "held" else ["list_officers"]) if chosen is None else chosen
    if status is None:
        chosen = []
    calls = [[{"name": t, "arguments": {"name": "Royal Mail"}}] if t else [] for t in chosen]
    passes = sum(1 for t in chosen if t in expect)
    failing = [] if status == "held" or status is None else ["tool_choice"]
    rec = {
        "nodeid": nodeid, "case_id": nodeid.rpartition("::")[2], "category": "grounding", "intent": None,
        "question": "Can you tell me about Royal Mail Group Limited?",
        "why": "Given a name and no number, the only correct first move is to search.",
        "expect_tool": expect, "allow_no_tool": False, "status": status, "verdict": verdict,
        "passes": passes, "reps": len(chosen), "first_tool": chosen[0] if chosen else None,
        "first_tools": chosen, "calls": calls,
        "checks": [[{"name": "tool_choice", "passed": t in expect, "detail": f"first tool: {t}"}]
                   for t in chosen],
        "failing_checks": failing,
        "failing_detail": {"tool_choice": "list_officers was called first; expected find_company"}
        if failing else {},
        "error": "the provider answered 500 after 3 retries" if verdict == Verdict.ERROR else None,
        "model": "local/bm25", "usage": {}, "costs": [0.0] * len(chosen), "cached": [False] * len(chosen),
    }
    rec.update(extra)
    return rec


def preference_doc(effects: dict[str, tuple[float, float, float]] | None = None,
                   first: tuple[float, float, float] | None = (0.62, 0.55, 0.70)) -> dict[str, Any]:
    """A tool_preference.v1 document with the summary keys the page draws."""
    effects = {"vendor_name": (0.0, -0.05, 0.05), "assertive": (0.30, 0.20, 0.41),
               "social_proof": (-0.25, -0.40, -0.10)} if effects is None else effects
    return {
        "schema_version": "tool_preference.v1",
        "subject": {"provider": "local", "model": "local/bm25"},
        "settings": {"reps": 2},
        "groups": [],
        "results": [],
        "summary": {
            "n_groups": 14, "n_pair_groups": 12, "n_control_groups": 2, "reps": 2, "n_calls": 560,
            "n_scored": 560, "n_errors": 0, "n_skipped": 0, "n_truncated": 0, "n_pair_calls": 528,
            "n_control_calls": 32,
            "first_twin_share_baseline": (None if first is None else
                                          {"mean": first[0], "ci": [first[1], first[2]], "groups": 12}),
            "factor_effects": {f: {"mean": m, "ci": [lo, hi], "groups": 12}
                               for f, (m, lo, hi) in effects.items()},
            "pair_outcomes": {"both_twins": 0.01, "distractor": 0.0, "none": 0.05, "unmatched": 0.0},
            "control_over_call": {"baseline": 0.0, "assertive": 0.125},
        },
    }


def document(records: list[dict[str, Any]], *, preference: dict[str, Any] | None = None,
             baseline: dict[str, dict[str, Any]] | None = None, **data: Any) -> dict[str, Any]:
    """A results document made by the plugin's own builder, checked against its schema."""
    settings = {"reps": 1, "rule": "fisher-0.005", "history": 5, "fail_on_flaky": False,
                "fail_on_still_failing": False, "update_baseline": False}
    doc = results.build(ResultsInput.read({
        "provenance": {"created": "2026-01-02T03:04:05+00:00", "plugin_version": "0.1.0",
                       "pytest_version": "9.0.0", "python_version": "3.11.7",
                       "command": ["pytest", "cases"], "git": {"commit": "ab" * 20, "dirty": True},
                       "exit_status": 1},
        "subject": {"provider": "local", "model": "local/bm25", "settings": {}, "system_hash": None},
        "settings": settings,
        "records": records,
        "baseline_cases": baseline or {},
        "baseline_path": "main.json" if baseline else None,
        "baseline_mode": "compared" if baseline else None,
        "preference": preference,
        **data,
    })).to_json()
    SCHEMA.validate(doc)
    return doc


def render(doc: dict[str, Any]) -> str:
    """The page for a document as a results file holds it, read once as `toolselect report` reads it."""
    return html_page.render(ResultsDocument.from_json(doc))


class Tags(HTMLParser):
    """Every start tag with its attributes, and the raw text of each script element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


def parse(page: str) -> Tags:
    tags = Tags()
    tags.feed(page)
    tags.close()
    return tags


def index_of(page: str) -> list[dict[str, Any]]:
    found = re.search(r'<script type="application/json" id="ts-index">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))


def svg(page: str, svg_id: str) -> ET.Element:
    """One chart, parsed as XML (so it is also well formed)."""
    found = re.search(rf'<svg id="{svg_id}".*?</svg>', page, re.S)
    assert found is not None, f"no svg#{svg_id}"
    return ET.fromstring(found.group(0))


# -- pure tests of render() ---------------------------------------------------------------------


def hostile_document() -> dict[str, Any]:
    args = {"name": HOSTILE, HOSTILE: "key", "nested": {"html": "<iframe srcdoc=x onload=alert(1)></iframe>"}}
    rec = record(f"cases.toolselect.yaml::{HOSTILE}", Verdict.REGRESSION, expect=[HOSTILE, "find_company"],
                 chosen=[f"tool{HOSTILE}"], question=HOSTILE, why=HOSTILE, category=HOSTILE, intent=HOSTILE,
                 failing_detail={"tool_choice": HOSTILE}, failing_checks=["tool_choice"])
    rec["calls"] = [[{"name": f"tool{HOSTILE}", "arguments": args},
                     {"name": "raw", "arguments": None, "raw_arguments": HOSTILE}]]
    err = record("cases.toolselect.yaml::err", Verdict.ERROR, error=HOSTILE)
    base = {rec["nodeid"]: {"status": "held", "passes": 1, "reps": 1, "first_tool": "find_company",
                            "failing_checks": []}}
    doc = document([rec, err], baseline=base, preference=preference_doc(
        effects={HOSTILE: (0.1, 0.0, 0.2), "assertive": (0.2, 0.1, 0.3)}))
    doc["subject"]["model"] = HOSTILE
    doc["baseline"]["gone"] = [HOSTILE]
    doc["summary"]["intent_disagreements"] = {HOSTILE: {HOSTILE: 1, "find_company": 2}}
    doc["cost"]["by_model"] = {HOSTILE: {"calls": 1, "priced_usd": 0.0, "unpriced_calls": 1, "usage": {}}}
    SCHEMA.validate(doc)
    return doc


def test_hostile_text_stays_text() -> None:
    doc = hostile_document()
    page = render(doc)
    tags = parse(page)
    names = [t for t, _ in tags.tags]
    # markup only the page itself makes: two scripts (the data block and the filter), no image,
    # no details, no event handler attribute anywhere
    assert names.count("script") == 2
    assert page.count("</script>") == 2
    assert page.count("<script") == 2
    assert not {"img", "details", "iframe"} & set(names)
    assert names.count("svg") == 3
    handlers = [(t, a) for t, attrs in tags.tags for a in attrs if a.lower().startswith("on")]
    assert handlers == []
    # the data block holds no raw character that could end it or break a JavaScript string
    data_block = tags.scripts[0]
    for raw in ("<", ">", "&", "\u2028", "\u2029"):
        assert raw not in data_block
    # what was escaped comes back intact
    index = index_of(page)
    assert HOSTILE.lower() in index[0]["text"]
    assert index[0]["category"] == HOSTILE
    # and it is shown escaped, as text, in the table, the header and the charts
    shown = html.escape(HOSTILE, quote=True)
    assert page.count(shown) >= 5
    for chart in ("confusion", "categories", "forest"):
        assert svg(page, chart).tag == f"{SVG_NS}svg"


def test_hostile_tool_names_are_escaped_in_the_confusion_matrix() -> None:
    page = render(hostile_document())
    matrix = svg(page, "confusion")
    cells = [g for g in matrix.iter(f"{SVG_NS}g") if g.get("class") == "cm-cell"]
    assert {c.get("data-chosen") for c in cells} == {f"tool{HOSTILE}"}
    assert {c.get("data-expected") for c in cells} == {f"{HOSTILE} | find_company"}
    labels = ["".join(t.itertext()) for t in matrix.iter(f"{SVG_NS}title")]
    assert any(HOSTILE in label for label in labels)


def test_long_values_are_clipped_for_display_but_searchable() -> None:
    long_arg = "x" * 4000 + "TAIL"
    rec = record("c.yaml::long", Verdict.HELD)
    rec["calls"] = [[{"name": "find_company", "arguments": {"name": long_arg}}]]
    rec["question"] = "q" * 1000
    page = render(document([rec]))
    assert long_arg not in page
    assert "TAIL" not in page.split('id="ts-index"')[0]
    assert "… (1000 chars)" in page
    shown_call = f'find_company({json.dumps({"name": long_arg})})'
    assert f"… ({len(shown_call)} chars)" in page
    markup = page.split('id="ts-index"')[0]
    assert "q" * CLIP in markup and "q" * (CLIP + 1) not in markup
    assert "x" * 100 in markup and "x" * CALL_CLIP not in markup
    assert "x" * 1000 in index_of(page)[0]["text"]


def test_same_document_same_bytes() -> None:
    doc = hostile_document()
    first = render(doc)
    assert render(copy.deepcopy(doc)) == first
    assert render(json.loads(json.dumps(doc))) == first
    assert files.render("html", ResultsDocument.from_json(doc)) == first


def test_the_policy_allows_exactly_the_inline_style_and_script() -> None:
    page = render(document([record("c.yaml::a", Verdict.HELD)]))
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    code = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert style is not None and len(code) == 1

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert f"script-src {digest(code[0])}" in CSP
    assert f"style-src {digest(style.group(1))}" in CSP
    assert "default-src 'none'" in CSP
    assert f'<meta http-equiv="Content-Security-Policy" content="{html.escape(CSP)}">' in page
    # the policy comes before anything it governs
    assert page.index("Content-Security-Policy") < page.index("<style>")


def test_script_json_cannot_end_its_element() -> None:
    text = script_json({"a": "</script><!--\u2028\u2029&"})
    assert "</" not in text and "<!--" not in text and "\u2028" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><!--\u2028\u2029&"}


def test_every_verdict_is_shown_and_filterable() -> None:
    verdicts = list(gate.VERDICT_ORDER)
    base = {f"c.yaml::{v}": {"status": "held", "passes": 1, "reps": 1, "first_tool": "find_company",
                             "failing_checks": []}
            for v in verdicts if v not in (Verdict.NEW, Verdict.PASSED)}
    # given in reverse: the table lists the most serious verdict first
    doc = document([record(f"c.yaml::{v}", v) for v in reversed(verdicts)], baseline=base)
    assert set(doc["summary"]["verdicts"]) == set(verdicts)
    page = render(doc)
    tags = parse(page)
    verdict_select = page.split('id="f-verdict"')[1].split("</select>")[0]
    assert re.findall(r'<option value="([^"]*)"', verdict_select) == ["", *verdicts]
    rows = [a for t, a in tags.tags if t == "tr" and (a.get("class") or "").startswith("case")]
    assert len(rows) == len(verdicts)
    severe = [r["data-i"] for r in rows if "severe" in (r.get("class") or "")]
    assert severe == ["0", "1", "2"]  # regression, failed, error
    chips = [a["class"] for t, a in tags.tags if t == "span" and (a.get("class") or "").startswith("chip")]
    for v in verdicts:
        assert f"chip v-{v}" in chips
    # regressions, failures and errors block, and the page says so with the builder's reasons
    assert doc["verdict"]["blocking"]
    assert 'id="verdict">BLOCKING<' in page
    for reason in doc["verdict"]["reasons"]:
        assert f"<li>{html.escape(reason)}</li>" in page
    assert [r["verdict"] for r in index_of(page)] == verdicts


def test_a_run_with_only_cases_has_no_probe_card() -> None:
    page = render(document([record("c.yaml::a", Verdict.HELD), record("c.yaml::b", Verdict.REGRESSION)]))
    assert 'id="preference-card"' not in page and "Preference probe" not in page
    assert 'id="forest"' not in page
    assert 'id="confusion"' in page and 'id="categories"' in page
    assert 'id="verdict">NOT BLOCKING<' not in page


def test_a_run_with_only_groups_has_no_matrix_and_an_empty_table() -> None:
    doc = document([], preference=preference_doc())
    assert doc["cases"] == []
    page = render(doc)
    assert "No selection case was scored" in page and "No selection case ran" in page
    assert 'id="confusion"' not in page and 'id="categories"' not in page
    assert index_of(page) == []
    assert 'id="verdict">NOT BLOCKING<' in page
    assert svg(page, "forest") is not None


def test_confusion_matrix_cells_match_the_document() -> None:
    recs = [record("c.yaml::a", Verdict.HELD, chosen=["find_company", "find_company"]),
            record("c.yaml::b", Verdict.REGRESSION, chosen=["list_officers", None]),
            record("c.yaml::c", Verdict.HELD, expect=["lookup_vat", "vat_check"], chosen=["vat_check"])]
    base = {r["nodeid"]: {"status": "held", "passes": 1, "reps": 1, "first_tool": None,
                          "failing_checks": []} for r in recs}
    doc = document(recs, baseline=base)
    cells = [g for g in svg(render(doc), "confusion").iter(f"{SVG_NS}g") if g.get("class") == "cm-cell"]
    drawn = {(c.get("data-expected"), c.get("data-chosen")):
             (int("".join(c.find(f"{SVG_NS}text").itertext())), c.get("data-correct"),
              c.find(f"{SVG_NS}rect").get("fill")) for c in cells}
    want = {(c["expected"], c["chosen"]): (c["count"], "true" if c["correct"] else "false")
            for c in doc["summary"]["confusion"]}
    assert {k: v[:2] for k, v in drawn.items()} == want
    # acceptable and off-target cells in different hues
    ok = {v[2] for v in drawn.values() if v[1] == "true"}
    bad = {v[2] for v in drawn.values() if v[1] == "false"}
    assert ok and bad and not ok & bad
    # columns follow the rows, so acceptable cells lie on the diagonal; no call is last
    xs = {}
    for c in cells:
        xs[c.get("data-chosen")] = float(c.find(f"{SVG_NS}rect").get("x"))
    assert xs["find_company"] < xs["lookup_vat" if "lookup_vat" in xs else "vat_check"] < xs["(nothing)"]


def test_a_tool_name_holding_the_separator_is_judged_by_its_name() -> None:
    # the label joins names with " | ": splitting it back would call this right choice wrong
    odd = "find | company"
    recs = [record("c.yaml::a", Verdict.HELD, expect=[odd], chosen=[odd]),
            record("c.yaml::b", Verdict.REGRESSION, expect=[odd], chosen=["find"])]
    base = {r["nodeid"]: {"status": "held", "passes": 1, "reps": 1, "first_tool": odd,
                          "failing_checks": []} for r in recs}
    doc = document(recs, baseline=base)
    assert {(c["chosen"], c["correct"]) for c in doc["summary"]["confusion"]} == {(odd, True),
                                                                                  ("find", False)}
    cells = [g for g in svg(render(doc), "confusion").iter(f"{SVG_NS}g") if g.get("class") == "cm-cell"]
    assert {c.get("data-chosen"): c.get("data-correct") for c in cells} == {odd: "true", "find": "false"}


def test_a_matrix_of_200_tools_stays_small() -> None:
    tools = [f"tool_{i:03d}" for i in range(200)]
    recs = [record(f"c.yaml::{t}", Verdict.REGRESSION, expect=[t], chosen=[tools[(i + 1) % 200]])
            for i, t in enumerate(tools)]
    matrix_markup = re.search(r'<svg id="confusion".*?</svg>', render(document(recs)), re.S)
    assert matrix_markup is not None
    matrix = ET.fromstring(matrix_markup.group(0))
    # 40,000 grid positions, 200 of them filled: the empty ones are one tiled rectangle
    assert sum(1 for g in matrix.iter(f"{SVG_NS}g") if g.get("class") == "cm-cell") == 200
    assert len(list(matrix.iter(f"{SVG_NS}rect"))) < 200 + 200 + 10  # filled, never-chosen, grid
    assert len(matrix_markup.group(0)) < 250_000


def test_forest_plot_places_each_effect_against_zero() -> None:
    doc = document([record("c.yaml::a", Verdict.HELD)], preference=preference_doc())
    forest = svg(render(doc), "forest")
    zero = [line for line in forest.iter(f"{SVG_NS}line") if line.get("class") == "ref"]
    assert len(zero) == 2  # the effects' 0 and the position panel's 0.5
    zero_x, half_x = (float(line.get("x1")) for line in zero)
    rows = {g.get("data-factor"): g for g in forest.iter(f"{SVG_NS}g") if g.get("class") == "effect"}
    assert set(rows) == {"vendor_name", "assertive", "social_proof", "first listed"}

    def dot(name: str) -> tuple[float, str]:
        c = rows[name].find(f"{SVG_NS}circle")
        return float(c.get("cx")), c.get("fill")

    assert dot("assertive")[0] > zero_x
    assert dot("social_proof")[0] < zero_x
    assert dot("vendor_name")[0] == pytest.approx(zero_x)
    assert dot("first listed")[0] > half_x
    # an interval that leaves zero out is coloured by its direction; one across zero is grey
    assert len({dot("assertive")[1], dot("social_proof")[1], dot("vendor_name")[1]}) == 3


def test_no_pair_group_scored_leaves_a_note_not_a_plot() -> None:
    doc = document([record("c.yaml::a", Verdict.HELD)], preference=preference_doc(effects={}, first=None))
    page = render(doc)
    assert "No pair group was scored" in page
    assert 'id="forest"' not in page


# -- in a real browser ------------------------------------------------------------------------------

BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _no_browser(reason: str) -> None:
    if os.environ.get("TOOLSELECT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (TOOLSELECT_REQUIRE_BROWSER=1 requires the browser tests to run)")
    pytest.skip(reason)


def test_a_missing_browser_skips_unless_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLSELECT_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Chromium"):
        _no_browser("no Chromium at /nowhere")
    monkeypatch.setenv("TOOLSELECT_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="TOOLSELECT_REQUIRE_BROWSER=1"):
        _no_browser("no Chromium at /nowhere")


#: the module's browser is shared: these tests run on one worker (--dist loadgroup), so it
#: is started once
SHARES_BROWSER = pytest.mark.xdist_group("test_html_report.browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = os.environ.get("CHROMIUM") or "/usr/bin/chromium"
    if not (os.path.isfile(executable) and os.access(executable, os.X_OK)):
        _no_browser(f"no Chromium at {executable} (set CHROMIUM to its path)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _no_browser("the playwright package is not installed (pip install playwright)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=executable, args=BROWSER_ARGS)
        yield chromium
        chromium.close()


def artifacts_dir() -> Path:
    path = Path(os.environ.get("TOOLSELECT_ARTIFACTS") or ROOT / "test-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def example_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The examples run as a user runs them, against a copy of their baseline: the HTML
    report and the results document of the same run."""
    tmp = tmp_path_factory.mktemp("report")
    baseline = tmp / "baseline.json"
    shutil.copy(ROOT / "examples" / "baseline.json", baseline)
    report, doc = tmp / "report.html", tmp / "results.json"
    done = subprocess.run(
        # hypothesis's plugin is not needed by the examples and costs seconds to import
        [sys.executable, "-m", "pytest", str(ROOT / "examples"), "-q", "-p", "no:cacheprovider",
         "-p", "no:hypothesispytest", "--toolselect-baseline", str(baseline),
         "--toolselect-html", str(report), "--toolselect-json", str(doc)],
        cwd=tmp, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return report, json.loads(doc.read_text())


class Watch:
    """What a page did: console errors, uncaught exceptions, dialogs, and every request."""

    def __init__(self, page: Any) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))


def open_page(browser: Any, path: Path) -> tuple[Any, Watch]:
    page = browser.new_page(viewport={"width": 1320, "height": 900})
    watch = Watch(page)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, watch


def visible_rows(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "#cases tbody tr.case", "rows => rows.filter(r => !r.hidden && r.offsetHeight > 0)"
        ".map(r => r.querySelector('.nodecase').textContent)")


@SHARES_BROWSER
def test_example_report_in_a_browser(browser: Any, example_report: tuple[Path, dict[str, Any]]) -> None:
    path, doc = example_report
    total = len(doc["cases"])
    assert total > 10 and doc["preference"] is not None
    assert path.read_text(encoding="utf-8") == render(doc)
    page, watch = open_page(browser, path)
    try:
        assert page.eval_on_selector_all("#cases tbody tr.case", "rows => rows.length") == total
        # the charts are drawn, with shapes of real size
        for chart, shape, least in (("confusion", "rect", 10), ("confusion", "text", 10),
                                    ("categories", "rect", 2), ("forest", "circle", 5),
                                    ("forest", "line", 5)):
            boxes = page.eval_on_selector_all(
                f"svg#{chart} {shape}",
                "els => els.map(e => { const b = e.getBoundingClientRect(); return [b.width, b.height]; })")
            sized = [b for b in boxes if b[0] > 0 and (b[1] > 0 or shape == "line")]
            assert len(sized) >= least, (chart, shape, boxes[:5])
        for chart in ("confusion", "categories", "forest"):
            box = page.locator(f"svg#{chart}").bounding_box()
            assert box is not None and box["width"] > 200 and box["height"] > 80, (chart, box)

        # the text filter: a case id leaves that case and few others (its id may be quoted elsewhere)
        assert len(visible_rows(page)) == total
        case_id = doc["cases"][-1]["case_id"]
        page.fill("#f-text", case_id)
        shown = visible_rows(page)
        assert case_id in shown and len(shown) < total
        assert page.text_content("#f-count") == f"{len(shown)} of {total} cases"
        page.fill("#f-text", "")
        # the verdict select: the rows of that verdict, all of them
        verdict, count = max(doc["summary"]["verdicts"].items(), key=lambda p: (p[1] < total, p[1]))
        page.select_option("#f-verdict", verdict)
        assert len(visible_rows(page)) == count
        chips = page.eval_on_selector_all(
            "#cases tbody tr.case:not([hidden]) .chip", "els => els.map(e => e.textContent)")
        assert set(chips) == {verdict.replace("_", " ")}
        page.select_option("#f-verdict", "")
        # a click on an off-target cell of the matrix lists the cases behind it
        cell = page.locator('svg#confusion .cm-cell[data-correct="false"]').first
        want = int(cell.locator("text").text_content())
        cell.click()
        assert page.is_visible("#f-pair")
        assert 0 < len(visible_rows(page)) <= want
        page.click("#f-pair-clear")
        assert len(visible_rows(page)) == total

        shot = artifacts_dir() / "html-report.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
    finally:
        page.close()
    assert watch.errors == []
    assert watch.dialogs == []
    # nothing but the file itself was asked for
    assert watch.requests == [path.as_uri()]


@SHARES_BROWSER
def test_hostile_report_in_a_browser(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "hostile.html"
    path.write_text(render(hostile_document()), encoding="utf-8")
    page, watch = open_page(browser, path)
    try:
        # no injected element exists, and the text reads as written
        assert page.eval_on_selector_all("img, details, iframe", "els => els.length") == 0
        assert page.evaluate("document.scripts.length") == 2
        assert page.eval_on_selector_all("svg", "els => els.length") == 3
        question = page.text_content("#cases tbody tr.case .question")
        assert question == HOSTILE[:CLIP]
        # the filter finds the case by a piece of hostile text
        page.fill("#f-text", "iframe srcdoc")
        assert len(visible_rows(page)) == 1
        page.fill("#f-text", "no such text anywhere")
        assert visible_rows(page) == []
        page.locator("svg#confusion .cm-cell").first.click()
        assert page.text_content("#f-pair-text").startswith(f"expected {HOSTILE}")
    finally:
        page.close()
    assert watch.dialogs == []
    assert watch.errors == []
    assert watch.requests == [path.as_uri()]


def large_run(held: int = 130) -> dict[str, Any]:
    """A run that is mostly held cases, with a regression and a held case whose tools changed."""
    recs = [record(f"cases.toolselect.yaml::held-{i:04d}", Verdict.HELD) for i in range(held)]
    recs.append(record("cases.toolselect.yaml::broke", Verdict.REGRESSION))
    recs.append(record("cases.toolselect.yaml::moved", Verdict.HELD, tools_changed=True))
    return document(recs)


def test_a_large_run_folds_its_held_cases_and_every_case_stays_findable() -> None:
    doc = large_run()
    page = render(doc)
    rows = [attrs for tag, attrs in parse(page).tags
            if tag == "tr" and "case" in (attrs.get("class") or "").split()]
    assert len(rows) == len(doc["cases"])
    folded = [r for r in rows if "held" in (r["class"] or "").split()]
    # the held cases nothing changed under are one compact row each, hidden until asked for
    assert len(folded) == 130 and all("hidden" in r for r in folded)
    shown = [r for r in rows if r not in folded]
    assert len(shown) == 2 and not any("hidden" in r for r in shown)
    # the cases that need a look are in full (the why, the failing check), and first
    full, compact = page.split('class="case held"', 1)
    assert "cases.toolselect.yaml::" in full and "broke" in full and "moved" in full
    assert "why:" not in compact.split("</tbody>")[0]
    assert 'id="f-held"' in page and "show the 130 held cases" in page
    # every case is in the page and in the filter's index, which says which rows are folded
    index = index_of(page)
    assert len(index) == len(rows)
    for case in doc["cases"]:
        assert html.escape(case["nodeid"], quote=False) in page
    assert sum(1 for row in index if row["held"]) == 130
    assert all(("held-" in row["text"]) == row["held"] for row in index)


def test_a_small_run_shows_every_case_in_full() -> None:
    page = render(large_run(held=20))
    assert 'class="case held"' not in page and 'id="f-held"' not in page
    assert all(not row["held"] for row in index_of(page))


@SHARES_BROWSER
def test_folded_held_cases_in_a_browser(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "large.html"
    doc = large_run()
    path.write_text(render(doc), encoding="utf-8")
    total = len(doc["cases"])
    page, watch = open_page(browser, path)
    try:
        # what needs a look is shown; the held cases are folded
        assert sorted(visible_rows(page)) == ["broke", "moved"]
        assert page.text_content("#f-count") == f"2 of {total} cases"
        # a filter finds a folded case
        page.fill("#f-text", "held-0077")
        assert visible_rows(page) == ["held-0077"]
        page.fill("#f-text", "")
        assert len(visible_rows(page)) == 2
        # and asking for them unfolds every one
        page.check("#f-held")
        assert len(visible_rows(page)) == total
        page.uncheck("#f-held")
        page.select_option("#f-verdict", Verdict.HELD)
        assert len(visible_rows(page)) == 131
    finally:
        page.close()
    assert watch.errors == []
    assert watch.requests == [path.as_uri()]
