"""Which toolselect config governs a case file: found as pytest and ruff find theirs.

The explicit option first, then the rootdir, then the nearest ``toolselect.yaml`` (or
``.yml``, or ``[tool.toolselect]`` in a ``pyproject.toml``) in the file's folder or its
parents. Every file looked at is kept, so an unknown server can say where it looked.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_toolselect.messages.errors import ToolselectError

# config, cases and the YAML reader are imported where used: this module is on the light
# entry path every pytest run loads (tests/test_import_cost.py)
if TYPE_CHECKING:
    from .cases import Case, CaseFile
    from .config import Config

YAML_NAMES = ("toolselect.yaml", "toolselect.yml")
TABLE = "[tool.toolselect]"


@dataclass(frozen=True)
class Found:
    #: the config file that governs (None: none found)
    path: Path | None
    #: every file looked for, in order (existing or not)
    looked: tuple[Path, ...]
    #: a [tool.toolselect] table passed over for a toolselect.yaml in the same folder
    shadowed: Path | None = None


def has_table(pyproject: Path) -> bool:
    from pytest_toolselect.positions.bounded import read_bounded
    from pytest_toolselect.positions.sourced import MAX_BYTES

    try:
        return TABLE in read_bounded(pyproject, MAX_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError):  # a FIFO, a device or a huge file: not a config
        return False


def in_folder(folder: Path) -> Found:
    """The config in one folder: a toolselect.yaml wins over a [tool.toolselect] table."""
    looked = [folder / n for n in YAML_NAMES] + [folder / "pyproject.toml"]
    yaml = next((p for p in looked[:2] if p.is_file()), None)
    pyproject = looked[2]
    table = pyproject if pyproject.is_file() and has_table(pyproject) else None
    if yaml is not None:
        return Found(yaml, tuple(looked), shadowed=table)
    return Found(table, tuple(looked))


def nearest(start: Path) -> Found:
    """The config in ``start`` (a folder) or the nearest of its parents."""
    looked: list[Path] = []
    folder = start.absolute()
    for candidate in (folder, *folder.parents):
        found = in_folder(candidate)
        looked.extend(found.looked)
        if found.path is not None:
            return Found(found.path, tuple(looked), found.shadowed)
    return Found(None, tuple(looked))


class Configs:
    """The configs of one run: the run's own, and the one that governs each case file
    (cached per folder: looking costs a few stats, once per folder, not per case)."""

    def __init__(self, rootdir: Path, explicit: Path | None, invoked: Path,
                 args: list[str]) -> None:
        self.rootdir = rootdir
        self.explicit = explicit
        self.invoked = invoked
        self.args = args
        self._found: dict[Path, Found] = {}
        self._loaded: dict[Path, Config] = {}

    @cached_property
    def at_rootdir(self) -> bool:
        return in_folder(self.rootdir).path is not None

    @property
    def governs_all(self) -> bool:
        """An explicit config or one at the rootdir governs every case file."""
        return self.explicit is not None or self.at_rootdir

    @cached_property
    def main(self) -> Config:
        """The run's config; with no config file, the MCP client files at the rootdir."""
        from .config import client_only

        return self.from_file or client_only(self.rootdir)

    @cached_property
    def options_source(self) -> Config:
        """Where option values are read: the config file, or none. A run without a config
        file reads no MCP client file for its options, so a project that has a .mcp.json
        and no toolselect items never reads it."""
        from .config import Config

        return self.from_file or Config(path=None, root=self.rootdir)

    @cached_property
    def from_file(self) -> Config | None:
        """The config file that governs the run, loaded (None: there is none)."""
        if self.governs_all:
            from .config import load_config

            return load_config(self.rootdir, self.explicit)
        # none at the rootdir: the nearest one to the paths named on the command line
        for arg in self.args:
            path = self.invoked / arg.split("::", 1)[0]
            if path.exists():
                found = self.nearest(path if path.is_dir() else path.parent)
                if found.path is not None:
                    return self.load(found.path)
        return None

    def nearest(self, folder: Path) -> Found:
        found = self._found.get(folder)
        if found is None:
            found = self._found[folder] = nearest(folder)
        return found

    def load(self, path: Path) -> Config:
        config = self._loaded.get(path.parent)
        if config is None:
            from .config import load_config

            config = self._loaded[path.parent] = load_config(path.parent)
        return config

    def for_file(self, path: Path | None) -> Config:
        if path is None or self.governs_all:
            return self.main
        found = self.nearest(Path(path).absolute().parent)
        if found.path is None or found.path == self.main.path:
            return self.main
        return self.load(found.path)

    def roots(self) -> list[Path]:
        """The folders keys are relative to in this run."""
        return list(dict.fromkeys([self.rootdir, self.main.root,
                                   *(c.root for c in self._loaded.values())]))

    def looked_for(self, path: Path | None) -> list[Path]:
        """The config files looked for to govern path (for an error that names them)."""
        if self.explicit is not None:
            return [self.explicit]
        looked = list(in_folder(self.rootdir).looked)
        if path is not None and not self.at_rootdir:
            looked += [p for p in self.nearest(Path(path).absolute().parent).looked
                       if p not in looked]
        return looked

    def note(self) -> str | None:
        """Which file is used when a folder holds both toolselect.yaml and [tool.toolselect]."""
        path = self.main.path
        if path is None or path.name == "pyproject.toml":
            return None
        shadowed = in_folder(path.parent).shadowed
        if shadowed is None:
            return None
        return (f"toolselect: config {path} is used; the [tool.toolselect] table in "
                f"{shadowed} is not read")


