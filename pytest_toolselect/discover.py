"""Which toolselect config governs a case file: found as pytest and ruff find theirs.

The explicit option first, then the rootdir, then the nearest ``toolselect.yaml`` (or
``.yml``, or ``[tool.toolselect]`` in a ``pyproject.toml``) in the file's folder or its
parents. Every file looked at is kept, so an unknown server can say where it looked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

YAML_NAMES = ("toolselect.yaml", "toolselect.yml")
TABLE = "[tool.toolselect]"


@dataclass(frozen=True)
class Found:
    #: the config file that governs (None: none found)
    path: Path | None
    #: every file looked for, in order (existing or not)
    looked: tuple[Path, ...]
    #: a [tool.toolselect] table passed over for a toolselect.yaml in the same folder
    shadowed: Path | None = None


def has_table(pyproject: Path) -> bool:
    try:
        return TABLE in pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def in_folder(folder: Path) -> Found:
    """The config in one folder: a toolselect.yaml wins over a [tool.toolselect] table."""
    looked = [folder / n for n in YAML_NAMES] + [folder / "pyproject.toml"]
    yaml = next((p for p in looked[:2] if p.is_file()), None)
    pyproject = looked[2]
    table = pyproject if pyproject.is_file() and has_table(pyproject) else None
    if yaml is not None:
        return Found(yaml, tuple(looked), shadowed=table)
    return Found(table, tuple(looked))


def nearest(start: Path) -> Found:
    """The config in ``start`` (a folder) or the nearest of its parents."""
    looked: list[Path] = []
    folder = start.absolute()
    for candidate in (folder, *folder.parents):
        found = in_folder(candidate)
        looked.extend(found.looked)
        if found.path is not None:
            return Found(found.path, tuple(looked), found.shadowed)
    return Found(None, tuple(looked))
