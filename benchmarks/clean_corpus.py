"""Build tests/clean_corpus.json: the tools real MCP servers list, as the servers list them.

Each server is installed from its registry into a folder outside the repository (PyPI
packages into a virtualenv, those written for the mcp SDK's 1.x into one with ``mcp<2``,
npm packages with ``npm install``), started over stdio and asked for its tools and
instructions with the mcp client; the file keeps, per server, the package, its registry and
version, its instructions and its tools. The lint's tests read
it as the ordinary corpus that must stay clean (tests/test_lint_corpora.py).

    python -m venv /tmp/corpus/venv && /tmp/corpus/venv/bin/pip install <PYPI's packages>
    python -m venv /tmp/corpus/venv1 && /tmp/corpus/venv1/bin/pip install "mcp<2" <PYPI_MCP1's>
    (cd /tmp/corpus/npm && npm install --ignore-scripts <NPM's packages>)
    python benchmarks/clean_corpus.py /tmp/corpus   # lists their tools, writes the file

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
    ("duckduckgo-mcp-server", "duckduckgo-mcp-server", [], {}),
    ("wikipedia-mcp", "wikipedia-mcp", [], {}),
]
#: servers written for the mcp SDK's 1.x, installed beside it in a virtualenv of their own
PYPI_MCP1 = [
    ("mcp-server-sqlite", "mcp-server-sqlite", ["--db-path", "{tmp}/x.db"], {}),
    ("mcp-server-calculator", "mcp-server-calculator", [], {}),
    ("arxiv-mcp-server", "arxiv-mcp-server", ["--storage-path", "{tmp}/papers"], {}),
    ("mcp-text-editor", "mcp-text-editor", [], {}),
    ("blender-mcp", "blender-mcp", [], {}),
    ("mcp-obsidian", "mcp-obsidian", [], {"OBSIDIAN_API_KEY": "placeholder"}),
    ("excel-mcp-server", "excel-mcp-server", ["stdio"], {}),
    ("mcp-youtube-transcript", "mcp-youtube-transcript", [], {}),
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
    ("@playwright/mcp", "playwright-mcp", [], {}),
    ("@notionhq/notion-mcp-server", "notion-mcp-server", [], {"NOTION_TOKEN": "placeholder"}),
    ("@upstash/context7-mcp", "context7-mcp", [], {}),
    ("chrome-devtools-mcp", "chrome-devtools-mcp", [], {}),
    ("mcp-server-kubernetes", "mcp-server-kubernetes", [], {}),
    ("tavily-mcp", "tavily-mcp", [], {"TAVILY_API_KEY": "placeholder"}),
    ("firecrawl-mcp", "firecrawl-mcp", [], {"FIRECRAWL_API_KEY": "placeholder"}),
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
    venv, venv1, npm, tmp = base / "venv", base / "venv1", base / "npm", base / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    servers = []
    plan = [("pypi", venv, p, str(venv / "bin" / c), a, e) for p, c, a, e in PYPI] + \
           [("pypi", venv1, p, str(venv1 / "bin" / c), a, e) for p, c, a, e in PYPI_MCP1] + \
           [("npm", npm, p, str(npm / "node_modules" / ".bin" / c), a, e) for p, c, a, e in NPM]
    for registry, where, package, command, args, env in plan:
        try:
            version = version_pypi(where, package) if registry == "pypi" else version_npm(where, package)
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
