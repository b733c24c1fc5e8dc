"""The Provider protocol: one model's first turn for one question and tool list.

A model string picks the provider: ``local/bm25`` is embedded; the others are
added behind this protocol and imported only when a run asks for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ToolselectError
from ..tools import Tool, ToolCall


@dataclass(frozen=True)
class TurnRequest:
    question: str
    tools: tuple[Tool, ...]
    #: the system prompt; None or "" sends none
    system: str | None = None
    #: which repetition this is (0-based): reps are independent samples
    rep: int = 0


@dataclass(frozen=True)
class Turn:
    """A model's first turn: every tool call in order, and what came with it."""

    calls: tuple[ToolCall, ...]
    text: str = ""
    stop_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": [c.to_dict() for c in self.calls],
            "text": self.text,
            "stop_reason": self.stop_reason,
            "usage": dict(self.usage),
            "cost_usd": self.cost_usd,
        }


class Provider(Protocol):
    model: str

    def subject(self) -> dict[str, Any]:
        """What a baseline belongs to: provider, model and the settings that move answers."""
        ...

    async def first_turn(self, request: TurnRequest) -> Turn: ...


@dataclass(frozen=True)
class ProviderSettings:
    bm25_threshold: float = 1.0


def get_provider(model: str, settings: ProviderSettings) -> Provider:
    """The provider for a model string; raises ToolselectError for one it cannot serve."""
    if model.startswith("local/"):
        from .local import LOCAL_MODELS

        factory = LOCAL_MODELS.get(model)
        if factory is None:
            raise ToolselectError(
                f"unknown local model {model!r}",
                fix=f"the embedded models are: {', '.join(sorted(LOCAL_MODELS))}",
            )
        return factory(settings)
    raise ToolselectError(
        f"model {model!r}: no provider for it in this version",
        fix="use local/bm25, the embedded offline model",
    )
