"""A model SDK's top package, with the optional clients its ``__init__`` imports loaded on first use.

``anthropic/__init__.py`` ends by importing its Vertex, Bedrock, Foundry, AWS and Google Cloud
clients, and through Foundry's subclass of the beta resource the whole beta API: half of
``import anthropic``'s time, for names a run on the Anthropic API never reads. Such a
statement is deferred: the rest of the file runs as written, and each name the statement
binds is imported when first read (PEP 562 ``__getattr__``) from the module it names, so it
is the SDK's own object.

Only what nothing can tell apart is deferred: a ``from .x import a, b`` (or ``from .x
import *`` of a package that is plain re-exports, ``sdk_source.reexports``) at the file's top
level, whose names occur nowhere else in the file, neither as a name nor as a word in a string
(so not in ``__all__``, not read by the file's own code), in a file that binds ``__all__`` once,
to a literal (so ``from sdk import *`` is unchanged). A name the module lacks otherwise loads
every deferred statement first, so the namespace is then the eager one; any other shape of
file runs as usual. Line numbers are kept (a deferred statement's lines are left blank).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import io
import re
import threading
import tokenize
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .sdk_source import (
    Reexports,
    Statement,
    all_literal,
    from_import,
    nfkc,
    public_names,
    reexports,
    statements,
)

#: the SDKs whose top package defers what its ``__init__`` imports for other platforms
INITS = ("anthropic",)

#: what may follow ``__all__`` where the file reads it without binding it anew
_REBINDS_AFTER = frozenset({"=", ":=", ".", "[", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=",
                            "&=", "|=", "^=", ">>=", "<<="})
_REBINDS_BEFORE = frozenset({"del", "global", "nonlocal", "as", "for", "import", ","})
_WORD = re.compile(r"\w+")

#: one deferred statement: the module it imports from, and its (name, as) pairs
Load = tuple[str, tuple[tuple[str, str], ...]]
#: the pairs of ``from x import *``
STAR = (("*", "*"),)
#: the hooks ``attach`` gave a module (a reload finds them in its namespace: they are not its own)
_HOOKS: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()


@dataclass(frozen=True)
class Deferral:
    """A top package's ``__init__`` with some imports left for later."""

    #: the file with the deferred statements' lines left blank
    source: str
    #: a name a deferred statement binds -> (the module it comes from, the attribute of it)
    names: dict[str, tuple[str, str]]
    #: the deferred statements in the file's order
    loads: tuple[Load, ...]
    #: the package's submodules they import (eagerly, each is an attribute of the package)
    submodules: frozenset[str]


def defer(source: str, package: str, read_package: Callable[[str], Reexports | None]) -> Deferral | None:
    """What of `package`'s ``__init__`` `source` can wait, or None when nothing can.

    `read_package` reads a subpackage (by its full name) a star import names, None when it is
    not plain re-exports.
    """
    read = statements(source)
    if read is None or not _all_is_bound_once(read):
        return None
    if any(t.type == tokenize.ERRORTOKEN for s in read for t in s.tokens):
        return None  # what tokenize cannot read as Python does, a name's occurrences can't be told
    holders: dict[str, set[int]] = {}  # a word -> the statements it occurs in
    for at, statement in enumerate(read):
        for token in statement.tokens:
            for word in _WORD.findall(token.string):
                holders.setdefault(nfkc(word), set()).add(at)
    deferred: list[tuple[Statement, Load, tuple[str, ...]]] = []
    # what the eager star imports above a statement bind: a deferred name must not be one, or
    # the eager value would stand where the file, run in order, gives the deferred one
    stars_before: set[str] = set()
    unknown_before = False  # an eager star import whose names can't be read
    for at, statement in enumerate(read):
        imported = from_import(statement) if statement.words[0] == "from" else None
        if imported is None:
            continue
        module, pairs = imported
        star = pairs == [("*", "*")]
        relative = module.startswith(".") and not module.startswith("..") and module != "."
        target = package + module
        bound: tuple[str, ...] | None = tuple(asname for _, asname in pairs)
        if star:
            plain = read_package(target) if relative else None
            bound = public_names(plain) if plain is not None else None
        if (relative and statement.depth == 0 and bound and not unknown_before
                and all(_WORD.fullmatch(name) for name in bound)  # else its occurrences can't be told
                and not any(holders.get(name, set()) - {at} for name in bound)
                and not stars_before & set(bound)):
            deferred.append((statement, (target, tuple(pairs)), bound))
        elif star:
            unknown_before = unknown_before or bound is None
            stars_before.update(bound or ())
    if not deferred:
        return None
    lines = io.StringIO(source).readlines()
    names: dict[str, tuple[str, str]] = {}
    for blank, (source_module, imported_pairs), binds in deferred:
        for row in range(blank.first, blank.last + 1):
            lines[row - 1] = "\n"
        if imported_pairs == STAR:
            names.update((name, (source_module, name)) for name in binds)
        else:
            names.update((asname, (source_module, name)) for name, asname in imported_pairs)
    loads = tuple(load for _, load, _ in deferred)
    return Deferral("".join(lines), names, loads,
                    frozenset(module[len(package) + 1:].split(".")[0] for module, _ in loads))


