"""Build tests/clean_corpus.json: the tools real MCP servers list, as the servers list them.

Each server is installed from its registry into a folder outside the repository (PyPI
packages into a virtualenv, npm packages with ``npm install``), started over stdio and
asked for its tools and instructions with the mcp client; the file keeps, per server, the
package, its registry and version, its instructions and its tools. The lint's tests read
it as the ordinary corpus that must stay clean (tests/test_lint_corpora.py).

    python benchmarks/clean_corpus.py /tmp/corpus   # installs there, then writes the file

Servers that need a key to start are given a placeholder value: listing tools calls no API.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "tests" / "clean_corpus.json"
#: (package, the command it installs, its arguments, placeholder environment)
PYPI = [
    ("mcp-server-git", "mcp-server-git", [], {}),
    ("mcp-server-time", "mcp-server-time", [], {}),
    ("mcp-server-fetch", "mcp-server-fetch", [], {}),
    ("mcp-server-sqlite", "mcp-server-sqlite", ["--db-path", "{tmp}/x.db"], {}),
    ("mcp-server-calculator", "mcp-server-calculator", [], {}),
    ("arxiv-mcp-server", "arxiv-mcp-server", ["--storage-path", "{tmp}/papers"], {}),
    ("duckduckgo-mcp-server", "duckduckgo-mcp-server", [], {}),
    ("wikipedia-mcp", "wikipedia-mcp", [], {}),
    ("mcp-text-editor", "mcp-text-editor", [], {}),
]
NPM = [
    ("@modelcontextprotocol/server-filesystem", "mcp-server-filesystem", ["{tmp}"], {}),
    ("@modelcontextprotocol/server-memory", "mcp-server-memory", [], {}),
    ("@modelcontextprotocol/server-everything", "mcp-server-everything", [], {}),
    ("@modelcontextprotocol/server-sequential-thinking", "mcp-server-sequential-thinking", [], {}),
    ("@modelcontextprotocol/server-github", "mcp-server-github", [],
     {"GITHUB_PERSONAL_ACCESS_TOKEN": "placeholder"}),
    ("@modelcontextprotocol/server-gitlab", "mcp-server-gitlab", [],
     {"GITLAB_PERSONAL_ACCESS_TOKEN": "placeholder"}),
    ("@modelcontextprotocol/server-slack", "mcp-server-slack", [],
     {"SLACK_BOT_TOKEN": "placeholder", "SLACK_TEAM_ID": "T0"}),
    ("@modelcontextprotocol/server-google-maps", "mcp-server-google-maps", [],
     {"GOOGLE_MAPS_API_KEY": "placeholder"}),
    ("@modelcontextprotocol/server-brave-search", "mcp-server-brave-search", [],
     {"BRAVE_API_KEY": "placeholder"}),
    ("@modelcontextprotocol/server-postgres", "mcp-server-postgres", ["postgresql://localhost/x"], {}),
    ("@modelcontextprotocol/server-everart", "mcp-server-everart", [], {"EVERART_API_KEY": "placeholder"}),
    ("@modelcontextprotocol/server-aws-kb-retrieval", "mcp-server-aws-kb-retrieval", [],
     {"AWS_ACCESS_KEY_ID": "placeholder", "AWS_SECRET_ACCESS_KEY": "placeholder", "AWS_REGION": "us-east-1"}),
    ("@modelcontextprotocol/server-puppeteer", "mcp-server-puppeteer", [], {}),
]


async def listed(command: str, args: list[str], env: dict[str, str]) -> tuple[str | None, list[Any]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command, args=args, env={**os.environ, **env})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await asyncio.wait_for(session.initialize(), 60)
        tools = (await asyncio.wait_for(session.list_tools(), 60)).tools
    return init.instructions, [{"name": t.name, "description": t.description or "",
                                "inputSchema": t.model_dump(by_alias=True, mode="json").get("inputSchema")}
                                for t in tools]


def version_pypi(venv: Path, package: str) -> str:
    out = subprocess.run([str(venv / "bin" / "pip"), "show", package], capture_output=True, text=True,
                         check=True).stdout
    return next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Version:"))


def version_npm(npm: Path, package: str) -> str:
    return str(json.loads((npm / "node_modules" / package / "package.json").read_text())["version"])


def main(folder: str) -> int:
    base = Path(folder).resolve()
    venv, npm, tmp = base / "venv", base / "npm", base / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    servers = []
    plan = [("pypi", p, str(venv / "bin" / c), a, e) for p, c, a, e in PYPI] + \
           [("npm", p, str(npm / "node_modules" / ".bin" / c), a, e) for p, c, a, e in NPM]
    for registry, package, command, args, env in plan:
        try:
            version = version_pypi(venv, package) if registry == "pypi" else version_npm(npm, package)
            instructions, tools = asyncio.run(listed(command, [a.format(tmp=tmp) for a in args], env))
        except Exception as e:  # a server that does not start is left out, and said
            print(f"{package}: skipped ({type(e).__name__}: {e})", file=sys.stderr)
            continue
        print(f"{package} {version}: {len(tools)} tools", file=sys.stderr)
        servers.append({"package": package, "registry": registry, "version": version,
                        "instructions": instructions, "tools": tools})
    OUT.write_text(json.dumps({"servers": servers}, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
