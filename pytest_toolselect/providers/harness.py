"""What the harness routes share (``claude-code/…``, ``openai-agents/…``): a harness is an
agent program, not a bare model call, that starts the case's MCP servers itself.

Here: whether its optional extra is installed (asked without importing it), its version for
the subject, the case's servers as an MCP client config, the tool-name map back to the case's
tools, and a bound on how many harness processes run at once. Nothing here imports an SDK.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import json
import re
import sys
import weakref
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_toolselect.exchange.replies import read_faults
from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.inputs.config import ServerSpec
from pytest_toolselect.inputs.envrefs import resolve, resolve_value
from pytest_toolselect.messages.errors import ToolselectError

from .api_keys import redact

if TYPE_CHECKING:
    from .routes import Route

#: a stdio server's working folder, set before its command runs (an MCP client config has
#: no cwd key): python -c CHDIR <cwd> <command> <args...>
_CHDIR = "import os, sys; os.chdir(sys.argv[1]); os.execvp(sys.argv[2], sys.argv[2:])"
#: the same, with the server's stderr kept in a file (a harness shows it nowhere):
#: python -c CHDIR_LOGGED <stderr file> <cwd> <command> <args...>
_CHDIR_LOGGED = ("import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, "
                 "0o600); os.dup2(fd, 2); os.chdir(sys.argv[2]); os.execvp(sys.argv[3], sys.argv[3:])")


def check_installed(route: Route, model: str) -> None:
    """Raise ToolselectError (a usage error at the start) when the route's extra is missing
    (its row's ``harness``: the module and the extra)."""
    if route.harness is None:
        return
    module, extra = route.harness.module, route.harness.extra
    if importlib.util.find_spec(module) is None:
        raise ToolselectError(
            f"{model}: the {route.name} harness is not installed (no module {module!r})",
            fix=f"pip install 'pytest-toolselect[{extra}]'",
        )


def version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def normalized(name: str) -> str:
    """A server or tool name as an MCP client puts it into ``mcp__server__tool``."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)


def wire_name_map(tools: Iterable[Tool], prefix: str = "mcp__{server}__{tool}") -> dict[str, str]:
    """The names the harness gives the case's MCP tools -> the tools' names in the case."""
    names: dict[str, str] = {}
    for tool in tools:
        if tool.server:
            wire = prefix.format(server=normalized(tool.server),
                                 tool=normalized(tool.original_name or tool.name))
            names[wire] = tool.name
    return names


def builtin_tools(names: Iterable[str], harness: str, taken: Iterable[Tool]) -> tuple[Tool, ...]:
    """The harness's own tools as offered tools (so a case may expect or forbid them); a
    server's tool of the same name keeps its name."""
    have = {t.name for t in taken}
    return tuple(Tool(name=n, description=f"{harness} built-in tool", server="")
                 for n in names if n not in have)


def stderr_file(folder: Path, server: str) -> Path:
    """Where a stdio server's stderr is kept under `mcp_config(..., stderr_to=folder)`."""
    return folder / f"{normalized(server)}.stderr"


def mcp_config(servers: Iterable[Any], root: str | None,
               stderr_to: Path | None = None) -> dict[str, dict[str, Any]]:
    """The case's servers (inputs.config.ServerSpec) as an MCP client config: stdio servers
    started as discovery starts them (command, args, declared env, cwd), HTTP servers with
    their headers. ToolselectError for a server a harness cannot start (a tools file).
    With `stderr_to`, each stdio server's stderr goes to its `stderr_file` there."""
    base = Path(root or ".").resolve()
    config: dict[str, dict[str, Any]] = {}
    for spec in servers:
        what = f"server {spec.name!r}"
        if spec.kind == "stdio":
            # as discovery starts it: relative to the rootdir, "python" is this interpreter
            cwd = base / spec.cwd if spec.cwd else base
            command = spec.command
            if command in ("python", "python3"):
                command = sys.executable
            elif "/" in command or "\\" in command:
                command = str(base / command)
            args = [resolve_value(a, what, f"servers.{spec.name}.args[{i}]")
                    for i, a in enumerate(spec.args)]
            launch = (["-c", _CHDIR] if stderr_to is None else
                      ["-c", _CHDIR_LOGGED, str(stderr_file(stderr_to, spec.name))])
            config[spec.name] = {
                "type": "stdio", "command": sys.executable,
                "args": [*launch, str(cwd), command, *args],
                "env": resolve(spec.env, what, f"servers.{spec.name}.env"),
            }
        elif spec.kind == "http":
            config[spec.name] = {
                "type": "http", "url": resolve_value(spec.url, what, f"servers.{spec.name}.url"),
                "headers": resolve(spec.headers, what, f"servers.{spec.name}.headers"),
            }
        else:
            raise ToolselectError(
                f"server {spec.name!r} is a tools file: a harness route starts the case's MCP "
                "servers itself, and a tools file is not a server",
                fix=f"give servers.{spec.name} a command or url, or use a bare model route",
            )
    return config


#: the throwaway server that serves a request's tools when it names no server
SERVED = "toolselect"


def served(request: Any, folder: Path, builtins: Iterable[str] = ()) -> Any:
    """`request` with its tools served by a throwaway stdio server (served_tools.py) when it
    names no server of its own (the preference probe's cells, whose twins are no server's
    tools; attribution's arms, the baseline's tools): a harness takes tools only from MCP
    servers. Each tool keeps its name; the harness's own `builtins` it offers itself."""
    from dataclasses import replace

    if request.servers:
        return request
    own = frozenset(builtins)
    mine = [t for t in request.tools if t.name not in own]
    path = write_private(folder / "served-tools.json",
                         json.dumps([t.to_dict() for t in mine], default=str))
    spec = ServerSpec(name=SERVED, command=sys.executable,
                      args=("-m", "pytest_toolselect.providers.served_tools", str(path)))
    tools = tuple(t if t.name in own else
                  replace(t, server=SERVED, original_name=t.original_name or t.name)
                  for t in request.tools)
    return replace(request, tools=tools, servers=(spec,))


def is_served(request: Any) -> bool:
    """Whether the request's tools are served by the throwaway server (`served`)."""
    return [s.name for s in request.servers] == [SERVED]


def write_private(path: Path, text: str) -> Path:
    """`text` in a new file only its owner can read (0600): a harness's MCP config holds the
    servers' secrets, which a command line would show to every process (``/proc``)."""
    import os

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def not_connected(statuses: Any, folder: Path | None, secrets: Iterable[str | None]) -> str | None:
    """What the harness's report of its MCP servers (``[{name, status}, ...]``) says of those
    that did not connect, with the end of each one's kept stderr; None when all did."""
    said: list[str] = []
    for entry in statuses if isinstance(statuses, list) else []:
        if not isinstance(entry, dict) or entry.get("status") == "connected":
            continue
        name = str(entry.get("name"))
        text = ""
        if folder is not None:
            try:
                text = stderr_file(folder, name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
        tail = " | ".join(line.strip() for line in text.strip().splitlines()[-5:] if line.strip())
        said.append(f"server {name!r} did not connect under the harness "
                    f"(status {entry.get('status')})"
                    + (f"; its stderr: {redact(tail[-600:], tuple(secrets))}" if tail else
                       "; it wrote nothing to stderr"))
    return "; ".join(said) or None


def secrets_of(servers: Iterable[Any]) -> tuple[str, ...]:
    """What the servers' config holds that must never reach a message."""
    return tuple(s for spec in servers for s in spec.secrets)


class HarnessProvider:
    """What both harness providers share: their state, no built-ins unless they have some, and
    one call's frame (its slot, its deadline, its errors with secrets masked, its reply read)."""

    #: the subject's provider name, and what a message calls the harness
    provider = ""
    label = ""

    def __init__(self, model: str, settings: Any) -> None:
        self.model = model
        #: the model name the harness is given (the string minus its route prefix)
        self.api_model = model.split("/", 1)[1]
        self.settings = settings
        self._slots = Slots(settings.harness_concurrency)

    def harness_tools(self, tools: Any) -> tuple[Tool, ...]:
        """The harness's own tools, offered beside the case's (none unless it has some)."""
        return ()

    async def call(self, request: Any, ask: Callable[[Any], Awaitable[Any]],
                   secrets: Iterable[str | None]) -> Any:
        """`ask(request)` in a slot, under the per-call timeout, with the request's tools
        served by a throwaway server when it names none; any failure a ProviderCallError."""
        import tempfile

        from . import ProviderCallError, UnreadableReplyError

        timeout = self.settings.timeout
        async with self._slots.get():
            with tempfile.TemporaryDirectory(prefix="toolselect-served-") as folder:
                try:
                    builtins = [t.name for t in self.harness_tools(())] if not request.servers else []
                    turn = await asyncio.wait_for(ask(served(request, Path(folder), builtins)),
                                                  timeout)
                except asyncio.TimeoutError:
                    late = ProviderCallError(f"{self.model}: {self.label} gave no tool choice in "
                                             f"{timeout:g} s", attempts=1,
                                             fix="raise --toolselect-timeout")
                    late.unsettled = True  # the model may have been asked, and may bill it
                    raise late from None
                except ProviderCallError:
                    raise
                except Exception as e:
                    said = redact(f"{type(e).__name__}: {e}", tuple(secrets))
                    raise ProviderCallError(f"{self.model}: {self.label} failed: {said}",
                                            attempts=1) from None
        faults = read_faults(turn)
        if faults:
            raise UnreadableReplyError(self.model, turn, faults)
        return turn


class Slots:
    """At most `n` harness calls at once (each is a process), per event loop."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())

    def get(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._by_loop.get(loop)
        if sem is None:
            sem = self._by_loop[loop] = asyncio.Semaphore(self.n)
        return sem
