"""MCP stdio, streamable HTTP and static files -> tool lists."""
