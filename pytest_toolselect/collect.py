"""pytest collection: case files become a File node with one CaseItem per case."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from .errors import ToolselectError
from .session import RUN_SESSION
from .verdict import CaseFailed, conclude_case, setup_case

if TYPE_CHECKING:
    from _pytest._code.code import ExceptionInfo, TerminalRepr

    from .cases import Case


def label_item(item: pytest.Item, case: Case) -> None:
    """category, intent and tags select with -k and (registered) -m markers."""
    for label in (case.category, case.intent, *case.tags):
        if label:
            item.config.addinivalue_line("markers", f"{label}: toolselect case label")
            item.add_marker(label)
            item.extra_keyword_matches.add(label)


class CaseFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        from .cases import load_case_file

        session = self.config.stash[RUN_SESSION]
        case_file = load_case_file(self.path, session.config.identifiers)
        for case in case_file.cases:
            yield CaseItem.from_parent(self, name=case.id, case=case)

    def repr_failure(self, excinfo: ExceptionInfo[BaseException]) -> str | TerminalRepr:
        if isinstance(excinfo.value, ToolselectError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        label_item(self, case)

    def setup(self) -> None:
        setup_case(self, self.case)

    def runtest(self) -> None:
        conclude_case(self, self.case)

    def repr_failure(self, excinfo: ExceptionInfo[BaseException],
                     style: Any = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, (CaseFailed, ToolselectError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        line = self.case.line - 1 if self.case.line else None
        return self.path, line, f"toolselect case {self.case.id}"
