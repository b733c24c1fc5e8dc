"""Secrets out of the logs pytest captures and prints (``-rA``, ``--log-level``, JUnit).

httpx logs every request's URL at INFO, and the MCP SDK the endpoint it connects to: a
token in a server URL's query string (``?token=${NAME}``), a key some APIs take in the
query (``?key=``) or a password in a proxy URL would reach every failing case's captured
log. A filter on the loggers that write URLs masks what ``messages.masking.redact`` masks
everywhere else, plus the values the run's servers declare.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from pytest_toolselect.messages.masking import redact

#: the loggers that write request URLs (a filter applies to its own logger's records only)
LOGGERS = ("httpx", "httpx2", "mcp.client.streamable_http", "mcp.client.sse",
           "openai._base_client", "anthropic._base_client", "LiteLLM")


class MaskSecrets(logging.Filter):
    """Rewrites a record whose message holds a secret; lets every record through."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: Callable[[], Iterable[str]] = tuple

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record that cannot format is left to the handler to report
            return True
        masked = redact(message, self.secrets())
        if masked != message:
            record.msg, record.args = masked, None
        return True


_FILTER = MaskSecrets()


def install(secrets: Callable[[], Iterable[str]]) -> Callable[[], None]:
    """Mask secrets in those loggers' records, with ``secrets()`` the run's own; returns
    what puts the previous run's source back (a pytester run inside a run)."""
    previous = _FILTER.secrets
    _FILTER.secrets = secrets
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)

    def restore() -> None:
        _FILTER.secrets = previous

    return restore
