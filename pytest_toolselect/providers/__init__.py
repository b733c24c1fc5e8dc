"""The Provider protocol: one model's first turn for one question and tool list.

A model string picks the provider: ``local/bm25`` is embedded, ``anthropic/<model>``
goes through the Anthropic SDK, anything else through litellm. Each is imported
only when a run asks for it (the SDKs cost seconds to import).

The second half of this module is what the two HTTP providers share, so that
both behave the same: tool names made safe for the wire and mapped back, schema
keys a provider rejects dropped, one retry loop (countable, with backoff and
``retry-after``), secrets kept out of error messages, and pricing from usage.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import hashlib
import json
import os
import random
import re
import sys
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, Protocol, TypeVar

from ..errors import ProviderError, ToolselectError, nearest
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": [c.to_dict() for c in self.calls],
            "text": self.text,
            "stop_reason": self.stop_reason,
            "usage": dict(self.usage),
            "cost_usd": self.cost_usd,
            "truncated": self.truncated,
            "dropped_schema_keys": list(self.dropped_schema_keys),
            "attempts": self.attempts,
        }


class Provider(Protocol):
    model: str

    def subject(self) -> dict[str, Any]:
        """What a baseline belongs to: provider, model and the settings that move answers."""
        ...

    async def first_turn(self, request: TurnRequest) -> Turn: ...


#: the keys of one `prices` entry, per million tokens
PRICE_KEYS = ("input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok")


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
    if "/" not in model or not model.split("/", 1)[1].strip():
        raise ToolselectError(
            f"model {model!r}: a model string is <provider>/<model>",
            fix="e.g. anthropic/claude-haiku-4-5, openai/gpt-4.1-mini, openrouter/<vendor>/<model>, "
                "or local/bm25",
        )
    if model.startswith("anthropic/"):
        from .anthropic_api import AnthropicProvider

        return AnthropicProvider(model, settings)
    from .litellm_api import LiteLLMProvider

    return LiteLLMProvider(model, settings)


# --------------------------------------------------------------------------------------
# errors a call ends with
# --------------------------------------------------------------------------------------
class ProviderCallError(ProviderError):
    """A model call failed: after its last retry, or at once for a fault a retry cannot fix."""

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


# --------------------------------------------------------------------------------------
# tools on the wire
# --------------------------------------------------------------------------------------
#: Anthropic's and OpenAI's rule for tool names
SAFE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: Top-level schema keys dropped before sending. `$schema` is metadata a model never
#: needs, and Anthropic has answered a draft-07 `$schema` with HTTP 500
#: (anthropics/anthropic-sdk-python#1001); MCP servers built on zod send exactly that.
DROP_SCHEMA_KEYS = ("$schema",)


class NameMap:
    """Real tool names <-> names a provider accepts, unique within one request.

    A name that already fits is kept as-is (so the request reads like the real
    tool list); any other is sanitised, and a short hash of the real name is
    appended when sanitising or truncating would make it collide.
    """

    def __init__(self, names: Iterable[str]) -> None:
        names = list(names)
        self.to_wire: dict[str, str] = {}
        taken = {n for n in names if SAFE_NAME.match(n)}
        for name in names:
            if SAFE_NAME.match(name):
                self.to_wire[name] = name
                continue
            base = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "tool"
            wire = base
            if wire in taken:
                digest = hashlib.sha1(name.encode()).hexdigest()[:8]
                wire = f"{base[:55]}_{digest}"
            n = 2
            while wire in taken:  # a hash collision: vanishingly rare, but stay unique
                wire = f"{base[:52]}_{digest}_{n}"
                n += 1
            taken.add(wire)
            self.to_wire[name] = wire
        self.to_real = {w: r for r, w in self.to_wire.items()}

    def wire(self, name: str) -> str:
        return self.to_wire.get(name, name)

    def real(self, wire: str) -> str:
        # a name the model made up maps to itself: the report shows what it called
        return self.to_real.get(wire, wire)


def clean_schema(tool: Tool) -> tuple[dict[str, Any], list[str]]:
    """The tool's input schema as sent, and the keys dropped ("<tool>/<key>")."""
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    dropped = [f"{tool.name}/{k}" for k in DROP_SCHEMA_KEYS if k in schema]
    out = {k: v for k, v in schema.items() if k not in DROP_SCHEMA_KEYS}
    if not out:
        # both APIs require an object schema; a tools file may give none for a no-argument tool
        out = {"type": "object", "properties": {}}
    return out, dropped


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """(arguments, raw_arguments): a JSON object string or dict is parsed; anything else kept raw."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None:
        return {}, None
    if isinstance(raw, str):
        if not raw.strip():
            # some servers send "" for a call without arguments: that is {}, not garbage
            return {}, None
        try:
            value = json.loads(raw)
        except ValueError:
            return {}, raw
        return (value, None) if isinstance(value, dict) else ({}, raw)
    return {}, json.dumps(raw, default=str)


# --------------------------------------------------------------------------------------
# faults and the retry loop
# --------------------------------------------------------------------------------------
RETRY_STATUS = frozenset({408, 409, 429})
#: longest wait a retry-after header may impose (a server asking for an hour is not waited on)
MAX_RETRY_AFTER = 60.0
MAX_BACKOFF = 30.0


@dataclass(frozen=True)
class Fault:
    """One failed attempt, classified: what to say, and whether another attempt may help."""

    message: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None
    fix: str | None = None


class FaultError(Exception):
    """Raised inside an attempt for a reply that is an error although the HTTP call was not."""

    def __init__(self, fault: Fault) -> None:
        super().__init__(fault.message)
        self.fault = fault


def status_retryable(status: int | None) -> bool:
    return status is not None and (status in RETRY_STATUS or status >= 500)


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait: retry-after-ms, or retry-after (seconds or a date)."""
    if not headers:
        return None
    get = headers.get
    ms = get("retry-after-ms")
    if ms:
        with contextlib.suppress(ValueError):
            return max(0.0, float(ms) / 1000.0)
    value = get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def should_retry_header(headers: Mapping[str, str] | None) -> bool | None:
    """Anthropic's x-should-retry: the server's own word on whether a retry can succeed."""
    value = (headers or {}).get("x-should-retry")
    if value == "true":
        return True
    if value == "false":
        return False
    return None


