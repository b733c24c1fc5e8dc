"""Properties of identifier grounding, over generated questions and parameter names.

Each example writes an identifier (digit groups with a prefix, opaque ids with ``_ : @ #
.``, emails, an id inside a URL, digits in another script) into a question among
filler words and neighbours (another number, a year, a full stop glued to the next
sentence), then scores a call that passes a copy of it through ``score()``:

- a verbatim copy is grounded, under any parameter name;
- a copy with one letter or digit changed, dropped or added is not (unless the result
  also occurs in the question, or only a leading zero moved: the one padding allowed, or
  what is left is a piece between ``:``, ``@`` or ``#``, which end an identifier);
- a digit-group identifier with a separator moved is not.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pytest_toolselect.exchange.tool import ToolCall
from pytest_toolselect.inputs.cases import Case, IdentifierSettings
from pytest_toolselect.scoring.checks import score
from pytest_toolselect.scoring.identifiers import normal_form, zero_key

#: per test; five tests, so CI runs 2,000 examples (about 12 s of one core)
EXAMPLES = int(os.environ.get("TOOLSELECT_GROUNDING_EXAMPLES", "400"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

#: names that declare an identifier by their shape, and "value" declared in settings
DECLARED = ["officer_id", "order_id", "key_id", "resource_id", "user_id", "shipment_id",
            "company_number", "companyNumber", "invoiceRef", "code", "value"]
#: free-text names: identifiers are the spans found inside the value
FREE = ["query", "text", "q", "note"]
SCRIPTS = {"arabic-indic": 0x0660, "persian": 0x06F0, "devanagari": 0x0966,
           "full-width": 0xFF10}

LEAD = ["Which boards does officer", "Please look up", "Disable", "Ship", "Show the record",
        "Can you check", "Find everything about"]
TAIL = ["today", "for me please", "and report back", "sit on", "right away"]

digits = st.text("0123456789", min_size=2, max_size=5)
letters_upper = st.text("ABCDEFGHJKLMNPQRSTUVWXYZ", min_size=2, max_size=3)
alnum = st.text("abcdefghkmnpqrstuvwxyzABCDEFGHKMNPQRSTUVWXYZ0123456789", min_size=1,
                max_size=6)
# strategies built once: building them in every draw costs more than the checks
group_seps = st.sampled_from([" ", "-", "."])
prefixes = st.one_of(st.just(""), letters_upper)
prefix_seps = st.sampled_from(["", " ", "-"])
hard_joins = st.lists(st.sampled_from("_:@#"), min_size=3, max_size=3)
lower = st.text("abcdefghkmnpqrstuvwxyz", min_size=2, max_size=6)
lower_short = st.text("abcdefghkmnpqrstuvwxyz", min_size=1, max_size=5)
email_seps = st.sampled_from([".", "_", ""])
long_numbers = st.text("0123456789", min_size=6, max_size=9)
url_numbers = st.text("0123456789", min_size=5, max_size=9)
scripts = st.sampled_from(sorted(SCRIPTS))
urls = st.sampled_from(["https://shop.example/orders/{}/track",
                        "https://shop.example/track?order={}&lang=en", "shop.example/a/{}"])
neighbours = st.sampled_from(["{} {}", "{} 2021", "{} 4 units", "{}.Thanks", "{}, {}",
                              "({}) {}"])
leads = st.sampled_from(LEAD)
tails = st.sampled_from(TAIL)
ends = st.sampled_from(["?", ".", "", "!"])


@dataclass(frozen=True)
class Written:
    """An identifier, the question it is written in, and the other things it names."""

    ident: str  # the identifier as a caller copies it (ASCII digits)
    question: str
    grouped: bool  # a digit-group identifier (separators may be dropped or changed)
    others: tuple[str, ...]  # neighbours: a value equal to one of them is grounded


@st.composite
def digit_group_ids(draw: st.DrawFn) -> str:
    groups = draw(st.lists(digits, min_size=1, max_size=4))
    body = draw(group_seps).join(groups)
    prefix = draw(prefixes)
    if prefix:
        body = prefix + draw(prefix_seps) + body
    return body


@st.composite
def opaque_ids(draw: st.DrawFn) -> str:
    chunks = draw(st.lists(alnum, min_size=2, max_size=4))
    joins = draw(hard_joins)
    out = chunks[0] + "".join(j + c for j, c in zip(joins, chunks[1:], strict=False))
    assume(any(c.isdigit() for c in out))
    return out


@st.composite
def emails(draw: st.DrawFn) -> str:
    return f"{draw(lower)}{draw(email_seps)}{draw(lower_short)}{draw(digits)}@corp.example"


def _in_script(text: str, script: str) -> str:
    zero = SCRIPTS[script]
    return "".join(chr(zero + int(c)) if c.isdigit() else c for c in text)


KINDS = ("group", "opaque", "email", "url", "unicode", "neighbour")


@functools.cache
def _kinds(kinds: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.sampled_from(kinds)
GROUPED = ("group", "unicode", "neighbour")


@st.composite
def written(draw: st.DrawFn, kinds: tuple[str, ...] = KINDS) -> Written:
    kind = draw(_kinds(kinds))
    others: tuple[str, ...] = ()
    grouped = False
    if kind == "group":
        ident = shown = draw(digit_group_ids())
        grouped = True
    elif kind == "opaque":
        ident = shown = draw(opaque_ids())
    elif kind == "email":
        ident = shown = draw(emails())
    elif kind == "url":
        ident = draw(st.one_of(url_numbers, opaque_ids()))
        shown = draw(urls).format(ident)
    elif kind == "unicode":
        ident = draw(digit_group_ids())
        grouped = True
        script = draw(scripts)
        # the question in another script and the copy in ASCII, or the other way round
        if draw(st.booleans()):
            shown = _in_script(ident, script)
        else:
            shown, ident = ident, _in_script(ident, script)
    else:
        number, other = draw(long_numbers), draw(long_numbers)
        ident = number
        grouped = True
        shown = draw(neighbours).format(number, other)
        others = (other, "2021", "4")
    return Written(ident, f"{draw(leads)} {shown} {draw(tails)}{draw(ends)}", grouped, others)


def grounded(w: Written, value: str, name: str) -> bool:
    settings_ = IdentifierSettings(params=("value",))
    case = Case(id="p", question=w.question, why="property", forbid_ungrounded=True,
                identifiers=settings_)
    result = score(case, [ToolCall("tool", {name: value})])
    return result.checks["no_identifier_invented"].passed


def _own_piece(value: str, question: str) -> bool:
    # punctuation ends an identifier: "12:cd" of "a:12:cd" is grounded, and so is ":12:cd"
    core = value.strip(":@#")
    return bool(core) and re.search(rf"(?<![\w.-]){re.escape(core)}(?![\w.-])",
                                    question) is not None


def _same_identifier(a: str, b: str) -> bool:
    # equal but for separators, case and leading zeros: the rule's equivalences
    return zero_key(normal_form(a)) == zero_key(normal_form(b))


@st.composite
def one_edit(draw: st.DrawFn, value: str) -> str:
    positions = [i for i, c in enumerate(value) if c.isalnum()]
    i = draw(st.sampled_from(positions))
    op = draw(st.sampled_from(["change", "drop", "add"]))
    pool = "0123456789" if value[i].isdigit() else "abcdefghkmnpqrstuvwxyzABCDEFGHKMNPQRSTUVWXYZ"
    if op == "drop":
        return value[:i] + value[i + 1:]
    new = draw(st.sampled_from([c for c in pool if c.casefold() != value[i].casefold()]))
    if op == "change":
        return value[:i] + new + value[i + 1:]
    at = draw(st.sampled_from([i, i + 1]))
    return value[:at] + new + value[at:]


@SETTINGS
@given(w=written(), name=st.sampled_from(DECLARED + FREE))
def test_a_verbatim_copy_is_grounded_under_any_name(w: Written, name: str) -> None:
    assert grounded(w, w.ident, name), (w.question, w.ident, name)


@SETTINGS
@given(w=written(), name=st.sampled_from(DECLARED), data=st.data())
def test_a_copy_with_one_character_changed_dropped_or_added_is_not(
        w: Written, name: str, data: st.DataObject) -> None:
    edited = data.draw(one_edit(w.ident))
    assume(any(c.isdigit() for c in edited))
    # leading zeros are the one padding allowed; a neighbour is grounded in its own right
    assume(not _same_identifier(edited, w.ident))
    assume(not any(_same_identifier(edited, o) for o in w.others))
    assume(not _own_piece(edited, w.question))
    assert not grounded(w, edited, name), (w.question, w.ident, edited)


@SETTINGS
@given(w=written(GROUPED), name=st.sampled_from(DECLARED), data=st.data())
def test_a_moved_separator_is_not_grounded(w: Written, name: str, data: st.DataObject) -> None:
    assume(w.grouped)
    ascii_ident = "".join(str(int(c)) if c.isdigit() else c for c in w.ident)
    chars = re.sub(r"[ .-]", "", ascii_ident)
    cuts = [m.start() - k for k, m in enumerate(re.finditer(r"[ .-]", ascii_ident))]
    digit_cuts = [p for p in cuts if chars[p - 1].isdigit() and chars[p].isdigit()]
    # inside the leading zeros a separator groups nothing: they are padding
    padding = re.match(r"[A-Z]*0*", chars).end()
    digit_cuts = [p for p in digit_cuts if p > padding]
    inside = [p for p in range(padding + 1, len(chars))
              if chars[p - 1].isdigit() and chars[p].isdigit() and p not in cuts]
    assume(digit_cuts and inside)
    old = data.draw(st.sampled_from(digit_cuts))
    new = data.draw(st.sampled_from(inside))
    moved = sorted((set(cuts) - {old}) | {new})
    value = "".join(("-" if k in moved else "") + c for k, c in enumerate(chars))
    assume(not any(_same_identifier(value, o) for o in w.others))
    assert not grounded(w, value, name), (w.question, w.ident, value)


@SETTINGS
@given(w=written(GROUPED), name=st.sampled_from(DECLARED),
       sep=st.sampled_from(["", " ", "-", "."]))
def test_separators_of_a_digit_group_may_be_changed_or_dropped(w: Written, name: str,
                                                               sep: str) -> None:
    assume(w.grouped)
    value = re.sub(r"[ .-]", sep, w.ident)
    assert grounded(w, value, name), (w.question, w.ident, value)


@SETTINGS
@given(w=written(("opaque", "url")), name=st.sampled_from(DECLARED), data=st.data())
def test_a_mixed_case_identifier_keeps_its_case(w: Written, name: str,
                                                data: st.DataObject) -> None:
    letters = [c for c in w.ident if c.isalpha()]
    assume(any(c.isupper() for c in letters) and any(c.islower() for c in letters))
    i = data.draw(st.sampled_from([k for k, c in enumerate(w.ident) if c.isalpha()]))
    flipped = w.ident[:i] + w.ident[i].swapcase() + w.ident[i + 1:]
    # a short upper-case prefix folds ("gb 745" names GB 745)
    assume(not re.match(r"[A-Z]{2,3}(?=[ -]?\d)", w.ident[:i + 1] + w.ident[i + 1:i + 4])
           or i > 2)
    assert not grounded(w, flipped, name), (w.question, w.ident, flipped)
