"""The bare client of benchmarks/throughput.py: httpx alone, the floor the plugin is held to.

A module of its own so that its subprocess imports nothing but httpx and the standard
library (the benchmark's shared helpers import the test suite's conftest, and with it
numpy and the SDKs, which would make the floor's startup look slow).

    python _bare_client.py URL CALLS CONCURRENCY ROUTE TOOLS_JSON   (key in BENCH_KEY)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any


def anthropic_body(i: int, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """What the plugin sends for one case (the Messages API body)."""
    wire = [{"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}
            for t in tools]
    wire[-1]["cache_control"] = {"type": "ephemeral"}
    return {"model": "bench", "max_tokens": 1024,
            "messages": [{"role": "user", "content": f"Find the company called Acme Widgets {i}"}],
            "tools": wire, "tool_choice": {"type": "auto"}}


def openai_body(i: int, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """What the plugin sends for one case on the openai/ route (a Chat Completions body)."""
    wire = [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                              "parameters": t["inputSchema"]}} for t in tools]
    return {"model": "bench", "max_tokens": 1024,
            "messages": [{"role": "user", "content": f"Find the company called Acme Widgets {i}"}],
            "tools": wire, "tool_choice": "auto"}


def _first_tool(route: str, reply: dict[str, Any]) -> str:
    if route == "anthropic":
        return str(reply["content"][0]["name"])
    return str(reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"])


async def bare_calls(url: str, calls: int, concurrency: int, route: str, tools: list[dict[str, Any]],
                     key: str) -> None:
    import httpx

    if route == "anthropic":
        headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
        path, body = "/v1/messages", anthropic_body
    else:
        headers = {"authorization": f"Bearer {key}"}
        path, body = "/v1/chat/completions", openai_body
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    slots = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=60) as client:
        async def one(i: int) -> None:
            async with slots:
                r = await client.post(path, json=body(i, tools))
                r.raise_for_status()
                assert _first_tool(route, r.json()) == "find_company"

        await asyncio.gather(*(one(i) for i in range(calls)))




if __name__ == "__main__":
    url, calls, concurrency, route, tools_json = sys.argv[1:6]
    with open(tools_json, encoding="utf-8") as f:
        tools = json.load(f)
    asyncio.run(bare_calls(url, int(calls), int(concurrency), route, tools, os.environ["BENCH_KEY"]))
