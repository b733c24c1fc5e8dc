"""The package's modules, imported once on the main thread before the run's threads start.

pytest rewrites the assertions of an entry-point plugin's modules as it imports them, which
parses each one (``ast.parse``). CPython 3.11 keeps the AST converter's recursion counter
per interpreter, not per thread, so two threads importing two of this package's modules
at once can fail with "SystemError: AST constructor recursion depth mismatch", more often
the busier the machine. The calls' event loop and discovery run in threads and import
lazily; importing every module here first leaves them nothing to import for the first
time. Each module keeps its heavy imports (SDKs, numpy) inside functions, so this stays
cheap; the one module that is itself a heavy import's wrapper is left to its callers.

Only the parts a run's threads enter are imported: the reports are built on the main
thread once the calls are over, and the lint's modules (its rules compile some hundred
regular expressions) only for a run with ``--toolselect-lint``. This is the one place where
a run's machinery is first imported (the plugin calls it once collection found toolselect
items); a run of ordinary tests never gets here.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

import pytest_toolselect

#: the parts whose modules a run's threads may import (plugin and cli run on the main thread)
PARTS = ("terms", "messages", "exchange", "positions", "records", "inputs", "scoring", "gate", "probe",
         "discovery", "providers", "run")
#: imported besides for a run that lints the servers' tools (the lint's items run discovery)
LINT_PARTS = ("lint",)
#: modules that import a heavy library at their top (numpy), imported only where needed
HEAVY = frozenset({"pytest_toolselect.probe.bootstrap"})
_done = threading.Event()
_lint_done = threading.Event()


def import_parts(*, lint: bool = False) -> None:
    """Import every module of PARTS, and of LINT_PARTS when `lint` (once a process; call it
    on the main thread)."""
    if lint and not _lint_done.is_set():
        _import(LINT_PARTS)
        _lint_done.set()
    if not _done.is_set():
        _import(PARTS)
        _done.set()


def _import(parts: tuple[str, ...]) -> None:
    for part in parts:
        package = importlib.import_module(f"{pytest_toolselect.__name__}.{part}")
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if info.name not in HEAVY:
                importlib.import_module(info.name)
