"""``@case(...)``: a Python test function as a selection case.

The decorator only marks the function; the plugin's ``toolselect_result``
fixture asks the model in setup, the test body may make extra assertions on
the result, and the verdict is applied after the body passes. With
``pytest.mark.parametrize``, each parameter set is one case (its ``question``
parameter is the question).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import pytest

from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.run.session import RUN_SESSION
from pytest_toolselect.scoring.contradictions import parse_case

F = TypeVar("F", bound=Callable[..., Any])

MARK = "toolselect_case"


def case(**fields: Any) -> Callable[[F], F]:
    """Mark a test function as a selection case; fields as in a case file (no ``id``)."""
    if "id" in fields:
        raise TypeError("case(): the case id is the test's own id; drop `id=`")

    def decorate(func: F) -> F:
        marker: pytest.MarkDecorator = getattr(pytest.mark, MARK)
        # a mark returns the function it marks; mypy cannot pick that overload of
        # MarkDecorator.__call__ for a type variable, so the result is said to be F
        marked: F = pytest.mark.usefixtures("toolselect_result")(marker(**fields)(func))
        return marked

    return decorate


def case_from_item(item: pytest.Item) -> Any:
    """The Case a decorated test item stands for (question from kwargs or parametrize)."""
    mark = item.get_closest_marker(MARK)
    assert mark is not None
    fields = dict(mark.kwargs)
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "question" in params:
        if "question" in fields:
            raise ToolselectError(
                "the question is given twice: in case(question=...) and as a parameter",
                file=str(item.path), place=item.nodeid, fix="keep one of them",
            )
        fields["question"] = params["question"]
    # the test's own name is the id; it may hold characters a case-file id may not
    fields["id"] = "decorated"
    # the config nearest to the test file governs it, as it governs a case file there
    config = item.config.stash[RUN_SESSION].settings.config_for(item.path)
    parsed = parse_case(fields, source=item.nodeid, default_servers=None,
                        config_identifiers=config.identifiers)
    # from here on the case's file is the test file: its servers come from that config
    return replace(parsed, id=item.name, source=str(item.path))
