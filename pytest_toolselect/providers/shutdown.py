"""A quick exit: the full garbage collections after the run skip the SDK's heap.

A model SDK brings thousands of long-lived objects (pydantic classes, type
tables). pytest runs a full ``gc.collect()`` twice when a run ends (its
unraisable-exception check) and Python collects again as it exits: with the
openai or anthropic SDK loaded that took 0.5-1.2 s on a 2-core machine, after the
summary was printed. Freezing the heap once the SDK is imported (``gc.freeze``:
the objects alive then are passed over by every later collection) makes those
collections walk only what the run itself made, so an unraisable exception from
the run's own garbage is still found. The heap is frozen at interpreter exit
too, where no collection can find anything worth the time.
"""

from __future__ import annotations

import atexit
import gc

_frozen = False
_registered = False


def freeze_imports() -> None:
    """Freeze what is alive now (call right after a model SDK's import); once per process."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.freeze()


def exit_quickly() -> None:
    """Freeze the heap at interpreter exit (registered once per process)."""
    global _registered
    if not _registered:
        _registered = True
        atexit.register(gc.freeze)
