"""A harness call's cost in time: how long one call takes before the model is asked (startup)
and in all, on each harness route, against the fake API with an instant reply.

Each call is the provider's real first_turn: claude-code/... starts the bundled Claude Code
CLI (which starts the stdio MCP server), openai-agents/... starts the MCP server and the
agent in this process. Startup is from the call's start to the fake API's first request.
The bare anthropic/... route is measured the same way for comparison.

    python benchmarks/harness_startup.py [calls per route, default 5]
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

from _common import TESTS, TOOLS, load_line, median, table
from fakeapi import FakeAPI, Reply

from pytest_toolselect.exchange.tool import Tool
from pytest_toolselect.inputs.config import ServerSpec
from pytest_toolselect.providers import ProviderSettings, TurnRequest, get_provider

ROUTES = {"claude-code/claude-test": "", "openai-agents/gpt-test": "/v1", "anthropic/claude-test": ""}


def _answer(body: object) -> Reply:
    names = [t.get("name") or t.get("function", {}).get("name")
             for t in (body.get("tools") or [])] if isinstance(body, dict) else []
    want = next((n for n in names if n and n.endswith("find_company")), None)
    return Reply(tool_calls=[(want, {"name": "Acme"})]) if want else Reply(text="none")


async def one(model: str, api: FakeAPI, suffix: str) -> tuple[float, float]:
    spec = ServerSpec(name="registry", command=sys.executable,
                      args=(str(TESTS / "servers" / "tools_server.py"), "--tools", json.dumps(TOOLS)))
    provider = get_provider(model, ProviderSettings(api_base=api.url + suffix, timeout=300,
                                                    harness_tool_search="off"))
    tools = tuple(Tool(t["name"], t["description"], t["inputSchema"], server="registry")
                  for t in TOOLS)
    request = TurnRequest(question="Find the company Acme", tools=tools, servers=(spec,),
                          root=os.getcwd())
    seen = len(api.requests)
    start = time.monotonic()
    turn = await provider.first_turn(request)
    total = time.monotonic() - start
    assert turn.calls and turn.calls[0].name == "find_company", turn
    first = next(r.at for r in api.requests[seen:]
                 if isinstance(r.body, dict) and r.body.get("model"))
    return first - start, total


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-" + "bench-" + "0" * 20)
    api = FakeAPI().start()
    api.handler = _answer
    rows = []
    try:
        for model, suffix in ROUTES.items():
            asyncio.run(one(model, api, suffix))  # warm: imports, first CLI start from disk
            runs = [asyncio.run(one(model, api, suffix)) for _ in range(n)]
            rows.append((model, n, f"{median([s for s, _ in runs]):.2f}",
                         f"{median([t for _, t in runs]):.2f}", f"{max(t for _, t in runs):.2f}"))
    finally:
        api.stop()
    print(f"harness call times, median of {n} calls after a warm-up ({load_line()})")
    print(table(rows, ("route", "calls", "startup s", "call s", "max call s")))


if __name__ == "__main__":
    main()
