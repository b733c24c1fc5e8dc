"""The built-in routes: which route a model string takes, decided from the string alone.

``local/…`` is embedded; ``anthropic/…`` goes through the Anthropic SDK; the
providers that speak OpenAI's Chat Completions API go through the ``openai``
SDK's async client; ``claude-code/…`` and ``openai-agents/…`` through a real agent
harness; anything else through litellm, which translates for the providers with APIs
of their own (Gemini, Bedrock, Vertex, Cohere, ...).

``ROUTES`` is the one table: a route's name, the model prefixes it takes, the environment
variables holding its key, the SDK to import ahead of the first call, and its factory. A
user's provider comes from the ``pytest_toolselect_provider`` hook, a model string to a
provider; a built-in one from its row's factory, the same model string to a provider.
The provider factory, the key check at the start, the SDK preload and the summary's
model line all read the table, so adding a route is one row. Nothing here imports an SDK
(a factory is ``module:attribute``, imported when a run asks for it).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from . import Provider, ProviderSettings


class Compatible(NamedTuple):
    #: None: the SDK's default (OPENAI_BASE_URL, else api.openai.com)
    base_url: str | None
    #: where the key is read from when api_key_env names none
    key_env: str


#: litellm's provider prefixes for APIs that speak Chat Completions as OpenAI does
#: (a local server, Ollama, vLLM, llama.cpp or LM Studio, is ``openai/<model>`` + api_base)
OPENAI_COMPATIBLE: dict[str, Compatible] = {
    "openai": Compatible(None, "OPENAI_API_KEY"),
    "openrouter": Compatible("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "groq": Compatible("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "together_ai": Compatible("https://api.together.xyz/v1", "TOGETHERAI_API_KEY"),
    "deepseek": Compatible("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "fireworks_ai": Compatible("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
    "mistral": Compatible("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
}

#: litellm providers whose key variables are known (any one of them set is enough);
#: providers not named here (bedrock, vertex_ai, azure, ...) authenticate in ways of their own
LITELLM_KEY_VARS: dict[str, tuple[str, ...]] = {
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "xai": ("XAI_API_KEY",),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "huggingface": ("HUGGINGFACE_API_KEY", "HF_TOKEN"),
}


class Harness(NamedTuple):
    """What a harness route needs installed, and how it offers the tools."""

    #: the module its SDK is imported as (its absence is refused at the start)
    module: str
    #: the extra that installs it: ``pip install 'pytest-toolselect[<extra>]'``
    extra: str
    #: it sorts the tools it is given by name (the listed order is not the order sent)
    sorts_tools: bool


@dataclass(frozen=True)
class Route:
    """One built-in route: a model prefix to the provider that serves it."""

    #: the route's name (the harness routes' names are their prefixes)
    name: str
    #: what the summary's model line says of it (None: nothing, the embedded model)
    label: str | None
    #: the model prefixes it takes (the catch-all route takes what no other row does)
    prefixes: tuple[str, ...]
    #: model prefix -> the variables one of which holds the key (a prefix not here: none
    #: needed, or none known)
    key_vars: Mapping[str, tuple[str, ...]]
    #: the SDK imported on a background thread ahead of the first call (providers.preload)
    sdk: str | None
    #: ``module:attribute``: called with the model string and the settings, it returns the
    #: provider, as the hook does for a user's
    factory: str
    #: an agent harness (None: a direct call), which starts the case's servers itself
    harness: Harness | None = None

    def make(self, model: str, settings: ProviderSettings) -> Provider:
        """The route's provider for `model` (its module imported now, not before)."""
        module, _, attribute = self.factory.partition(":")
        found = getattr(importlib.import_module(module), attribute)
        provider: Provider = found(model, settings)
        return provider


def _keys(*pairs: tuple[str, tuple[str, ...]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType(dict(pairs))


_HERE = "pytest_toolselect.providers."

#: every built-in route; the last row takes any prefix no other row names
ROUTES: tuple[Route, ...] = (
    Route("local", None, ("local",), _keys(), None, _HERE + "local:provider"),
    Route("anthropic", "anthropic SDK", ("anthropic",),
          _keys(("anthropic", ("ANTHROPIC_API_KEY",))), "anthropic",
          _HERE + "anthropic_api:AnthropicProvider"),
    Route("openai", "openai SDK", tuple(OPENAI_COMPATIBLE),
          _keys(*((prefix, (c.key_env,)) for prefix, c in OPENAI_COMPATIBLE.items())), "openai",
          _HERE + "openai_api:OpenAIProvider"),
    Route("claude-code", "the Claude Code harness", ("claude-code",),
          _keys(("claude-code", ("ANTHROPIC_API_KEY",))), None,
          _HERE + "claude_code:ClaudeCodeProvider",
          Harness("claude_agent_sdk", "claude-code", sorts_tools=True)),
    Route("openai-agents", "the OpenAI Agents SDK", ("openai-agents",),
          _keys(("openai-agents", ("OPENAI_API_KEY",))), None,
          _HERE + "openai_agents:OpenAIAgentsProvider",
          # the Agents SDK keeps the order its servers list the tools in
          Harness("agents", "openai-agents", sorts_tools=False)),
    Route("litellm", "litellm", (), MappingProxyType(LITELLM_KEY_VARS), None,
          _HERE + "litellm_api:LiteLLMProvider"),
)

#: what the summary's model line says of a model a pytest_toolselect_provider hook serves
HOOK_LABEL = "the pytest_toolselect_provider hook"


def route_of(model: str) -> Route:
    """The row of the route `model` takes, by its prefix (the part before the first ``/``);
    the last row when no row names the prefix. Read from ``ROUTES`` on each call (a handful
    of rows), so a row added is taken at once."""
    prefix = model.split("/", 1)[0]
    return next((r for r in ROUTES if prefix in r.prefixes), ROUTES[-1])
