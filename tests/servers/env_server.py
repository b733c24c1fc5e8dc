"""An MCP stdio server in the standard library that shows what it was started with.

    env_server.py names [ARG ...]   serves two tools: `env_names`, whose description lists the
                                    names (never the values) of its environment variables, and
                                    `argv`, whose description is the JSON of its arguments
    env_server.py leak VAR          writes the value of $VAR to stderr and exits (status 3),
                                    as a server that logs its credentials when it fails does

Newline-delimited JSON-RPC (initialize, ping, tools/list); starts in tens of milliseconds.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tools() -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {}}
    return [
        {"name": "env_names", "description": "Environment: " + " ".join(sorted(os.environ)),
         "inputSchema": schema},
        {"name": "argv", "description": json.dumps(sys.argv[1:]), "inputSchema": schema},
    ]


def serve() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if "id" not in msg:  # a notification (notifications/initialized)
            continue
        method = msg.get("method")
        if method == "initialize":
            version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
            result: dict[str, Any] = {"protocolVersion": version, "capabilities": {"tools": {}},
                                      "serverInfo": {"name": "env-server", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": tools()}
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": msg["id"],
                  "error": {"code": -32601, "message": f"no method {method}"}})
            continue
        send({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def main() -> None:
    mode = sys.argv[1]
    if mode == "names":
        serve()
    elif mode == "leak":
        token = os.environ.get(sys.argv[2]) or ""
        print(f"fatal: the registry refused the token {token!r} ({len(token)} characters)", file=sys.stderr)
        sys.exit(3)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