def unknown_server(configs: Configs, config: Config, name: str, case: Case) -> ToolselectError:
    """A case names a server its config does not define: say which config was read and
    every file looked for (a config that was not found is the usual cause)."""
    source = Path(case.source) if case.source and Path(case.source).is_file() else None
    return ToolselectError(f"unknown server {name!r}", file=case.source or None,
                           place=f"case {case.id}", fix=_defined(configs, config, name, source))


def server_refusals(configs: Configs, config: Config, case_file: CaseFile) -> list[ToolselectError]:
    """The servers a case file names that its config does not define, and a file with no
    servers to take tools from: each said once, where it is written (the file's `servers:`
    line, or the case's), with the nearest defined name, before any case runs."""
    source = Path(case_file.path) if Path(case_file.path).is_file() else None
    out: list[ToolselectError] = []
    if not config.servers and any(case.servers is None for case in case_file.cases):
        out.append(ToolselectError(
            "no servers to take tools from", file=case_file.path,
            fix="define the servers in a toolselect.yaml or an MCP client's .mcp.json and name "
                "them in `servers:` of the file or the case; "
                + _defined(configs, config, None, source)))
    said: set[tuple[int | None, str]] = set()
    for case in case_file.cases:
        from_file = case.servers is not None and case.servers == case_file.servers
        line = case_file.servers_line if from_file else case.line
        place = None if from_file else f"case {case.id}"
        for name in case.servers or ():
            if name not in config.servers and (line, name) not in said:
                said.add((line, name))
                out.append(ToolselectError(f"unknown server {name!r}", file=case_file.path,
                                           line=line, place=place,
                                           fix=_defined(configs, config, name, source)))
    return out


def _defined(configs: Configs, config: Config, name: str | None, source: Path | None) -> str:
    """Where servers are read from, the ones defined, the nearest to ``name``, the files
    looked for."""
    from pytest_toolselect.messages.errors import nearest

    from .client_servers import FOUND_WITHOUT_NAMING

    near = nearest(name, config.servers) if name else None
    known = ", ".join(config.servers) or "none defined"
    clients = sorted({s.source.rsplit(":", 1)[0] for s in config.servers.values() if s.source})
    where = " and ".join([*([str(config.path)] if config.path is not None else []), *clients])
    where = f"in {where}" if where else "(no config file found)"
    looked = [str(p) for p in configs.looked_for(source)]
    if config.path is None or not config.servers:
        # servers are also read from an MCP client's files beside the config
        looked += [str(config.root / f) for f in FOUND_WITHOUT_NAMING]
    said = f"did you mean {near!r}? " if near else ""
    return (f"{said}servers defined {where}: {known}; "
            f"files looked for: {', '.join(looked) or 'none'}")
