"""docs/getting-started.md is run as written: every shell command on it, in order, in one
shell, from a copy of the repository's examples, and what the page says of each holds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from fakeapi import FakeAPI, fake_api_fixture  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "getting-started.md"
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.M | re.S)
#: installing needs the network: the page's install line is checked as done (the package imports)
INSTALL = "pip install pytest-toolselect"


def blocks() -> list[str]:
    return BLOCK.findall(PAGE.read_text(encoding="utf-8"))


def test_the_page_shows_the_path_in_order() -> None:
    text = "\n".join(blocks())
    steps = ["pip install", "cat > .mcp.json", "servers_from: .mcp.json", "toolselect tools",
             "toolselect init", "toolselect lint", "--toolselect-dry-run",
             "pytest --toolselect-baseline main.json", "sed -i.bak"]
    at = [text.find(s) for s in steps]
    assert all(i >= 0 for i in at) and at == sorted(at), list(zip(steps, at, strict=True))


def test_every_command_on_the_page_runs_as_it_says(tmp_path: Path, fake_api: FakeAPI) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    script = []
    for i, block in enumerate(blocks()):
        body = block.replace(INSTALL, f"{sys.executable} -c 'import pytest_toolselect'", 1)
        script += [f"echo '@@block {i}'", body.rstrip("\n"), f"echo \"@@rc {i} $?\""]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update({
        "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
        "PYTEST_ADDOPTS": "-p no:cacheprovider -p no:hypothesispytest",
        # the one real-model command goes to the suite's fake Anthropic API, as a user's goes to theirs
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url,
    })
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    out = done.stdout
    parts = {int(m.group(1)): m.group(2) for m in re.finditer(r"@@block (\d+)\n(.*?)@@rc \1 ", out, re.S)}
    rcs = {int(i): int(rc) for i, rc in re.findall(r"@@rc (\d+) (\d+)", out)}
    assert sorted(rcs) == list(range(len(blocks()))), out[-3000:] + done.stderr[-3000:]

    def output(marker: str) -> tuple[str, int]:
        i = next(i for i, b in enumerate(blocks()) if marker in b)
        return parts[i], rcs[i]

    # no command is refused or crashes: 1 is a finding or a regression, as the page says
    assert all(rc in (0, 1) for rc in rcs.values()), (rcs, out[-4000:], done.stderr[-3000:])
    tools, rc = output("toolselect tools")
    assert rc == 0 and "finance: 6 tools (from .mcp.json:5)" in tools
    started, rc = output("toolselect init")
    assert rc == 0 and "wrote" in started and (tmp_path / "gate" / "starter.toolselect.yaml").is_file()
    dry, rc = output("--toolselect-dry-run")
    assert rc == 0 and re.search(r"^cost: about \$\d", dry, re.M), dry
    recorded, rc = output("pytest --toolselect-baseline main.json\n")
    assert rc == 0 and "baseline: recorded to" in recorded
    assert fake_api.requests, "the real-model command asked the (fake) API"
    gated, rc = output("sed -i.bak")
    assert rc == 1 and "13 cases: 1 regression, 12 held" in gated, gated
    assert "tools changed since the baseline: 1" in gated
    examples, rc = output("cd .. && pytest examples")
    assert rc == 0 and re.search(r"baseline: recorded to \S*b\.json", examples), examples
