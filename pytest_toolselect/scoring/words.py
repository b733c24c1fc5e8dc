"""Where an identifier can begin and end in a text: its characters, and the words they form.

An identifier is written in ASCII digits (every Unicode decimal digit counts as its value)
and Latin letters. Any other character (a letter of another script, punctuation, a symbol,
a space) stands between identifiers: ``会社番号07764410の``, ``«553017»`` and
``04138203's`` each hold one word with digits. Pure functions.
"""

from __future__ import annotations

import re
import unicodedata

#: Latin letters (ASCII, Latin-1, Extended-A/B, IPA, Extended Additional, -C, -D, -E),
#: without the multiplication and division signs that sit among them
LATIN = ("A-Za-z\u00aa\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02af\u1d00-\u1d7f"
         "\u1e00-\u1eff\u2c60-\u2c7f\ua720-\ua7ff\uab30-\uab6f")
_ID = f"[0-9{LATIN}]"
_LATIN_CHAR = re.compile(f"[{LATIN}]")
#: characters that group an identifier's parts when they stand between two of them
GROUPING = "-.\u2010\u2011\u2012"
#: 1,234,567: commas group digits only in threes
_THOUSANDS = rf"(?<![0-9{LATIN},])[0-9]{{1,3}}(?:,[0-9]{{3}})+(?!{_ID}|,[0-9])"
_PART = rf"(?:{_THOUSANDS}|{_ID}+)"
#: an underscore joins like a letter (``xY7_kQ2pLm9``, ``order_448120``: one name)
#: an IBAN in groups of four is one word, its letter groups (``NWBK``) included
_IBAN = rf"(?<!{_ID})[A-Z]{{2}}[0-9]{{2}}(?: [A-Z0-9]{{4}})+(?: [A-Z0-9]{{1,4}})?(?!{_ID})"
WORD = re.compile(rf"{_IBAN}|{_PART}(?:[{GROUPING}_]{_PART})*")
#: runs of identifier characters, with nothing between them
ID_RUN = re.compile(f"{_ID}+")
#: a character that is no part of the text's meaning: a combining or enclosing mark, a
#: format character (zero-width space, soft hyphen, direction marks)
_DROPPED = frozenset(("Mn", "Me", "Cf"))


def normalize(text: str) -> str:
    """NFKC, every Unicode decimal digit as its ASCII digit, marks and format characters
    dropped. A superscript, subscript, circled or fraction digit stays as written: it
    marks a number (a footnote, an exponent) and is no digit of it, which NFKC would make it.
    """
    if text.isascii():
        return text
    out: list[str] = []
    plain: list[str] = []
    for c in text:
        if unicodedata.category(c) == "No":
            out.append(unicodedata.normalize("NFKC", "".join(plain)))
            plain = []
            out.append(c)
        else:
            plain.append(c)
    out.append(unicodedata.normalize("NFKC", "".join(plain)))
    return "".join(_plain(c) for c in "".join(out))


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


def words(text: str) -> list[Word]:
    """Each run of identifier characters in a normalized text, with the grouping
    characters between them (``INV-2024-000123``, ``1,234,567``, ``No.03365129``)."""
    return [(m.group(), m.start(), m.end(), m.group()) for m in WORD.finditer(text)]
