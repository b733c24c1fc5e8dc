"""The repository's shared pytest setup, for the test suite and the benchmarks.

pytester (enabled in pyproject's addopts) and a throwaway user project written into its folder
(config, tools, case files, baselines); the test MCP servers over stdio and streamable HTTP
(``tests/servers``); the fake model API on 127.0.0.1 (``tests/fakeapi.py``: the ``fake_api``
and ``refused_url`` fixtures). ``tests`` is on sys.path (pyproject's ``pythonpath``).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import pkgutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bm25s  # noqa: F401  (imported once here: numpy cannot be re-imported after
import mcp.client.stdio  # noqa: F401  (pytester's in-process runs restore sys.modules, and the
import pytest  # SDK would be imported again in every run that starts a server)
import yaml
from fakeapi import fake_api_fixture, refused_url_fixture  # noqa: F401  (the fixtures)
from hypothesis import HealthCheck, settings

#: what a run imports only once it needs it. pytester's in-process runs restore sys.modules
#: after each run, so a module first imported inside one is imported (and, without
#: bytecode files, compiled) again in the next: imported here once, every in-process run
#: finds them loaded (this halves the CPU of the files that run pytest in process)
LAZY_IMPORTS = ("jsonschema", "referencing", "jsonschema_specifications", "httpcore2", "httpcore",
                "h11", "h2.connection", "hpack", "truststore", "mcp.client.streamable_http",
                "openai.resources.chat", "_pytest.stepwise")


def _import_once() -> None:
    import pytest_toolselect

    names = [m.name for m in pkgutil.walk_packages(pytest_toolselect.__path__, "pytest_toolselect.")
             if not m.name.endswith("__main__")]
    for name in (*names, *LAZY_IMPORTS):
        # a route whose extra is not installed: its own tests say so (harness_support)
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


_import_once()

HERE = Path(__file__).parent / "tests"
TOOLS_SERVER = HERE / "servers" / "tools_server.py"

# a property's outcome never depends on the machine's load: no per-example deadline and no
# health check on how fast inputs are generated (a loaded machine failed both)
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

#: the bad-input corpus is data for test_bad_input.py: collected, each of its case and
#: groups files would be a collection error in every run of the suite
collect_ignore = ["tests/badinput"]

#: a small registry whose tools local/bm25 tells apart on plain questions
REGISTRY_TOOLS = [
    {"name": "find_company",
     "description": "Search the company register by company name; returns matching companies "
                    "with their company numbers.",
     "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                     "required": ["name"]}},
    {"name": "list_officers",
     "description": "List the officers of a company (directors and secretaries) by company number.",
     "inputSchema": {"type": "object", "properties": {"company_number": {"type": "string"}},
                     "required": ["company_number"]}},
    {"name": "lookup_vat",
     "description": "Check a VAT registration number and return the business registered under it.",
     "inputSchema": {"type": "object", "properties": {"vat_number": {"type": "string"}},
                     "required": ["vat_number"]}},
]


#: a test that runs pytest with xdist workers of its own. Under the suite's `-n 2` two such
#: tests at once would be six interpreters on two cores: with `--dist loadgroup` (pyproject's
#: addopts) the group runs on one worker, one test after another, beside the other worker
NESTED_XDIST = pytest.mark.xdist_group("nested-xdist")


#: the bearer token the streamable HTTP test server requires
HTTP_TOKEN = "t0k-" + "h" * 8


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def http_mcp_server(tools: list[dict[str, Any]], *args: str) -> Iterator[str]:
    """A real MCP server over streamable HTTP on a free port, answering only requests that
    carry ``Authorization: Bearer HTTP_TOKEN``; yields its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(TOOLS_SERVER), "--http", str(port), "--tools", json.dumps(tools),
         "--require-token", HTTP_TOKEN, *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the HTTP MCP server exited: {proc.stderr.read()!r}")  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("the HTTP MCP server did not come up in 120 s")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()  # type: ignore[union-attr]


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump(data: Any) -> str:
    """YAML without anchors and aliases (the case loader refuses aliases)."""
    return yaml.dump(data, Dumper=_NoAliases, sort_keys=False)


