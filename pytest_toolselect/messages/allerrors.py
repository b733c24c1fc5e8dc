"""Every mistake in a file at once, in file order: one message per place that is wrong.

A schema reports several errors for one mistake (an unknown key and the missing key it was
meant to be; every branch of a oneOf), so errors are grouped by the place they point at and
each group speaks once, through the most relevant of its errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .errors import ToolselectError


class Mistakes(ToolselectError):
    """Several mistakes in one file, each with its own line and fix, in file order."""

    def __init__(self, errors: Sequence[ToolselectError]) -> None:
        self.errors = tuple(errors)
        first = self.errors[0]
        super().__init__(f"{len(self.errors)} mistakes", file=first.file, line=first.line,
                         fix="each mistake says its own fix")

    def render(self) -> str:
        head = f"{self.file}: " if self.file else ""
        return f"{head}{len(self.errors)} mistakes, in file order:\n" + "\n".join(
            f"  {e.render()}" for e in self.errors)


def by_place(errors: Iterable[Any]) -> list[list[Any]]:
    """jsonschema errors grouped by the place in the document they point at, first seen first."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for err in errors:
        groups.setdefault(tuple(err.absolute_path), []).append(err)
    return list(groups.values())


def in_file_order(errors: Iterable[ToolselectError]) -> list[ToolselectError]:
    """Sorted by line (stable: errors on one line keep their order); no line sorts first."""
    return sorted(errors, key=lambda e: e.line if e.line is not None else 0)


def raise_all(errors: Sequence[ToolselectError]) -> None:
    """Raise nothing for none, the error itself for one, every one at once for several."""
    if not errors:
        return
    # one list, whether a mistake came alone or with others of its case
    flat = [one for e in errors for one in (e.errors if isinstance(e, Mistakes) else (e,))]
    ordered = in_file_order(flat)
    if len(ordered) == 1:
        raise ordered[0]
    raise Mistakes(ordered)
