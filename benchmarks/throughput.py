"""Throughput: 400 model calls at 200 ms latency, 32 in flight, the plugin beside a bare client.

A fake Anthropic Messages API (tests/fakeapi.py) runs in this process with a fixed
latency. The same 400 calls are made to it by

* a bare async client (httpx.AsyncClient, 32 concurrent requests), in this process
  and in a subprocess of its own (the plugin's calls come from a subprocess too,
  so the faster of the two is the floor the plugin is held to);
* the plugin: a real ``python -m pytest`` run on a generated project (400 cases, one
  tools file, model anthropic/bench with a prices entry, api_base = the fake
  server), serial with ``--toolselect-concurrency 32``, and ``-n 2`` with
  ``--toolselect-concurrency 16`` (32 in all).

The call phase is measured on the server: from the first request's arrival to the
last reply, with timestamps taken by a handler that wraps the fake's reply. The
startup (pytest start to first call) and the tail (last reply to exit) are
reported apart. Targets: the plugin's call phase within 1.3x of the bare client's, its
whole process (startup and exit included) within 1.3x of the bare client's, and a one-case
run (the loop a person runs while writing a case) under 1.2 s.

The peers run the same calls beside it when they are installed (``--no-peers`` skips
them): promptfoo (``eval -j 32``) and inspect_ai (``inspect eval --max-connections 32``),
each asking for the first turn with the same tools, against the same fake server; their
one-call time is a one-test run. Neither is a dependency of this project: install them
into a throwaway place and point the benchmark at them, e.g.

    npm install --prefix /tmp/peers promptfoo      # --promptfoo /tmp/peers/node_modules/.bin/promptfoo
    python -m venv /tmp/inspect && /tmp/inspect/bin/pip install inspect_ai openai anthropic
                                                   # --inspect /tmp/inspect/bin/inspect

    python benchmarks/throughput.py [--calls 400] [--latency 0.2] [--concurrency 32] [--no-peers]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from _bare_client import bare_calls
from _common import (
    FAKE_KEY,
    TOOLS,
    bench_env,
    check,
    load_line,
    run_pytest,
    table,
    tempdir,
    verdict,
    write_cases,
    write_config,
    write_tools_file,
)

TARGET = 1.3
WHOLE_TARGET = 1.3  # both routes, whole process (startup and exit included)
ONE_CASE_TARGET = 1.2  # seconds, a one-case run's whole process


class Timed:
    """A FakeAPI handler that holds each request for `latency` and timestamps it."""

    def __init__(self, latency: float) -> None:
        from fakeapi import Reply

        self.latency = latency
        self.reply = Reply
        # a model that answers from the question, so every generated case passes
        self.replies = {
            "Acme": Reply(tool_calls=[("find_company", {"name": "Acme"})],
                          input_tokens=1000, output_tokens=100),
        }
        self.no_tool = Reply(text="I can't help with the weather.", input_tokens=1000,
                             output_tokens=100)
        self.spans: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def __call__(self, body: Any) -> Any:
        arrived = time.monotonic()
        time.sleep(self.latency)
        with self._lock:
            self.spans.append((arrived, time.monotonic()))
        question = json.dumps(body.get("messages")) if isinstance(body, dict) else ""
        # no delay of its own: the wait happened above
        number = re.search(r"officers of company (\d+)", question)
        if number is not None:
            # the question's own number: an invented one would fail the grounding check
            return self.reply(tool_calls=[("list_officers", {"company_number": number[1]})],
                              input_tokens=1000, output_tokens=100)
        return next((r for k, r in self.replies.items() if k in question), self.no_tool)

    def take(self) -> list[tuple[float, float]]:
        with self._lock:
            spans, self.spans = self.spans, []
        return spans


def phase(spans: list[tuple[float, float]]) -> float:
    return max(e for _, e in spans) - min(s for s, _ in spans)


# --- the bare client (benchmarks/_bare_client.py) ---------------------------------------

def bare_in_process(url: str, calls: int, concurrency: int, route: str) -> float:
    started = time.monotonic()
    asyncio.run(bare_calls(url, calls, concurrency, route, TOOLS, FAKE_KEY))
    return time.monotonic() - started


def bare_subprocess(url: str, calls: int, concurrency: int, route: str) -> float:
    with tempdir("bare") as tmp:
        tools = Path(tmp) / "tools.json"
        tools.write_text(json.dumps(TOOLS), encoding="utf-8")
        script = Path(__file__).with_name("_bare_client.py")
        started = time.monotonic()
        subprocess.run([sys.executable, str(script), url, str(calls), str(concurrency), route, str(tools)],
                       check=True, env=bench_env(BENCH_KEY=FAKE_KEY))
        return time.monotonic() - started


# --- the plugin --------------------------------------------------------------------------

MODELS = {"anthropic": "anthropic/bench", "openai": "openai/bench"}


def make_project(root: Path, url: str, calls: int, route: str) -> None:
    tools = write_tools_file(root)
    model = MODELS[route]
    api_base = url if route == "anthropic" else url + "/v1"
    write_config(root, f"""servers:
  registry: {{tools_file: {tools}}}
