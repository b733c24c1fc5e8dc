"""``claude-code/<model>``: the question asked of the real Claude Code, through claude-agent-sdk.

The harness is the CLI the SDK bundles, run once per call as a process, with the case's
servers as its only MCP config (``--strict-mcp-config``). It sends its own system prompt
and offers its own tools beside the servers' (as ``mcp__server__tool``); the first call it
makes is the choice scored. No tool is ever run: a PreToolUse hook denies every tool use and
ends the session, so no ``tools/call`` reaches a server. The one exception is the
harness's own tool search (``ToolSearch``), when it is on: that step only loads tool
definitions, and the first call after it is the choice, marked as found by search.

By default the CLI runs in a temporary HOME and config folder with no setting sources,
so a developer's settings, plugins, skills and CLAUDE.md do not reach CI results;
``harness_user_settings`` runs it with the user's own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from pytest_toolselect.exchange.json_value import JSONDict
from pytest_toolselect.exchange.tool import ToolCall

from . import ProviderCallError, Turn, TurnRequest
from .api_keys import key_from_env
from .claude_code_probe import HarnessRequest, probe
from .claude_code_session import RESUME_ENV, write_session
from .harness import (
    HarnessProvider,
    builtin_tools,
    is_served,
    mcp_config,
    not_connected,
    secrets_of,
    version,
    wire_name_map,
    write_private,
)
from .preflight import placeholder_key
from .pricing import cost_usd, request_bytes, reservation_usd
from .wire import as_int, make_usage

SEARCH_TOOL = "ToolSearch"
#: the system prompt sent: Claude Code's own, as the SDK's preset names it
SYSTEM_PROMPT = "claude_code preset"
#: the harness's own tool searches a call may make before its choice (each is a turn)
SEARCH_TURNS = 3
_DENIED = "toolselect scores the first tool call and runs no tool"
#: the probe's bound, whatever the call timeout: the CLI sends its first request within
#: seconds of starting, and a broken one exits at once
PROBE_TIMEOUT = 120.0
_PROBE_LOCK = threading.Lock()
#: (model, tool search, user settings, api_base) -> what the harness sends, per process
_PROBED: dict[tuple[str, str, bool, str | None], HarnessRequest] = {}


async def _deny(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
    """Every tool use denied, and the session ended at the first: no tool is run."""
    if data.get("tool_name") == SEARCH_TOOL:
        return {}  # the harness's own step: it loads definitions, runs nothing of yours
    return {"continue_": False, "stopReason": _DENIED,
            "hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": _DENIED}}


def cli_version() -> str | None:
    """The bundled CLI's version, read from the wheel without importing the SDK."""
    import importlib.util

    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "_bundled" / "claude.version"
    with contextlib.suppress(OSError):
        return path.read_text(encoding="utf-8").split()[0]
    return None


