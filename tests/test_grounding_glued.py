"""Grounding sees an identifier wherever the text lets it end, over generated glue.

Each example writes an identifier (digits, upper-case alphanumerics, a hex UUID, spaced or
hyphenated digit groups, an IBAN in fours or compact, an amount with thousands commas)
between two contexts drawn from Unicode categories: letters of other scripts (Han, kana,
Hangul, Thai, Arabic, Hebrew, Devanagari, Cyrillic, Greek), punctuation of every kind
(dashes, quotes, brackets, CJK punctuation), symbols, spaces, combining marks and
superscripts, possessives, plurals and hyphenated words. Then, through ``score()``:

- a verbatim copy is grounded (the identifier alone, or with its glued punctuation);
- a legal regrouping is grounded: separators dropped or changed, or added to an
  identifier the question wrote without any;
- a derived value is not: a digit dropped, added, changed or transposed, a separator
  moved, a proper part zero-padded.

``TOOLSELECT_GROUNDING_EXAMPLES`` sets the examples per test (five tests).
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pytest_toolselect.exchange.tool import ToolCall
from pytest_toolselect.inputs.cases import Case, IdentifierSettings
from pytest_toolselect.scoring.checks import score
from pytest_toolselect.scoring.identifiers import normal_form, zero_key
from pytest_toolselect.scoring.words import is_id_char

#: per test; five tests, so CI runs 1,500 examples here (and 2,000 more in
#: test_grounding_properties.py)
EXAMPLES = int(os.environ.get("TOOLSELECT_GROUNDING_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

# --- contexts -------------------------------------------------------------------------

SCRIPTS = {
    "han": "会社番号の登録確認請求书号码",
    "kana": "ばんごうのをはカタカナデス",
    "hangul": "회사번호의를등록",
    "thai": "หมายเลขบริษัทของ",
    "arabic": "رقمالشركةفي",
    "hebrew": "מספרחברה",
    "devanagari": "कंपनीसंख्याका",
    "cyrillic": "номерКомпанииЖ",
    "greek": "αριθμόςΕταιρείαςΩ",
}
PUNCT = {
    "dash": "\u2014\u2013\u2015\u2e3a\u2212\u301c",  # em, en, bar, two-em, minus, wave dash
    "open": "([{\u300c\u300e\u3010\u3014\u300a\u3008\u27e8\u00ab\u2039\uff08",
    "close": ")]}\u300d\u300f\u3011\u3015\u300b\u3009\u27e9\u00bb\u203a\uff09",
    "quote": "\"'\u201c\u201d\u2018\u2019\u201e\u201a`\u00b4",
    "cjk": "\u3001\u3002\u30fb\uff01\uff1f\uff1a\uff1b\uff0c\u3000",
    "other": ":;!?,#%&*@\u00a7\u00b6\u2020\u00b7\u2026/\\|",
    "symbol": "+=<>~$\u20ac\u00a3\u00a5\u20b9\u00a9\u00ae\u2122\u00b0\u2192\u2605\u2713^",
    "space": " \u00a0\u202f\u2009",
}
#: glued after the identifier only: a combining or enclosing mark, a superscript footnote
MARKS = "\u0301\u0308\u20e3\u00b2\u00b9\u2074"
SUFFIXES = ["'s", "\u2019s", "s", "-registered", "-based", "\u2019", "."]
ALL_PUNCT = "".join(PUNCT.values())
NOT_SPACE = "".join(c for c in ALL_PUNCT if not c.isspace())

context_chars = st.sampled_from("".join(SCRIPTS.values()) + ALL_PUNCT)
#: 0-3 characters of any category, or a word of prose around it
before_ctx = st.one_of(st.text(context_chars, max_size=3),
                       st.sampled_from(["No.", "order:", "ref#", "Nr. ", "(see ", "id="]))
after_ctx = st.one_of(st.text(context_chars, max_size=3),
                      st.builds(lambda m, t: m + t, st.sampled_from(MARKS),
                                st.text(context_chars, max_size=2)),
                      st.sampled_from(SUFFIXES))
leads = st.sampled_from(["Look up", "Please check", "", "会社", "Find everything about"])
tails = st.sampled_from(["today", "", "の決算", "now please", "и всё"])

# --- identifiers ----------------------------------------------------------------------

DIGITS = "0123456789"
UPPER = "ABCDEFGHJKLMNPQRSTUVWXYZ"
HEX = "0123456789abcdef"
digit_runs = st.text(DIGITS, min_size=6, max_size=10)
alnums = st.text(UPPER + DIGITS, min_size=5, max_size=10)
short_groups = st.lists(st.text(DIGITS, min_size=2, max_size=5), min_size=2, max_size=4)
group_seps = st.sampled_from([" ", "-", "."])
alnum_groups = st.lists(st.text(UPPER + DIGITS, min_size=3, max_size=5), min_size=2,
                        max_size=4)
prefixes = st.sampled_from(["", "GB", "SC", "INV", "AB"])
four = st.text(UPPER + DIGITS, min_size=4, max_size=4)
KINDS = ["digits", "alnum", "uuid", "spaced", "hyphenated", "iban", "iban-compact",
         "thousands"]
GROUPED = ["uuid", "spaced", "hyphenated", "iban", "thousands"]
kinds = {False: st.sampled_from(KINDS), True: st.sampled_from(GROUPED)}
uuid_parts = st.tuples(*(st.text(HEX, min_size=n, max_size=n) for n in (8, 4, 4, 4, 12)))
thousands_head = st.from_regex(r"[1-9][0-9]{0,2}", fullmatch=True)
thousands_tail = st.lists(st.text(DIGITS, min_size=3, max_size=3), min_size=2, max_size=3)
countries = st.text(UPPER, min_size=2, max_size=2)
checks = st.text(DIGITS, min_size=2, max_size=2)
iban_groups = st.lists(four, min_size=3, max_size=5)
iban_last = st.text(UPPER + DIGITS, max_size=3)


@dataclass(frozen=True)
class Id:
    text: str  # as the question writes it
    grouped: bool  # its separators group its characters (they may be dropped or changed)


@st.composite
def identifiers(draw: st.DrawFn, grouped: bool = False) -> Id:
    kind = draw(kinds[grouped])
    if kind == "digits":
        return Id(draw(digit_runs), False)
    if kind == "alnum":
        text = draw(alnums)
        assume(any(c.isdigit() for c in text) and any(c.isalpha() for c in text))
        return Id(text, False)
    if kind == "uuid":
        return Id("-".join(draw(uuid_parts)), True)
    if kind == "spaced":
        prefix = draw(prefixes)
        body = " ".join(draw(short_groups))
        return Id(f"{prefix} {body}" if prefix else body, True)
    if kind == "hyphenated":
        groups = draw(alnum_groups)
        assume(any(c.isdigit() for c in "".join(groups)))
        prefix = draw(prefixes)
        return Id(f"{prefix}-" * bool(prefix) + "-".join(groups), True)
    if kind == "thousands":
        return Id(",".join([draw(thousands_head), *draw(thousands_tail)]), True)
    last = draw(iban_last)
    parts = [draw(countries) + draw(checks), *draw(iban_groups)] + ([last] if last else [])
    return Id(" ".join(parts) if kind == "iban" else "".join(parts), kind == "iban")


@dataclass(frozen=True)
class Written:
    ident: Id
    before: str
    after: str
    question: str


def _glues(ident: str, after: str) -> bool:
    """Whether the context after the identifier changes it: a plural ``s`` ends digits
    only (``AB12CDs`` is one word)."""
    if unicodedata.category(after[:1] or " ") == "Mn":
        return not ident[-1].isdigit()  # a mark on a letter makes another letter (A + ́ = Á)
    return after == "s" and not ident[-1].isdigit()


@st.composite
def written(draw: st.DrawFn, grouped: bool = False) -> Written:
    ident = draw(identifiers(grouped))
    before, after = draw(before_ctx), draw(after_ctx)
    assume(not _glues(ident.text, after))
    lead, tail = draw(leads), draw(tails)
    question = f"{lead} {before}{ident.text}{after} {tail}".strip()
    return Written(ident, before, after, question)


def grounded(w: Written, value: str, name: str = "some_id") -> bool:
    case = Case(id="p", question=w.question, why="property", forbid_ungrounded=True,
                identifiers=IdentifierSettings())
    result = score(case, [ToolCall("tool", {name: value})])
    return result.checks["no_identifier_invented"].passed


def _same(a: str, b: str) -> bool:
    return zero_key(normal_form(a)) == zero_key(normal_form(b))


# --- the properties -------------------------------------------------------------------


@SETTINGS
@given(w=written(), name=st.sampled_from(["company_number", "order_id", "query", "text"]),
       data=st.data())
def test_a_verbatim_copy_grounds_whatever_it_is_glued_to(w: Written, name: str,
                                                         data: st.DataObject) -> None:
    assert grounded(w, w.ident.text, name), (w.question, w.ident.text)
    # with the punctuation glued to it, copied along
    head = re.search(rf"[{re.escape(NOT_SPACE)}]*$", w.before).group()
    tail = re.match(rf"[{re.escape(NOT_SPACE)}]*", w.after).group()
    assume((head or tail) and " " not in w.ident.text)
    glued = head + w.ident.text + tail
    assert grounded(w, glued, name), (w.question, glued)


def _compact(text: str) -> str:
    return re.sub(r"[ .,-]", "", text)


@SETTINGS
@given(w=written(), data=st.data())
def test_a_legal_regrouping_grounds(w: Written, data: st.DataObject) -> None:
    text = w.ident.text
    if w.ident.grouped:
        # every separator dropped or changed, or some of them dropped
        seps = [m.start() for m in re.finditer(r"[ .,-]", text)]
        keep = data.draw(st.sets(st.sampled_from(seps)) if seps else st.just(set()))
        sep = data.draw(st.sampled_from(["", " ", "-", "."]))
        value = "".join((sep if k in keep else "") if k in seps else c
                        for k, c in enumerate(text))
    else:
        # written without separators: any grouping of its characters
        cuts = data.draw(st.sets(st.integers(1, len(text) - 1), max_size=4))
        sep = data.draw(st.sampled_from([" ", "-", "."]))
        value = "".join((sep if k in cuts else "") + c for k, c in enumerate(text))
    assert grounded(w, value), (w.question, text, value)


def _digit_edit(data: st.DataObject, text: str) -> str:
    positions = [k for k, c in enumerate(text) if c.isdigit()]
    op = data.draw(st.sampled_from(["drop", "add", "change", "transpose"]))
    k = data.draw(st.sampled_from(positions))
    if op == "drop":
        return text[:k] + text[k + 1:]
    if op == "add":
        at = data.draw(st.sampled_from([k, k + 1]))
        return text[:at] + data.draw(st.sampled_from(DIGITS)) + text[at:]
    if op == "change":
        new = data.draw(st.sampled_from([d for d in DIGITS if d != text[k]]))
        return text[:k] + new + text[k + 1:]
    pairs = [k for k in range(len(text) - 1)
             if text[k].isalnum() and text[k + 1].isalnum() and text[k] != text[k + 1]]
    assume(pairs)
    k = data.draw(st.sampled_from(pairs))
    return text[:k] + text[k + 1] + text[k] + text[k + 2:]


@SETTINGS
@given(w=written(), data=st.data())
def test_a_digit_dropped_added_changed_or_transposed_does_not_ground(
        w: Written, data: st.DataObject) -> None:
    text = w.ident.text
    value = _digit_edit(data, text)
    if data.draw(st.booleans()):
        value = _compact(value)
    # leading zeros are the one padding allowed
    assume(not _same(value, text) and any(c.isdigit() for c in value))
    assert not grounded(w, value), (w.question, text, value)


@SETTINGS
@given(w=written(grouped=True), data=st.data())
def test_a_moved_separator_does_not_ground(w: Written, data: st.DataObject) -> None:
    text = w.ident.text
    chars = _compact(text)
    cuts = [m.start() - k for k, m in enumerate(re.finditer(r"[ .,-]", text))]
    inside = [p for p in range(1, len(chars)) if p not in cuts]
    assume(cuts and inside)
    old = data.draw(st.sampled_from(cuts))
    new = data.draw(st.sampled_from(inside))
    moved = (set(cuts) - {old}) | {new}
    sep = data.draw(st.sampled_from([" ", "-", "."]))
    value = "".join((sep if k in moved else "") + c for k, c in enumerate(chars))
    assert not grounded(w, value), (w.question, text, value)


@SETTINGS
@given(w=written(), data=st.data())
def test_a_proper_part_zero_padded_does_not_ground(w: Written, data: st.DataObject) -> None:
    chars = _compact(w.ident.text)
    assume(len(chars) >= 5)
    size = data.draw(st.integers(3, len(chars) - 1))
    part = chars[:size] if data.draw(st.booleans()) else chars[-size:]
    value = "0" * data.draw(st.integers(0, 3)) + part
    # a short letter prefix may be left off: the rest is grounded
    bare = re.sub(r"^(?:[A-Z]{2,3}|[a-z]{2,3})(?=[0-9])", "", chars)
    assume(any(c.isdigit() for c in part) and not _same(value, chars)
           and not _same(value, bare))
    assert not grounded(w, value), (w.question, w.ident.text, value)


# --- the classes of the rule, by example -----------------------------------------------

GLUED = [
    # possessives and suffixes
    ("When are 04138203's next accounts due?", "04138203", True),
    ("When are 04138203\u2019s next accounts due?", "04138203", True),
    ("Compare the two 553017s", "553017", True),
    ("a 05512873-registered firm", "05512873", True),
    # scripts written without spaces
    ("会社番号07764410の決算", "07764410", True),
    ("番号「553017」、確認してください", "553017", True),
    ("หมายเลข04138203ของบริษัท", "04138203", True),
    ("رقم الشركة04138203في", "04138203", True),
    # punctuation glue
    ("status of order:448120", "448120", True),
    ("No.03365129 please", "03365129", True),
    ("company\u201404138203\u2014now", "04138203", True),
    ("range 04138203\u201305512873", "05512873", True),
    ("[04138203]", "04138203", True),
    ("\u201c04138203\u201d", "04138203", True),
    # regrouped
    ("IBAN GB29 NWBK 6016 1331 9268 19", "GB29NWBK60161331926819", True),
    ("IBAN GB29NWBK60161331926819", "GB29 NWBK 6016 1331 9268 19", True),
    ("amount 1,234,567 ref", "1234567", True),
    ("amount 1,234,567 ref", "1234", False),
    ("id 3f2b8c1e-9a4d-4e7b-8c2d-1a2b3c4d5e6f", "3f2b8c1e-9a4d-4e7b-8c2-d1a2b3c4d5e6f", False),
    ("id 3f2b8c1e-9a4d-4e7b-8c2d-1a2b3c4d5e6f", "3f2b8c1e9a4d4e7b8c2d1a2b3c4d5e6f", True),
    ("code AB12-CD34-EF56", "AB12CD-34EF56", False),
    ("code AB12-CD34-EF56", "AB12CD34EF56", True),
    # Latin letters continue an identifier; other scripts do not
    ("code XABC123", "ABC123", False),
    ("code ABC123", "ABC123", True),
    ("\u043d\u043e\u043c\u0435\u0440AB123", "AB123", True),
    ("\u03a9AB123\u03a9", "ab123", True),
    ("\u03a9aB123\u03a9", "ab123", False),
    ("code \u00c9AB123", "AB123", False),
    # marks, superscripts, digits of other scripts
    ("company 04138203\u0301 now", "04138203", True),
    ("company 04138203\u00b2 now", "04138203", True),
    ("company 04138203\u00b2 now", "041382032", False),
    ("company \u09664138203", "04138203", True),
    ("company 0\u096a138203", "04138203", True),
    ("company 04138203\u0967", "04138203", False),
    ("company 0413\u200b8203", "04138203", True),
    # a value that starts or ends with punctuation
    ("company (04138203) now", "(04138203)", True),
    ("VAT number GB 745 9384 21", "-9384", False),
    ("VAT number GB 745 9384 21", "9384,", False),
]


@pytest.mark.parametrize(("question", "value", "expected"), GLUED)
def test_glued_examples(question: str, value: str, expected: bool) -> None:
    w = Written(Id(value, False), "", "", question)
    assert grounded(w, value) is expected


@pytest.mark.parametrize(("question", "value"), [
    ("find the files of 99-41720", "*99-41720*"),
    ("find the files of 99-41720", "**/*99-41720*.json"),
    ("find the files of 99-41720", "reports/99-41720.pdf"),
])
def test_the_identifier_pieces_of_a_pattern_are_grounded(question: str, value: str) -> None:
    w = Written(Id(value, False), "", "", question)
    assert grounded(w, value, "query") and grounded(w, value, "file_id")
    derived = value.replace("41720", "41721")
    assert not grounded(w, derived, "query") and not grounded(w, derived, "file_id")


def test_a_letter_code_in_a_pattern_must_be_grounded_too() -> None:
    w = Written(Id("", False), "", "", "VAT number 745938421")
    assert not grounded(w, "GB/745938421", "vat_id")
    assert grounded(w, "vat/745938421", "vat_id")


def test_the_latin_class_is_every_latin_letter_nfkc_keeps() -> None:
    for i in range(0x20000):
        c = chr(i)
        if unicodedata.category(c)[0] != "L" or unicodedata.normalize("NFKC", c) != c:
            continue
        latin = re.search(r"\bLATIN\b", unicodedata.name(c, "")) is not None
        assert is_id_char(c) is latin, (hex(i), unicodedata.name(c, ""))
