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
from typing import TYPE_CHECKING, Any

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


def _names_other(sentence: str, names: frozenset[str], own: frozenset[str] = frozenset()) -> bool:
    """Does the sentence name a tool of names but those of own?"""
    words = set(re.findall(r"[A-Za-z0-9_.-]+", sentence))
    return bool((words & names) - own)


def param_names(tool: Tool) -> list[str]:
    props = tool.input_schema.get("properties") if isinstance(tool.input_schema, dict) else None
    return list(props) if isinstance(props, dict) else []


def purpose(tool: Tool, names: frozenset[str]) -> str:
    """The text the similarity reads (see the module's docstring); names: the set's tool names."""
    own = frozenset(n for n in (tool.name, tool.original_name) if n)
    kept = [s for s in sentences(tool.description) if not _names_other(s, names, own)]
    return " ".join([tool.name, tool.name, *kept[:1], *param_names(tool)])


@dataclass(frozen=True)
class Similarity:
    """The similarities of a tool set: the weights behind them, and the pairs that may reach
    the threshold (the candidates of an index: every pair that does is among them)."""

    names: tuple[str, ...]
    #: per tool: term -> its TF-IDF weight (unit length)
    weights: tuple[dict[str, float], ...]
    idf: dict[str, float]
    #: (i, j), i < j, of every pair whose similarity may reach the threshold it was built for
    candidates: tuple[tuple[int, int], ...] = ()

    def score(self, i: int, j: int) -> float:
        """The cosine of tools i and j, rounded to 4 places (the same either way round)."""
        if i == j:
            return 1.0
        a, b = (self.weights[i], self.weights[j]) if i < j else (self.weights[j], self.weights[i])
        return round(sum(v * b[t] for t, v in a.items() if t in b), 4)

    @property
    def matrix(self) -> tuple[tuple[float, ...], ...]:
        """Every pair's similarity: quadratic, for small sets (a document's matrix, the tests)."""
        n = len(self.weights)
        return tuple(tuple(self.score(i, j) for j in range(n)) for i in range(n))

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


#: below the threshold by this much still counts as a candidate: rounding never loses a pair
_SLACK = 1e-3
#: a tool's terms outside the index weigh at most this share of the threshold
_REST = 0.5


def candidates(weights: Sequence[dict[str, float]], df: Counter[str],
               threshold: float) -> tuple[tuple[int, int], ...]:
    """Every pair whose cosine may reach the threshold (i < j), by prefix filtering over an
    inverted index of the terms: a tool's rarest terms are looked up, until its other terms
    weigh (as a norm) under half the threshold. Two unit vectors x, y have x.y at most what
    the looked-up terms give plus that norm (Cauchy-Schwarz), so a pair whose looked-up part
    falls short by more cannot reach the threshold and is never scored; the work grows with
    the pairs that share rare terms, not with every pair."""
    import numpy as np

    n = len(weights)
    t = max(threshold - _SLACK, 0.0)
    ids: dict[str, list[int]] = {}
    vals: dict[str, list[float]] = {}
    for i, w in enumerate(weights):
        for term, v in w.items():
            ids.setdefault(term, []).append(i)
            vals.setdefault(term, []).append(v)
    postings = {term: (np.array(ids[term], dtype=np.int64), np.array(vals[term])) for term in ids}
    found: list[tuple[int, int]] = []
    for i, w in enumerate(weights):
        rest = sum(v * v for v in w.values())
        looked: list[Any] = []
        weighed: list[Any] = []
        for term in sorted(w, key=lambda term: (df[term], term)):
            if rest < (_REST * t) ** 2:
                break  # the rest weighs too little to matter on its own
            rest -= w[term] * w[term]
            js, vs = postings[term]
            looked.append(js)
            weighed.append(vs * w[term])
        if not looked:
            continue
        part = np.bincount(np.concatenate(looked), np.concatenate(weighed), minlength=n)
        part[: i + 1] = -1.0  # each pair once, from its first tool
        found.extend((i, int(j)) for j in np.nonzero(part + math.sqrt(max(rest, 0.0)) >= t)[0])
    return tuple(found)


def similarity(tools: Sequence[Tool], threshold: float | None = None) -> Similarity:
    """TF-IDF (sublinear tf, smoothed idf) weights of every tool's purpose, and the pairs that
    may reach ``threshold`` (None: every pair)."""
    names = frozenset(t.name for t in tools) | frozenset(t.original_name for t in tools if t.original_name)
    docs = [Counter(terms(purpose(t, names))) for t in tools]
    n = len(docs)
    df: Counter[str] = Counter(term for doc in docs for term in doc)
    idf = {term: math.log((1 + n) / (1 + count)) + 1 for term, count in df.items()}
    weights: list[dict[str, float]] = []
    for doc in docs:
        w = {term: (1 + math.log(c)) * idf[term] for term, c in doc.items()}
        norm = math.sqrt(sum(v * v for v in w.values())) or 1.0
        weights.append({term: v / norm for term, v in w.items()})
    pairs = (tuple((i, j) for i in range(n) for j in range(i + 1, n)) if threshold is None
             else candidates(weights, df, threshold))
    return Similarity(tuple(t.name for t in tools), tuple(weights), idf, pairs)
