"""Discovery from an MCP server started as a subprocess and spoken to over stdio."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_toolselect.inputs.envrefs import resolve, resolve_value
from pytest_toolselect.messages.errors import ServerError

from .failures import _describe, _Probe
from .found import ServerTools, under_root
from .mcp_session import _guarded, _list

if TYPE_CHECKING:
    from pytest_toolselect.inputs.config import ServerSpec


async def _discover_stdio(spec: ServerSpec, root: Path, probe: _Probe) -> ServerTools:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    assert spec.command is not None and probe.stderr is not None
    cwd = under_root(root, spec.cwd) if spec.cwd else root
    if not cwd.is_dir():
        raise ServerError(
            f"{_describe(spec)} cannot start: its cwd {str(cwd)!r} is not a directory",
            fix=f"check servers.{spec.name}.cwd; relative paths start at the rootdir",
        )
    params = StdioServerParameters(
        command=_command(spec.command, root),
        args=[resolve_value(a, _describe(spec), f"servers.{spec.name}.args[{i}]")
              for i, a in enumerate(spec.args)],
        # Only the declared variables: the SDK adds its safe default set (PATH, HOME, ...)
        # and never the rest of os.environ, so a key in the test process does not leak.
        env=resolve(spec.env, _describe(spec), f"servers.{spec.name}.env"),
        cwd=cwd,
    )
    async with (
        stdio_client(params, errlog=probe.stderr) as (read, write),
        ClientSession(read, write, message_handler=probe.on_message) as session,
    ):
        return await _guarded(probe, _list(spec, session, probe))


def _command(command: str, root: Path) -> str:
    # "python" in a config means this interpreter, so an example runs inside a venv
    # whose python is not the first one on PATH.
    if command in ("python", "python3"):
        return sys.executable
    # A relative path (not a bare name looked up on PATH) is relative to the rootdir.
    if os.sep in command or (os.altsep and os.altsep in command):
        return str(under_root(root, command))
    return command
