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
import os
import tempfile
from pathlib import Path
from typing import Any

from pytest_toolselect.exchange.json_value import JSONDict
from pytest_toolselect.exchange.tool import ToolCall

from . import ProviderCallError, Turn, TurnRequest
from .api_keys import key_from_env
from .harness import HarnessProvider, builtin_tools, mcp_config, secrets_of, version, wire_name_map
from .preflight import placeholder_key
from .wire import as_int, make_usage

#: the built-in tools the bundled CLI (2.1.x) offers, as its requests name them; tool
#: search adds ToolSearch and defers some of them (tests/test_claude_code.py checks the list
#: against the CLI installed, so an upgrade that changes it is seen)
CLAUDE_CODE_TOOLS = (
    "Agent", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree",
    "ExitWorktree", "ListAgents", "Monitor", "NotebookEdit", "Read", "ReportFindings",
    "ScheduleWakeup", "SendMessage", "Skill", "TaskStop", "WebFetch", "WebSearch", "Workflow",
    "Write", "ToolSearch",
)
SEARCH_TOOL = "ToolSearch"
_DENIED = "toolselect scores the first tool call and runs no tool"


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
                "settings": {"tool_search": s.harness_tool_search,
                             "user_settings": s.harness_user_settings}}

    def harness_tools(self, tools: Any) -> tuple[Any, ...]:
        names = [n for n in CLAUDE_CODE_TOOLS
                 if n != SEARCH_TOOL or self.settings.harness_tool_search != "off"]
        return builtin_tools(names, "Claude Code", tools)

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
        turn: Turn = await self.call(request, lambda: self._isolated(request, env),
                                     (key, *secrets_of(request.servers)))
        return turn

    async def _isolated(self, request: TurnRequest, env: dict[str, str]) -> Turn:
        with tempfile.TemporaryDirectory(prefix="toolselect-claude-") as home:
            if not self.settings.harness_user_settings:
                env = {**env, "HOME": home, "CLAUDE_CONFIG_DIR": str(Path(home) / ".claude")}
            return await self._ask(request, env, home)

    async def _ask(self, request: TurnRequest, env: dict[str, str], home: str) -> Turn:
        from claude_agent_sdk import (
            AssistantMessage,
            ClaudeAgentOptions,
            HookMatcher,
            ResultMessage,
            TextBlock,
            ToolUseBlock,
            UserMessage,
            query,
        )

        user = self.settings.harness_user_settings

        async def deny(data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
            if data.get("tool_name") == SEARCH_TOOL:
                return {}  # the harness's own step: it loads definitions, runs nothing of yours
            return {"continue_": False, "stopReason": _DENIED,
                    "hookSpecificOutput": {"hookEventName": "PreToolUse",
                                           "permissionDecision": "deny",
                                           "permissionDecisionReason": _DENIED}}

        stderr: list[str] = []
        options = ClaudeAgentOptions(
            mcp_servers=mcp_config(request.servers, request.root),  # type: ignore[arg-type]
            strict_mcp_config=True, model=self.api_model, env=env,
            cwd=(request.root or os.getcwd()) if user else home,
            setting_sources=None if user else [],
            hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[deny])]},  # type: ignore[list-item]
            stderr=stderr.append,
        )
        names = wire_name_map(request.tools)
        choice: list[ToolCall] = []
        searched: list[str] = []
        texts: list[str] = []
        stop: str | None = None
        result: Any = None
        closed = False  # the choice's message is complete once a tool result follows it
        async for message in query(prompt=request.question, options=options):
            if isinstance(message, AssistantMessage) and not closed and message.parent_tool_use_id is None:
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
            elif isinstance(message, UserMessage) and choice:
                closed = True
            elif isinstance(message, ResultMessage):
                result = message
        if result is None:
            raise ProviderCallError(f"{self.model}: Claude Code ended without a result"
                                    + (f": {stderr[-1][:300]}" if stderr else ""), attempts=1)
        if result.is_error and not choice:
            said = "; ".join(result.errors or []) or str(result.result or result.subtype)
            raise ProviderCallError(f"{self.model}: Claude Code reported an error: {said[:300]}",
                                    attempts=1, status=result.api_error_status)
        usage = result.usage or {}
        return Turn(
            calls=tuple(choice), text="\n".join(t for t in texts if t),
            stop_reason="tool_use" if choice else (stop or result.stop_reason),
            usage=make_usage(as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens")),
                             as_int(usage.get("cache_read_input_tokens")),
                             as_int(usage.get("cache_creation_input_tokens"))),
            cost_usd=result.total_cost_usd,
            found_by=f"{SEARCH_TOOL}: {'; '.join(searched)}" if searched and choice else None,
        )
