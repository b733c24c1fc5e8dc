"""Secrets known by name or shape, and the masking that keeps them out of every message and file.

Here, not in providers, because a server's declared ``env:``/``headers:`` values are secrets too
and the config loader collects them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

#: the variables the SDKs read keys from; masked whatever their names look like
PROVIDER_KEY_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
    "MISTRAL_API_KEY", "GROQ_API_KEY", "COHERE_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY",
    "TOGETHERAI_API_KEY", "FIREWORKS_API_KEY", "HUGGINGFACE_API_KEY", "HF_TOKEN",
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "LITELLM_API_KEY",
)
#: a variable (or header) whose name ends like this holds a secret
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|KEY_ID|AUTHORIZATION)$")
_SECRET_SHAPES = re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_\-]{6,}|(?<=Bearer )[A-Za-z0-9._\-]{8,}"
                            # the password of a URL's user info: https://user:pw@proxy
                            r"|(?<=://)(?=[^/@\s:]*:[^/@\s]+@)[^/@\s:]*:[^/@\s]+(?=@)")
#: shorter values are not masked: "***" in place of every "1" or "true" would hide the message
_MIN_SECRET = 6


def is_secret_name(name: str) -> bool:
    """Whether a variable or header of this name holds a secret (by its name)."""
    upper = name.upper().replace("-", "_")
    return upper in PROVIDER_KEY_VARS or bool(_SECRET_NAME.search(upper))


#: a declared value this long is masked whatever its name: `DATABASE_URL: postgres://u:pw@h`
#: holds a password under a harmless name; shorter ones (1, debug, true) are not worth hiding
_MIN_DECLARED = 8


def declared_secrets(pairs: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The values among (name, value) pairs to mask: a server's `env:` or `headers:`.

    Every value the user wrote for a server is private to it, so any long enough one is
    masked, not only those under secret-looking names.
    """
    return tuple(sorted({str(v) for k, v in pairs
                         if len(str(v)) >= (_MIN_SECRET if is_secret_name(k) else _MIN_DECLARED)}))


#: the value of a URL query parameter named like a credential: ?token=..., &api_key=...
_QUERY_SECRET = re.compile(
    r"([?&][\w.\-]*?(?:token|key|secret|password|passwd|pwd|auth|signature|sig|credentials?)s?=)"
    r"[^&#\s'\"<>]+", re.IGNORECASE)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """The text with every key we know of (and anything shaped like one) masked."""
    known = [s for s in secrets if s and len(s) >= _MIN_SECRET]
    # list() then get(): pytest's main thread sets and deletes variables (PYTEST_CURRENT_TEST)
    # while calls run on the scheduler's thread, and iterating items() would race with it
    for name in list(os.environ):
        if is_secret_name(name):
            value = os.environ.get(name)
            if value and len(value) >= _MIN_SECRET:
                known.append(value)
    for secret in sorted(set(known), key=len, reverse=True):
        text = text.replace(secret, "***")
    return _QUERY_SECRET.sub(r"\1***", _SECRET_SHAPES.sub("***", text))
