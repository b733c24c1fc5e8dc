"""The plugin's words: a case's status, its verdict, how a verdict shows in pytest, a
step of the sequential test, a lint finding's severity.

Each is a string-valued enum whose members equal their words (``Verdict.HELD == "held"``):
a baseline, a results document and a user's ``-k`` keep reading the same text, while the
code names a member instead of writing the word again in several packages. Where a word
leaves the process (JSON, an xdist report) it is written as the plain string
(:func:`plain`), since execnet and JSON schemas know only ``str``.
"""

from __future__ import annotations

from enum import Enum


class Word(str, Enum):
    """A word of one vocabulary: compares, hashes and formats as its text."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Status(Word):
    """How a case did over its reps."""

    HELD = "held"
    FLAKY = "flaky"
    FAILING = "failing"


class Verdict(Word):
    """A case's or a group's run against the baseline (or, without one, an ordinary test)."""

    REGRESSION = "regression"
    FAILED = "failed"
    ERROR = "error"
    #: a regression the model's move explains: the baseline's own tools fail now too
    DRIFT = "drift"
    #: not run: the cost cap stopped new calls
    SKIPPED = "skipped"
    FIXED = "fixed"
    NEW_FAILING = "new_failing"
    STILL_FAILING = "still_failing"
    FLAKY = "flaky"
    NEW = "new"
    HELD = "held"
    #: without any baseline a case is an ordinary test
    PASSED = "passed"


class Outcome(Word):
    """How a verdict shows in pytest (``warned``: passed, with a warning)."""

    PASSED = "passed"
    FAILED = "failed"
    XFAILED = "xfailed"
    WARNED = "warned"
    ERROR = "error"
    SKIPPED = "skipped"


class Step(Word):
    """What the sequential test says after a batch of reps."""

    REGRESSION = "regression"
    SETTLED = "settled"
    MORE = "more"


class Severity(Word):
    """A lint finding's weight."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


def plain(word: str | None) -> str | None:
    """The word as a plain ``str`` (None stays None): what JSON and execnet carry."""
    return None if word is None else str(word)
