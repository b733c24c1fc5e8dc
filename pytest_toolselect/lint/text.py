"""What a tool's text holds that a reviewer does not see, and the text the poisoning rules match.

A model reads a description character by character; a person reviewing it reads the
rendering. Format characters (Unicode category Cf: zero-width spaces and joiners, bidi
controls, tag characters, the soft hyphen, ...) and a few others that render as nothing
(variation selectors, the combining grapheme joiner, Hangul fillers) are the difference.
The rules match a normalised text, so such characters cannot split a phrase to evade them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

#: invisible characters that are not of category Cf: variation selectors, the combining
#: grapheme joiner, the Hangul fillers, the Mongolian vowel separator, the braille blank
_OTHER_INVISIBLE = frozenset(
    [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0), 0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0,
     0x180E, 0x2800])
#: Unicode tag characters spell ASCII text no one sees (U+E0020-U+E007E)
_TAGS = range(0xE0020, 0xE007F)
#: bidi controls reorder what a reviewer sees
_BIDI = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
_SPACE = re.compile(r"\s+")
#: how far either side of a hidden character its excerpt reaches
EXCERPT = 24


def hidden(ch: str) -> bool:
    """Does the character render as nothing (or reorder its neighbours)?"""
    code = ord(ch)
    return unicodedata.category(ch) == "Cf" or code in _OTHER_INVISIBLE


def kind(ch: str) -> str:
    code = ord(ch)
    if code in _TAGS or code == 0xE0001 or code == 0xE007F:
        return "tag character"
    if code in _BIDI:
        return "bidi control"
    if code in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF):
        return "zero-width"
    if unicodedata.category(ch) == "Cf":
        return "format character"
    return "invisible character"


def escaped(text: str) -> str:
    """The text with every hidden character (and control) written as its escape."""
    out = []
    for ch in text:
        code = ord(ch)
        if hidden(ch) or (unicodedata.category(ch) == "Cc" and ch not in "\n\t"):
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def tag_text(text: str) -> str:
    """The ASCII the tag characters of a text spell (empty: none)."""
    return "".join(chr(ord(ch) - 0xE0000) for ch in text if ord(ch) in _TAGS)


@dataclass(frozen=True)
class Hidden:
    """The hidden characters of one text: what they are, and where (escaped excerpts)."""

    chars: tuple[str, ...]
    excerpt: str
    #: the ASCII that tag characters spell, when there are any
    tags: str

    def to_dict(self) -> dict[str, Any]:
        names = sorted({f"U+{ord(c):04X} {unicodedata.name(c, kind(c))}" for c in self.chars})
        return {"characters": names, "kinds": sorted({kind(c) for c in self.chars}),
                "excerpt": self.excerpt, "count": len(self.chars),
                **({"tag_text": self.tags} if self.tags else {})}


def find_hidden(text: str) -> Hidden | None:
    if text.isascii():  # no format character is ASCII: the common case, quickly
        return None
    positions = [i for i, ch in enumerate(text) if hidden(ch)]
    if not positions:
        return None
    first, last = positions[0], positions[-1]
    start, end = max(0, first - EXCERPT), min(len(text), last + EXCERPT + 1)
    excerpt = escaped(text[start:end])
    if len(excerpt) > 400:
        excerpt = excerpt[:400] + "..."
    return Hidden(tuple(text[i] for i in positions),
                  ("..." if start else "") + excerpt + ("..." if end < len(text) else ""),
                  tag_text(text))


def normal(text: str, joiner: str = "") -> str:
    """The text the phrase rules match: NFKC, casefolded, hidden characters removed (or
    made spaces, with ``joiner=" "``: one of them may stand for a space), spaces collapsed."""
    if not text.isascii():
        text = "".join(joiner if hidden(ch) else ch for ch in text)
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", text).strip()


@lru_cache(maxsize=4096)
def readings(text: str) -> tuple[str, ...]:
    """Every normalised reading of a text: hidden characters dropped, or read as spaces, and
    the ASCII its tag characters spell."""
    out = dict.fromkeys((normal(text), normal(text, " ")))
    tags = tag_text(text)
    if tags:
        out[normal(tags)] = None
    return tuple(out)


def strings(schema: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(place, text) of every string in a JSON schema, keys included: a parameter's name,
    description, title, enum value or default is text a model reads as well."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            place = f"{where}.{key}" if where else str(key)
            yield place + " (key)", str(key)
            yield from strings(value, place)
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from strings(value, f"{where}[{i}]")
    elif isinstance(schema, str):
        yield where, schema
