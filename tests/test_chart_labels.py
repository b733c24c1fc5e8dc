"""Tool names in the confusion matrix (and the lint heatmap) are drawn whole, inside the chart.

The charts lay labels out from character counts (no browser), so the properties read the
drawn SVG: each label's visible text, its tooltip, and where the layout puts it.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.report.charts import _MONO_PX, TOOL_CLIP, confusion_svg
from pytest_toolselect.report.lint_heatmap import heatmap_svg
from pytest_toolselect.report.printable import printable
from pytest_toolselect.report.run_report import Confusion

NS = "{http://www.w3.org/2000/svg}"
#: what providers accept as a tool name, and longer names that only a tools file can hold
TOOL = st.from_regex(r"[a-zA-Z0-9_-]{1,64}", fullmatch=True)
ODD = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=150)
SIN = COS = math.sin(math.radians(45))


def _visible(text: ET.Element) -> str:
    """A <text>'s drawn characters: everything but its tooltip, tspans one per line."""
    spans = text.findall(f"{NS}tspan")
    if spans:
        return "\n".join("".join(s.itertext()) for s in spans)
    return (text.text or "") + "".join((c.tail or "") for c in text)


def _labels(svg: str) -> tuple[ET.Element, list[ET.Element], list[ET.Element]]:
    root = ET.fromstring(svg)
    texts = [t for t in root.iter(f"{NS}text") if t.get("class") == "mono"]
    cols = [t for t in texts if t.get("transform")]
    rows = [t for t in texts if not t.get("transform")]
    return root, cols, rows


def _cells(pairs: list[tuple[str, str]]) -> list[Confusion]:
    return [Confusion(e, c, 1, e == c) for e, c in pairs]


def _check_bounds(root: ET.Element, cols: list[ET.Element], rows: list[ET.Element]) -> None:
    width, height = float(root.get("width", 0)), float(root.get("height", 0))
    for col in cols:
        extent = len(_visible(col)) * _MONO_PX
        x, y = float(col.get("x", 0)), float(col.get("y", 0))
        # rotated 45° up and to the right from its anchor
        assert x + extent * COS <= width and y - extent * SIN >= 0, (_visible(col), width)
    for row in rows:
        for span in row.findall(f"{NS}tspan"):
            x, y = float(span.get("x", 0)), float(span.get("y", 0))
            # right-aligned at x
            assert x - len("".join(span.itertext())) * _MONO_PX >= 0 and 0 <= y <= height


def test_names_sharing_a_long_prefix_stay_apart() -> None:
    review = "mcp__github__create_pull_request_review"
    comment = "mcp__github__create_pull_request_comment"
    _, cols, rows = _labels(confusion_svg(_cells([(review, comment), (comment, review)])))
    assert sorted(_visible(c) for c in cols) == sorted([review, comment])
    assert sorted(_visible(r) for r in rows) == sorted([review, comment])


@given(st.lists(TOOL, min_size=1, max_size=12, unique=True), st.data())
def test_every_tool_name_is_drawn_whole_inside_the_chart(names: list[str], data: st.DataObject) -> None:
    # each expected label is one tool or alternatives of several, as results write them
    rows = [" | ".join(data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True)))
            for _ in range(data.draw(st.integers(1, 5)))]
    pairs = [(row, data.draw(st.sampled_from(names))) for row in rows]
    root, cols, row_texts = _labels(confusion_svg(_cells(pairs)))
    assert {_visible(c) for c in cols} == {chosen for _, chosen in pairs}
    for text in row_texts:
        title = "".join(text.find(f"{NS}title").itertext())  # type: ignore[union-attr]
        lines = _visible(text).split("\n")
        # wrapped at the alternatives only: joined again, the lines are the label
        assert " | ".join(lines) == title and all(len(line) <= TOOL_CLIP for line in lines)
    _check_bounds(root, cols, row_texts)


@given(st.lists(ODD, min_size=1, max_size=6, unique=True))
def test_any_name_keeps_its_head_and_tail_and_its_whole_tooltip(names: list[str]) -> None:
    root, cols, rows = _labels(confusion_svg(_cells([(n, n) for n in names])))
    for col in cols:
        full = "".join(col.find(f"{NS}title").itertext())  # type: ignore[union-attr]
        drawn = _visible(col)
        assert full in {printable(n) for n in names}
        if len(full) <= TOOL_CLIP:
            assert drawn == full
        else:
            half = (TOOL_CLIP - 1) // 2
            assert len(drawn) == TOOL_CLIP and drawn[half] == "…"
            assert full.startswith(drawn[:half]) and full.endswith(drawn[half + 1:])
    _check_bounds(root, cols, rows)


@given(st.lists(TOOL, min_size=2, max_size=6, unique=True))
def test_the_lint_heatmap_draws_tool_names_whole(names: list[str]) -> None:
    n = len(names)
    svg = heatmap_svg({"tools": names, "servers": ["s"] * n, "threshold": 0.5,
                       "matrix": [[1.0 if i == j else 0.2 for j in range(n)] for i in range(n)]})
    root = ET.fromstring(svg)
    drawn = [_visible(t) for t in root.iter(f"{NS}text") if t.get("class") == "mono"]
    assert drawn == names + names  # the columns, then the rows
