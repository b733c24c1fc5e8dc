"""A model SDK's type packages, loaded name by name instead of whole.

``import anthropic`` runs ``anthropic/types/__init__.py``, which imports every one of the
API's ~3,000 type modules (beta, batches, files, skills...), and ``import openai`` its ~470:
about half of each SDK's import time, for a run that reads one reply shape. Those
``__init__`` files (generated, in both SDKs) hold nothing but re-exports of the form
``from .message import Message as Message`` and ``from . import beta``. A package whose
``__init__`` is only that is loaded here as a module that knows, for each name, which
submodule defines it, and imports that submodule when the name is first read (PEP 562
``__getattr__``): the classes are the SDK's own, from its own modules, just fewer of them.

Robust by construction: an ``__init__`` with any other statement (or one that fails to read)
is executed as usual; a name the table does not hold, ``__all__`` included, runs the real
``__init__`` in the module first (so ``import *``, ``dir()`` and anything unforeseen see the
whole package); and ``preload.import_sdk`` imports the SDK plainly when the lazy import
fails. The source is read with ``tokenize``, not ``ast``: the import may run on a background
thread, and building AST objects off the main thread is what CPython 3.11 cannot do beside
pytest's assertion rewriting (run/imports.py).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import io
import sys
import threading
import tokenize
import types
from collections.abc import Sequence
from typing import Any

#: the packages whose type trees load lazily (a package and every package below it)
PACKAGES = ("anthropic.types", "openai.types")

#: name -> (submodule relative to the package, attribute of it or None for the submodule)
Table = dict[str, tuple[str, "str | None"]]

_SKIP = frozenset({tokenize.NL, tokenize.COMMENT, tokenize.ENCODING, tokenize.ENDMARKER})


def reexports(source: str) -> Table | None:
    """The names an ``__init__`` re-exports and where from, or None when it does anything else.

    Accepted, one statement a line: a leading docstring, ``from __future__ import ...``,
    ``from .mod import a as b, c`` (parenthesised or not) and ``from . import mod``.
    """
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                  if t.type not in _SKIP]
    except (tokenize.TokenError, SyntaxError):
        return None
    lines: list[list[tokenize.TokenInfo]] = [[]]
    for token in tokens:
        if token.type == tokenize.NEWLINE:
            lines.append([])
        else:
            lines[-1].append(token)
    lines = [line for line in lines if line]
    if lines and len(lines[0]) == 1 and lines[0][0].type == tokenize.STRING:
        lines = lines[1:]  # the docstring
    table: Table = {}
    for line in lines:
        statement = _from_import(line)
        if statement is None:
            return None
        module, pairs = statement
        if module == "__future__":
            continue
        if not module.startswith(".") or module.startswith(".."):
            return None  # an absolute import or one from a parent: not a plain re-export
        sub = module[1:]
        for name, asname in pairs:
            table[asname] = (sub, name) if sub else (name, None)
    return table


def _from_import(line: list[tokenize.TokenInfo]) -> tuple[str, list[tuple[str, str]]] | None:
    """``from <module> import <names>`` as (module with its leading dots, [(name, as)]), else None."""
    words = [t.string for t in line]
    kinds = [t.type for t in line]
    if len(words) < 4 or words[0] != "from" or "import" not in words:
        return None
    at = words.index("import")
    module = "".join(words[1:at])
    if not module or not all(k in (tokenize.NAME, tokenize.OP) for k in kinds[1:at]):
        return None
    if module.strip(".") and not all(part.isidentifier() for part in module.strip(".").split(".")):
        return None
    rest, kinds_rest = words[at + 1:], kinds[at + 1:]
    if rest and rest[0] == "(":
        if rest[-1] != ")":
            return None
        rest, kinds_rest = rest[1:-1], kinds_rest[1:-1]
        if rest and rest[-1] == ",":
            rest, kinds_rest = rest[:-1], kinds_rest[:-1]
    pairs: list[tuple[str, str]] = []
    i = 0
    while i < len(rest):
        if kinds_rest[i] != tokenize.NAME:
            return None
        name = asname = rest[i]
        i += 1
        if i < len(rest) and rest[i] == "as":
            if i + 1 >= len(rest) or kinds_rest[i + 1] != tokenize.NAME:
                return None
            asname = rest[i + 1]
            i += 2
        pairs.append((name, asname))
        if i < len(rest):
            if rest[i] != "," or i + 1 == len(rest):
                return None
            i += 1
    return (module, pairs) if pairs else None


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
        module = importlib.import_module(f"{self.__name__}.{sub}")
        value = module if attr is None else getattr(module, attr)
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


class _Loader(importlib.abc.Loader):
    def __init__(self, real: importlib.machinery.SourceFileLoader) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _LazyPackage(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        try:
            source = self.real.get_source(module.__name__)
        except (ImportError, OSError):
            source = None
        table = reexports(source) if source is not None else None
        if table is None:
            self.real.exec_module(module)  # anything but plain re-exports: the usual way
            return
        module.__dict__["_toolselect_table"] = table
        module.__dict__["_toolselect_real"] = self.real


#: the SDKs whose lazy import failed in this process: imported plainly from then on
_disabled: set[str] = set()


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not any(fullname == p or fullname.startswith(p + ".") for p in PACKAGES):
            return None
        if fullname.split(".", 1)[0] in _disabled:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if (spec is None or spec.submodule_search_locations is None
                or not isinstance(spec.loader, importlib.machinery.SourceFileLoader)):
            return spec
        spec.loader = _Loader(spec.loader)
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