def _all_is_bound_once(read: list[Statement]) -> bool:
    """Whether the file binds ``__all__`` exactly once, at its top level, to a literal of names."""
    literals = [s for s in read if s.depth == 0 and s.words[0] == "__all__" and all_literal(s) is not None]
    if len(literals) != 1:
        return False
    for statement in read:
        if statement is literals[0]:
            continue
        words = statement.words
        for at, word in enumerate(words):
            if word != "__all__":
                continue
            after = words[at + 1] if at + 1 < len(words) else ""
            before = words[at - 1] if at else ""
            if at == 0 or after in _REBINDS_AFTER or before in _REBINDS_BEFORE:
                return False
    return True


def read_subpackage(root: Path, package: str, target: str) -> Reexports | None:
    """Subpackage `target` of `package` (found under `root`, the package's folder) as plain
    re-exports, or None when it is not a package with an ``__init__.py`` there that is only that."""
    init = root.joinpath(*target[len(package) + 1:].split("."), "__init__.py")
    try:
        return reexports(importlib.util.decode_source(init.read_bytes()))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None


def resolve(module: str, attr: str) -> Any:
    """``from module import attr``: the attribute, else the submodule of that name."""
    loaded = importlib.import_module(module)
    try:
        return getattr(loaded, attr)
    except AttributeError:
        return importlib.import_module(f"{module}.{attr}")


def attach(module: types.ModuleType, deferral: Deferral) -> None:
    """Give `module` (its ``__init__`` run without the deferred statements) their names on first read."""
    namespace = module.__dict__
    # the file's own hooks, if it defines any (not those a reload finds left from before)
    own_getattr, own_dir = (hook if hook not in _HOOKS else None
                            for hook in (namespace.get("__getattr__"), namespace.get("__dir__")))
    lock = threading.RLock()
    pending = [True]

    def load_all() -> None:
        with lock:
            if not pending[0]:
                return
            for target, pairs in deferral.loads:
                if pairs == STAR:
                    loaded = importlib.import_module(target)
                    exported = getattr(loaded, "__all__", None)
                    star = exported if exported is not None else [n for n in vars(loaded)
                                                                  if not n.startswith("_")]
                    for name in star:
                        value = getattr(loaded, name)
                        if name in deferral.names:
                            namespace[name] = value
                        else:
                            namespace.setdefault(name, value)
                else:
                    for name, asname in pairs:
                        namespace[asname] = resolve(target, name)
            pending[0] = False

    def __getattr__(name: str) -> Any:
        where = deferral.names.get(name)
        if where is not None:
            value = resolve(*where)
            namespace[name] = value
            return value
        if pending[0] and not (name.startswith("__") and name.endswith("__")):
            load_all()
            if name in namespace:
                return namespace[name]
        if callable(own_getattr):
            return own_getattr(name)
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        shown = own_dir() if callable(own_dir) else namespace
        return sorted({*shown, *deferral.names, *deferral.submodules})

    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
    _HOOKS.update((__getattr__, __dir__))


class WrappedLoader(importlib.abc.Loader):
    """A loader in front of a package's own: what it does not do itself, the real one does."""

    def __init__(self, real: importlib.machinery.SourceFileLoader) -> None:
        self.real = real

    def __getattr__(self, name: str) -> Any:  # the real loader's resource reader and the like
        return getattr(self.real, name)


class InitLoader(WrappedLoader):
    """Runs a top package's ``__init__`` with its deferrable imports left for first use."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__
        try:
            source = self.real.get_source(name)
            filename = self.real.get_filename(name)
        except (ImportError, OSError):
            source = filename = None
        deferral = None
        if source is not None and filename is not None:
            root = Path(filename).parent
            deferral = defer(source, name, lambda target: read_subpackage(root, name, target))
        if deferral is None or filename is None:
            self.real.exec_module(module)  # nothing to defer: the usual way
            return
        exec(compile(deferral.source, filename, "exec", dont_inherit=True), module.__dict__)
        attach(module, deferral)

