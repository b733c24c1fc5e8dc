"""What can be refused before any request: a model string no route serves, a key not set.

Said once at the start of a run (the session turns the error into a usage error) instead of
once per case after retries. Nothing here imports an SDK.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
from dataclasses import replace
from urllib.parse import urlsplit

from pytest_toolselect.messages.errors import ToolselectError

from . import ProviderSettings
from .routes import route_of

#: a bare model name's usual provider, by how the name starts
_BARE_PREFIXES = (
    ("claude", "anthropic"), ("gpt-", "openai"), ("o1", "openai"), ("o3", "openai"),
    ("o4", "openai"), ("chatgpt", "openai"), ("gemini", "gemini"), ("mistral", "mistral"),
    ("deepseek", "deepseek"), ("grok", "xai"), ("command", "cohere"),
)
_EXAMPLES = "anthropic/claude-haiku-4-5, openai/gpt-4.1-mini, openrouter/<vendor>/<model>, or local/bm25"


def _local_models() -> list[str]:
    from .local import LOCAL_MODELS

    return sorted(LOCAL_MODELS)


def suggest(model: str) -> str | None:
    """The model string most likely meant by a malformed or unknown one (None: no guess)."""
    name = model.strip()
    local = _local_models()
    if "/" not in name:
        if f"local/{name}" in local:
            return f"local/{name}"
        for start, provider in _BARE_PREFIXES:
            if name.lower().startswith(start):
                return f"{provider}/{name}"
        close = difflib.get_close_matches(f"local/{name}", local, n=1, cutoff=0.8)
        return close[0] if close else None
    if name.startswith("local/"):
        close = difflib.get_close_matches(name, local, n=1, cutoff=0.6)
        return close[0] if close else None
    return None


def check_model(model: str) -> None:
    """Raise ToolselectError, with a did-you-mean, for a model string no route can serve."""
    local = _local_models()
    head, _, rest = model.partition("/")
    if model.startswith("local/") and model in local:
        return
    if model.startswith("local/") or not head.strip() or not rest.strip():
        guess = suggest(model)
        if model.startswith("local/"):
            problem = f"unknown local model {model!r} (the embedded models are: {', '.join(local)})"
        else:
            problem = f"model {model!r}: a model string is <provider>/<model>"
        fix = f"did you mean {guess}?" if guess else f"e.g. {_EXAMPLES}"
        raise ToolselectError(problem, fix=fix)


def is_loopback(url: str | None) -> bool:
    """Whether `url` (an api_base, with or without a scheme) names this machine: ``localhost``
    or a name under it (``*.localhost``, RFC 6761), an IPv4 address in 127.0.0.0/8, or ``::1``
    (an IPv4 loopback address mapped into IPv6 too). The one rule: the key check and the
    local server's defaults (``run.settings.LOCAL_DEFAULTS``) both ask it, so a server one
    takes as local the other does too. A URL that cannot be read is not loopback."""
    if not url:
        return False
    try:
        host = urlsplit(url if "//" in url else f"//{url}").hostname
    except ValueError:
        return False
    if not host:
        return False
    name = host[:-1] if host.endswith(".") else host
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def key_vars(model: str, settings: ProviderSettings) -> tuple[str, ...]:
    """The variables one of which must hold the model's key (empty: none needed or not known)."""
    if settings.api_key_env is not None:
        return (settings.api_key_env,)
    if is_loopback(settings.api_base):
        return ()
    return route_of(model).key_vars.get(model.split("/", 1)[0], ())


#: the key sent to a local server when no key is set: every SDK insists on some key, and a
#: server that checks none (Ollama, vLLM, llama.cpp, a test double) takes any
PLACEHOLDER_KEY = "no-key"


def placeholder_key(model: str, settings: ProviderSettings, *others: str) -> str | None:
    """PLACEHOLDER_KEY when a call needs one: api_base on loopback, no api_key_env, and none of
    the route's usual key variables (nor `others`, credentials the SDK reads itself) is set.

    The same rule on every route, so a model string that passed the key check at the start
    is never refused by its SDK later for want of a key.
    """
    if settings.api_key_env is not None or not is_loopback(settings.api_base):
        return None
    names = (*key_vars(model, replace(settings, api_base=None)), *others)
    if not names or any(os.environ.get(n) for n in names):
        return None
    return PLACEHOLDER_KEY


def check_key(model: str, settings: ProviderSettings) -> None:
    """Raise ToolselectError when none of the model's key variables is set (no request sent)."""
    names = key_vars(model, settings)
    if not names or any(os.environ.get(n) for n in names):
        return
    which = " or ".join(names)
    raise ToolselectError(
        f"{model}: no API key: the environment variable {which} is not set (no request sent)",
        fix=f"export {names[0]}=..., or set api_key_env to the variable that holds the key"
            + ("" if settings.api_key_env else
               "; a local server on loopback (api_base http://127.0.0.1:...) needs none"),
    )


def check(model: str, settings: ProviderSettings) -> None:
    """The checks, the model string first, then a harness's extra, then the key."""
    check_model(model)
    taken = route_of(model)
    if taken.harness is not None:
        from .harness import check_installed

        check_installed(taken, model)
    check_key(model, settings)
