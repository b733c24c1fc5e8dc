"""A model SDK's type and resource packages, loaded name by name instead of whole.

``import anthropic`` runs ``anthropic/types/__init__.py``, which imports every one of the
API's ~3,000 type modules (beta, batches, files, skills...), and ``import openai`` its ~470:
about half of each SDK's import time, for a run that reads one reply shape; its platform
clients import ``anthropic.resources.beta``, whose ``__init__`` imports every beta resource.
Those ``__init__`` files (generated) hold nothing but re-exports of the form
``from .message import Message as Message`` and ``from . import beta``, and perhaps an
``__all__`` list. A package whose ``__init__`` is only that (``sdk_source.reexports``) is
loaded here as a module that knows, for each name, which submodule defines it, and imports
that submodule when the name is first read (PEP 562 ``__getattr__``): the classes are the
SDK's own, from its own modules, just fewer of them. The SDK's top package is
``lazy_init``'s; the finder here serves both.

Robust by construction: an ``__init__`` with any other statement (or one that fails to read)
is executed as usual; a name the table does not hold runs the real ``__init__`` in the module
first (so ``dir()`` and anything unforeseen see the whole package; ``import *`` reads the
``__all__`` the file spells out, or runs it whole when it spells none); and
``preload.import_sdk`` imports the SDK plainly when the lazy import fails.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
import types
from collections.abc import Sequence
from typing import Any

from .lazy_init import INITS, InitLoader, WrappedLoader, resolve
from .sdk_source import Table, reexports

#: the packages whose type trees load lazily (a package and every package below it)
PACKAGES = ("anthropic.types", "anthropic.resources", "openai.types")


class _LazyPackage(types.ModuleType):
    """A type package whose names are imported from their submodules on first read."""

    _toolselect_table: Table
    _toolselect_real: Any  # the real loader, to run the whole __init__ when asked for more

    def __getattr__(self, name: str) -> Any:
        table = self.__dict__.get("_toolselect_table")
        if table is None or (name.startswith("__") and name != "__all__"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        where = table.get(name)
        if where is None:
            return self._whole(name)
        sub, attr = where
        module = f"{self.__name__}.{sub}"
        value = importlib.import_module(module) if attr is None else resolve(module, attr)
        setattr(self, name, value)
        return value

    def __dir__(self) -> list[str]:
        return sorted({*self.__dict__, *self.__dict__.get("_toolselect_table", {})})

    def _whole(self, name: str) -> Any:
        """Run the package's real ``__init__`` in this module, then read `name` plainly."""
        real = self.__dict__.pop("_toolselect_real", None)
        self.__dict__.pop("_toolselect_table", None)
        if real is not None:
            real.exec_module(self)
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None


class _Loader(WrappedLoader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _LazyPackage(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        try:
            source = self.real.get_source(module.__name__)
        except (ImportError, OSError):
            source = None
        read = reexports(source) if source is not None else None
        if read is None:
            self.real.exec_module(module)  # anything but plain re-exports: the usual way
            return
        module.__dict__["_toolselect_table"] = read.table
        module.__dict__["_toolselect_real"] = self.real
        if read.all is not None:
            module.__dict__["__all__"] = list(read.all)


#: the SDKs whose lazy import failed in this process: imported plainly from then on
_disabled: set[str] = set()


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        top = fullname in INITS
        if not top and not any(fullname == p or fullname.startswith(p + ".") for p in PACKAGES):
            return None
        if fullname.split(".", 1)[0] in _disabled:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if (spec is None or spec.submodule_search_locations is None
                or not isinstance(spec.loader, importlib.machinery.SourceFileLoader)):
            return spec
        spec.loader = InitLoader(spec.loader) if top else _Loader(spec.loader)
        return spec


_FINDER = _Finder()
_lock = threading.Lock()


def install() -> None:
    """Load the SDKs' type packages lazily from now on in this process (idempotent)."""
    with _lock:
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)


def disable(sdk: str) -> None:
    """Import `sdk` (a top-level package) plainly from now on in this process."""
    _disabled.add(sdk)


def uninstall() -> None:
    with _lock:
        if _FINDER in sys.meta_path:
            sys.meta_path.remove(_FINDER)


def forget(package: str) -> None:
    """Drop `package` and its submodules from ``sys.modules`` (before importing it again plainly)."""
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]