class ClaudeCodeProvider(HarnessProvider):
    provider = "claude-code"
    label = "Claude Code"

    def subject(self) -> JSONDict:
        s = self.settings
        return {"provider": self.provider, "model": self.model,
                "harness": {"name": "claude-code", "version": cli_version(),
                            "sdk": version("claude-agent-sdk")},
                "settings": {"system_prompt": SYSTEM_PROMPT, "max_turns": self.max_turns(),
                             "tool_search": s.harness_tool_search,
                             "user_settings": s.harness_user_settings}}

    def harness_tools(self, tools: Any) -> tuple[Any, ...]:
        """Its built-in tools as the harness offers them to this model (read from it)."""
        return builtin_tools(self.offered().tools, "Claude Code", tools)

    def endpoint(self) -> str | None:
        return self.settings.api_base or os.environ.get("ANTHROPIC_BASE_URL") or None

    def _env(self) -> tuple[dict[str, str], str | None]:
        s = self.settings
        key = (key_from_env(s.api_key_env, self.model)
               or placeholder_key(self.model, s, "ANTHROPIC_AUTH_TOKEN"))
        env = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
        if s.api_base:
            env["ANTHROPIC_BASE_URL"] = s.api_base
        if key:
            env["ANTHROPIC_API_KEY"] = key
        if s.harness_tool_search != "auto":
            env["ENABLE_TOOL_SEARCH"] = "true" if s.harness_tool_search == "on" else "false"
        return env, key

    async def first_turn(self, request: TurnRequest) -> Turn:
        env, key = self._env()
        # the harness's own cost report stands (it prices the model it ran)
        turn: Turn = await self.call(request, lambda asked: self._isolated(asked, env),
                                     (key, *secrets_of(request.servers)))
        return turn

    async def _isolated(self, request: TurnRequest, env: dict[str, str]) -> Turn:
        # a CLI ended at the choice may still be writing its session files as they go
        with tempfile.TemporaryDirectory(prefix="toolselect-claude-", ignore_cleanup_errors=True) as home:
            if is_served(request):
                # the probe's cells: every tool offered up front, the choice in one turn
                env = {**env, "ENABLE_TOOL_SEARCH": "false"}
            return await self._ask(request, self._home_env(env, home), home)

    def _home_env(self, env: dict[str, str], home: str) -> dict[str, str]:
        if self.settings.harness_user_settings:
            return env
        return {**env, "HOME": home, "CLAUDE_CONFIG_DIR": str(Path(home) / ".claude")}

    def options(self, env: dict[str, str], home: str, root: str | None, mcp_file: str | None,
                stderr: list[str], turns: int | None = None) -> Any:
        """The CLI's options for a call (and for the probe, with no MCP config file)."""
        from claude_agent_sdk import ClaudeAgentOptions, HookMatcher

        user = self.settings.harness_user_settings
        return ClaudeAgentOptions(
            mcp_servers=mcp_file or {}, strict_mcp_config=True, model=self.api_model, env=env,
            cwd=(root or os.getcwd()) if user else home,
            setting_sources=None if user else [],
            # what Claude Code sends as users run it (the SDK's default is a one-line prompt)
            system_prompt={"type": "preset", "preset": "claude_code"},  # SYSTEM_PROMPT
            # the first turn and no more: a call the CLI rejects (invalid input, an unknown
            # name) is answered with an error and asked again, turn after turn, otherwise
            max_turns=turns or self.max_turns(),
            hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[_deny])]},  # type: ignore[list-item]
            stderr=stderr.append,
        )

    def offered(self) -> HarnessRequest:
        """What the harness sends for this model and these settings, read from the harness
        once per process (claude_code_probe); ToolselectError when the CLI cannot start."""
        s = self.settings
        key = (self.model, s.harness_tool_search, s.harness_user_settings, s.api_base)
        with _PROBE_LOCK:
            if key not in _PROBED:
                env, _ = self._env()
                with tempfile.TemporaryDirectory(prefix="toolselect-claude-",
                                                 ignore_cleanup_errors=True) as home:
                    _PROBED[key] = probe(
                        lambda e, err: self.options(e, home, None, None, err),
                        self._home_env(env, home), PROBE_TIMEOUT, self.model)
            return _PROBED[key]

    async def _ask(self, request: TurnRequest, env: dict[str, str], home: str) -> Turn:
        from claude_agent_sdk import (
            AssistantMessage,
            ClaudeSDKError,
            ResultMessage,
            SystemMessage,
            TextBlock,
            ToolUseBlock,
            UserMessage,
            query,
        )

        stderr: list[str] = []
        # the config holds the servers' secrets: a 0600 file, not the CLI's command line
        logs = Path(home) / "mcp-stderr"
        logs.mkdir(mode=0o700)
        config = {"mcpServers": mcp_config(request.servers, request.root, stderr_to=logs)}
        mcp_file = write_private(Path(home) / "mcp.json", json.dumps(config))
        turns = 1 if env.get("ENABLE_TOOL_SEARCH") == "false" else self.max_turns()
        resumed: Path | None = None
        if request.context:
            # the earlier turns as a session cut off after their results: resumed with no
            # prompt, the CLI asks the model for that turn again (claude_code_session)
            env = {**env, **RESUME_ENV}
        options = self.options(env, home, request.root, str(mcp_file), stderr, turns)
        prompt: Any = request.question
        if request.context:
            folder = Path(env.get("CLAUDE_CONFIG_DIR") or os.environ.get("CLAUDE_CONFIG_DIR")
                          or Path.home() / ".claude")
            session, resumed = write_session(folder, str(options.cwd), request.question,
                                             request.context, request.tools, cli_version())
            options = dataclasses.replace(options, resume=session)
            prompt = _no_prompt()
        names = wire_name_map(request.tools)
        choice: list[ToolCall] = []
        searched: list[str] = []
        texts: list[str] = []
        stop: str | None = None
        result: Any = None
        spent: dict[str, dict[str, int]] = {}  # message id -> its usage, when no result comes
        closed = False  # the choice's message is complete once a tool result follows it
        stream: Any = query(prompt=prompt, options=options)
        try:
            async with contextlib.aclosing(stream):
                async for message in stream:
                    if isinstance(message, SystemMessage) and message.subtype == "init":
                        failed = not_connected(message.data.get("mcp_servers"), logs,
                                               secrets_of(request.servers))
                        if failed:
                            # its tools are missing from the request: no choice to score
                            raise ProviderCallError(
                                f"{self.model}: {failed}", attempts=1,
                                fix="the server started for discovery but not under Claude "
                                    "Code: check its env:, cwd: and startup time")
                    elif isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                        spent[message.message_id or str(len(spent))] = dict(message.usage or {})
                        for block in message.content:
                            if isinstance(block, TextBlock):
                                texts.append(block.text)
                            elif isinstance(block, ToolUseBlock):
                                if block.name == SEARCH_TOOL and not choice:
                                    searched.append(str(block.input.get("query", "")))
                                elif block.name != SEARCH_TOOL:
                                    choice.append(ToolCall(names.get(block.name, block.name),
                                                           dict(block.input or {})))
                        stop = message.stop_reason or stop
                    elif isinstance(message, UserMessage) and choice and turns > 1:
                        # the choice is complete: under tool search, max_turns leaves room for
                        # more turns, so closing the stream ends the CLI before it can answer
                        # a rejected call with another request (with one turn, the CLI stops
                        # by itself and reports its cost)
                        closed = True
                        break
                    elif isinstance(message, ResultMessage):
                        result = message  # the CLI exits right after it
        except ClaudeSDKError as e:
            # the CLI exits non-zero after a result that stopped at max_turns: that result
            # (or the complete choice) is the answer; without either, the CLI failed
            if result is None and not closed:
                said = "; ".join(line.strip() for line in stderr[-5:] if line.strip()) or str(e)
                raise ProviderCallError(f"{self.model}: Claude Code failed: {said[:500]}",
                                        attempts=1) from None
        finally:
            if resumed is not None and self.settings.harness_user_settings:
                # in the user's own config folder: the replayed session is not theirs to keep
                resumed.unlink(missing_ok=True)
        if result is None and not closed:
            raise ProviderCallError(f"{self.model}: Claude Code ended without a result"
                                    + (f": {stderr[-1][:300]}" if stderr else ""), attempts=1)
        if result is None:
            return self._turn(choice, texts, stop, searched, _summed(spent.values()), None)
        if result.is_error and not choice and result.subtype != "error_max_turns":
            said = "; ".join(result.errors or []) or str(result.result or result.subtype)
            raise ProviderCallError(f"{self.model}: Claude Code reported an error: {said[:300]}",
                                    attempts=1, status=result.api_error_status)
        return self._turn(choice, texts, stop or result.stop_reason, searched,
                          dict(result.usage or {}), result.total_cost_usd)

    def _turn(self, choice: list[ToolCall], texts: list[str], stop: str | None,
              searched: list[str], usage: dict[str, Any], cost: float | None) -> Turn:
        made = make_usage(as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens")),
                          as_int(usage.get("cache_read_input_tokens")),
                          as_int(usage.get("cache_creation_input_tokens")))
        if cost is None:
            # no result came (the CLI was ended at the choice): priced as the bare route prices
            cost = cost_usd(f"anthropic/{self.api_model}", made, self.settings.prices)
        return Turn(
            calls=tuple(choice), text="\n".join(t for t in texts if t),
            stop_reason="tool_use" if choice else stop, usage=made, cost_usd=cost,
            found_by=f"{SEARCH_TOOL}: {'; '.join(searched)}" if searched and choice else None,
        )

    def max_cost_usd(self, request: TurnRequest) -> float | None:
        """The most a call can cost (None: no price known), what the cost cap reserves: the
        harness's own request as measured, with the case's MCP tools and question in it, and
        its max_tokens of output, for every turn it may take."""
        sent = self.offered()
        mine = [t for t in request.tools if t.server] or list(request.tools)  # served: all
        one = reservation_usd(self.model, self.settings.prices,
                              max_tokens=sent.max_tokens or self.settings.max_tokens,
                              size=sent.body_bytes + request_bytes(request.question,
                                                                   request.system, mine,
                                                                   request.context))
        return None if one is None else one * self.max_turns()

    def max_turns(self) -> int:
        """One turn; under tool search, room for the harness's own searches before it."""
        return 1 if self.settings.harness_tool_search == "off" else 1 + SEARCH_TURNS


async def _no_prompt() -> Any:
    """A prompt stream that sends nothing: a resumed session's cut-off turn is the question."""
    return
    yield  # an async generator


def _summed(usages: Any) -> dict[str, int]:
    total: dict[str, int] = {}
    for usage in usages:
        for key, value in usage.items():
            if isinstance(value, int) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    return total
