"""``valid_arguments``: what validating a call against its tool's input schema costs.

A schema's validator is built once per process (jsonschema's metaschema check of the
schema, then the validator): that is paid by the first call to each tool. Every call
after it is one validation. Measured on the order desk's schemas (tests/servers/
orders_server.py: $ref, anyOf, nested objects and arrays) and on generated tools, each a
distinct schema. Target: a call validates in under 5 ms once its tool's validator is built
(a model call it follows takes hundreds of milliseconds).

    python benchmarks/valid_arguments_speed.py   # ~10 s
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_MS = 5.0
CALLS = 2_000
TOOLS = 200


def main() -> int:
    sys.path.insert(0, str(REPO / "tests" / "servers"))
    import orders_server

    from pytest_toolselect.exchange.tool import Tool, ToolCall
    from pytest_toolselect.scoring import argschema

    listed = asyncio.run(orders_server.server.list_tools())
    order = next(t for t in listed if t.name == "place_order")
    tool = Tool(order.name, order.description or "", order.input_schema)
    good = {"customer_id": 7, "lines": [{"sku": "AB-1234", "quantity": 2}] * 5,
            "ship_to": {"street": "1 High St", "postcode": "N1 9GU"}, "gift_note": None}
    bad = {**good, "customer_id": "7", "priority": "urgent", "ship_to": {"floor": 1}}

    t0 = time.perf_counter()
    argschema.check_valid_arguments([ToolCall(tool.name, good)], [tool])
    first_ms = (time.perf_counter() - t0) * 1000

    def per_call(arguments: dict[str, object]) -> float:
        t0 = time.perf_counter()
        for _ in range(CALLS):
            argschema.check_valid_arguments([ToolCall(tool.name, arguments)], [tool])
        return (time.perf_counter() - t0) / CALLS * 1000

    valid_ms, invalid_ms = per_call(good), per_call(bad)

    builds = []
    for i in range(TOOLS):
        schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"},
                                                   "q": {"enum": ["a", "b"]}},
                  "required": [f"p{i}"], "additionalProperties": False}
        t0 = time.perf_counter()
        argschema.check_valid_arguments([ToolCall("t", {f"p{i}": i})], [Tool("t", "", schema)])
        builds.append((time.perf_counter() - t0) * 1000)

    print(f"{'measure':<48} {'ms':>8}")
    print(f"{'first call to place_order (build + validate)':<48} {first_ms:>8.2f}")
    print(f"{'a valid call, validator built (mean of 2,000)':<48} {valid_ms:>8.3f}")
    print(f"{'an invalid call, 3 errors named (mean of 2,000)':<48} {invalid_ms:>8.3f}")
    print(f"{f'first call to each of {TOOLS} new tools (median)':<48} "
          f"{statistics.median(builds):>8.2f}")
    print(f"target: a call under {TARGET_MS} ms once built: "
          f"{'met' if max(valid_ms, invalid_ms) < TARGET_MS else 'NOT met'}")
    print(json.dumps({"first_ms": round(first_ms, 2), "valid_ms": round(valid_ms, 4),
                      "invalid_ms": round(invalid_ms, 4),
                      "build_median_ms": round(statistics.median(builds), 2)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
