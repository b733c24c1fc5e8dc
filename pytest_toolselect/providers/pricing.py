"""What a call cost: a `prices` override, else litellm's price map (read without importing litellm)."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Mapping
from typing import Any

from pytest_toolselect.exchange.context import GivenTurn, context_to_data
from pytest_toolselect.messages.errors import ToolselectError, nearest
from pytest_toolselect.positions.bounded import read_bounded

#: the keys of one `prices` entry, per million tokens
PRICE_KEYS = ("input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok")


def check_prices(prices: Mapping[str, Mapping[str, float]]) -> None:
    """Refuse a malformed `prices` table up front, naming the model and the key."""
    for model, entry in prices.items():
        if not isinstance(entry, Mapping):
            raise ToolselectError(f"prices[{model!r}] must be a table of per-million-token prices",
                                  fix=f"keys: {', '.join(PRICE_KEYS)}")
        for key, value in entry.items():
            if key not in PRICE_KEYS:
                near = nearest(key, PRICE_KEYS)
                raise ToolselectError(
                    f"prices[{model!r}]: unknown key {key!r}",
                    fix=f"did you mean {near!r}?" if near else f"keys: {', '.join(PRICE_KEYS)}",
                )
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ToolselectError(f"prices[{model!r}][{key!r}] must be a number >= 0, not {value!r}")
        for key in PRICE_KEYS[:2]:
            if key not in entry:
                raise ToolselectError(f"prices[{model!r}] lacks {key!r}",
                                      fix="input_per_mtok and output_per_mtok are required")


def _model_keys(model: str) -> list[str]:
    """The model string as given, then without its provider prefix."""
    keys = [model]
    if "/" in model:
        keys.append(model.split("/", 1)[1])
    return keys


_PRICE_LOCK = threading.Lock()
_BUNDLED: dict[str, Any] | None = None


def _price_map() -> Mapping[str, Any]:
    """litellm's price map, without importing litellm unless it already is.

    Importing litellm costs 5-6 s. An Anthropic run only needs the price map,
    which litellm ships as a JSON file, so that file is read (~0.1 s) instead.
    When litellm is loaded (a litellm run) its live `model_cost` is used, so
    litellm.register_model() additions count.
    """
    global _BUNDLED
    litellm = sys.modules.get("litellm")
    cost = getattr(litellm, "model_cost", None)
    if isinstance(cost, Mapping):
        return cost
    with _PRICE_LOCK:
        if _BUNDLED is None:
            _BUNDLED = _read_bundled_map()
        return _BUNDLED


def _read_bundled_map() -> dict[str, Any]:
    import importlib.util

    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.origin:
        return {}
    path = os.path.join(os.path.dirname(spec.origin), "model_prices_and_context_window_backup.json")

    try:
        data = json.loads(read_bounded(path, 64 * 1024 * 1024))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def price_per_token(model: str, prices: Mapping[str, Mapping[str, float]]) -> dict[str, float] | None:
    """(input, output, cache_read, cache_write) USD per token, or None when unknown.

    A `prices` override wins over the price map; missing cache prices fall back
    to the input price (an estimate, never a free token).
    """
    for key in _model_keys(model):
        entry = prices.get(key)
        if entry is not None:
            per_mtok = {k: float(v) for k, v in entry.items()}
            inp = per_mtok["input_per_mtok"]
            return {"input": inp / 1e6, "output": per_mtok["output_per_mtok"] / 1e6,
                    "cache_read": per_mtok.get("cache_read_per_mtok", inp) / 1e6,
                    "cache_write": per_mtok.get("cache_write_per_mtok", inp) / 1e6}
    table = _price_map()
    for key in _model_keys(model):
        info = table.get(key)
        if not isinstance(info, Mapping):
            continue
        per_token = {k: float(v) for k, v in info.items()
                     if isinstance(v, (int, float)) and not isinstance(v, bool)}
        if "input_cost_per_token" not in per_token or "output_cost_per_token" not in per_token:
            continue
        inp = per_token["input_cost_per_token"]
        return {"input": inp, "output": per_token["output_cost_per_token"],
                "cache_read": per_token.get("cache_read_input_token_cost", inp),
                "cache_write": per_token.get("cache_creation_input_token_cost", inp)}
    return None


def cost_usd(model: str, usage: Mapping[str, int], prices: Mapping[str, Mapping[str, float]]) -> float | None:
    """What one call cost, from its usage; None when no price is known for the model."""
    price = price_per_token(model, prices)
    if price is None:
        return None
    return (usage.get("input_tokens", 0) * price["input"]
            + usage.get("output_tokens", 0) * price["output"]
            + usage.get("cache_read_tokens", 0) * price["cache_read"]
            + usage.get("cache_write_tokens", 0) * price["cache_write"])


#: input tokens an API adds to a request's own text: its tool-use preamble (a few hundred
#: tokens on Anthropic's API), the message framing, each tool's wrapping
FRAMING_TOKENS = 1000


def request_bytes(question: str, system: str | None, tools: Any,
                  context: tuple[GivenTurn, ...] = ()) -> int:
    """The UTF-8 size of what a request asks (question, system prompt, tools as JSON, any
    context's calls and results as JSON): a bound on its input tokens, since no token of a
    byte-level BPE vocabulary is shorter than a byte."""
    text = question + (system or "") + json.dumps([t.to_dict() for t in tools], default=str)
    if context:
        text += json.dumps(context_to_data(context), ensure_ascii=False, default=str)
    return len(text.encode("utf-8"))


def reservation_usd(model: str, prices: Mapping[str, Mapping[str, float]], *, max_tokens: int,
                    size: int) -> float | None:
    """The most one call can cost (None: no price known): a request of `size` bytes as
    input tokens plus FRAMING_TOKENS, at the dearest input rate (a cache write costs more
    than plain input), and max_tokens of output."""
    price = price_per_token(model, prices)
    if price is None:
        return None
    dearest = max(price["input"], price["cache_read"], price["cache_write"])
    return (size + FRAMING_TOKENS) * dearest + max(0, max_tokens) * price["output"]
