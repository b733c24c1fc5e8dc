"""A model SDK's package ``__init__`` read as statements: what it re-exports and from where.

The lazy loaders (``lazy_types`` for the SDKs' type and resource packages, ``lazy_init`` for
the top package) decide from this reading alone whether a file can load name by name; any
shape not read here exactly leaves the file to run as usual. The source is read with
``tokenize``, not ``ast``: the import may run on a background thread, and building AST
objects off the main thread is what CPython 3.11 cannot do beside pytest's assertion
rewriting (run/imports.py).
"""

from __future__ import annotations

import io
import tokenize
import unicodedata
from dataclasses import dataclass
from typing import NamedTuple

#: name -> (submodule relative to the package, attribute of it or None for the submodule)
Table = dict[str, tuple[str, "str | None"]]

_SKIP = frozenset({tokenize.NL, tokenize.COMMENT, tokenize.ENCODING, tokenize.ENDMARKER,
                   tokenize.INDENT, tokenize.DEDENT})


@dataclass(frozen=True)
class Statement:
    """One logical line of a file: its tokens (no comments or indentation), how deeply it is
    nested, and the rows it spans (1-based, inclusive)."""

    tokens: tuple[tokenize.TokenInfo, ...]
    depth: int
    first: int
    last: int

    @property
    def words(self) -> list[str]:
        return [t.string for t in self.tokens]


def statements(source: str) -> list[Statement] | None:
    """The file's logical lines in order, or None when it does not tokenize."""
    found: list[Statement] = []
    current: list[tokenize.TokenInfo] = []
    depth = start_depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.INDENT:
                depth += 1
            elif token.type == tokenize.DEDENT:
                depth -= 1
            if token.type in _SKIP:
                continue
            if token.type == tokenize.NEWLINE:
                if current:
                    found.append(Statement(tuple(current), start_depth, current[0].start[0],
                                           token.start[0]))
                current = []
                continue
            if not current:
                start_depth = depth
            current.append(token)
    except (tokenize.TokenError, SyntaxError):
        return None
    if current:
        found.append(Statement(tuple(current), start_depth, current[0].start[0], current[-1].end[0]))
    return found


class Reexports(NamedTuple):
    """What a plain re-exporting ``__init__`` holds: where each name comes from, and its
    ``__all__`` when it spells one out as a list of names."""

    table: Table
    all: tuple[str, ...] | None = None


def reexports(source: str) -> Reexports | None:
    """The names an ``__init__`` re-exports and where from, or None when it does anything else.

    Accepted, one statement a line: a leading docstring, ``from __future__ import ...``,
    ``from .mod import a as b, c`` (parenthesised or not), ``from . import mod`` and one
    ``__all__ = [...]`` of quoted names, each of them a name the file imports.
    """
    read = statements(source)
    if read is None:
        return None
    if read and len(read[0].tokens) == 1 and read[0].tokens[0].type == tokenize.STRING:
        read = read[1:]  # the docstring
    table: Table = {}
    all_names: tuple[str, ...] | None = None
    for statement in read:
        if statement.depth:
            return None
        if statement.tokens[0].string == "__all__":
            if all_names is not None:
                return None
            all_names = all_literal(statement)
            if all_names is None:
                return None
            continue
        imported = from_import(statement)
        if imported is None:
            return None
        module, pairs = imported
        if module == "__future__":
            continue
        if not module.startswith(".") or module.startswith("..") or pairs == [("*", "*")]:
            return None  # an absolute import, one from a parent, or a star: not a plain re-export
        sub = module[1:]
        for name, asname in pairs:
            table[asname] = (sub, name) if sub else (name, None)
    if all_names is not None and not set(all_names) <= set(table):
        return None  # an __all__ naming what the file does not import: let it run, and fail its way
    return Reexports(table, all_names)


def public_names(read: Reexports) -> tuple[str, ...]:
    """The names ``from package import *`` binds, for a package that is plain re-exports: its
    ``__all__``, else its public names, the submodules its imports bind on it among them."""
    if read.all is not None:
        return read.all
    submodules = [sub.split(".")[0] for sub, attr in read.table.values() if attr is not None]
    return tuple(dict.fromkeys(n for n in (*read.table, *submodules) if not n.startswith("_")))


def nfkc(name: str) -> str:
    """The name Python binds for identifier `name`."""
    return unicodedata.normalize("NFKC", name)


def from_import(statement: Statement) -> tuple[str, list[tuple[str, str]]] | None:
    """``from <module> import <names>`` as (module with its leading dots, [(name, as)]), else
    None; ``import *`` reads as the one pair ``("*", "*")``."""
    # Python binds a name as its NFKC form (PEP 3131): so does the table
    words = [nfkc(t.string) if t.type == tokenize.NAME else t.string for t in statement.tokens]
    kinds = [t.type for t in statement.tokens]
    if len(words) < 4 or words[0] != "from" or "import" not in words:
        return None
    at = words.index("import")
    module = "".join(words[1:at])
    if not module or not all(k in (tokenize.NAME, tokenize.OP) for k in kinds[1:at]):
        return None
    if module.strip(".") and not all(part.isidentifier() for part in module.strip(".").split(".")):
        return None
    rest, kinds_rest = words[at + 1:], kinds[at + 1:]
    if rest == ["*"]:
        return module, [("*", "*")]
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


def all_literal(statement: Statement) -> tuple[str, ...] | None:
    """``__all__ = ["a", 'b']`` (a list or a tuple of plain quoted names) as its names, else None."""
    words = statement.words
    brackets = (words[2], words[-1]) if len(words) >= 4 else ("", "")
    if words[:2] != ["__all__", "="] or brackets not in (("[", "]"), ("(", ")")):
        return None
    items = words[3:-1]
    if items and items[-1] == ",":
        items = items[:-1]
    if any(comma != "," for comma in items[1::2]):
        return None
    found: list[str] = []
    for literal in items[0::2]:
        quote = literal[:1]
        if quote not in ("'", '"') or len(literal) < 3 or literal[-1] != quote or literal[1] == quote:
            return None
        name = literal[1:-1]
        if not name.isidentifier():
            return None
        found.append(name)
    return tuple(found)