class Project:
    """Writes the files of a user's project into pytester's folder."""

    def __init__(self, pytester: pytest.Pytester | None, path: Path | None = None) -> None:
        # without pytester (a module-scoped project run in a subprocess), give the folder
        self.pytester = pytester  # type: ignore[assignment]
        self.path = pytester.path if pytester is not None else path  # type: ignore[assignment]

    def tools_file(self, name: str = "registry", tools: list[dict[str, Any]] | None = None) -> str:
        path = self.path / f"{name}.tools.json"
        path.write_text(json.dumps({"tools": REGISTRY_TOOLS if tools is None else tools}))
        return path.name

    def config(self, servers: dict[str, Any] | None = None, **options: Any) -> Path:
        if servers is None:
            servers = {"registry": {"tools_file": self.tools_file()}}
        data = {"servers": servers, **options}
        path = self.path / "toolselect.yaml"
        path.write_text(dump(data))
        return path

    def stdio_server(self, tools: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        """A server entry that starts the test MCP server over stdio."""
        args = [str(TOOLS_SERVER), "--tools", json.dumps(tools)]
        for key, value in extra.pop("flags", {}).items():
            args += [f"--{key}", str(value)]
        return {"command": sys.executable, "args": args, **extra}

    def cases(self, cases: list[dict[str, Any]], name: str = "registry",
              servers: list[str] | None = None) -> Path:
        doc: dict[str, Any] = {"schema_version": "toolselect_cases.v1"}
        if servers is not None:
            doc["servers"] = servers
        doc["cases"] = cases
        path = self.path / f"{name}.toolselect.yaml"
        path.write_text(dump(doc))
        return path

    def baseline(self, cases: dict[str, dict[str, Any]], name: str = "base.json",
                 subject: dict[str, Any] | None = None) -> Path:
        subject = subject or {"provider": "local", "model": "local/bm25",
                              "settings": {"bm25_threshold": 1.0}, "system_hash": None}
        entries = {k: {"passes": 1 if v.get("status") == "held" else 0, "reps": 1, **v}
                   for k, v in cases.items()}
        path = self.path / name
        path.write_text(json.dumps({"schema_version": "toolselect_baseline.v1",
                                    "subject": subject, "cases": entries}))
        return path

    def read_baseline(self, name: str = "base.json") -> dict[str, Any]:
        return json.loads((self.path / name).read_text())


def case(id: str, question: str, expect: list[str] | None, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"id": id, "question": question}
    if expect is not None:
        data["expect_tool"] = expect
    data.update(fields)
    data.setdefault("why", f"{id} has a reason")
    return data


#: questions local/bm25 answers right on REGISTRY_TOOLS
FIND = ("find", "Find the company called Acme Widgets in the company register", ["find_company"])
OFFICERS = ("officers", "Who are the directors and officers of company 01234567?", ["list_officers"])
OUT_OF_SCOPE = ("weather", "What will the weather be like in Paris tomorrow?", [])
#: one it gets wrong: asks for officers in words that match find_company better
WRONG = ("wrong", "Find the company register entry with the people running Acme", ["list_officers"])


#: a conftest for pytester runs: a model that follows plan.json, for each question the
#: tool it calls on each rep (rep n uses entry n modulo the plan's length). A step is a
#: tool name, null (no call), or {"tool", "args", "cost", "usage"} for a priced call
PLANNED = '''
import json
from pathlib import Path
from pytest_toolselect.providers import Turn
from pytest_toolselect.exchange.tool import ToolCall

class Planned:
    model = "script/planned"
    # a plan names the tools a model picks; valid_arguments is tested with real arguments
    fills_arguments = False

    def subject(self):
        return {"provider": "script", "model": self.model}

    async def first_turn(self, request):
        plan = json.loads(Path("plan.json").read_text())[request.question]
        step = plan[request.rep % len(plan)]
        if not isinstance(step, dict):
            step = {"tool": step}
        calls = (ToolCall(step["tool"], step.get("args", {})),) if step["tool"] else ()
        return Turn(calls=calls, usage=step.get("usage", {}), cost_usd=step.get("cost"))

def pytest_toolselect_provider(model, config):
    if model == "script/planned":
        return Planned()
'''


#: the modules whose tests take longest (a harness call or a subprocess run each, tens of
#: seconds), longest first. xdist hands out tests in collection order (the groups first, the
#: largest first): started last, one of these would leave one worker running alone at the end
LONG_FIRST = ("test_claude_code.py", "test_two_transports.py", "test_openai_agents.py",
              "test_docs_walk.py", "test_concurrency_e2e.py", "test_servers_from.py",
              "test_import_cost.py", "test_lint_rugpull.py", "test_baseline_safety.py",
              "test_html_layout.py", "test_tools_command.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep order


@pytest.fixture(scope="session", autouse=True)
def _not_in_ci() -> Iterator[None]:
    # under CI=true a run refuses to record a missing baseline; the suite's runs are local
    # runs (as a developer's) unless a test sets CI itself. Session-scoped: module-scoped
    # projects start their runs before any function-scoped fixture
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("CI", raising=False)
        yield


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    # hypothesis's plugin imports all of hypothesis in every inner run's summary (~2 s).
    # Attribution off: the suite's scripted models answer by the question alone, so a
    # regression they script with unchanged tools is drift to attribution (the model moved);
    # the attribution's own tests turn it on (a later flag wins)
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest --toolselect-attribution=off")
    return Project(pytester)


# pytest put the repository's root on sys.path to import this file. The source tree's
# egg-info (left there by `pip install -e`) would then make every in-process pytester run
# find the package as a distribution to rewrite, and warn that it is already imported.
# Nothing needs the root on the path: the package is installed, and `from conftest
# import ...` finds this module in sys.modules.
_ROOT = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if not p or str(Path(p).resolve()) != _ROOT]
