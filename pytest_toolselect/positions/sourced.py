"""Parsed data with the line of every JSON path, and how errors name a place in it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pytest_toolselect.messages.errors import ToolselectError

#: files above this are refused before they are read (10 MB)
MAX_BYTES = 10 * 1024 * 1024
#: our formats nest about 5 levels; anything this deep is a mistake or an attack
MAX_DEPTH = 64

PathT = tuple[str | int, ...]

#: a key a path shows without quotes (``cases[3].why``)
BARE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


#: a key read from a file is shown this far at most: a file that was never one of ours (a
#: path mistyped to /etc/passwd) has its lines as keys, and a path must not print them
KEY_SHOWN = 37


def shown_key(key: str) -> str:
    """A key from a file as a message shows it: clipped, so no file is printed through it."""
    return key if len(key) <= KEY_SHOWN else key[:KEY_SHOWN] + "..."


def format_path(path: PathT) -> str:
    """A JSON path as users read it: ``cases[3].expect_args[0]`` (the top is ``(top level)``)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif BARE_KEY.match(part):
            out += f".{part}" if out else part
        else:
            out += '["' + shown_key(part).replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return out or "(top level)"


@dataclass
class Sourced:
    """Parsed data, the line (1-based) where each JSON path starts, and how to name places.

    ``lines`` is keyed by paths as written in the file. Loaders that rename keys (camelCase
    aliases to snake_case) record it in ``renames`` so messages and lines still follow the
    file; ``prefix`` is prepended to every shown path (``tool.toolselect`` in pyproject).
    """

    file: str
    data: Any
    lines: dict[PathT, int] = field(default_factory=dict)
    prefix: PathT = ()
    #: (canonical parent path, canonical key) -> the key as written
    renames: dict[tuple[PathT, str], str] = field(default_factory=dict)

    def written(self, path: PathT) -> PathT:
        """A canonical path as the file spells it."""
        out: list[str | int] = []
        for i, part in enumerate(path):
            if isinstance(part, str):
                part = self.renames.get((tuple(path[:i]), part), part)
            out.append(part)
        return tuple(out)

    def line_of(self, path: PathT) -> int | None:
        """The line of ``path`` (canonical), or of its nearest ancestor that has one."""
        p = self.written(tuple(path))
        while True:
            if p in self.lines:
                return self.lines[p]
            if not p:
                return None
            p = p[:-1]

    def place(self, path: PathT) -> str | None:
        full = self.prefix + self.written(tuple(path))
        return format_path(full) if full else None

    def subject(self, path: PathT) -> str:
        """What a message calls the value at ``path``: ``expect_tool`` or ``expect_tool[0]``."""
        w = self.written(tuple(path))
        for i in range(len(w) - 1, -1, -1):
            if isinstance(w[i], str):
                return format_path(w[i:])
        return "the value" if w else "the file"

    def error(self, path: PathT, message: str, fix: str | None = None,
              line: int | None = None) -> ToolselectError:
        return ToolselectError(
            message, file=self.file, line=line if line is not None else self.line_of(path),
            place=self.place(path), fix=fix,
        )


def file_error(
    file: str, line: int | None, message: str, fix: str | None = None, place: PathT | None = None
) -> ToolselectError:
    """An error at a line of a file, its JSON path written as users read it."""
    return ToolselectError(
        message, file=file, line=line, fix=fix,
        place=format_path(place) if place is not None else None,
    )


def too_deep(file: str, line: int | None) -> ToolselectError:
    return file_error(
        file, line, f"nested more than {MAX_DEPTH} levels deep",
        "flatten the structure; the formats read here nest only a few levels",
    )
