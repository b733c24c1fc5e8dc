"""Keys: read from the configured env var, and kept out of every error message."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from . import ProviderCallError

_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET)$")
_SECRET_SHAPES = re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_\-]{6,}|(?<=Bearer )[A-Za-z0-9._\-]{8,}")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """The text with every key we know of (and anything shaped like one) masked."""
    known = [s for s in secrets if s and len(s) >= 6]
    # list() then get(): pytest's main thread sets and deletes variables (PYTEST_CURRENT_TEST)
    # while calls run on the scheduler's thread, and iterating items() would race with it
    for name in list(os.environ):
        if _SECRET_ENV.search(name.upper()):
            value = os.environ.get(name)
            if value and len(value) >= 6:
                known.append(value)
    for secret in sorted(set(known), key=len, reverse=True):
        text = text.replace(secret, "***")
    return _SECRET_SHAPES.sub("***", text)


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
