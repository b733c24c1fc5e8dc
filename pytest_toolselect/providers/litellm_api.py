"""Model strings no native route serves (gemini/, bedrock/, vertex_ai/, cohere/, ...): through litellm.

Named litellm_api so it never shadows the ``litellm`` package. litellm costs
5-6 s to import, so it is imported on the first call only, with
LITELLM_LOCAL_MODEL_COST_MAP set first so it reads its bundled price map
instead of fetching one from the network (offline runs, stable prices).
litellm's own retries are off; the shared loop in ``providers.retry`` retries.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

from pytest_toolselect.exchange.json_value import JSONDict
from pytest_toolselect.providers.shutdown import freeze_imports

from . import ProviderSettings, Turn, TurnRequest, finish_turn, http_subject
from .api_keys import key_from_env
from .chat import CUT, chat_request, parse_reply
from .preflight import placeholder_key
from .pricing import check_prices, request_bytes, reservation_usd
from .retry import (
    Fault,
    Sleep,
    connection_fault,
    exception_chain,
    retry_after,
    status_retryable,
    with_retries,
)
from .wire import NameMap


def import_litellm() -> Any:
    """litellm, imported once, offline and quiet."""
    # must precede the import: litellm fetches its price map while importing
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    import litellm

    # no "Give Feedback / Get Help" banners on errors: our error message says it all
    litellm.suppress_debug_info = True

    freeze_imports()  # litellm's heap lives to the end: later collections skip it
    return litellm


class LiteLLMProvider:
    provider = "litellm"

    def __init__(self, model: str, settings: ProviderSettings, *, sleep: Sleep | None = None) -> None:
        check_prices(settings.prices)
        self.model = model
        self.settings = settings
        # injectable so tests can see the waits without spending them
        self.sleep: Sleep = sleep or asyncio.sleep

    def subject(self) -> JSONDict:
        return http_subject(self.provider, self.model, self.settings)

    def max_cost_usd(self, request: TurnRequest) -> float | None:
        """The most this request can cost (None: no price known): what the cost cap reserves."""
        return reservation_usd(self.model, self.settings.prices, max_tokens=self.settings.max_tokens,
                               size=request_bytes(request.question, request.system, request.tools,
                                                 request.context))

    def endpoint(self) -> str | None:
        """The base URL the calls go to (None: litellm's default for the provider)."""
        return self.settings.api_base

    def prepare(self) -> None:
        """Import litellm now (optional): lets a session count the import at startup."""
        import_litellm()

    # request --------------------------------------------------------------------------
    def build_request(self, request: TurnRequest) -> tuple[dict[str, Any], NameMap, tuple[str, ...]]:
        """acompletion's arguments (no key), the tool-name map, and the dropped schema keys."""
        kwargs, names, dropped = chat_request(self.model, request, self.settings)
        # both of litellm's retry layers off (its own wrapper, and the SDK client under it)
        kwargs["num_retries"] = 0
        kwargs["max_retries"] = 0
        # a little past our own deadline, so the shared loop's timeout is the one that fires
        kwargs["timeout"] = self.settings.timeout + 5
        if self.settings.api_base:
            kwargs["api_base"] = self.settings.api_base
        return kwargs, names, dropped

    # the call -------------------------------------------------------------------------
    async def first_turn(self, request: TurnRequest) -> Turn:
        kwargs, names, dropped = self.build_request(request)
        key = (key_from_env(self.settings.api_key_env, self.model)
               or placeholder_key(self.model, self.settings))
        if key is not None:
            kwargs["api_key"] = key
        litellm = import_litellm()

        async def attempt() -> Turn:
            return parse_reply(await litellm.acompletion(**kwargs), names)

        turn, attempts = await with_retries(
            attempt, _classify, self.settings, model=self.model, sleep=self.sleep, secrets=(key,),
        )
        return finish_turn(turn, model=self.model, settings=self.settings, dropped=dropped,
                           attempts=attempts, cut=CUT, reason="finish_reason")


_LITELLM_PREFIX = re.compile(r"^(litellm\.\w+: )?(\w+: )?")


def _classify(e: BaseException) -> Fault:
    from litellm.exceptions import APIConnectionError, BadRequestError, Timeout

    status = getattr(e, "status_code", None)
    status = status if isinstance(status, int) else None
    headers = getattr(e, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(e, "response", None), "headers", None)
    # litellm stacks its class names in front ("litellm.APIError: APIError: OpenAIException - …"):
    # the type is said once below, so keep the message from the provider's part on
    message = _LITELLM_PREFIX.sub("", str(getattr(e, "message", None) or e), count=1)
    if isinstance(e, Timeout):
        return Fault(f"the request timed out: {message}", retryable=True, status=status)
    if isinstance(e, APIConnectionError) or (status in (None, 500) and _no_reply(e)):
        return connection_fault(e, message)
    if "Empty or invalid response from LLM endpoint" in message:
        # litellm calls a non-JSON body a 500; it is a misrouted api_base, and retrying will not help
        return Fault(message, retryable=False, status=status,
                     fix="check that api_base points at an API of the model's provider")
    if "Invalid response object" in message:
        # a 200 reply litellm could not convert (a broken proxy's): it calls that a 500 and
        # puts its own traceback in the message; say what was wrong, once, and do not retry
        return Fault(_unreadable(message), retryable=False, status=200,
                     fix="check that api_base points at an API of the model's provider")
    if isinstance(e, BadRequestError) and "LLM Provider NOT provided" in message:
        return Fault(message, retryable=False, status=status,
                     fix="start the model string with a litellm provider: openai/, openrouter/, ...")
    fix = None
    if status in (401, 403):
        fix = "check the API key (api_key_env names the variable holding it)"
    label = f"HTTP {status}: " if status is not None else ""
    return Fault(f"{label}{type(e).__name__}: {message}", retryable=status_retryable(status),
                 status=status, retry_after=retry_after(headers), fix=fix)


_ERROR_LINE = re.compile(r"^\w+(?:Error|Exception): .*$", re.M)


def _unreadable(message: str) -> str:
    """litellm's "Invalid response object" message as one line: its cause and the reply."""
    causes = _ERROR_LINE.findall(message.split("Traceback", 1)[-1])
    cause = f" ({causes[-1].strip()})" if causes else ""
    _, found, received = message.partition("'response_object': ")
    shown = f": {received[:200]!r}" if found else ""
    return f"HTTP 200 reply is not a Chat Completions response{cause}{shown}"


def _no_reply(e: BaseException) -> bool:
    """Whether the call failed before any reply: litellm reports some of those as an HTTP 500.

    (Its OpenAI path turns the SDK's APIConnectionError into an InternalServerError, so a
    refused or reset connection would read as a server fault with a status it never sent.)
    """
    return any(type(x).__name__ == "APIConnectionError" or isinstance(x, ConnectionError)
               for x in exception_chain(e)[1:])
