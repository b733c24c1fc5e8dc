"""Which route a model string takes, decided from the string alone (nothing imported).

``local/…`` is embedded; ``anthropic/…`` goes through the Anthropic SDK; the
providers that speak OpenAI's Chat Completions API go through the ``openai``
SDK's async client; anything else through litellm, which translates for the
providers with APIs of their own (Gemini, Bedrock, Vertex, Cohere, ...).
"""

from __future__ import annotations

from typing import NamedTuple


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

#: what the summary's model line says of each route
ROUTE_NAMES = {"local": "embedded", "anthropic": "anthropic SDK", "openai": "openai SDK",
               "litellm": "litellm", "hook": "the pytest_toolselect_provider hook",
               "claude-code": "the Claude Code harness", "openai-agents": "the OpenAI Agents SDK"}

#: routes that run an agent harness, which starts the case's servers itself
HARNESS_ROUTES = ("claude-code", "openai-agents")


def route(model: str) -> str:
    """"local", "anthropic", "openai", "litellm" or a harness: the route `model` takes."""
    prefix = model.split("/", 1)[0]
    if prefix in ("local", "anthropic", *HARNESS_ROUTES):
        return prefix
    if prefix in OPENAI_COMPATIBLE:
        return "openai"
    return "litellm"
