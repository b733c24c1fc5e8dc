"""The Provider protocol: one model's first turn for one question and tool list.

A model string picks the provider (``routes.ROUTES``, one row a route): ``local/bm25`` is embedded,
``anthropic/<model>`` goes through the Anthropic SDK, ``openai/<model>`` and the
other OpenAI-compatible APIs through the ``openai`` SDK, ``claude-code/<model>`` and
``openai-agents/<model>`` through a real agent harness (``harness``), anything else through
litellm. Each is imported only when a run asks for it (the SDKs cost seconds to import).

What the two HTTP providers share, so that both behave the same, lives beside
this module, one concern each: ``wire`` (tool names made safe for the wire and
mapped back, schema keys a provider rejects dropped, arguments and usage read),
``retry`` (one retry loop, countable, with backoff and ``retry-after``),
``secrets`` (keys read and kept out of error messages), ``clients`` (one SDK
client per event loop) and ``pricing`` (cost from usage). None imports an SDK.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Protocol

from pytest_toolselect.exchange.json_value import JSONDict
from pytest_toolselect.exchange.replies import read_faults, unreadable_message
from pytest_toolselect.exchange.turns import Turn as Turn  # re-exported: the providers' result
from pytest_toolselect.exchange.turns import TurnRequest as TurnRequest
from pytest_toolselect.messages.errors import ProviderError, ToolselectError

from .pricing import cost_usd
from .pricing import price_per_token as price_per_token  # re-exported: session.py imports it here


class Provider(Protocol):
    model: str

    def subject(self) -> JSONDict:
        """What a baseline belongs to: provider, model and the settings that move answers.
        JSON by nature: each provider (a user's too) names its own settings, and the baseline
        stores it and the response cache hashes it as given."""
        ...

    async def first_turn(self, request: TurnRequest) -> Turn: ...


@dataclass(frozen=True)
class ProviderSettings:
    bm25_threshold: float = 1.0
    #: a gateway, proxy, OpenRouter or local OpenAI-compatible server (None: the provider's own)
    api_base: str | None = None
    #: the env var holding the key (None: ANTHROPIC_API_KEY for anthropic, litellm's defaults)
    api_key_env: str | None = None
    max_tokens: int = 1024
    #: None: the provider's default sampling, and no temperature key in the request
    temperature: float | None = None
    #: seconds per attempt, a hard deadline on the whole HTTP exchange
    timeout: float = 60.0
    #: retries after the first attempt
    retries: int = 4
    #: attempt n waits base * 2**n * jitter(0.5..1.5), capped at 30 s, unless retry-after says
    backoff_base: float = 1.0
    #: Anthropic: cache the tool definitions (they repeat across every case)
    prompt_caching: bool = True
    #: {model: {input_per_mtok, output_per_mtok, cache_read_per_mtok?, cache_write_per_mtok?}}
    prices: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )
    #: harness routes: tool search "on", "off", or "auto" (the harness's own default)
    harness_tool_search: str = "auto"
    #: harness routes: run with the user's own settings instead of a temporary home
    harness_user_settings: bool = False
    #: harness routes: harness processes at once
    harness_concurrency: int = 4


def http_subject(provider: str, model: str, settings: ProviderSettings) -> dict[str, Any]:
    """An HTTP provider's subject: the settings that move answers (api_base, caching do not)."""
    return {"provider": provider, "model": model,
            "settings": {"max_tokens": settings.max_tokens, "temperature": settings.temperature}}


def get_provider(model: str, settings: ProviderSettings) -> Provider:
    """The provider for a model string, made by its route's factory (``routes.ROUTES``);
    raises ToolselectError for one it cannot serve."""
    from .routes import route_of

    taken = route_of(model)
    # an embedded model's name is checked by its factory, with the names it knows
    _, slash, rest = model.partition("/")
    if not slash or (not rest.strip() and taken.name != "local"):
        raise ToolselectError(
            f"model {model!r}: a model string is <provider>/<model>",
            fix="e.g. anthropic/claude-haiku-4-5, openai/gpt-4.1-mini, openrouter/<vendor>/<model>, "
                "or local/bm25",
        )
    return taken.make(model, settings)


class ProviderCallError(ProviderError):
    """A model call failed: after its last retry, or at once for a fault a retry cannot fix."""

    #: the call may have been billed and its cost is unknown (it timed out mid-call): the
    #: cost cap charges it at its reservation, the most it can have cost
    unsettled: bool = False

    def __init__(self, message: str, *, attempts: int, status: int | None = None,
                 fix: str | None = None) -> None:
        super().__init__(message, fix=fix)
        self.attempts = attempts
        self.status = status


class TruncatedError(ProviderCallError):
    """The reply hit max_tokens before any tool call: nothing to score, but it was billed."""

    def __init__(self, message: str, *, turn: Turn, fix: str | None = None) -> None:
        super().__init__(message, attempts=turn.attempts, fix=fix)
        #: the cut reply, with its usage and cost (a cost cap must count it)
        self.turn = turn


class InconclusiveError(ProviderCallError):
    """Every rep of a case was cut at max_tokens before any tool call: nothing to judge the
    case on, so it is an error (a case with one conclusive rep is judged on that rep)."""

    def __init__(self, model: str, turns: tuple[Turn, ...], max_tokens: int) -> None:
        n = len(turns)
        super().__init__(
            f"{model}: {'the reply was' if n == 1 else f'all {n} replies were'} cut at "
            f"max_tokens={max_tokens} before any tool call: inconclusive, nothing to judge",
            attempts=sum(t.attempts for t in turns), fix="raise max_tokens")
        #: the cut replies, with their usage and cost (every report counts them)
        self.turns = turns


#: the attribute an error of a case carries its paid-for reps in (any exception type can)
_PAID = "paid"


def carry_paid(error: BaseException, turns: Iterable[Turn]) -> None:
    """Attach every rep of a case that was paid for to the error the case errs on."""
    setattr(error, _PAID, tuple(turns))


def billed_turns(error: BaseException) -> tuple[tuple[Turn, ...], bool]:
    """The paid-for replies an error carries (every rep cut, an unreadable reply), and
    whether they were every rep, each cut before any tool call (InconclusiveError)."""
    cut = isinstance(error, InconclusiveError)
    # set by the runner (carry_paid), every rep of the case; else the error's own reply or replies
    paid = getattr(error, _PAID, None)
    if paid is None:
        turn = getattr(error, "turn", None)
        paid = error.turns if isinstance(error, InconclusiveError) else (
            () if turn is None else (turn,))
    return tuple(paid), cut


class UnreadableReplyError(ProviderCallError):
    """The reply cannot be read as a tool choice (exchange.replies): an error, never a score."""

    def __init__(self, model: str, turn: Turn, faults: list[str]) -> None:
        fix = "raise max_tokens" if turn.truncated else None
        super().__init__(unreadable_message(model, faults, truncated=turn.truncated),
                         attempts=turn.attempts, fix=fix)
        #: the reply, with its usage and cost (a cost cap must count it)
        self.turn = turn


def finish_turn(turn: Turn, *, model: str, settings: ProviderSettings, dropped: tuple[str, ...],
                attempts: int, cut: frozenset[str], reason: str) -> Turn:
    """A parsed reply with its cost, dropped schema keys and attempts filled in.

    Raises TruncatedError when the reply stopped for a reason in `cut` (named
    `reason` in the message) before any tool call, UnreadableReplyError when it cannot be
    read as a tool choice (what the wire sent is checked here, so it is never cached).
    """
    turn = replace(turn, cost_usd=cost_usd(model, turn.usage, settings.prices),
                   dropped_schema_keys=dropped, attempts=attempts)
    if turn.stop_reason in cut and not turn.calls:
        raise TruncatedError(
            f"{model}: reply truncated at max_tokens={settings.max_tokens} before any "
            f"tool call ({reason} {turn.stop_reason})",
            turn=turn, fix="raise max_tokens",
        )
    faults = read_faults(turn)
    if faults:
        raise UnreadableReplyError(model, turn, faults)
    return turn
