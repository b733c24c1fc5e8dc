"""What the two official-SDK providers (Anthropic, OpenAI-compatible) share: their state, their
subject, and how a client is made (SDK retries off, a deadline just past ours)."""

from __future__ import annotations

import asyncio
from typing import Any

from pytest_toolselect.exchange.json_value import JSONDict

from . import ProviderSettings, TurnRequest, http_subject
from .clients import LoopClients
from .pricing import check_prices, request_bytes, reservation_usd
from .retry import Sleep


class SDKProvider:
    #: the subject's provider name (set by each provider)
    provider = ""

    def __init__(self, model: str, settings: ProviderSettings, *, sleep: Sleep | None = None) -> None:
        check_prices(settings.prices)
        self.model = model
        #: the model name the API knows (the string minus its route prefix)
        self.api_model = model.split("/", 1)[1]
        self.settings = settings
        # injectable so tests can see the waits without spending them
        self.sleep: Sleep = sleep or asyncio.sleep
        self._clients: LoopClients[Any] = LoopClients(self._make_client, lambda c: c.close())
        self._key: str | None = None

    def subject(self) -> JSONDict:
        return http_subject(self.provider, self.model, self.settings)

    def _make_client(self) -> Any:
        raise NotImplementedError

    def max_cost_usd(self, request: TurnRequest) -> float | None:
        """The most this request can cost (None: no price known): what the cost cap reserves."""
        return reservation_usd(self.model, self.settings.prices, max_tokens=self.settings.max_tokens,
                               size=request_bytes(request.question, request.system, request.tools,
                                                 request.context))

    def endpoint(self) -> str | None:
        """The base URL the calls go to (None: the SDK's own default): part of a cached answer's key."""
        return self.settings.api_base or self.default_base_url()

    def default_base_url(self) -> str | None:
        """Where the SDK sends calls when api_base is not set (its environment variable)."""
        return None

    def client_options(self, base_url: str | None) -> dict[str, Any]:
        """The SDK client's keyword arguments; freezes the heap the SDK's import just made."""
        from .shutdown import freeze_imports

        freeze_imports()  # the SDK's heap lives to the end: later collections skip it
        kwargs: dict[str, Any] = {
            "max_retries": 0,
            # a little past our own deadline, so the shared loop's timeout is the one that fires
            "timeout": self.settings.timeout + 5,
        }
        if self._key is not None:
            kwargs["api_key"] = self._key
        if base_url:
            kwargs["base_url"] = base_url
        return kwargs
