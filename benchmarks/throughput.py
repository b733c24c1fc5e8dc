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
reported apart. Target: the plugin's call phase within 1.3x of the bare client's.

    python benchmarks/throughput.py [--calls 400] [--latency 0.2] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

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


class Timed:
    """A FakeAPI handler that holds each request for `latency` and timestamps it."""

    def __init__(self, latency: float) -> None:
        from fakeapi import Reply

        self.latency = latency
        # a model that answers from the question, so every generated case passes
        self.replies = {
            "directors": Reply(tool_calls=[("list_officers", {"company_number": "01234567"})],
                               input_tokens=1000, output_tokens=100),
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
        return next((r for k, r in self.replies.items() if k in question), self.no_tool)

    def take(self) -> list[tuple[float, float]]:
        with self._lock:
            spans, self.spans = self.spans, []
        return spans


def phase(spans: list[tuple[float, float]]) -> float:
    return max(e for _, e in spans) - min(s for s, _ in spans)


# --- the bare client ---------------------------------------------------------------------

def anthropic_body(i: int) -> dict[str, Any]:
    """What the plugin sends for one case (the Messages API body)."""
    tools = [{"name": t["name"], "description": t["description"], "input_schema": t["inputSchema"]}
             for t in TOOLS]
    tools[-1]["cache_control"] = {"type": "ephemeral"}
    return {"model": "bench", "max_tokens": 1024,
            "messages": [{"role": "user", "content": f"Find the company called Acme Widgets {i}"}],
            "tools": tools, "tool_choice": {"type": "auto"}}


async def bare_calls(url: str, calls: int, concurrency: int) -> None:
    import httpx

    headers = {"x-api-key": FAKE_KEY, "anthropic-version": "2023-06-01"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    slots = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=60) as client:
        async def one(i: int) -> None:
            async with slots:
                r = await client.post("/v1/messages", json=anthropic_body(i))
                r.raise_for_status()
                assert r.json()["content"][0]["name"] == "find_company"

        await asyncio.gather(*(one(i) for i in range(calls)))


def bare_in_process(url: str, calls: int, concurrency: int) -> float:
    started = time.monotonic()
    asyncio.run(bare_calls(url, calls, concurrency))
    return time.monotonic() - started


def bare_subprocess(url: str, calls: int, concurrency: int) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, __file__, "--bare", url, "--calls", str(calls),
                    "--concurrency", str(concurrency)], check=True, env=bench_env())
    return time.monotonic() - started


# --- the plugin --------------------------------------------------------------------------

def make_project(root: Path, url: str, calls: int) -> None:
    tools = write_tools_file(root)
    write_config(root, f"""servers:
  registry: {{tools_file: {tools}}}
model: anthropic/bench
api_base: {url}
prices:
  anthropic/bench: {{input_per_mtok: 1.0, output_per_mtok: 2.0}}
""")
    write_cases(root, calls)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--bare", metavar="URL", help=argparse.SUPPRESS)  # the subprocess client
    opts = parser.parse_args()
    if opts.bare:
        asyncio.run(bare_calls(opts.bare, opts.calls, opts.concurrency))
        return

    from fakeapi import FakeAPI

    n, lat, c = opts.calls, opts.latency, opts.concurrency
    ideal = n * lat / c
    timed = Timed(lat)
    api = FakeAPI()
    api.handler = timed
    api.start()
    rows: list[list[Any]] = []
    try:
        bare_in_process(api.url, 32, c)  # warm the server's code paths
        timed.take()
        bare_wall = bare_in_process(api.url, n, c)
        bare_in = phase(timed.take())
        bare_sub_wall = bare_subprocess(api.url, n, c)
        bare_sub = phase(timed.take())
        floor = min(bare_in, bare_sub)
        rows.append(["ideal (calls x latency / concurrency)", f"{ideal:.2f}", "", "", "", ""])
        rows.append(["bare httpx, in this process", f"{bare_in:.2f}", f"{bare_in / floor:.2f}x",
                     "", "", f"{bare_wall:.2f}"])
        rows.append(["bare httpx, subprocess", f"{bare_sub:.2f}", f"{bare_sub / floor:.2f}x",
                     "", "", f"{bare_sub_wall:.2f}"])

        results = {}
        with tempdir("throughput") as tmp:
            root = Path(tmp)
            make_project(root, api.url, n)
            env = bench_env(ANTHROPIC_API_KEY=FAKE_KEY)
            for label, args in [
                (f"plugin, serial, concurrency {c}", ["--toolselect-concurrency", str(c)]),
                (f"plugin, -n 2, concurrency {c // 2} each",
                 ["-n", "2", "--toolselect-concurrency", str(c // 2)]),
            ]:
                api.max_in_flight = 0
                run = run_pytest(root, "-q", "-p", "no:cacheprovider", *args, env=env)
                check(run)
                spans = timed.take()
                if len(spans) != n or f"{n} passed" not in run.stdout:
                    sys.exit(f"{label}: expected {n} calls and {n} passes, got {len(spans)} calls\n"
                             f"{run.tail()}")
                call = phase(spans)
                first = min(s for s, _ in spans)
                last = max(e for _, e in spans)
                startup = first - run.started
                tail = run.ended - last
                results[label] = call / floor
                rows.append([label, f"{call:.2f}", f"{call / floor:.2f}x", f"{startup:.2f}",
                             f"{tail:.2f}", f"{run.wall:.2f}"])
                rows.append([f"  (max in flight at the server: {api.max_in_flight})", "", "", "", "",
                             ""])
    finally:
        api.stop()

    print(f"throughput: {n} calls, {lat * 1000:.0f} ms latency, {c} in flight "
          f"(fake Anthropic API on loopback; times in seconds)")
    print(load_line())
    print(table(rows, ["", "call phase", "vs floor", "startup", "tail", "wall"]))
    print(f"floor = the faster bare client ({floor:.2f} s); ideal {ideal:.2f} s; "
          f"target: call phase <= {TARGET}x floor")
    for label, ratio in results.items():
        print(f"  {label}: {ratio:.2f}x  {verdict(ratio <= TARGET)}")
    print(json.dumps({"ideal": round(ideal, 3), "bare_in_process": round(bare_in, 3),
                      "bare_subprocess": round(bare_sub, 3),
                      **{k: round(v, 3) for k, v in results.items()}}))


if __name__ == "__main__":
    main()
