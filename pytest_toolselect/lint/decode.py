"""The other readings of a text a model can follow and a pattern would miss as written.

A model reads base64 and rot13, looks past a homoglyph, joins spaced-out or leetspeak
letters and reads the words of a tool's name; a regular expression does none of that. Each
reading here is a normalised text (lint/text.py) and how it was read, for the phrase rules
to match beside the text itself. What stays out of reach is said in docs/lint.md.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import re
import unicodedata
from functools import lru_cache
from importlib import resources

from .text import hidden, normal

#: a run of single letters or digits with one separator between each ("i g n o r e", "i.g.n")
_SPACED = re.compile(r"(?<![^\W_])(?:[^\W_][ .\-_*·/|]){3,}[^\W_](?![^\W_])")
#: the words an instruction to the model is made of, to split a de-spaced run back into words
_VOCABULARY = re.compile(
    r"instructions?|previous|disregard|ignore|forget|override|bypass|prior|above|earlier|prompts?"
    r"|rules|system|everything|all|any|do|not|never|tell|inform|mention|reveal|the|users?|read|send"
    r"|secret|password|keys?|ssh|credentials?|you|are|now|must|important")
#: words an instruction to the model is seldom without, in English
_INSTRUCTION_WORDS = re.compile(
    r"\b(?:ignore|disregard|forget|instructions?|rules|tell|users?|secret|password|keys?|system|"
    r"assistant|model|send|read|important|never|must|silently|previous|prior|above|anything|"
    r"pretend|act|all|do|not|the|you|your|file|contents)\b")
#: a word that mixes letters with the digits and signs leetspeak writes for letters
_LEET_WORD = re.compile(r"(?<![a-z0-9@$!|])(?=[a-z0-9@$!|]*[a-z])(?=[a-z0-9@$!|]*[0-9@$!|])"
                        r"[a-z0-9@$!|]{2,}(?![a-z0-9@$!|])")
_LEET = (str.maketrans("013457@$!|8", "oieastasiib"), str.maketrans("013457@$!|8", "oleastasllb"))
#: text long enough to be base64 (or base64url) of a phrase
_BASE64 = re.compile(r"(?<![\w+/-])[A-Za-z0-9+/_-]{16,}={0,2}(?![\w+/=-])")
_CAMEL = re.compile(r"([a-z])([A-Z])")
#: a name-like token: letters, digits, _ and - only, with no path or dot around it
_NAME = re.compile(r"(?<![\w./~-])[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+|(?<=[a-z])[A-Z][a-z0-9]*)+(?![\w./~-])")


@lru_cache(maxsize=1)
def _confusables() -> dict[str, str]:
    """Each non-ASCII character the Unicode confusables table gives an ASCII letter or digit
    for, mapped to it (Cyrillic 'о', Greek 'ο', mathematical '𝐨' -> 'o')."""
    data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json")
                      .read_text(encoding="utf-8"))
    fold = {}
    for ch, glyphs in data.items():
        if len(ch) != 1 or ch.isascii():
            continue
        ascii_ = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalnum()]
        if ascii_:
            fold[ch] = ascii_[0].lower()
    return fold


def homoglyphs(text: str) -> str:
    """The text with every word whose non-ASCII letters all have an ASCII look-alike written
    in ASCII (a look-alike may be a symbol: U+02DB for 'i'); a word of another script, with
    a letter of its own, stays as it is."""
    fold = _confusables()

    def word(m: re.Match[str]) -> str:
        w = m.group(0)
        if w.isascii() or not all(ch.isascii() or ch in fold or unicodedata.category(ch)[0] not in "LM"
                                  for ch in w):
            return w
        return "".join(fold.get(ch, ch) for ch in w)

    return re.sub(r"\S+", word, text)


def despaced(text: str) -> str:
    """Runs of spaced-out letters joined, and split back into the words instructions use."""
    def join(m: re.Match[str]) -> str:
        letters = re.sub(r"[ .\-_*·/|]", "", m.group(0))
        return " " + _VOCABULARY.sub(lambda w: f" {w.group(0)} ", letters) + " "

    return _SPACED.sub(join, text)


def leet(text: str) -> list[str]:
    """The text with leetspeak words read as letters (1 as i, then 1 as l); a word that keeps
    a digit when read so ("sha256", "x86") is a name or a number, not leetspeak."""
    def fold(m: re.Match[str], table: dict[int, str]) -> str:
        word = m.group(0)
        read = word.translate(table)
        return read if read.isalpha() else word

    return [_LEET_WORD.sub(lambda m, t=table: fold(m, t), text)  # type: ignore[misc]
            for table in _LEET]


def name_words(text: str) -> str:
    """The names of a text read as words: snake_case, kebab-case and camelCase split (a path,
    with its slashes and dots, is no name); the rest of the text is read as written."""
    split = (_CAMEL.sub(r"\1 \2", m.group(0)).replace("_", " ").replace("-", " ")
             for m in _NAME.finditer(text))
    return " . ".join(w for w in split if " " in w.strip())


def base64_texts(text: str) -> list[str]:
    """The text of every base64 (or base64url) run that decodes to readable UTF-8 words."""
    out = []
    for m in _BASE64.finditer(text):
        token = m.group(0).rstrip("=")
        token += "=" * (-len(token) % 4)
        try:
            raw = base64.b64decode(token.replace("-", "+").replace("_", "/"), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        printable = sum(ch.isprintable() or ch.isspace() for ch in decoded)
        if " " in decoded and printable >= 0.95 * len(decoded):
            out.append(decoded)
    return out


@lru_cache(maxsize=4096)
def decoded(text: str) -> tuple[tuple[str, str], ...]:
    """(how, normalised text) of each reading of the text that differs from it as written."""
    plain = normal(text)
    found: dict[str, str] = {}

    def add(how: str, reading: str) -> None:
        reading = normal(reading)
        if reading and reading != plain and reading not in found.values():
            found[how] = reading

    if not text.isascii():
        # before NFKC, which makes some look-alikes spaces and marks (U+02DB: " " and U+0328)
        add("homoglyphs", homoglyphs("".join(" " if hidden(ch) else ch for ch in text)))
    folded = found.get("homoglyphs", plain)
    add("spaced-out letters", despaced(folded))
    for i, reading in enumerate(leet(folded)):
        add("leetspeak" + ("" if i == 0 else " (1 as l)"), reading)
    add("name words", name_words(text))
    for i, reading in enumerate(base64_texts(text)):
        add("base64" + (f" #{i + 1}" if i else ""), reading)
    if re.search(r"[a-zA-Z]{3}", text):
        # ordinary text is gibberish in rot13: only one that reads as words of an instruction
        # is matched (a rot13 reading of every description would double the rules' work)
        rot = codecs.encode(text, "rot13")
        if len(set(_INSTRUCTION_WORDS.findall(rot.lower()))) >= 2:
            add("rot13", rot)
    return tuple((how, reading) for how, reading in found.items())
