"""How alike two tools read to a model choosing between them: TF-IDF cosine of their purpose.

A tool's *purpose* is its name (twice: names weigh most in a choice), the first sentence of
its description that names no other tool of the set, and its parameter names. Sentences that
name another tool are the set's own disambiguation ("to find a person, use search_officers"),
so they count as a difference, not a likeness. Verbs that mean the same to a reader
(search/find/lookup, check/validate/verify, get/fetch/retrieve) are folded into one.

The IDF is taken over the tool set being linted, so terms every tool shares (``company`` on a
company-data server) weigh little. Calibration: docs/lint.md lists every pair's similarity on
the examples and why THRESHOLD sits where it does.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..providers.local import tokenize, words

if TYPE_CHECKING:
    from pytest_toolselect.exchange.tool import Tool

#: a pair at or above this cosine is confusable (see docs/lint.md for the calibration)
THRESHOLD = 0.55
#: words a reader takes for one another in a tool's purpose
SYNONYMS = {
    "search": "find", "lookup": "find", "look": "find", "query": "find", "locate": "find",
    "validate": "check", "verify": "check", "confirm": "check",
    "fetch": "get", "retrieve": "get", "read": "get",
    "return": "", "take": "", "give": "",  # every tool returns or takes something
}
#: words that tell no tool from another, left out of what sets a tool apart
_VAGUE = frozenset("other one also only each same more need know first way".split())
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def terms(text: str) -> list[str]:
    folded = (SYNONYMS.get(t, t) for t in tokenize(text))
    return [t for t in folded if t]


def as_written(found: Sequence[str], text: str) -> list[str]:
    """Terms (stemmed, synonyms folded) shown as the text first writes them: "branches", not
    the stem "branche"; a term the text does not write stays as it is."""
    written: dict[str, str] = {}
    for word in words(text):
        for term in terms(word):
            written.setdefault(term, word)
    return [written.get(t, t) for t in found]


def _names_other(sentence: str, others: frozenset[str]) -> bool:
    words = set(re.findall(r"[A-Za-z0-9_.-]+", sentence))
    return not words.isdisjoint(others)


def param_names(tool: Tool) -> list[str]:
    props = tool.input_schema.get("properties") if isinstance(tool.input_schema, dict) else None
    return list(props) if isinstance(props, dict) else []


def purpose(tool: Tool, others: frozenset[str]) -> str:
    """The text the similarity reads (see the module's docstring)."""
    kept = [s for s in sentences(tool.description) if not _names_other(s, others)]
    return " ".join([tool.name, tool.name, *kept[:1], *param_names(tool)])


@dataclass(frozen=True)
class Similarity:
    """Pairwise similarities of a tool set, and the weights behind them."""

    names: tuple[str, ...]
    matrix: tuple[tuple[float, ...], ...]
    #: per tool: term -> its TF-IDF weight (unit length)
    weights: tuple[dict[str, float], ...]
    idf: dict[str, float]

    def shared_terms(self, i: int, j: int, limit: int = 6) -> list[str]:
        """The terms that make i and j alike, the heaviest first."""
        common = self.weights[i].keys() & self.weights[j].keys()
        return sorted(common, key=lambda t: (-self.weights[i][t] * self.weights[j][t], t))[:limit]

    def own_terms(self, tool: Tool, other: Tool, limit: int = 4) -> list[str]:
        """Distinctive terms of tool's whole description that other never uses."""
        theirs = set(terms(f"{other.name} {other.description} {' '.join(param_names(other))}"))
        mine = Counter(t for t in terms(f"{tool.name} {tool.description}")
                       if t not in theirs and t not in _VAGUE)
        return sorted(mine, key=lambda t: (-mine[t] * self.idf.get(t, 1.0), t))[:limit]


def similarity(tools: Sequence[Tool]) -> Similarity:
    """TF-IDF (sublinear tf, smoothed idf) cosine of every pair's purpose."""
    names = frozenset(t.name for t in tools) | frozenset(t.original_name for t in tools if t.original_name)
    docs = [Counter(terms(purpose(t, names - {t.name, t.original_name}))) for t in tools]
    n = len(docs)
    df: Counter[str] = Counter(term for doc in docs for term in doc)
    idf = {term: math.log((1 + n) / (1 + count)) + 1 for term, count in df.items()}
    weights: list[dict[str, float]] = []
    for doc in docs:
        w = {term: (1 + math.log(c)) * idf[term] for term, c in doc.items()}
        norm = math.sqrt(sum(v * v for v in w.values())) or 1.0
        weights.append({term: v / norm for term, v in w.items()})
    matrix = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            a, b = weights[i], weights[j]
            s = round(sum(v * b[t] for t, v in a.items() if t in b), 4)
            matrix[i][j] = matrix[j][i] = s
    return Similarity(tuple(t.name for t in tools), tuple(tuple(r) for r in matrix), tuple(weights), idf)
