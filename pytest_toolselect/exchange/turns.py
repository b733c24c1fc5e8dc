"""A model's first turn and the request for it: plain data the providers fill in.

Here, not in providers, so the probe's statistics and the cache read turns without
importing the providers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .context import GivenTurn
from .tool import Tool, ToolCall


@dataclass(frozen=True)
class TurnRequest:
    question: str
    tools: tuple[Tool, ...]
    #: the system prompt; None or "" sends none
    system: str | None = None
    #: which repetition this is (0-based): reps are independent samples
    rep: int = 0
    #: the case's servers (inputs.config.ServerSpec) and the folder their paths start at: a
    #: harness route starts them itself; a bare model route reads only `tools`
    servers: tuple[Any, ...] = field(default=(), compare=False)
    root: str | None = field(default=None, compare=False)
    #: the turns before the one asked for (exchange.context): replayed after the question,
    #: as the route's wire expects; empty for a first turn
    context: tuple[GivenTurn, ...] = ()


@dataclass(frozen=True)
class Turn:
    """A model's first turn: every tool call in order, and what came with it."""

    calls: tuple[ToolCall, ...]
    text: str = ""
    stop_reason: str | None = None
    #: input_tokens (not counting cache reads/writes), output_tokens, cache_read_tokens,
    #: cache_write_tokens; empty for a provider that reports none (local/bm25)
    usage: dict[str, int] = field(default_factory=dict)
    #: None when no price is known for the model
    cost_usd: float | None = None
    #: the reply was cut at max_tokens after its first tool call (scored, and flagged)
    truncated: bool = False
    #: "<tool>/<key>" for each schema key dropped because the provider rejects it
    dropped_schema_keys: tuple[str, ...] = ()
    #: HTTP attempts this turn took (1 = no retry)
    attempts: int = 1
    #: why the reply cannot be read as a tool choice, as its provider found reading the wire
    #: (exchange.replies): such a turn is an error, never scored, cached or recorded
    faults: tuple[str, ...] = ()
    #: a harness's step before the choice: its tool search, and what it searched for
    found_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        found = {"found_by": self.found_by} if self.found_by is not None else {}
        return {**found,
            "calls": [c.to_dict() for c in self.calls],
            "text": self.text,
            "stop_reason": self.stop_reason,
            "usage": dict(self.usage),
            "cost_usd": self.cost_usd,
            "truncated": self.truncated,
            "dropped_schema_keys": list(self.dropped_schema_keys),
            "attempts": self.attempts,
        }
