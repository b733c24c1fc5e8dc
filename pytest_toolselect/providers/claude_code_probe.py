"""What the Claude Code harness sends, read from the harness itself before any case runs.

The CLI is run once, as a call runs it (its system prompt, its settings, the model) but with
no MCP server and its API pointed at a loopback catcher that keeps the first request and
refuses it: no model is asked, nothing is paid, and no network is used. From that request:
the built-in tools it offers for this model and version (a hard-coded list goes stale with
every CLI release and differs by model), and what one call costs in input (the dry run's
and the cost cap's estimate). A CLI that cannot start fails here, once, with its stderr.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pytest_toolselect.messages.errors import ToolselectError

#: the names the init message gives a tool that requests name otherwise (its legacy name)
_INIT_ALIASES = {"Task": "Agent"}


@dataclass(frozen=True)
class HarnessRequest:
    """The first request the harness sends, with no MCP server of the case's."""

    #: the built-in tools offered, in the request's order (plus, under tool search, those
    #: the init message lists as available but deferred)
    tools: tuple[str, ...]
    #: the characters of its system prompt, and of the whole request body
    system_chars: int
    body_bytes: int
    max_tokens: int | None
    #: the request's thinking setting, as sent (JSON text; "null": none)
    thinking: str


class _Catcher(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.body: Any = None
        self.caught = threading.Event()


class _Handler(BaseHTTPRequestHandler):
    server: _Catcher

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(size)
        if self.server.body is None:
            try:
                self.server.body = json.loads(raw)
            except ValueError:
                self.server.body = {}
            self.server.caught.set()
        reply = json.dumps({"type": "error", "error": {
            "type": "invalid_request_error",
            "message": "toolselect reads what the harness sends; no model is asked"}}).encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


def read_request(body: Any, init_tools: list[str]) -> HarnessRequest:
    """The parts of a caught request body that matter here (pure)."""
    body = body if isinstance(body, dict) else {}
    sent = [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
    named = [_INIT_ALIASES.get(n, n) for n in init_tools if not n.startswith("mcp__")]
    # deferred under tool search: listed by init, not in the request's tools, still callable
    tools = tuple(dict.fromkeys((*sent, *named)))  # each once, the request's first
    system = body.get("system")
    if isinstance(system, list):
        chars = sum(len(str(b.get("text", ""))) for b in system if isinstance(b, dict))
    else:
        chars = len(str(system or ""))
    max_tokens = body.get("max_tokens")
    return HarnessRequest(
        tools=tuple(n for n in tools if not n.startswith("mcp__")), system_chars=chars,
        body_bytes=len(json.dumps(body)),
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        thinking=json.dumps(body.get("thinking"), sort_keys=True))


async def _run(options: Any, catcher: _Catcher, stderr: list[str], timeout: float) -> list[str]:
    """Run the CLI until its first request is caught (or it ends); its init's tool names."""
    import contextlib

    from claude_agent_sdk import ClaudeSDKError, SystemMessage, query

    init: list[str] = []

    async def read() -> None:
        stream: Any = query(prompt="toolselect: which tools are offered?", options=options)
        async with contextlib.aclosing(stream):
            async for message in stream:
                if isinstance(message, SystemMessage) and message.subtype == "init":
                    init.extend(str(t) for t in message.data.get("tools") or [])
                if catcher.caught.is_set():
                    break

    with contextlib.suppress(ClaudeSDKError, asyncio.TimeoutError):
        await asyncio.wait_for(read(), timeout)
    return init


def probe(options_for: Any, env: dict[str, str], timeout: float, label: str) -> HarnessRequest:
    """Run the harness once against a catcher: `options_for(env, stderr_lines)` builds the
    call's ClaudeAgentOptions. ToolselectError, with the CLI's stderr, when no request came."""
    catcher = _Catcher()
    thread = threading.Thread(target=catcher.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    stderr: list[str] = []
    try:
        url = f"http://127.0.0.1:{catcher.server_address[1]}"
        options = options_for({**env, "ANTHROPIC_BASE_URL": url}, stderr)
        try:
            init = _in_own_loop(_run(options, catcher, stderr, timeout))
        except Exception as e:  # the SDK could not start the CLI at all
            stderr.append(f"{type(e).__name__}: {e}")
            init = []
    finally:
        catcher.shutdown()
        catcher.server_close()
    if catcher.body is None:
        said = " | ".join(line.strip() for line in stderr[-8:] if line.strip())
        raise ToolselectError(
            f"{label}: the Claude Code CLI did not start (it sent no request within "
            f"{timeout:g} s)" + (f"; its stderr: {said[-1200:]}" if said else
                                 "; it wrote nothing to stderr"),
            fix="reinstall it: pip install --force-reinstall claude-agent-sdk "
                "(pytest-toolselect[claude-code])")
    return read_request(catcher.body, init)


def _in_own_loop(coro: Any) -> Any:
    """Run `coro` to its end on a fresh event loop in a thread of its own (the caller may be
    inside a running loop)."""
    box: dict[str, Any] = {}

    def main() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as e:  # handed to the caller
            box["error"] = e

    thread = threading.Thread(target=main, name="toolselect-harness-probe", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")
