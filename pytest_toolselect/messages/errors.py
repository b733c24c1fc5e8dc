"""The plugin's own error type: every message names the file, the place and the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path


class ToolselectError(Exception):
    """Bad input or a failed dependency, said in one clear message (no traceback shown)."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        place: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.place = place
        self.fix = fix
        super().__init__(self.render())

    def render(self) -> str:
        where = self.file or ""
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        parts = [f"{where}: " if where else ""]
        if self.place:
            parts.append(f"at {self.place}: ")
        parts.append(self.message)
        if self.fix:
            parts.append(f" ({self.fix})")
        return "".join(parts)


class ServerError(ToolselectError):
    """An MCP server (or a tools file) could not give its tools."""


class ProviderError(ToolselectError):
    """A model provider failed after its retries."""


def nearest(word: str, choices: Iterable[str]) -> str | None:
    """The closest valid spelling of a mistyped key, if any is close enough."""
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None
