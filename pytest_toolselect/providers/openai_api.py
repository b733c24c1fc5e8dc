"""OpenAI's Chat Completions API, and every provider that speaks it, through the official SDK.

``openai/<model>``, ``openrouter/…``, ``groq/…``, ``together_ai/…``, ``deepseek/…``,
``fireworks_ai/…``, ``mistral/…``, and local servers as ``openai/<model>`` with
api_base. Named openai_api so it never shadows the ``openai`` package. The SDK
is imported on the first call (~1 s, against litellm's 5-6 s), never when the
plugin loads; its own retries are off: the shared loop in ``providers.retry`` retries.
"""

from __future__ import annotations

import os
from typing import Any

from . import ProviderCallError, ProviderSettings, Turn, TurnRequest, finish_turn
from .api_keys import key_from_env
from .chat import CUT, chat_request, parse_reply
from .preflight import placeholder_key
from .preload import import_sdk
from .retry import (
    Fault,
    FaultError,
    Sleep,
    connection_fault,
    exception_chain,
    reply_data,
    retry_after,
    status_retryable,
    with_retries,
)
from .routes import OPENAI_COMPATIBLE
from .sdk import SDKProvider

_API_FIX = "check that api_base points at an OpenAI-compatible Chat Completions API"


class OpenAIProvider(SDKProvider):
    #: the subject's provider, as recorded when these models went through litellm: the route
    #: does not change a model's answers, so baselines recorded before stay valid
    provider = "litellm"

    def __init__(self, model: str, settings: ProviderSettings, *, sleep: Sleep | None = None) -> None:
        super().__init__(model, settings, sleep=sleep)
        prefix = model.split("/", 1)[0]
        self.compatible = OPENAI_COMPATIBLE.get(prefix, OPENAI_COMPATIBLE["openai"])

    def default_base_url(self) -> str | None:
        return self.compatible.base_url or os.environ.get("OPENAI_BASE_URL") or None

    def prepare(self) -> None:
        """Import the SDK now (the garbage collector paused), unless it is already."""
        import_sdk("openai")

    def build_request(self, request: TurnRequest) -> tuple[dict[str, Any], Any, tuple[str, ...]]:
        """The Chat Completions body, the tool-name map, and the dropped schema keys."""
        return chat_request(self.api_model, request, self.settings)

    def api_key(self) -> str:
        """The key: api_key_env's, else the provider's usual variable; none needed for a local server."""
        if self.settings.api_key_env is not None:
            key = key_from_env(self.settings.api_key_env, self.model)
            assert key is not None
            return key
        key = os.environ.get(self.compatible.key_env)
        if key:
            return key
        placeholder = placeholder_key(self.model, self.settings)
        if placeholder is not None:
            return placeholder
        env = self.compatible.key_env
        raise ProviderCallError(
            f"{self.model}: no API key: the environment variable {env} is not set (no request sent)",
            attempts=0, fix=f"export {env}=..., or set api_key_env to the variable that holds the key",
        )

    def _make_client(self) -> Any:
        self.prepare()  # waits for the import begun at configure time, if it is still running
        import openai

        return openai.AsyncOpenAI(**self.client_options(self.settings.api_base
                                                        or self.compatible.base_url))

    async def first_turn(self, request: TurnRequest) -> Turn:
        body, names, dropped = self.build_request(request)
        self._key = self.api_key()
        client = await self._clients.get()
        # the body as built, whatever parameters this SDK version names: model and messages
        # are create()'s own, the rest rides in extra_body, which every version sends as-is
        params = {"model": body.pop("model"), "messages": body.pop("messages"), "extra_body": body}

        async def attempt() -> dict[str, Any]:
            raw = await client.chat.completions.with_raw_response.create(**params)
            return _reply_json(raw.http_response)

        data, attempts = await with_retries(
            attempt, _classify, self.settings, model=self.model, sleep=self.sleep,
            secrets=(self._key, getattr(client, "api_key", None)),
        )
        return finish_turn(parse_reply(data, names), model=self.model, settings=self.settings,
                           dropped=dropped, attempts=attempts, cut=CUT, reason="finish_reason")


def _reply_json(http: Any) -> dict[str, Any]:
    """The reply body as a chat completion; an error body or garbage raises FaultError."""
    data = reply_data(http, _API_FIX)
    choices = data.get("choices") if isinstance(data, dict) else None
    if not (isinstance(data, dict) and isinstance(choices, list) and choices
            and isinstance(choices[0], dict)
            and isinstance(choices[0].get("message"), dict)):
        raise FaultError(Fault(
            f"HTTP {http.status_code} reply is not a Chat Completions response: {str(data)[:200]!r}",
            retryable=False, status=http.status_code, fix=_API_FIX,
        ))
    return data


def _is(e: BaseException, name: str) -> bool:
    """Whether e is the openai SDK's exception `name`, by name: a test harness that drops and
    re-imports modules between runs (pytester) leaves two copies of the SDK's classes."""
    return any(c.__name__ == name and c.__module__.split(".", 1)[0] == "openai"
               for c in type(e).__mro__)


def _transport_error(e: BaseException) -> bool:
    """An HTTP transport's own error that reached us unwrapped (a refused or reset connection).

    The SDK wraps its transport's errors by class; when that transport's modules were
    re-imported under it (pytester does this between in-process runs) the raw error escapes.
    """
    return any(isinstance(x, ConnectionError)
               or (type(x).__module__.split(".", 1)[0] in _TRANSPORTS and type(x).__name__ in _NETWORK)
               for x in exception_chain(e))


_TRANSPORTS = frozenset({"httpx", "httpcore", "httpx2", "httpcore2"})
_NETWORK = frozenset({"ConnectError", "ReadError", "WriteError", "NetworkError", "RemoteProtocolError"})


def _classify(e: BaseException) -> Fault:
    if _is(e, "APIStatusError"):
        sdk_error: Any = e
        status = int(sdk_error.status_code)
        headers = sdk_error.response.headers
        body: Any = sdk_error.body
        err: dict[str, Any] = {}
        if isinstance(body, dict):
            # the SDK hands over the error object itself, or the whole body around it
            inner = body.get("error")
            err = inner if isinstance(inner, dict) else body
        kind = err.get("type") if isinstance(err.get("type"), str) else None
        message = err.get("message") or _text_of(sdk_error.response) or str(sdk_error.message)
        fix = None
        if status in (401, 403):
            fix = "check the API key (api_key_env names the variable holding it)"
        elif status == 404:
            fix = "check the model name after the provider prefix, and api_base"
        label = f"HTTP {status}" + (f" {kind}" if kind else "")
        return Fault(f"{label}: {message}", retryable=status_retryable(status), status=status,
                     retry_after=retry_after(headers), fix=fix)
    if _is(e, "APITimeoutError"):
        return Fault("the request timed out", retryable=True)
    if _is(e, "APIConnectionError"):
        return connection_fault(e)
    # anything else (a bad argument, a credential the SDK could not resolve) will not mend itself
    if _transport_error(e):
        return connection_fault(e)
    return Fault(f"{type(e).__name__}: {e}", retryable=False)


def _text_of(response: Any) -> str:
    """An error reply's body in one short line (a proxy's HTML or plain text)."""
    try:
        return " ".join(str(response.text)[:200].split())
    except Exception:  # a streamed body already closed
        return ""
