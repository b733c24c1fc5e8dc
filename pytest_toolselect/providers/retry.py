"""One retry loop for every provider: faults classified, backoff, ``retry-after`` honoured.

The SDKs' own retries are off, so every HTTP attempt passes through ``with_retries``
and is counted the same way for every provider.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pytest_toolselect.messages.plural import plural

from . import ProviderCallError, ProviderSettings
from .api_keys import redact

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
            fault = Fault(f"no complete reply within {settings.timeout:g} s (timeout)", retryable=True)
        except FaultError as e:
            fault = e.fault
        except Exception as e:
            fault = classify(e)
        if not fault.retryable or attempts > settings.retries:
            tries = plural(attempts, "attempt")
            why = "gave up after" if fault.retryable else "not retried;"
            raise ProviderCallError(
                redact(f"{model}: {fault.message} ({why} {tries})", secrets),
                attempts=attempts, status=fault.status, fix=fault.fix,
            ) from None
        await sleep(backoff(attempts - 1, settings.backoff_base, fault.retry_after))


CONNECTION_FIX = "check api_base, and that the API or proxy there is up"


def exception_chain(e: BaseException) -> list[BaseException]:
    """e and what caused it, outermost first (each exception once)."""
    chain: list[BaseException] = []
    current: BaseException | None = e
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def transport_cause(e: BaseException) -> str | None:
    """The socket-level cause under an SDK's connection error, said in one line, or None.

    The SDKs wrap it two to five layers deep ("Connection error." over httpx over
    httpcore over anyio); the innermost OS error (refused, reset, unreachable) or,
    failing one, the innermost exception with a message, is what a user can act on.
    """
    chain = exception_chain(e)[1:]
    os_errors = [x for x in chain if isinstance(x, OSError) and type(x).__module__ == "builtins" and str(x)]
    worded = [x for x in chain if _text(x)]
    pick = os_errors[-1] if os_errors else (worded[-1] if worded else None)
    return f"{type(pick).__name__}: {_text(pick)}" if pick is not None else None


def _text(e: BaseException) -> str:
    # aiohttp's errors put "400, message:" before their own message: take the message
    message = getattr(e, "message", None)
    text = message if isinstance(message, str) and message else str(e)
    return " ".join(text.split())


def connection_fault(e: BaseException, said: str = "") -> Fault:
    """A connection that failed before a whole reply came (refused, reset, cut mid-body)."""
    cause = transport_cause(e) or said or type(e).__name__
    return Fault(f"connection error: {cause}", retryable=True, fix=CONNECTION_FIX)


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


def reply_data(http: Any, fix: str) -> Any:
    """A 2xx reply's JSON body; FaultError for a body that is not JSON or is an error body.

    ``x-should-retry`` (sent by Anthropic's and OpenAI's APIs) is the server's own word
    on whether an error body is worth another attempt.
    """
    try:
        data = http.json()
    except ValueError:
        text = " ".join(str(http.text)[:200].split())
        raise FaultError(Fault(f"HTTP {http.status_code} reply is not JSON: {text!r}",
                               retryable=False, status=http.status_code, fix=fix)) from None
    fault = error_body_fault(data)
    if fault is not None:
        headers = http.headers
        says = should_retry_header(headers)
        raise FaultError(Fault(fault.message, retryable=fault.retryable if says is None else says,
                               status=fault.status, retry_after=retry_after(headers)))
    return data
