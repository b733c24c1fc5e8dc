"""Hooks the plugin offers to conftest files and other plugins."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # the annotation only: the providers load when a run needs one
    from pytest_toolselect.providers import Provider


@pytest.hookspec(firstresult=True)
def pytest_toolselect_provider(model: str, config: pytest.Config) -> Provider | None:
    """Return a provider for a model string the plugin does not know, or None.

    A provider (``pytest_toolselect.Provider``) has a ``model`` attribute, ``subject()
    -> dict`` (what a baseline belongs to: at least ``provider`` and ``model``) and
    ``async first_turn(request) -> Turn``. Use it to gate your own agent harness with the same cases.
    """
