"""``${NAME}`` in a server's ``env:``, ``headers:``, ``args:``, ``url:`` and ``tools_file:``:
read from the environment.

A token for a server behind auth belongs in CI's secrets, not in a committed config
file. A reference is resolved only when the server is started, so the config, the
baseline and every report keep ``${NAME}``; the value itself is masked in the server's
messages. ``$${NAME}`` is the literal text ``${NAME}``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping

from pytest_toolselect.messages.errors import ServerError

_REF = re.compile(r"\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _substitute(value: str, lookup: Callable[[str], str]) -> str:
    return _REF.sub(lambda m: m.group()[1:] if m.group(1) else lookup(m.group(2)), value)


def resolve_value(value: str, what: str, place: str,
                  environ: Mapping[str, str] | None = None) -> str:
    """One value with its references replaced; a ServerError names an unset one (``what`` is
    the server as messages name it, ``place`` where the value is, e.g. servers.x.url)."""
    env = os.environ if environ is None else environ

    def lookup(name: str) -> str:
        if name not in env:
            raise ServerError(
                f"{what}: {place} reads ${{{name}}}, which is not set in the environment",
                fix=f"set {name} (in CI, from a secret), or write the value itself",
            )
        return env[name]

    return _substitute(str(value), lookup)


def resolve(pairs: Iterable[tuple[str, str]], what: str, place: str,
            environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The (name, value) pairs with their references replaced (``place`` the key's parent,
    e.g. servers.x.env)."""
    return {key: resolve_value(value, what, f"{place}.{key}", environ) for key, value in pairs}


def read_variables(values: Iterable[str],
                   environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(name, value) of each set variable the values read as ``${NAME}``, for masking."""
    env = os.environ if environ is None else environ
    return [(m.group(2), env[m.group(2)]) for value in values for m in _REF.finditer(value)
            if not m.group(1) and m.group(2) in env]


def resolved_values(pairs: Iterable[tuple[str, str]],
                    environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The pairs as written plus, for masking, each set variable they read (under its own
    name) and each value as resolved."""
    env = os.environ if environ is None else environ
    out = []
    for key, value in pairs:
        out.append((key, value))
        read = read_variables([value], env)
        if read:
            out.extend(read)
            out.append((key, _substitute(value, lambda name: env.get(name, ""))))
    return out
