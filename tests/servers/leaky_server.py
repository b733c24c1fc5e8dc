"""An MCP server (the SDK's MCPServer) that fails the way a misconfigured one does: asked for
its tools, it logs the text of the file named on its command line to stderr (credentials a
careless server prints, in the tests) and exits with status 1."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer


class LeakyServer(MCPServer):
    async def list_tools(self) -> list[Any]:
        sys.stderr.write(Path(sys.argv[1]).read_text(encoding="utf-8") + "\n")
        sys.stderr.flush()
        os._exit(1)


server = LeakyServer("leaky")


@server.tool(description="Look up a company by its company number.")
def lookup(company_number: str) -> str:
    return company_number


if __name__ == "__main__":
    server.run("stdio")
