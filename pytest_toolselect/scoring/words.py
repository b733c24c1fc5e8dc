"""Where an identifier can begin and end in a text: its characters, and the words they form.

An identifier is written in ASCII digits (every Unicode decimal digit counts as its value)
and Latin letters. Any other character (a letter of another script, punctuation, a symbol,
a space) stands between identifiers: ``会社番号07764410の``, ``«553017»`` and
``04138203's`` each hold one word with digits. Pure functions.
"""

from __future__ import annotations

import re
import unicodedata

#: the Latin letters that NFKC leaves as they are (tests/test_grounding_glued.py derives
#: the list from the Unicode names): a regex class, for the words below
LATIN = ("A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u0131\u0134-\u013e\u0141-\u0148"
         "\u014a-\u017e\u0180-\u01c3\u01cd-\u01f0\u01f4-\u02af\u1d00-\u1d25"
         "\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1e99\u1e9c-\u1eff\u2184\u2c60-\u2c7b"
         "\u2c7e-\u2c7f\ua722-\ua76f\ua771-\ua787\ua78b-\ua7ca\ua7d0-\ua7d1\ua7d3"
         "\ua7d5-\ua7d9\ua7f5-\ua7f7\ua7fa-\ua7ff\uab30-\uab5a\uab60-\uab64"
         "\uab66-\uab68\U0001df00-\U0001df1e")
_ID = f"[0-9{LATIN}]"
_LATIN_CHAR = re.compile(f"[{LATIN}]")
#: characters that group an identifier's parts when they stand between two of them
GROUPING = "-.\u2010\u2011\u2012"
#: 1,234,567: commas group digits only in threes
_THOUSANDS = (rf"(?<![0-9{LATIN}])(?<![0-9],)[0-9]{{1,3}}(?:,[0-9]{{3}})+"
              rf"(?=s(?!{_ID})|(?!{_ID}|,[0-9]))")  # a plural may follow: "1,000,000s"
_PART = rf"(?:{_THOUSANDS}|{_ID}+)"
#: an underscore joins like a letter (``xY7_kQ2pLm9``, ``order_448120``: one name)
#: an IBAN in groups of four is one word, its letter groups (``NWBK``) included
IBAN = rf"(?<!{_ID})[A-Z]{{2}}[0-9]{{2}}(?: [A-Z0-9]{{4}})+(?: [A-Z0-9]{{1,4}})?(?!{_ID})"
_IBAN = re.compile(IBAN)
WORD = re.compile(rf"{_PART}(?:[{GROUPING}_]{_PART})*")
#: runs of identifier characters, with nothing between them
ID_RUN = re.compile(f"{_ID}+")
#: a character that is no part of the text's meaning: a combining or enclosing mark, a
#: format character (zero-width space, soft hyphen, direction marks)
_DROPPED = frozenset(("Mn", "Me", "Cf"))


def normalize(text: str) -> str:
    """NFKC, every Unicode decimal digit as its ASCII digit, marks and format characters
    dropped. A symbol that NFKC would write in digits, letters or spaces stays as
    written: a superscript or circled digit marks a number (a footnote) and is no digit
    of it, and ``™``, ``№``, ``㎏`` are symbols beside an identifier, not letters glued to it.
    """
    if text.isascii():
        return text
    out: list[str] = []
    plain: list[str] = []
    for c in text:
        if not c.isascii() and _symbol(c):
            out.append(unicodedata.normalize("NFKC", "".join(plain)))
            plain = []
            out.append(c)
        else:
            plain.append(c)
    out.append(unicodedata.normalize("NFKC", "".join(plain)))
    return "".join(_plain(c) for c in "".join(out))


def _symbol(c: str) -> bool:
    category = unicodedata.category(c)
    if category in ("No", "Nl"):
        return True
    # "´" would become a space and a combining mark: a boundary either way, kept as one
    return category[0] in "SP" and any(
        is_id_char(x) or x.isspace() for x in unicodedata.normalize("NFKC", c))


def _plain(c: str) -> str:
    if c.isascii():
        return c
    if c.isdecimal():
        return str(unicodedata.decimal(c))
    return "" if unicodedata.category(c) in _DROPPED else c


def is_id_char(c: str) -> bool:
    """An ASCII digit or a Latin letter (of a normalized text)."""
    return "0" <= c <= "9" or _LATIN_CHAR.match(c) is not None


def is_digit(c: str) -> bool:
    return "0" <= c <= "9"


#: (word, start, end, word): the shape of grounding's runs
Word = tuple[str, int, int, str]


def prose(word: str) -> bool:
    """A word of prose, in lower case or capitalised (``registered``, ``No``, ``Thanks``),
    not a code like ``CD`` or ``xY``."""
    return len(word) >= 2 and word.isalpha() and (word.islower() or word.istitle())


_PEEL_LEAD = re.compile(rf"([{LATIN}]+)[-.\u2010\u2011](?={_ID})")
_PEEL_TRAIL = re.compile(rf"(?<={_ID})[-.\u2010\u2011]([{LATIN}]+)$")


def words(text: str) -> list[Word]:
    """Each run of identifier characters in a normalized text, with the grouping
    characters between them (``INV-2024-000123``, ``1,234,567``), less a word of prose
    joined to either end by a hyphen or a dot: ``05512873-registered``, ``No.03365129``
    and ``7731022.Thanks`` are two words each."""
    out: list[Word] = []
    at = 0
    for iban in [*_IBAN.finditer(text), None]:
        stop = iban.start() if iban else len(text)
        for m in WORD.finditer(text, at, stop):
            _peel(text, m.start(), m.end(), out)
        if iban:
            out.append((iban.group(), iban.start(), iban.end(), iban.group()))
            at = iban.end()
    return out


def _peel(text: str, start: int, end: int, out: list[Word]) -> None:
    tail: list[Word] = []
    while (lead := _PEEL_LEAD.match(text, start, end)) and prose(lead.group(1)):
        out.append((lead.group(1), start, lead.end(1), lead.group(1)))
        start = lead.end()
    while (trail := _PEEL_TRAIL.search(text, start, end)) and prose(trail.group(1)):
        tail.append((trail.group(1), trail.start(1), end, trail.group(1)))
        end = trail.start()
    out.append((text[start:end], start, end, text[start:end]))
    out.extend(reversed(tail))
