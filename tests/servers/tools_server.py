"""A configurable MCP stdio server for the discovery tests.

It serves the tools given as JSON (``--tools``) in pages of ``--page-size`` so that
tools/list really paginates, with optional ``--instructions``; ``--tools-from PATH`` (and
``--instructions-from PATH``) reads them from a file at each start instead (a server
upgraded in place). ``--report-env`` adds a
tool whose description is the JSON of the environment the server saw; each start is
appended to the file named by the ``TOOLS_SERVER_START_LOG`` variable (if set), so
tests can count starts. ``--http PORT`` serves over streamable HTTP instead of stdio;
with ``--require-token T`` it answers 401, as a server behind auth does, unless the request
carries ``Authorization: Bearer T``. ``--call-log PATH`` answers tools/call and appends each
call to PATH as a JSON line, so a test can tell that no tool was ever run.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", default="[]", help="JSON list of {name, description, inputSchema}")
    parser.add_argument("--tools-from", default=None, metavar="PATH",
                        help="read the tools' JSON from this file at each start instead")
    parser.add_argument("--instructions", default=None)
    parser.add_argument("--instructions-from", default=None, metavar="PATH",
                        help="read the instructions from this file at each start instead")
    parser.add_argument("--page-size", type=int, default=0, help="0: one page")
    parser.add_argument("--report-env", action="store_true")
    parser.add_argument("--bad-cursor", action="store_true", help="always answer the same cursor")
    parser.add_argument("--http", type=int, default=0, metavar="PORT")
    parser.add_argument("--require-token", default=None)
    parser.add_argument("--call-log", default=None, metavar="PATH")
    opts = parser.parse_args()

    log = os.environ.get("TOOLS_SERVER_START_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")

    specs: list[dict[str, Any]] = json.loads(
        opts.tools if opts.tools_from is None else Path(opts.tools_from).read_text(encoding="utf-8"))
    if opts.report_env:
        specs.append({"name": "env_report", "description": json.dumps(dict(os.environ))})
    tools = [
        types.Tool(
            name=s["name"],
            description=s.get("description", ""),
            input_schema=s.get("inputSchema", {"type": "object", "properties": {}}),
        )
        for s in specs
    ]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        if not opts.page_size:
            return types.ListToolsResult(tools=tools)
        if opts.bad_cursor:  # a broken server: the same cursor over and over
            return types.ListToolsResult(tools=tools[:1], next_cursor="again")
        start = int(params.cursor) if params and params.cursor else 0
        end = start + opts.page_size
        return types.ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        with open(opts.call_log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"name": params.name, "arguments": params.arguments}) + "\n")
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])

    if opts.instructions_from is not None:
        opts.instructions = Path(opts.instructions_from).read_text(encoding="utf-8")
    server: Server[Any] = Server("tools-server", instructions=opts.instructions, on_list_tools=list_tools,
                                 **({"on_call_tool": call_tool} if opts.call_log else {}))

    if opts.http:
        import uvicorn

        app = server.streamable_http_app()
        if opts.require_token:
            app = _require_token(app, opts.require_token)
        uvicorn.run(app, host="127.0.0.1", port=opts.http, log_level="error")
        return

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    import anyio

    anyio.run(serve)


def _require_token(app: Any, token: str) -> Any:
    """The app behind a bearer-token check: 401 with a JSON body, as an auth gateway answers."""
    from starlette.responses import JSONResponse

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or ())
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {token}".encode():
            response = JSONResponse({"error": "invalid_token"}, status_code=401,
                                    headers={"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        await app(scope, receive, send)

    return guarded


if __name__ == "__main__":
    main()
