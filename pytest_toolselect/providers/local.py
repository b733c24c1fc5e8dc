"""``local/bm25``: the embedded, offline, deterministic model.

It ranks the offered tools against the question with BM25 over each tool's
name, description and parameter names (the idea behind the tool-search step
real agents run over large tool sets) and calls the top tool when its score
clears a threshold, else nothing. It fills no arguments. A description that
BM25 cannot tell from its neighbour's is a finding in itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from pytest_toolselect.exchange.json_value import JSONDict
from pytest_toolselect.exchange.tool import Tool, ToolCall
from pytest_toolselect.messages.errors import ToolselectError

from . import ProviderSettings, Turn, TurnRequest

_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# A short English stop list: words that say nothing about which tool is meant.
_STOP = frozenset(
    """a about all an and any are as at be been but by can could did do does for from get give
    had has have how i if in into is it its me my no not of on or our please show should so
    some tell than that the their them then there these they this those to up us use used
    using was we were what when where which who whom why will with would you your""".split()
)


def _stem(word: str) -> str:
    """Harman's S-stemmer: plural to singular, nothing more (deterministic, cheap)."""
    if len(word) > 3:
        if word.endswith("ies") and not word.endswith(("eies", "aies")):
            return word[:-3] + "y"
        if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
            return word[:-1]
        if word.endswith("s") and not word.endswith(("us", "ss")):
            return word[:-1]
    return word


def words(text: str) -> list[str]:
    """The text's words as written (lower case), split at _, camelCase and punctuation."""
    return [w.lower() for w in _WORD.findall(_CAMEL.sub(" ", text.replace("_", " ")))]


def tokenize(text: str) -> list[str]:
    # one-letter tokens (the s of what's, the i of i.e.) say nothing either
    return [_stem(w) for w in words(text) if len(w) > 1 and w not in _STOP]


def tool_text(tool: Tool) -> str:
    props = tool.input_schema.get("properties") if isinstance(tool.input_schema, dict) else None
    params = " ".join(props) if isinstance(props, dict) else ""
    return f"{tool.name} {tool.description} {params}"


@lru_cache(maxsize=256)
def _index(docs: tuple[str, ...]) -> Any:
    import logging

    import bm25s  # imported here: only a run that asks local/bm25 pays for it

    # its DEBUG line per index ("Building index from tokens") filled every captured-log section
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    retriever = bm25s.BM25()
    retriever.index([tokenize(d) or [""] for d in docs], show_progress=False)
    return retriever


def rank(question: str, tools: tuple[Tool, ...]) -> list[tuple[float, int]]:
    """(score, index) per tool, best first; ties keep the order the tools were offered."""
    if not tools:
        return []
    retriever = _index(tuple(tool_text(t) for t in tools))
    query = [t for t in tokenize(question) if t in retriever.vocab_dict]
    if not query:
        return [(0.0, i) for i in range(len(tools))]
    scores = retriever.get_scores(query)
    return sorted(((float(s), i) for i, s in enumerate(scores)), key=lambda p: (-p[0], p[1]))


class LocalBM25:
    model = "local/bm25"
    #: the same request always gets the same answer: adaptive reps never ask again
    deterministic = True
    #: it picks a tool and passes no argument: valid_arguments has nothing of it to check
    fills_arguments = False

    def __init__(self, settings: ProviderSettings) -> None:
        self.threshold = settings.bm25_threshold

    def subject(self) -> JSONDict:
        return {"provider": "local", "model": self.model,
                "settings": {"bm25_threshold": self.threshold}}

    async def first_turn(self, request: TurnRequest) -> Turn:
        ranked = rank(request.question, request.tools)
        if not ranked or ranked[0][0] < self.threshold:
            top = f"{ranked[0][0]:.2f}" if ranked else "none"
            return Turn(calls=(), text=f"no tool scored above {self.threshold} (best {top})",
                        stop_reason="end_turn", cost_usd=0.0)
        score, index = ranked[0]
        return Turn(calls=(ToolCall(request.tools[index].name, {}),),
                    text=f"bm25 score {score:.2f}", stop_reason="tool_use", cost_usd=0.0)


LOCAL_MODELS: dict[str, Callable[[ProviderSettings], LocalBM25]] = {"local/bm25": LocalBM25}


def provider(model: str, settings: ProviderSettings) -> LocalBM25:
    """The ``local`` route's factory: the embedded model `model` names."""
    factory = LOCAL_MODELS.get(model)
    if factory is None:
        raise ToolselectError(
            f"unknown local model {model!r}",
            fix=f"the embedded models are: {', '.join(sorted(LOCAL_MODELS))}",
        )
    return factory(settings)
