"""Which identifiers a question grounds: the rule of docs/checks.md, as pure functions.

A question is read as words (words.py): runs of digits and Latin letters with the hyphens,
dots and thousands commas between them, ended by any other character, so an identifier
glued to a possessive, a bracket or a word of another script stands on its own. Words of
digit groups joined by single spaces are one unit (``GB 745 9384 21``). A value is grounded
when it occurs in the question where a unit (or a part that stands alone: a prefix or a
word left off, a long neighbour) begins and ends; or, for a digit-group identifier (only
letters, digits and grouping separators), when it has the same characters grouped no
differently: separators dropped or changed but never moved, added only to an identifier
the question wrote without any, a short letter prefix left off, leading zeros added or
dropped. Case folds only where the question wrote the identifier in one case, and in a
short letter prefix. Every Unicode decimal digit counts as its ASCII value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .words import IBAN, ID_RUN, is_digit, is_id_char, normalize, prose, words

#: separators that only group the characters of a digit-group identifier; an en or em
#: dash is punctuation between two things ("04138203\u2013registered"), not a grouping
SOFT = frozenset(" -.,\u2010\u2011\u2012")


def _one_space(gap: str) -> bool:
    """One space of any kind between two runs: a space of any Unicode class (Zs), a line or
    paragraph separator, a tab or line break (``0413\n8203`` pasted from an email)."""
    return gap == "\r\n" or (len(gap) == 1 and gap.isspace())


_OPEN = "([{<\"'\u00ab\u201c\u2018$\u00a3\u20ac\u00a5"
_CLOSE = ")]}>\"'\u00bb\u201d\u2019.,;:!?"
#: a value holding these is a path, a URL or a search pattern: its pieces are grounded
_PATH_SPLIT = re.compile(r"[*?/\\=&]+")
#: a file name's extension is no part of the identifier it names
_EXTENSION = re.compile(
    r"\.(?:json|jsonl|csv|tsv|txt|pdf|xml|html?|md|log|ya?ml|xlsx?|docx?|zip|gz|tar|png|"
    r"jpe?g|gif|eml|msg|parquet)(?![0-9A-Za-z])", re.IGNORECASE)
#: a plural glued to digits ("04138203s")
_PLURAL = re.compile(r"(?<=[0-9])s$")
#: a prefix that may be left off: two or three letters in one case, then digits (SC123456)
_PREFIX = re.compile(r"(?:[^\W\d_a-z]{2,3}|[^\W\d_A-Z]{2,3})(?=\d)")
_LEADING_ZEROS = re.compile(r"^([^\W\d_]{0,3})(0+)(?=\d)")
#: (stripped run, start, end, raw run)
_Run = tuple[str, int, int, str]
#: numbers this long are identifiers of their own even inside a spaced span
OWN_LENGTH = 6


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
        if is_id_char(c):
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
        # leading zeros dropped or kept as written ("000-010" is "000010")
        return any(self._grouped_alike(v, start, z)
                   for start in starts for z in dict.fromkeys((False, zeros)))

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
        # question had one; only an identifier the question wrote without separators may
        # be grouped anew ("SC 123456", an IBAN in fours)
        return not e_seps or v_seps <= e_seps


def _same(a: str, b: str, fold: bool) -> bool:
    return a == b or (fold and a.casefold() == b.casefold())


def _cut(s: Shape, start: int, zeros: bool) -> tuple[str, set[int]]:
    """The characters from ``start`` (a prefix left off), less leading zeros when they
    are padding, with the positions of the separators between them. Zeros pad the first
    group only: ``00-12345`` is a group of zeros, not ``12345`` padded."""
    chars = s.chars[start:]
    seps = {p - start for p, _ in s.seps if p > start}
    if zeros:
        m = _LEADING_ZEROS.match(chars)
        if m:
            a, b = m.start(2), m.end(2)
            b = min(b, min((p for p in seps if p > a), default=b + 1) - 1)
            if b > a:
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
    #: where each group starts in the text
    starts: tuple[int, ...] = ()


def _strip(run: str, start: int) -> tuple[str, int]:
    lead = len(run) - len(run.lstrip(_OPEN))
    run = run.strip(_OPEN).rstrip(_CLOSE)
    return run, start + lead


def _runs(text: str) -> list[_Run]:
    """(stripped run, start, end, raw run) for each non-space run of the text."""
    out = []
    # an IBAN in groups of four is one run, its letter groups ("NWBK") included
    for m in re.finditer(rf"{IBAN}|\S+", text):
        run, start = _strip(m.group(), m.start())
        if run:
            out.append((run, start, start + len(run), m.group()))
    return out


def _groupable(run: _Run) -> bool:
    # a digit group: letters, digits and soft separators only
    return any(c.isdigit() for c in run[0]) and shape(run[0]).soft


def _joined(text: str, a: _Run, b: _Run) -> bool:
    # one space between, and nothing stripped between: "745, 9384" and "745 (9384)" are two
    return (_one_space(text[a[2]:b[1]]) and a[3].endswith(a[0]) and b[3].startswith(b[0])
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
    return (_one_space(text[runs[k][2]:after[1]]) and runs[k][3] == runs[k][0]
            and _COUNT_NOUN.fullmatch(after[0]) is not None)


def _is_prefix(run: _Run, upper_only: bool) -> bool:
    word = run[0]
    return (len(word) <= 3 and word.isalpha() and run[3] == word
            and (word.isupper() or not upper_only))


def units(text: str, *, upper_prefix_only: bool = False,
          runs: list[_Run] | None = None) -> list[Unit]:
    """The units of ``text``: each non-space run (punctuation stripped), with runs of
    digit groups joined by single spaces taken together, after one short letter prefix.
    ``upper_prefix_only`` takes a prefix only in upper case (``GB 745``, not ``in 2024``).
    """
    if runs is None:
        runs = _runs(text)
    out: list[Unit] = []
    i = 0
    while i < len(runs):
        run = runs[i]
        if not _groupable(run):
            out.append(Unit(run[0], run[1], run[2], None, (run[0],), (run[1],)))
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
                and _one_space(text[before[2]:run[1]]) and run[3].startswith(run[0])):
            out.pop()
            start, prefix = before[1], before[0]
        end = runs[j][2]
        out.append(Unit(text[start:end], start, end, prefix, tuple(r[0] for r in runs[i:j + 1]),
                        tuple(r[1] for r in runs[i:j + 1])))
        i = j + 1
    return out


def pattern_pieces(value: str, *, every_word: bool = False) -> list[str] | None:
    """The identifier-like pieces of a path, URL or search pattern (``**/*99-41720*.json``:
    ``99-41720``), split at ``* ? / \\ = &`` with a file extension left off; None when
    the value is none of these. ``every_word``: split at any character no identifier holds
    (a search text's ``04138203's``, ``order:448120``)."""
    bare = _EXTENSION.sub("", value)
    if every_word:
        return [w[0] for w in words(bare)]
    if bare == value and not _PATH_SPLIT.search(value):
        return None
    parts = (p.strip("".join(c for c in set(p) if not is_id_char(c)))
             for p in _PATH_SPLIT.split(bare))
    return [p for p in parts if p]


class QuestionGrounding:
    """The question's entries, ready for lookups (``find``, ``grounds``)."""

    __slots__ = ("_ends", "_index", "_starts", "_text", "raw", "tokens", "zeros")

    def __init__(self, question: str, *, leading_zeros: bool = True) -> None:
        self.zeros = leading_zeros
        #: the question as written, for a value holding characters normalizing drops
        self.raw = question
        self._index: dict[str, list[Entry]] = {}
        self._text = text = normalize(question)
        #: where an entry begins and ends: a verbatim occurrence must begin and end there
        self._starts: set[int] = set()
        self._ends: set[int] = set()
        self.tokens = {t.casefold() for t in ID_RUN.findall(text)}
        seen: set[str] = set()
        for unit in units(text, runs=words(text)):
            for entry_text, start in _entries(unit):
                self._starts.add(start)
                self._ends.add(start + len(entry_text))
                if entry_text in seen:
                    continue
                seen.add(entry_text)
                entry = Entry.of(entry_text)
                for key in entry.keys(leading_zeros):
                    self._index.setdefault(key, []).append(entry)

    def find(self, value: str) -> str | None:
        """The question's text that grounds ``value``, or None."""
        value = normalize(value).strip()
        if not any(is_id_char(c) for c in value):
            # only letters of other scripts (or nothing): they end no identifier
            return value if any(c.isalnum() for c in value) and value in self._text else None
        keys = {"\x00" + value.casefold()}
        v = shape(value)
        if v.soft:
            keys.add(_key(v.chars, self.zeros))
        for key in keys:
            for entry in self._index.get(key, ()):
                if entry.matches(value, self.zeros):
                    return entry.text
        return self._occurrence(value)

    def _occurrence(self, value: str) -> str | None:
        """The question's text equal to ``value`` (``SHP:4410:B``, ``04138203's``) that
        begins where an entry begins and ends where one ends."""
        if any(c.isspace() for c in value) and not any(c.isalpha() for c in value):
            # digit groups and spaces: grouping is the entries' to judge (a short group of a
            # spaced identifier does not ground); a name with spaces ("iPhone 12",
            # "Pixel 8 Pro") is copied verbatim
            return None
        ids = [k for k, c in enumerate(value) if is_id_char(c)]
        lead, trail = ids[0], len(value) - 1 - ids[-1]
        for m in re.finditer(f"(?=({re.escape(value)}))", self._text, re.IGNORECASE):
            s, e = m.start(), m.start() + len(value)
            if s + lead not in self._starts or e - trail not in self._ends:
                continue
            found = m.group(1)
            if found == value or _one_case("".join(c for c in found if is_id_char(c))):
                return found
        return None

    def find_pieces(self, value: str, *, every_word: bool = False,
                    skip: Callable[[str], bool] = lambda _: False) -> str | None:
        """The question's text that grounds the first identifier piece of a path or
        pattern when every piece is grounded (pattern_pieces), or None. A piece of prose
        (``json``, ``reports``) needs no grounding, nor one ``skip`` says is no
        identifier; a letter code (``GB``) does."""
        parts = pattern_pieces(normalize(value).strip(), every_word=every_word)
        if not parts:
            return None
        first = None
        for part in parts:
            if skip(part):
                continue
            if any(is_digit(c) for c in part):
                found = self.find(part)
                if found is None:
                    return None
                first = first or found
            elif not (part.isalpha() and prose(part)) and part.casefold() not in self.tokens:
                return None
        return first

    def grounds(self, value: str) -> bool:
        return self.find(value) is not None


def _entries(unit: Unit) -> Iterator[tuple[str, int]]:
    """(text, start) of each part of a unit that names something on its own."""
    spaced = sum(any(is_digit(c) for c in g) for g in unit.groups) > 1
    yield from _trimmed(unit.text, unit.start)
    if unit.prefix:
        rest = unit.text[len(unit.prefix):].lstrip()  # "a 745 9384 21": the number alone
        yield from _trimmed(rest, unit.end - len(rest))
    for k, (group, at) in enumerate(zip(unit.groups, unit.starts, strict=True)):
        # a short group of a spaced identifier ("745" of "GB 745 9384 21") is no identifier;
        # a long one is, as a neighbour glued on by a space ("09118273 2021")
        if spaced and len(_PLURAL.sub("", group)) < OWN_LENGTH:
            continue
        if k == 0 and unit.prefix and spaced:
            yield f"{unit.prefix} {group}", unit.start
        yield from _trimmed(group, at)
    if unit.prefix:
        yield unit.prefix, unit.start


def _trimmed(text: str, start: int) -> Iterator[tuple[str, int]]:
    """The text, and the text less a plural glued to its digits ("04138203s")."""
    yield text, start
    if _PLURAL.search(text):
        yield text[:-1], start
