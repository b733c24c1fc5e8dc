"""The package's modules, imported once on the main thread before the run's threads start.

pytest rewrites the assertions of an entry-point plugin's modules as it imports them, which
parses each one (``ast.parse``). CPython 3.11 keeps the AST converter's recursion counter
per interpreter, not per thread, so two threads importing two of this package's modules
at once can fail with "SystemError: AST constructor recursion depth mismatch", more often
the busier the machine. The calls' event loop and discovery run in threads and import
lazily; importing every module here first leaves them nothing to import for the first
time. Each module keeps its heavy imports (SDKs, numpy) inside functions, so this stays
cheap; the one module that is itself a heavy import's wrapper is left to its callers.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

#: the parts whose modules a run's threads may import (plugin and cli run on the main thread)
PARTS = ("terms", "messages", "exchange", "positions", "records", "inputs", "scoring", "gate", "probe",
         "discovery", "providers", "lint", "report", "run")
#: modules that import a heavy library at their top (numpy), imported only where needed
HEAVY = frozenset({"pytest_toolselect.probe.bootstrap"})
_done = threading.Event()


def import_parts() -> None:
    """Import every module of PARTS (once a process; call it on the main thread)."""
    if _done.is_set():
        return
    import pytest_toolselect

    for part in PARTS:
        package = importlib.import_module(f"{pytest_toolselect.__name__}.{part}")
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if info.name not in HEAVY:
                importlib.import_module(info.name)
    _done.set()
