"""A model SDK's import, begun on a background thread as soon as a run knows it will call one.

A plain ``import anthropic`` costs about 1 s of CPU here (its ``__init__`` loads every API
type and its Vertex, Bedrock and cloud clients), ``import openai`` about 0.5 s; the first
call used to pay it after collection. Begun at configure time, it runs while the main thread
collects and waits for MCP servers to start (a handshake is I/O, so the import gets the
CPU), and the first call's own ``import`` waits for it to finish. The garbage collector
is paused meanwhile: the import makes tens of thousands of long-lived objects, and the
collections they trigger walk the whole heap for nothing (about 15% of the import's
time); the heap is then frozen (``shutdown.freeze_imports``). The SDK's type and resource
packages load name by name (``lazy_types``) and its top package leaves its platform clients
for first use (``lazy_init``): the client path reads about a third of the SDK's modules.

Two threads importing the two ends of one import cycle deadlock (Python's module locks
raise ``_DeadlockError``: two threads importing the mcp SDK's stdio and HTTP clients at
once do). So everything the SDK shares with the mcp SDK and with collection (the HTTP client,
anyio, pydantic and the standard library modules they pull in) is imported on the main
thread first, before the thread starts: the thread then imports only the SDK's own
modules and those no other thread needs. A failed or unfinished background import
costs nothing but the time: the first call imports the SDK itself, and says what failed.
"""

from __future__ import annotations

import gc
import importlib
import sys
import threading

# imported with this module, on the main thread: the background import must find it loaded
from . import lazy_types

#: imported on the main thread before the background import starts: the modules the
#: model SDKs share with the mcp SDK and with collection (modules a version lacks are
#: passed over)
SHARED = (
    "asyncio", "concurrent.futures", "contextvars", "dataclasses", "datetime", "decimal",
    "email.message", "email.parser", "email.utils", "fractions", "hashlib", "hmac",
    "http.client", "inspect", "json", "logging", "mimetypes", "platform", "random", "secrets",
    "shlex", "socket", "ssl", "subprocess", "tempfile", "textwrap", "tokenize", "traceback",
    "typing", "urllib.parse", "urllib.request", "uuid", "zipfile", "zoneinfo",
    "typing_extensions", "sniffio", "idna", "anyio", "httpx", "httpx2", "annotated_types",
    "typing_inspection", "pydantic_core", "pydantic", "pydantic.main", "pydantic.fields",
    "pydantic.type_adapter", "pydantic.functional_validators", "attr",
)
#: what one SDK alone shares with the mcp SDK (imported only for that SDK: the others never need it)
SHARED_BY = {"anthropic": ("opentelemetry",)}

_lock = threading.Lock()
_threads: dict[str, threading.Thread] = {}


def import_sdk(module: str) -> None:
    """Import `module` with the garbage collector paused, then freeze the heap it made.

    Its packages load name by name (``lazy_types``, ``lazy_init``); should that import fail,
    the SDK is imported again the plain way, whose error (if any) is the SDK's own.
    """
    from .shutdown import freeze_imports

    paused = gc.isenabled()
    gc.disable()
    try:
        lazy_types.install()
        try:
            importlib.import_module(module)
        except Exception:
            lazy_types.disable(module)
            lazy_types.forget(module)
            importlib.import_module(module)
    finally:
        if paused:
            gc.enable()
    freeze_imports()


def begin(module: str) -> bool:
    """Start importing `module` on a daemon thread, once per process; False when it was
    imported already or is being imported."""
    with _lock:
        if module in sys.modules or module in _threads:
            return False
        for name in (*SHARED, *SHARED_BY.get(module, ())):
            try:
                importlib.import_module(name)
            except ImportError:
                continue
        thread = threading.Thread(target=_quietly, args=(module,), daemon=True,
                                  name=f"toolselect-import-{module}")
        _threads[module] = thread
        thread.start()
        return True


def preload(model: str) -> bool:
    """Begin importing the SDK of the route `model` takes (its row's ``sdk``), if it has one."""
    from .routes import route_of

    module = route_of(model).sdk
    return module is not None and begin(module)


def _quietly(module: str) -> None:
    try:
        import_sdk(module)
    except BaseException:  # the first call imports it again and says what failed
        return
