"""What one server's discovery found, and paths relative to the rootdir."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_toolselect.exchange.tool import Tool


@dataclass(frozen=True)
class ServerTools:
    server: str
    tools: tuple[Tool, ...]
    instructions: str | None


def under_root(root: Path, path: str) -> Path:
    """A config path: absolute as written, or relative to the rootdir (``~`` expanded)."""
    p = Path(path).expanduser()
    return p if p.is_absolute() else root / p