def backoff(n: int, base: float, after: float | None) -> float:
    """The wait before retry n (0-based): the server's retry-after, else exponential with jitter."""
    if after is not None:
        return min(after, MAX_RETRY_AFTER)
    # jitter spreads the retries of many concurrent calls that failed together
    return min(MAX_BACKOFF, base * (2.0**n) * random.uniform(0.5, 1.5))


_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET)$")
_SECRET_SHAPES = re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_\-]{6,}|(?<=Bearer )[A-Za-z0-9._\-]{8,}")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """The text with every key we know of (and anything shaped like one) masked."""
    known = [s for s in secrets if s and len(s) >= 6]
    known += [v for k, v in os.environ.items() if _SECRET_ENV.search(k.upper()) and len(v) >= 6]
    for secret in sorted(set(known), key=len, reverse=True):
        text = text.replace(secret, "***")
    return _SECRET_SHAPES.sub("***", text)


Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    classify: Callable[[BaseException], Fault],
    settings: ProviderSettings,
    *,
    model: str,
    sleep: Sleep = asyncio.sleep,
    secrets: Iterable[str | None] = (),
) -> tuple[T, int]:
    """Run attempt() until it succeeds, a fault is final, or the retries are spent.

    Returns (result, attempts). The SDKs' own retries are off, so every HTTP
    attempt passes through here and is counted the same way for every provider.
    """
    attempts = 0
    while True:
        attempts += 1
        try:
            # a hard deadline on the whole exchange: the SDKs' timeouts are per read, so a
            # server that trickles bytes would otherwise hold a call far past `timeout`
            return await asyncio.wait_for(attempt(), timeout=settings.timeout), attempts
        except asyncio.TimeoutError:
            fault = Fault(f"no reply within {settings.timeout:g} s (timeout)", retryable=True)
        except FaultError as e:
            fault = e.fault
        except Exception as e:
            fault = classify(e)
        if not fault.retryable or attempts > settings.retries:
            tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
            why = "gave up after" if fault.retryable else "not retried;"
            raise ProviderCallError(
                redact(f"{model}: {fault.message} ({why} {tries})", secrets),
                attempts=attempts, status=fault.status, fix=fault.fix,
            ) from None
        await sleep(backoff(attempts - 1, settings.backoff_base, fault.retry_after))


def error_body_fault(body: Any) -> Fault | None:
    """A reply body that is an error ({"type": "error", ...} or {"error": {...}}), as a Fault."""
    if not isinstance(body, dict):
        return None
    err = body.get("error")
    if body.get("type") != "error" and not isinstance(err, dict):
        return None
    err = err if isinstance(err, dict) else {}
    kind = err.get("type") if isinstance(err.get("type"), str) else None
    message = str(err.get("message") or body.get("message") or "error body without a message")
    code = err.get("code")
    status = code if isinstance(code, int) else None
    if status is not None:
        retryable = status_retryable(status)
    else:
        # an error type a retry can fix (Anthropic's names, and OpenAI's server_error)
        retryable = kind in {"overloaded_error", "api_error", "rate_limit_error", "timeout_error",
                             "server_error"}
    label = " ".join(str(p) for p in (status, kind) if p)
    return Fault(f"error in an HTTP 200 reply: {label + ': ' if label else ''}{message}",
                 retryable=retryable, status=status)


def key_from_env(env: str | None, model: str) -> str | None:
    """The key in the configured env var (None: let the SDK find its default)."""
    if env is None:
        return None
    value = os.environ.get(env)
    if not value:
        raise ProviderCallError(
            f"{model}: no API key: the environment variable {env} is not set (no request sent)",
            attempts=0, fix=f"export {env}=..., or set api_key_env to the variable that holds the key",
        )
    return value


# --------------------------------------------------------------------------------------
# one SDK client per event loop
# --------------------------------------------------------------------------------------
C = TypeVar("C")


class LoopClients(Generic[C]):
    """One SDK client per running event loop, closed when that loop shuts down.

    A client's connection pool belongs to the loop it was made on, and the
    session may run each call under its own asyncio.run(). Making a client per
    call costs ~40 ms (TLS context) and loses connection reuse, so one is kept
    per loop. It is closed from an async generator's `finally`: asyncio.run()
    (and any runner that calls loop.shutdown_asyncgens()) closes open async
    generators before closing the loop, which is the one hook a loop offers.
    """

    def __init__(self, make: Callable[[], C], close: Callable[[C], Awaitable[Any]]) -> None:
        self._make = make
        self._close = close
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[C, Any]] = (
            weakref.WeakKeyDictionary()
        )

    async def get(self) -> C:
        loop = asyncio.get_running_loop()
        held = self._by_loop.get(loop)
        if held is not None:
            return held[0]
        client = self._make()
        keeper = self._keep(loop, client)
        await keeper.__anext__()  # started: the loop now tracks it for shutdown
        self._by_loop[loop] = (client, keeper)
        return client

    async def _keep(self, loop: asyncio.AbstractEventLoop, client: C) -> AsyncIterator[None]:
        try:
            yield
        finally:
            self._by_loop.pop(loop, None)
            with contextlib.suppress(Exception):
                await self._close(client)


# --------------------------------------------------------------------------------------
# pricing
# --------------------------------------------------------------------------------------
def check_prices(prices: Mapping[str, Mapping[str, float]]) -> None:
    """Refuse a malformed `prices` table up front, naming the model and the key."""
    for model, entry in prices.items():
        if not isinstance(entry, Mapping):
            raise ToolselectError(f"prices[{model!r}] must be a table of per-million-token prices",
                                  fix=f"keys: {', '.join(PRICE_KEYS)}")
        for key, value in entry.items():
            if key not in PRICE_KEYS:
                near = nearest(key, PRICE_KEYS)
                raise ToolselectError(
                    f"prices[{model!r}]: unknown key {key!r}",
                    fix=f"did you mean {near!r}?" if near else f"keys: {', '.join(PRICE_KEYS)}",
                )
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ToolselectError(f"prices[{model!r}][{key!r}] must be a number >= 0, not {value!r}")
        for key in PRICE_KEYS[:2]:
            if key not in entry:
                raise ToolselectError(f"prices[{model!r}] lacks {key!r}",
                                      fix="input_per_mtok and output_per_mtok are required")


def _model_keys(model: str) -> list[str]:
    """The model string as given, then without its provider prefix."""
    keys = [model]
    if "/" in model:
        keys.append(model.split("/", 1)[1])
    return keys


_PRICE_LOCK = threading.Lock()
_BUNDLED: dict[str, Any] | None = None


def _price_map() -> Mapping[str, Any]:
    """litellm's price map, without importing litellm unless it already is.

    Importing litellm costs 5-6 s. An Anthropic run only needs the price map,
    which litellm ships as a JSON file, so that file is read (~0.1 s) instead.
    When litellm is loaded (a litellm run) its live `model_cost` is used, so
    litellm.register_model() additions count.
    """
    global _BUNDLED
    litellm = sys.modules.get("litellm")
    cost = getattr(litellm, "model_cost", None)
    if isinstance(cost, Mapping):
        return cost
    with _PRICE_LOCK:
        if _BUNDLED is None:
            _BUNDLED = _read_bundled_map()
        return _BUNDLED


def _read_bundled_map() -> dict[str, Any]:
    import importlib.util

    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.origin:
        return {}
    path = os.path.join(os.path.dirname(spec.origin), "model_prices_and_context_window_backup.json")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def price_per_token(model: str, prices: Mapping[str, Mapping[str, float]]) -> dict[str, float] | None:
    """(input, output, cache_read, cache_write) USD per token, or None when unknown.

    A `prices` override wins over the price map; missing cache prices fall back
    to the input price (an estimate, never a free token).
    """
    for key in _model_keys(model):
        entry = prices.get(key)
        if entry is not None:
            per_mtok = {k: float(v) for k, v in entry.items()}
            inp = per_mtok["input_per_mtok"]
            return {"input": inp / 1e6, "output": per_mtok["output_per_mtok"] / 1e6,
                    "cache_read": per_mtok.get("cache_read_per_mtok", inp) / 1e6,
                    "cache_write": per_mtok.get("cache_write_per_mtok", inp) / 1e6}
    table = _price_map()
    for key in _model_keys(model):
        info = table.get(key)
        if not isinstance(info, Mapping):
            continue
        per_token = {k: float(v) for k, v in info.items()
                     if isinstance(v, (int, float)) and not isinstance(v, bool)}
        if "input_cost_per_token" not in per_token or "output_cost_per_token" not in per_token:
            continue
        inp = per_token["input_cost_per_token"]
        return {"input": inp, "output": per_token["output_cost_per_token"],
                "cache_read": per_token.get("cache_read_input_token_cost", inp),
                "cache_write": per_token.get("cache_creation_input_token_cost", inp)}
    return None


def cost_usd(model: str, usage: Mapping[str, int], prices: Mapping[str, Mapping[str, float]]) -> float | None:
    """What one call cost, from its usage; None when no price is known for the model."""
    price = price_per_token(model, prices)
    if price is None:
        return None
    return (usage.get("input_tokens", 0) * price["input"]
            + usage.get("output_tokens", 0) * price["output"]
            + usage.get("cache_read_tokens", 0) * price["cache_read"]
            + usage.get("cache_write_tokens", 0) * price["cache_write"])


def make_usage(input_tokens: int, output_tokens: int, cache_read: int, cache_write: int) -> dict[str, int]:
    return {"input_tokens": max(0, input_tokens), "output_tokens": max(0, output_tokens),
            "cache_read_tokens": max(0, cache_read), "cache_write_tokens": max(0, cache_write)}


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