model: {model}
api_base: {api_base}
prices:
  {model}: {{input_per_mtok: 1.0, output_per_mtok: 2.0}}
""")
    write_cases(root, calls)


def plugin_run(api: Any, timed: Timed, root: Path, n: int, args: list[str], label: str
               ) -> tuple[float, float, float, float]:
    """(call phase, startup, tail, wall) of one plugin run."""
    api.max_in_flight = 0
    env = bench_env(ANTHROPIC_API_KEY=FAKE_KEY, OPENAI_API_KEY=FAKE_KEY)
    run = run_pytest(root, "-q", "-p", "no:cacheprovider", *args, env=env)
    check(run)
    spans = timed.take()
    if len(spans) != n or f"{n} passed" not in run.stdout:
        sys.exit(f"{label}: expected {n} calls and {n} passes, got {len(spans)} calls\n{run.tail()}")
    first = min(s for s, _ in spans)
    last = max(e for _, e in spans)
    return phase(spans), first - run.started, run.ended - last, run.wall


def one_case(api: Any, timed: Timed, url: str, route: str, reps: int = 3) -> tuple[float, float]:
    """(wall, CPU) of the fastest of `reps` one-case runs (a warm-up run first)."""
    best: tuple[float, float] | None = None
    with tempdir(f"one-{route}") as tmp:
        root = Path(tmp)
        make_project(root, url, 1, route)
        env = bench_env(ANTHROPIC_API_KEY=FAKE_KEY, OPENAI_API_KEY=FAKE_KEY)
        for rep in range(reps + 1):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            run = run_pytest(root, "-q", "-p", "no:cacheprovider", env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            check(run)
            timed.take()
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            if rep and (best is None or run.wall < best[0]):
                best = (run.wall, cpu)
    assert best is not None
    return best


# --- the peers ---------------------------------------------------------------------------

PEER_QUESTION = "Find the company called Acme Widgets {i}"


def promptfoo_project(root: Path, url: str, route: str, n: int) -> None:
    tools = ([{"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}
              for t in TOOLS] if route == "anthropic" else
             [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                "parameters": t["inputSchema"]}} for t in TOOLS])
    provider = ({"id": "anthropic:messages:bench", "config": {"apiBaseUrl": url, "apiKey": FAKE_KEY,
                                                              "max_tokens": 1024, "tools": tools}}
                if route == "anthropic" else
                {"id": "openai:chat:bench", "config": {"apiBaseUrl": url + "/v1", "apiKey": FAKE_KEY,
                                                       "max_tokens": 1024, "tools": tools}})
    config = {"prompts": ["{{question}}"], "providers": [provider],
              "tests": [{"vars": {"question": PEER_QUESTION.format(i=i)}} for i in range(n)]}
    (root / "promptfooconfig.json").write_text(json.dumps(config), encoding="utf-8")


INSPECT_TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool


@tool
def find_company():
    async def execute(name: str):
        """Find a company by name.

        Args:
            name: the company's name
        """
        return name
    return execute


@task
def bench():
    return Task(dataset=[Sample(input=__QUESTION__.format(i=i)) for i in range(__N__)],
                solver=[use_tools(find_company()), generate(tool_calls="none")])
'''


def peer_command(peer: str, exe: str, root: Path, url: str, route: str, n: int, c: int) -> list[str]:
    if peer == "promptfoo":
        promptfoo_project(root, url, route, n)
        return [exe, "eval", "-c", str(root / "promptfooconfig.json"), "-j", str(c), "--no-cache",
                "--no-table", "--no-write", "--no-progress-bar"]
    (root / "bench_task.py").write_text(
        INSPECT_TASK.replace("__QUESTION__", repr(PEER_QUESTION)).replace("__N__", str(n)),
        encoding="utf-8")
    model = "anthropic/bench" if route == "anthropic" else "openai/bench"
    base = url if route == "anthropic" else url + "/v1"
    # Chat Completions on the openai/ route, as the plugin and promptfoo speak (inspect_ai's
    # default there is the Responses API)
    args = [] if route == "anthropic" else ["-M", "responses_api=false"]
    return [exe, "eval", "bench_task.py", "--model", model, "--model-base-url", base, *args,
            "--max-connections", str(c), "--no-score", "--display", "none",
            "--log-dir", str(root / "logs")]


def peer_run(peer: str, exe: str, timed: Timed, url: str, route: str, n: int, c: int
             ) -> tuple[float, float, float, float] | str:
    """(call phase, startup, tail, wall) of one peer run, or why it did not run."""
    with tempdir(f"{peer}-{route}") as tmp:
        root = Path(tmp)
        cmd = peer_command(peer, exe, root, url, route, n, c)
        env = bench_env(ANTHROPIC_API_KEY=FAKE_KEY, OPENAI_API_KEY=FAKE_KEY,
                        PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1",
                        PROMPTFOO_CONFIG_DIR=str(root / ".promptfoo"), INSPECT_LOG_DIR=str(root / "logs"))
        started = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return "timed out"
        ended = time.monotonic()
    spans = timed.take()
    if len(spans) < n:
        tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
        return f"{len(spans)} of {n} calls made (exit {proc.returncode}): {tail[:300]}"
    first, last = min(s for s, _ in spans), max(e for _, e in spans)
    return phase(spans), first - started, ended - last, ended - started


def find_peers(opts: argparse.Namespace) -> dict[str, str | None]:
    if opts.no_peers:
        return {}
    return {"promptfoo": opts.promptfoo or shutil.which("promptfoo"),
            "inspect_ai": opts.inspect or shutil.which("inspect")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--routes", default="anthropic,openai", help="comma-separated: anthropic, openai")
    parser.add_argument("--xdist", action="store_true", help="also run -n 2 on each route")
    parser.add_argument("--no-peers", action="store_true", help="skip promptfoo and inspect_ai")
    parser.add_argument("--promptfoo", help="the promptfoo executable (default: on PATH)")
    parser.add_argument("--inspect", help="inspect_ai's inspect executable (default: on PATH)")
    opts = parser.parse_args()
    from fakeapi import FakeAPI

    n, lat, c = opts.calls, opts.latency, opts.concurrency
    ideal = n * lat / c
    timed = Timed(lat)
    api = FakeAPI()
    api.handler = timed
    api.start()
    rows: list[list[Any]] = [["ideal (calls x latency / concurrency)", f"{ideal:.2f}", "", "", "", "",
                              "", ""]]
    results: dict[str, tuple[float, float]] = {}
    ones: dict[str, tuple[float, float]] = {}
    peers = find_peers(opts)
    peer_rows: list[list[Any]] = []
    peer_notes: list[str] = []
    try:
        for route in opts.routes.split(","):
            bare_in_process(api.url, 32, c, route)  # warm the server's code paths
            timed.take()
            bare_in_process(api.url, n, c, route)
            bare_in = phase(timed.take())
            bare_wall = bare_subprocess(api.url, n, c, route)
            bare_sub = phase(timed.take())
            floor = min(bare_in, bare_sub)
            rows.append([f"{route}: bare httpx, subprocess", f"{bare_sub:.2f}", f"{bare_sub / floor:.2f}x",
                         "", "", f"{bare_wall:.2f}", "1.00x", ""])
            runs = [(f"{route}: plugin, serial, concurrency {c}", ["--toolselect-concurrency", str(c)])]
            if opts.xdist:
                runs.append((f"{route}: plugin, -n 2, concurrency {c // 2} each",
                             ["-n", "2", "--toolselect-concurrency", str(c // 2)]))
            with tempdir(f"throughput-{route}") as tmp:
                root = Path(tmp)
                make_project(root, api.url, n, route)
                for label, args in runs:
                    call, startup, tail, wall = plugin_run(api, timed, root, n, args, label)
                    results[label] = (call / floor, wall / bare_wall)
                    rows.append([label, f"{call:.2f}", f"{call / floor:.2f}x", f"{startup:.2f}",
                                 f"{tail:.2f}", f"{wall:.2f}", f"{wall / bare_wall:.2f}x",
                                 str(api.max_in_flight)])
            ones[route] = one_case(api, timed, api.url, route)
            for peer, exe in peers.items():
                if exe is None:
                    peer_rows.append([f"{route}: {peer}", "not installed", "", "", "", "", "", ""])
                    continue
                got = peer_run(peer, exe, timed, api.url, route, n, c)
                one = peer_run(peer, exe, timed, api.url, route, 1, 1)
                if isinstance(got, str):
                    peer_rows.append([f"{route}: {peer}", "failed", "", "", "", "", "", ""])
                    peer_notes.append(f"{route}: {peer}: {got}")
                    continue
                call, startup, tail, wall = got
                one_wall = f"{one[3]:.2f}" if not isinstance(one, str) else one
                peer_rows.append([f"{route}: {peer}", f"{call:.2f}", f"{call / floor:.2f}x", f"{startup:.2f}",
                                  f"{tail:.2f}", f"{wall:.2f}", f"{wall / bare_wall:.2f}x", one_wall])
    finally:
        api.stop()

    print(f"throughput: {n} calls, {lat * 1000:.0f} ms latency, {c} in flight "
          f"(fake Anthropic and OpenAI APIs on loopback; times in seconds)")
    print(load_line())
    print(table(rows, ["", "call phase", "vs floor", "startup", "exit tail", "whole process",
                       "vs bare", "max in flight"]))
    print("floor = the faster bare client's call phase (in this process or a subprocess); "
          "'vs bare' = whole process / the bare client subprocess's whole process")
    print()
    print(table([[f"{route}: plugin, 1 case", f"{wall:.2f}", f"{cpu:.2f}",
                  verdict(wall < ONE_CASE_TARGET)] for route, (wall, cpu) in ones.items()],
                ["", "one-case run, wall", "CPU (user + system)", f"< {ONE_CASE_TARGET} s"]))
    if peer_rows:
        print()
        print(table(peer_rows, ["peer (same calls, same server)", "call phase", "vs floor", "startup",
                                "exit tail", "whole process", "vs bare", "one call, wall"]))
        for note in peer_notes:
            print(f"  {note}")
    elif opts.no_peers:
        print("peers skipped (--no-peers)")
    print(f"targets: call phase <= {TARGET}x floor, whole process <= {WHOLE_TARGET}x bare, "
          f"a one-case run < {ONE_CASE_TARGET} s")
    for label, (call_ratio, whole_ratio) in results.items():
        ok = call_ratio <= TARGET and whole_ratio <= WHOLE_TARGET
        print(f"  {label}: call {call_ratio:.2f}x, whole {whole_ratio:.2f}x  {verdict(ok)}")
    print(json.dumps({"ideal": round(ideal, 3),
                      **{k: {"call": round(v[0], 3), "whole": round(v[1], 3)} for k, v in results.items()},
                      "one_case": {k: {"wall": round(v[0], 3), "cpu": round(v[1], 3)}
                                   for k, v in ones.items()}}))


if __name__ == "__main__":
    main()
