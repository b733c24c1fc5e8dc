"""A word diff in the HTML report is marked up whole, however it is clipped: a removed or
added run the clip cuts is closed where it is cut, never left as raw ``[-``/``{+`` text."""

from __future__ import annotations

import html

from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.gate.toolsdiff import word_diff
from pytest_toolselect.report.html_tools import clipped_diff_html

words = st.lists(st.text("abcdefgh ().,:", min_size=1, max_size=8), max_size=30).map(" ".join)


@given(before=words, after=words, limit=st.integers(0, 400))
def test_a_clipped_diff_keeps_no_raw_markup(before: str, after: str, limit: int) -> None:
    shown = clipped_diff_html(word_diff(before, after), limit)
    text = html.unescape(shown.replace("<del>", "").replace("</del>", "").replace("<ins>", "")
                         .replace("</ins>", ""))
    assert "[-" not in text and "{+" not in text and "-]" not in text and "+}" not in text
    assert shown.count("<del>") == shown.count("</del>")
    assert shown.count("<ins>") == shown.count("</ins>")


def test_a_diff_short_enough_is_shown_whole() -> None:
    diff = word_diff("List the charges of a company.", "List the entries of a company.")
    assert clipped_diff_html(diff, 300) == "List the <del>charges</del> <ins>entries</ins> of a company."
