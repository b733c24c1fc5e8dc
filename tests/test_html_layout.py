"""The HTML report leads with the verdict: in a real browser at 1400 px wide, the blocking
cases and the tool change behind them are on the first screen, the diff reads as marked
deletions and insertions, and the long lint table is folded."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_html_report import SHARES_BROWSER, Watch, artifacts_dir, browser  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
OLD = "List the charges (mortgages and other security) registered against a company."
NEW = "List the entries registered against a company."
RAW_DIFF = re.compile(r"\[-[^\d]|\{\+")


@pytest.fixture(scope="module")
def regression_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The getting-started regression: the examples with list_charges' description edited,
    against their baseline, linted, as a user runs them."""
    tmp = tmp_path_factory.mktemp("layout")
    examples = tmp / "examples"
    shutil.copytree(ROOT / "examples", examples)
    report, doc = tmp / "report.html", tmp / "results.json"
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", str(examples), "-q", "-p", "no:cacheprovider",
             "-p", "no:hypothesispytest", "--toolselect-baseline", str(tmp / "main.json"),
             "--toolselect-lint", *args],
            cwd=tmp, env=env, capture_output=True, text=True, timeout=300, check=False)

    recorded = run()  # main, before the edit
    assert recorded.returncode == 0, recorded.stdout[-3000:] + recorded.stderr[-3000:]
    server = examples / "companies" / "server.py"
    source = server.read_text()
    start = source.index(f'"""{OLD}')
    end = source.index('"""', start + 3) + 3
    server.write_text(source[:start] + f'"""{NEW}"""' + source[end:])  # the whole docstring
    done = run("--toolselect-html", str(report), "--toolselect-json", str(doc))
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    return report, json.loads(doc.read_text())


def test_the_page_puts_blocking_cases_first_and_marks_the_diff(regression_report: tuple[Path, Any]) -> None:
    path, doc = regression_report
    page = path.read_text()
    assert doc["verdict"]["blocking"]
    # the cases, blocking rows on top, come before the charts and the lint table
    assert page.index('id="tools-card"') < page.index('id="cases-card"') < page.index('id="confusion-card"')
    assert page.index('id="cases-card"') < page.index('id="lint-card"')
    assert "<del>" in page and "<ins>" in page
    assert not RAW_DIFF.search(page)  # a word diff's own markup (not an interval's "[-0.12")
    assert '<details id="lint-all">' in page


def test_only_the_rows_a_change_may_explain_say_it(regression_report: tuple[Path, Any]) -> None:
    """The tools card names each change once with its cases; a held row does not repeat it."""
    path, doc = regression_report
    rows = re.findall(r'<tr class="case[^"]*" data-i="\d+">(.*?)</tr>', path.read_text(), re.S)
    verdicts = {case["nodeid"]: case["verdict"] for case in doc["cases"]}
    said = {nodeid: "tools changed" in row or "since the baseline" in row
            for row in rows for nodeid in verdicts
            if f'<span class="line nodecase mono">{nodeid.rpartition("::")[2]}</span>' in row}
    assert len(said) == len(verdicts) == len(rows)
    held = [n for n, v in verdicts.items() if v == "held"]
    blocking = [n for n, v in verdicts.items() if v == "regression"]
    assert held and blocking
    assert not any(said[n] for n in held), [n for n in held if said[n]]
    assert all(said[n] for n in blocking)


@SHARES_BROWSER
def test_at_1400px_the_verdict_is_on_the_first_screen(browser: Any,  # noqa: F811
                                                      regression_report: tuple[Path, Any]) -> None:
    path, doc = regression_report
    regressions = [c["nodeid"] for c in doc["cases"] if c["verdict"] == "regression"]
    assert regressions
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    watch = Watch(page)
    try:
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        screen = 900
        # the first case row is a regression, and it is on the first screen
        first = page.locator("#cases tbody tr.case").first
        chip = first.locator(".chip").text_content()
        assert chip == "regression"
        box = first.bounding_box()
        assert box is not None and box["y"] + 100 < screen, box  # its first lines in view
        # the tool change behind it is above it, as marked words, not raw markup
        deleted = page.locator("#tools-card del").first
        inserted = page.locator("#tools-card ins").first
        assert "charges" in (deleted.text_content() or "")
        assert "entries" in (inserted.text_content() or "")
        assert page.evaluate("getComputedStyle(document.querySelector('#tools-card del'))"
                             ".textDecorationLine") == "line-through"
        body = page.inner_text("body")
        assert not RAW_DIFF.search(body)
        # the case column is wide enough to read a question on one or two lines
        cell = first.locator("td").first.bounding_box()
        assert cell is not None and cell["width"] >= 300, cell
        # the first screen, as a reviewer opens the report
        shot = artifacts_dir() / "html-report-1400.png"
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 10_000
        # the long lint table is folded, and opens on a click
        table = page.locator("#lint-findings")
        assert not table.is_visible()
        page.click("#lint-all summary")
        assert table.is_visible()
        assert page.eval_on_selector_all("#lint-findings tbody tr", "rows => rows.length") > 3
    finally:
        page.close()
    assert watch.errors == [] and watch.dialogs == []
    assert watch.requests == [path.as_uri()]
