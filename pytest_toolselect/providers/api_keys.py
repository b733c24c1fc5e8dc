"""Keys: read from the configured env var, and kept out of every message and file written."""

from __future__ import annotations

import os

from pytest_toolselect.messages.masking import PROVIDER_KEY_VARS as PROVIDER_KEY_VARS  # re-exported
from pytest_toolselect.messages.masking import declared_secrets as declared_secrets
from pytest_toolselect.messages.masking import is_secret_name as is_secret_name
from pytest_toolselect.messages.masking import redact as redact

from . import ProviderCallError


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
