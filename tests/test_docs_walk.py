"""docs/getting-started.md is run as written: every shell command on it, in order, in one
shell, in an empty folder outside the repository with the package installed from the clone
(the servers come from `toolselect example`), and what the page says of each holds."""

from __future__ import annotations

import os
import re
import site
import subprocess
import sys
from pathlib import Path

from fakeapi import FakeAPI, fake_api_fixture  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "getting-started.md"
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.M | re.S)
#: installing from the index needs the package published: the page's install line is checked as
#: done by the install from the clone (the package imports from the new environment)
INSTALL = "pip install pytest-toolselect"


def blocks() -> list[str]:
    return BLOCK.findall(PAGE.read_text(encoding="utf-8"))


def test_the_page_shows_the_path_in_order() -> None:
    text = "\n".join(blocks())
    steps = ["pip install", "toolselect example", "cat > .mcp.json", "servers_from: .mcp.json",
             "toolselect tools", "toolselect init", "toolselect lint", "--toolselect-dry-run",
             "pytest --toolselect-baseline main.json", "sed -i.bak"]
    at = [text.find(s) for s in steps]
    assert all(i >= 0 for i in at) and at == sorted(at), list(zip(steps, at, strict=True))


def fresh_install(folder: Path) -> Path:
    """A new virtual environment with the package installed from the clone, as the page says
    (pip install <clone>: a wheel, not the source tree); its dependencies are the suite's,
    seen through a .pth line written after the install, so pip fetches nothing but the build
    backend. Returns its bin folder, with `pytest` run by its own interpreter."""
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-deps", str(ROOT)], check=True, timeout=300, cwd=folder)
    site_packages = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                   capture_output=True, text=True, check=True).stdout.strip()
    Path(site_packages, "suite-dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    pytest_script = venv / "bin" / "pytest"
    pytest_script.write_text(f'#!/bin/sh\nexec "{python}" -m pytest "$@"\n')
    pytest_script.chmod(0o755)
    return venv / "bin"


def test_every_command_on_the_page_runs_as_it_says(tmp_path: Path, fake_api: FakeAPI) -> None:
    bin_folder = fresh_install(tmp_path)
    work = tmp_path / "work"  # empty: only what pip installed and what the page writes
    work.mkdir()
    script = []
    for i, block in enumerate(blocks()):
        body = block.replace(INSTALL, f"{bin_folder / 'python'} -c 'import pytest_toolselect as p; "
                                      f"assert p.__file__.startswith(\"{tmp_path}\"), p.__file__'", 1)
        if "pytest examples" in body and "examples" not in "".join(script):
            # the page's last section is the repository's examples folder, from the clone's root
            script.append(f"cp -r '{ROOT / 'examples'}' ../examples")
        script += [f"echo '@@block {i}'", body.rstrip("\n"), f"echo \"@@rc {i} $?\""]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    suite_bin = os.path.dirname(sys.executable)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != suite_bin]
    env.update({
        "PATH": os.pathsep.join([str(bin_folder), *path]),
        "PYTEST_ADDOPTS": "-p no:cacheprovider -p no:hypothesispytest",
        # the one real-model command goes to the suite's fake Anthropic API, as a user's goes to theirs
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_api.url,
    })
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env,
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
    written, rc = output("toolselect example")
    assert rc == 0 and (work / "gate" / "companies" / "server.py").is_file(), written
    tools, rc = output("toolselect tools")
    assert rc == 0 and "finance: 6 tools (from .mcp.json:5)" in tools
    started, rc = output("toolselect init")
    assert rc == 0 and "wrote" in started and (work / "gate" / "starter.toolselect.yaml").is_file()
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
