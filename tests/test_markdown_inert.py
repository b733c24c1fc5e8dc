"""The PR comment's run text is inert and readable: rendered by GitHub's own markdown (cmark-gfm),
any text shows exactly as it was, with no markup of its own, while the file escapes only the
characters that would start markup where the text stands."""

from __future__ import annotations

from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolselect.report.markdown import code, text
from pytest_toolselect.report.printable import printable

#: text as a model, a server or a user writes it: every Unicode category, and markdown's
#: own signs often enough to meet each other
MARKUP = "\\`*_{}[]()#+-.!|~<>&:@=\"' 0123456789aZ\t\n"
TEXTS = st.text(st.one_of(st.characters(codec="utf-8"), st.sampled_from(MARKUP)), max_size=60)


class _Shown(HTMLParser):
    """The tags of a rendered fragment and the text a reader sees."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.seen: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.seen.append(data)

    def handle_comment(self, data: str) -> None:
        self.tags.append("!--")  # raw HTML the renderer left out


def shown(markdown: str) -> tuple[list[str], str]:
    parser = _Shown()
    # GitHub keeps the raw tags it allows (details, code); the run's own must not be any
    parser.feed(cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE))
    parser.close()
    return parser.tags, _unjoined("".join(parser.seen).strip())


def _unjoined(shown: str) -> str:
    # a word joiner after @ and # is the comment's own (no mention, no issue reference), and
    # one the text had there reads the same; one of the text's own elsewhere shows as written
    return shown.replace("@\u2060", "@").replace("#\u2060", "#")


def as_written(value: str) -> str:
    return _unjoined(printable(" ".join(value.split())))


@settings(max_examples=400)
@given(TEXTS)
def test_any_text_renders_as_itself_at_a_line_start_and_after_a_label(value: str) -> None:
    expected = as_written(value)
    tags, seen = shown(f"- question: {text(value)}")
    assert set(tags) <= {"ul", "li", "a"}, (value, tags)  # an autolink shows its text as it is
    assert seen == f"question: {expected}".strip(), (value, text(value))
    tags, seen = shown(text(value))
    assert set(tags) <= {"p", "a"}, (value, tags)
    assert seen == expected, (value, text(value))


@settings(max_examples=200)
@given(TEXTS)
def test_a_code_font_shows_the_text_as_itself(value: str) -> None:
    tags, seen = shown(f"- called: {code(value)}")
    assert set(tags) <= {"ul", "li", "code", "a"}, (value, tags)
    assert seen == f"called: {as_written(value)}".strip(), (value, code(value))


def test_the_file_escapes_only_what_would_start_markup() -> None:
    assert text("find_company(email='ops@example.com') returned 3.5 results, e.g. a-b.") == (
        "find_company(email='ops@\u2060example.com') returned 3.5 results, e.g. a-b.")
    assert text("pytest-toolselect 0.1.0") == "pytest-toolselect 0.1.0"
    assert text("*bold* _it_ `x` [a](b) ~~s~~ a|b __init__") == (
        "\\*bold\\* \\_it\\_ \\`x\\` \\[a\\](b) \\~\\~s\\~\\~ a\\|b \\_\\_init\\_\\_")
    assert text("1. one") == "1\\. one" and text("- item") == "\\- item" and text("# title") == "\\# title"
