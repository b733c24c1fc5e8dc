"""A throwaway MCP stdio server for a harness route: it serves exactly the tools a request
offers (a preference probe cell's twins and distractors, an attribution arm's tools), so a
harness that only takes tools from MCP servers can be asked about them.

Run as ``python -m pytest_toolselect.providers.served_tools TOOLS.json`` (a JSON list of
``{name, description, input_schema}``). It answers ``tools/list`` and nothing else: a
``tools/call`` is refused, so no tool is ever run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def main(path: str) -> None:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    specs: list[dict[str, Any]] = json.loads(Path(path).read_text(encoding="utf-8"))
    tools = [types.Tool(name=s["name"], description=s.get("description", ""),
                        input_schema=s.get("input_schema") or {"type": "object", "properties": {}})
             for s in specs]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    server: Server[Any] = Server("toolselect", on_list_tools=list_tools)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main(sys.argv[1])
