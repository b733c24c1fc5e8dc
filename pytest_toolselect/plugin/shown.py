"""Text as the plugin shows it (terminal, JUnit, warnings): credentials masked, hidden
characters made visible. Every message the plugin hands pytest goes through ``shown``."""

from __future__ import annotations

from collections.abc import Iterable

from pytest_toolselect.messages.masking import redact
from pytest_toolselect.report.printable import printable


def shown(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every credential masked (``secrets``: the run's declared values too)."""
    return printable(redact(text, secrets))
