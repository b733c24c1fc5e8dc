"""Which identifiers a question grounds: the rule of docs/checks.md, as pure functions.

A question is read as units: its non-space runs, with surrounding punctuation and
brackets stripped, and runs of digit-bearing groups joined by single spaces (``GB 745
9384 21``). A value is grounded when it equals a unit (or a URL piece of one) exactly, or,
for a digit-group identifier (only letters, digits, spaces, hyphens and dots), when it
has the same characters grouped no differently: separators dropped or changed but never
moved, a short letter prefix left off, leading zeros added or dropped. Case folds only
where the question wrote the identifier in one case, and in a short letter prefix. Every
Unicode decimal digit counts as its ASCII value.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

#: separators that only group the characters of a digit-group identifier
SOFT = frozenset(" -.\u2010\u2011\u2012\u2013")
_SPACE = frozenset(" \u00a0\u202f")
_OPEN = "([{<\"'\u00ab\u201c\u2018$\u00a3\u20ac\u00a5"
_CLOSE = ")]}>\"'\u00bb\u201d\u2019.,;:!?"
#: a run split at these is a URL: each piece is grounded too
_URL_SPLIT = re.compile(r"[/?=&]+")
#: "7731022.Thanks": a full stop between a number and the next sentence's first word
_GLUED_STOP = re.compile(r"(?<=\d)\.(?=[^\W\d_][^\W\d_]*$)")
#: a prefix that may be left off: two or three letters in one case, then digits (SC123456)
_PREFIX = re.compile(r"(?:[^\W\d_a-z]{2,3}|[^\W\d_A-Z]{2,3})(?=\d)")
_LEADING_ZEROS = re.compile(r"^([^\W\d_]{0,3})(0+)(?=\d)")
#: (stripped run, start, end, raw run)
_Run = tuple[str, int, int, str]
#: numbers this long are identifiers of their own even inside a spaced span
OWN_LENGTH = 6


def normalize(text: str) -> str:
    """NFKC, with every Unicode decimal digit written as its ASCII digit."""
    text = unicodedata.normalize("NFKC", text)
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() and not c.isascii() else c
                   for c in text)


def _alnum(c: str) -> bool:
    return c.isalnum()


@dataclass(frozen=True)
class Shape:
    """A value as its letters and digits, and the separators between them."""

    chars: str
    #: position in ``chars`` -> the non-alphanumeric text written before that character
    seps: tuple[tuple[int, str], ...]

    @property
    def soft(self) -> bool:
        """Only spaces, hyphens and dots between groups: a digit-group identifier."""
        n = len(self.chars)
        return all(0 < p < n and s in SOFT for p, s in self.seps)


def shape(text: str) -> Shape:
    chars: list[str] = []
    seps: list[tuple[int, str]] = []
    sep = ""
    for c in text:
        if _alnum(c):
            if sep:
                seps.append((len(chars), sep))
                sep = ""
            chars.append(c)
        else:
            sep += c
    if sep:
        seps.append((len(chars), sep))
    # a run of spaces is one space; "1 - 2" is one hyphen
    seps = [(p, s.strip() or " ") if s.strip() in SOFT or not s.strip() else (p, s)
            for p, s in seps]
    return Shape("".join(chars), tuple(seps))


def _one_case(chars: str) -> bool:
    letters = [c for c in chars if c.isalpha()]
    if all(c.isupper() for c in letters) or all(c.islower() for c in letters):
        return True
    # a capitalised word ("Acme") is one word, not a mixed-case identifier
    return chars.isalpha() and chars[1:].islower()


def _key(chars: str, zeros: bool) -> str:
    folded = chars.casefold()
    return _LEADING_ZEROS.sub(r"\1", folded, count=1) if zeros else folded


@dataclass(frozen=True)
class Entry:
    """One thing the question names: a unit, or a piece of one."""

    text: str
    shape: Shape
    folds: bool  # the whole identifier is in one case
    prefix: int  # length of a short letter prefix that may be left off (0: none)

    @classmethod
    def of(cls, text: str) -> Entry:
        s = shape(text)
        m = _PREFIX.match(s.chars) if s.soft else None
        return cls(text, s, _one_case(s.chars), m.end() if m else 0)

    def keys(self, zeros: bool) -> Iterator[str]:
        if self.shape.soft and any(c.isdigit() for c in self.shape.chars):
            yield _key(self.shape.chars, zeros)
            if self.prefix:
                yield _key(self.shape.chars[self.prefix:], zeros)
        else:
            yield "\x00" + self.text.casefold()

    def matches(self, value: str, zeros: bool) -> bool:
        if not (self.shape.soft and any(c.isdigit() for c in self.shape.chars)):
            return len(value) == len(self.text) and all(
                _same(a, b, self.folds) for a, b in zip(value, self.text, strict=True))
        v = shape(value)
        if not v.soft:
            return False
        starts = (0, self.prefix) if self.prefix else (0,)
        return any(self._grouped_alike(v, start, zeros) for start in starts)

    def _grouped_alike(self, v: Shape, start: int, zeros: bool) -> bool:
        e_chars, e_seps = _cut(self.shape, start, zeros)
        v_chars, v_seps = _cut(v, 0, zeros)
        if len(e_chars) != len(v_chars):
            return False
        for i, (a, b) in enumerate(zip(v_chars, e_chars, strict=True)):
            in_prefix = i < self.prefix - start
            if not _same(a, b, self.folds or in_prefix):
                return False
        # a separator may be changed or dropped, never moved: it must stand where the
        # question had one, or between a letter and a digit ("SC 123456")
        return all(p in e_seps or e_chars[p - 1].isdigit() != e_chars[p].isdigit()
                   for p in v_seps)


def _same(a: str, b: str, fold: bool) -> bool:
    return a == b or (fold and a.casefold() == b.casefold())


def _cut(s: Shape, start: int, zeros: bool) -> tuple[str, set[int]]:
    """The characters from ``start`` (a prefix left off), less leading zeros when they
    are padding, with the positions of the separators between them."""
    chars = s.chars[start:]
    seps = {p - start for p, _ in s.seps if p > start}
    if zeros:
        m = _LEADING_ZEROS.match(chars)
        if m:
            a, b = m.start(2), m.end(2)
            chars = chars[:a] + chars[b:]
            seps = {p if p <= a else p - (b - a) for p in seps if not a < p <= b}
    return chars, {p for p in seps if 0 < p < len(chars)}


# --- units --------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """A run of the text, or a spaced run of digit groups, with where it stands."""

    text: str
    start: int
    end: int
    #: the separate short letter prefix token the unit starts with, if any
    prefix: str | None = None
    #: the groups of a spaced unit (one entry: a single run)
    groups: tuple[str, ...] = ()


def _strip(run: str, start: int) -> tuple[str, int]:
    lead = len(run) - len(run.lstrip(_OPEN))
    run = run.strip(_OPEN).rstrip(_CLOSE)
    return run, start + lead


def _runs(text: str) -> list[_Run]:
    """(stripped run, start, end, raw run) for each non-space run of the text."""
    out = []
    for m in re.finditer(r"\S+", text):
        run, start = _strip(m.group(), m.start())
        if run:
            out.append((run, start, start + len(run), m.group()))
    return out


def _groupable(run: _Run) -> bool:
    # a digit group: letters, digits and soft separators only
    return any(c.isdigit() for c in run[0]) and shape(run[0]).soft


def _joined(text: str, a: _Run, b: _Run) -> bool:
    # one space between, and nothing stripped between: "745, 9384" and "745 (9384)" are two
    return (text[a[2]:b[1]] in _SPACE and a[3].endswith(a[0]) and b[3].startswith(b[0])
            and _groupable(a) and _groupable(b))


#: a short count before one of these words is a quantity ("4 units"), never the last group
#: of a spaced identifier: "0000005 4 units" names 0000005 and four units, not 00000054
_COUNT = re.compile(r"0|[1-9]\d{0,3}")
_COUNT_NOUN = re.compile(
    r"(?:unit|item|piece|pc|day|night|hour|hr|minute|min|second|sec|week|month|year|yr|"
    r"time|cop(?:y|ie)|box(?:e)?|pallet|seat|user|person|people|licen[cs]e|pack|bottle|"
    r"ticket|page|line|row|file|share|point|percent|order|case|request|call|step|"
    r"employee|member|account|device|server|node|core|slot)s?", re.IGNORECASE)


def _counted(text: str, runs: list[_Run], k: int) -> bool:
    """Whether run k is a count of the word after it ("4 units")."""
    if k + 1 >= len(runs) or _COUNT.fullmatch(runs[k][0]) is None:
        return False
    after = runs[k + 1]
    return (text[runs[k][2]:after[1]] in _SPACE and runs[k][3] == runs[k][0]
            and _COUNT_NOUN.fullmatch(after[0]) is not None)


def _is_prefix(run: _Run, upper_only: bool) -> bool:
    word = run[0]
    return (len(word) <= 3 and word.isalpha() and run[3] == word
            and (word.isupper() or not upper_only))


def units(text: str, *, upper_prefix_only: bool = False) -> list[Unit]:
    """The units of ``text``: each non-space run (punctuation stripped), with runs of
    digit groups joined by single spaces taken together, after one short letter prefix.
    ``upper_prefix_only`` takes a prefix only in upper case (``GB 745``, not ``in 2024``).
    """
    runs = _runs(text)
    out: list[Unit] = []
    i = 0
    while i < len(runs):
        run = runs[i]
        if not _groupable(run):
            out.append(Unit(run[0], run[1], run[2], None, (run[0],)))
            i += 1
            continue
        j = i
        while (j + 1 < len(runs) and _joined(text, runs[j], runs[j + 1])
               and not _counted(text, runs, j + 1)):
            j += 1
        start, prefix = run[1], None
        before = runs[i - 1] if i else None
        # a prefix stands before digits ("GB 745"), not before another prefix ("and SC-1")
        if (before and _is_prefix(before, upper_prefix_only) and run[0][0].isdigit()
                and text[before[2]:run[1]] in _SPACE and run[3].startswith(run[0])):
            out.pop()
            start, prefix = before[1], before[0]
        end = runs[j][2]
        out.append(Unit(text[start:end], start, end, prefix, tuple(r[0] for r in runs[i:j + 1])))
        i = j + 1
    return out


def pieces(run: str) -> list[str]:
    """A run's URL pieces (split at ``/ ? = &``) and the parts around a full stop glued to
    the next sentence; [] when it has none."""
    parts = [p for p in _URL_SPLIT.split(run)] if _URL_SPLIT.search(run) else [run]
    out: list[str] = []
    for part in parts:
        out.extend(_GLUED_STOP.split(part))
    out = [_strip(p, 0)[0] for p in out]
    return [p for p in out if p] if len(out) > 1 else []


class QuestionGrounding:
    """The question's entries, ready for lookups (``find``, ``grounds``)."""

    __slots__ = ("_index", "tokens", "zeros")

    def __init__(self, question: str, *, leading_zeros: bool = True) -> None:
        self.zeros = leading_zeros
        self._index: dict[str, list[Entry]] = {}
        text = normalize(question)
        self.tokens = {t.casefold() for t in re.findall(r"[^\W_]+", text)}
        for unit in units(text):
            for entry_text in dict.fromkeys(_entry_texts(unit)):
                entry = Entry.of(entry_text)
                for key in entry.keys(leading_zeros):
                    self._index.setdefault(key, []).append(entry)

    def find(self, value: str) -> str | None:
        """The question's text that grounds ``value``, or None."""
        value = normalize(value).strip()
        if not value or not any(c.isalnum() for c in value):
            return None
        keys = {"\x00" + value.casefold()}
        v = shape(value)
        if v.soft:
            keys.add(_key(v.chars, self.zeros))
        for key in keys:
            for entry in self._index.get(key, ()):
                if entry.matches(value, self.zeros):
                    return entry.text
        return None

    def grounds(self, value: str) -> bool:
        return self.find(value) is not None


def _entry_texts(unit: Unit) -> Iterator[str]:
    spaced = len([g for g in unit.groups if any(c.isdigit() for c in g)]) > 1
    yield unit.text
    if unit.prefix:
        yield unit.text[len(unit.prefix):].lstrip()  # "a 745 9384 21": the number alone
    for k, group in enumerate(unit.groups):
        # a short group of a spaced identifier ("745" of "GB 745 9384 21") is no identifier;
        # a long one is, as a neighbour glued on by a space ("09118273 2021")
        if spaced and len(group) < OWN_LENGTH:
            continue
        if k == 0 and unit.prefix and spaced:
            yield f"{unit.prefix} {group}"
        yield from _variants(group)
    if unit.prefix:
        yield unit.prefix


def _variants(run: str) -> Iterator[str]:
    yield run
    bare = run.strip("".join(c for c in set(run) if not c.isalnum()))
    if bare and bare != run:
        yield bare  # "#4411" names 4411 too
    for piece in pieces(run):
        yield from _variants(piece)
