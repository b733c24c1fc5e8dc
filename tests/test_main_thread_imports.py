"""No module of the package is imported for the first time off the main thread.

pytest parses a plugin's modules as it imports them (assertion rewriting), and two threads
parsing at once can fail on CPython 3.11 ("AST constructor recursion depth mismatch"), the
more often the busier the machine: the suite saw it under load. The run imports its parts on
the main thread before its threads (the calls' event loop, discovery) start.
"""

from __future__ import annotations

import json

import pytest

from conftest import FIND, OFFICERS, REGISTRY_TOOLS, WRONG, Project, case

#: records, in every process of the run, each import of the package made off the main thread
AUDIT = '''
import json, os, sys, threading

_off_main = []

def _audit(event, args):
    if (event == "import" and args[0].startswith("pytest_toolselect")
            and threading.current_thread() is not threading.main_thread()):
        _off_main.append([args[0], threading.current_thread().name])

sys.addaudithook(_audit)

def pytest_unconfigure(config):
    with open(os.path.join(os.environ["AUDIT_DIR"], f"{os.getpid()}.json"), "w") as f:
        json.dump(_off_main, f)
'''


@pytest.mark.parametrize("args", [[], ["--toolselect-lint", "--toolselect-reps", "3"]],
                         ids=["cases", "lint-and-reps"])
def test_the_runs_threads_import_nothing_of_the_package(project: Project,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path_factory: pytest.TempPathFactory,
                                                        args: list[str]) -> None:
    project.config({"registry": project.stdio_server(REGISTRY_TOOLS)})
    project.cases([case(*FIND), case(*OFFICERS), case(*WRONG)])
    (project.path / "conftest.py").write_text(AUDIT)
    audit = tmp_path_factory.mktemp("audit")
    monkeypatch.setenv("AUDIT_DIR", str(audit))
    result = project.pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                                   "--toolselect-baseline=base.json", *args)
    assert result.ret in (0, 1), result.stdout.str()
    assert "cases:" in result.stdout.str()  # the cases ran (a thread asked the model)
    (recorded,) = [json.loads(p.read_text()) for p in audit.iterdir()]
    assert recorded == []


def test_importing_the_parts_brings_in_no_heavy_library() -> None:
    import subprocess
    import sys

    code = ("import sys; from pytest_toolselect.run.imports import import_parts; import_parts(); "
            "print([m for m in ('anthropic', 'openai', 'litellm', 'numpy', 'mcp', 'bm25s', "
            "'jsonschema', 'httpx') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
