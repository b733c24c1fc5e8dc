"""An MCP stdio server in the standard library that misbehaves at the protocol level.

It speaks newline-delimited JSON-RPC (initialize, ping, tools/list) and starts in tens of
milliseconds, so the fault tests stay fast. The mode is the first argument:

    protocol_server.py ok             a healthy server with the three registry tools
    protocol_server.py many N         N tools: the registry tools, then tool_2 ... tool_N-1, each
                                      with its own schema, in pages of 500
    protocol_server.py duplicates     lists 'find_company' twice on one page
    protocol_server.py dup-pages      lists 'find_company' on page 1 and again on page 2
    protocol_server.py bad-type       a tool whose input schema is {"type": 12}
    protocol_server.py not-object     a tool whose input schema is a JSON string, not an object
    protocol_server.py bad-nested     a tool whose input schema has a property of "type": 12
    protocol_server.py endless        tools/list always answers a new nextCursor
    protocol_server.py noise-before   prints a banner line on stdout before any message
    protocol_server.py noise-among    prints a log line on stdout between initialize and tools/list
    protocol_server.py noise-glued    prints text with no newline in front of its initialize answer
    protocol_server.py crlf-blank     ends lines with \r\n and writes an empty line before each message
    protocol_server.py bom            writes a UTF-8 byte order mark before its first message
    protocol_server.py crash-init     dies with a traceback when it reads initialize
    protocol_server.py hang           never reads or answers anything (sleeps)
    protocol_server.py hang-child     like hang, after starting a child process that sleeps too

With $PID_FILE set, each start appends its pid to that file (and, in hang-child, the child's
pid on the next line) before reading anything, so tests can count starts and check that no
process outlives the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

REGISTRY_TOOLS = [
    {
        "name": "find_company",
        "description": "Search the company register by company name; returns matching companies "
        "with their company numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
    {
        "name": "list_officers",
        "description": "List the officers of a company (directors and secretaries) by company number.",
        "inputSchema": {
            "type": "object",
            "properties": {"company_number": {"type": "string"}},
            "required": ["company_number"],
        },
    },
    {
        "name": "lookup_vat",
        "description": "Check a VAT registration number and return the business registered under it.",
        "inputSchema": {
            "type": "object",
            "properties": {"vat_number": {"type": "string"}},
            "required": ["vat_number"],
        },
    },
]

BAD_SCHEMAS: dict[str, Any] = {
    "bad-type": {"type": 12},
    "not-object": "an object with a name",
    "bad-nested": {"type": "object", "properties": {"name": {"type": 12}}},
}
PAGE_SIZE = 500
#: how long a hung server sleeps: far past any bound a test sets on a run that must not wait
HANG = 600
#: the messages sent so far
SENT: list[dict[str, Any]] = []


def filler_tool(i: int) -> dict[str, Any]:
    return {
        "name": f"tool_{i}",
        "description": f"Files form {i} for department {i % 97}.",
        "inputSchema": {
            "type": "object",
            "properties": {f"form_{i}_ref": {"type": "string"}, "copies": {"type": "integer", "minimum": 1}},
            "required": [f"form_{i}_ref"],
        },
    }


def send(message: dict[str, Any], prefix: str = "") -> None:
    mode = sys.argv[1]
    if mode == "crlf-blank":  # as a server on Windows, or one that separates messages
        sys.stdout.buffer.write(b"\r\n" + json.dumps(message).encode() + b"\r\n")
    elif mode == "bom" and not SENT:  # as .NET's Console with a UTF-8 encoding does
        sys.stdout.buffer.write(b"\xef\xbb\xbf" + json.dumps(message).encode() + b"\n")
    else:
        sys.stdout.write(prefix + json.dumps(message) + "\n")
    sys.stdout.flush()
    SENT.append(message)


def tools_page(mode: str, cursor: str | None, count: int) -> dict[str, Any]:
    if mode == "endless":
        page = int(cursor or 0)
        return {"tools": [filler_tool(page)], "nextCursor": str(page + 1)}
    if mode == "dup-pages":
        if cursor is None:
            return {"tools": REGISTRY_TOOLS, "nextCursor": "2"}
        return {"tools": REGISTRY_TOOLS[:1]}
    if mode == "duplicates":
        return {"tools": [*REGISTRY_TOOLS, REGISTRY_TOOLS[0]]}
    if mode in BAD_SCHEMAS:
        bad = {"name": "broken_tool", "description": "Has a bad schema.", "inputSchema": BAD_SCHEMAS[mode]}
        return {"tools": [*REGISTRY_TOOLS, bad]}
    if mode == "many":
        start = int(cursor or 0)
        end = min(start + PAGE_SIZE, count)
        tools = [REGISTRY_TOOLS[i] if i < len(REGISTRY_TOOLS) else filler_tool(i) for i in range(start, end)]
        return {"tools": tools, **({"nextCursor": str(end)} if end < count else {})}
    return {"tools": REGISTRY_TOOLS}


def main() -> None:
    mode = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    pids = [os.getpid()]
    if mode == "hang-child":
        child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({HANG})"])
        pids.append(child.pid)
    pid_file = os.environ.get("PID_FILE")
    if pid_file:
        with open(pid_file, "a", encoding="utf-8") as f:
            f.write("\n".join(map(str, pids)) + "\n")
    if mode.startswith("hang"):  # stuck before reading anything, as a server waiting on a lock
        time.sleep(HANG)
        return
    if mode == "noise-before":
        print("companies server v1.2 listening on stdio", flush=True)

    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        method, rid = request.get("method"), request.get("id")
        if rid is None:  # a notification: nothing to answer
            continue
        if method == "initialize":
            if mode == "crash-init":
                raise RuntimeError("cannot open the registry database")
            result = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": f"protocol-server-{mode}", "version": "1.0"},
            }
            send({"jsonrpc": "2.0", "id": rid, "result": result},
                 prefix="Loading the registry... " if mode == "noise-glued" else "")
            if mode == "noise-among":
                print("INFO: client connected, 2 tools loaded", flush=True)
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif method == "tools/list":
            cursor = (request.get("params") or {}).get("cursor")
            send({"jsonrpc": "2.0", "id": rid, "result": tools_page(mode, cursor, count)})
        else:
            error = {"code": -32601, "message": f"method not found: {method}"}
            send({"jsonrpc": "2.0", "id": rid, "error": error})


if __name__ == "__main__":
    main()
