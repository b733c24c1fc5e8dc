"""The --toolselect-* options as data: one table, each flag also an ini key.

The plugin registers them with pytest (:mod:`pytest_toolselect.plugin.options`); the run
resolves them (:mod:`pytest_toolselect.run.settings`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_toolselect.inputs.shard_option import shard_problem
from pytest_toolselect.terms.rule_names import (
    DEFAULT_HISTORY,
    DEFAULT_MAX_EXTRA_REPS,
    DEFAULT_RULE,
    RULE_NAMES,
    rule_problem,
)

from .report_formats import FORMATS

DEFAULT_MODEL = "local/bm25"
#: seconds an MCP server gets to start and list its tools, unless told otherwise
DEFAULT_DISCOVERY_TIMEOUT = 30.0


@dataclass(frozen=True)
class Option:
    name: str  # snake_case; flag --toolselect-<name with dashes>, ini toolselect_<name>
    kind: str  # "str", "path", "int", "float", "bool"
    default: Any
    help: str
    #: an extra check on the value: returns an error message or None
    check: Callable[[Any], str | None] | None = None

    @property
    def flag(self) -> str:
        return "--toolselect-" + self.name.replace("_", "-")

    @property
    def ini(self) -> str:
        return "toolselect_" + self.name


def _positive(v: Any) -> str | None:
    return None if v >= 1 else "must be 1 or more"


def _positive_float(v: Any) -> str | None:
    return None if v > 0 else "must be more than 0"


def _non_negative(v: Any) -> str | None:
    return None if v >= 0 else "must be 0 or more"


def _max_calls(v: Any) -> str | None:
    parts = str(v).strip().split("/")
    if len(parts) in (1, 2) and all(p.isdigit() for p in parts):
        return None
    return "must be PER_CASE or PER_CASE/PER_RUN, counts of 0 or more (e.g. 90/450)"


def _shard(v: Any) -> str | None:
    return shard_problem(v)


OPTIONS: tuple[Option, ...] = (
    Option("model", "str", DEFAULT_MODEL,
           "model to ask: local/bm25 (embedded, offline), anthropic/<model>, openai/<model> (or another "
           "OpenAI-compatible provider), or any litellm model string"),
    Option("baseline", "path", None,
           "baseline file to gate against; recorded when it does not exist"),
    Option("update_baseline", "bool", False, "rewrite the baseline with this run's results"),
    Option("reps", "int", 1, "how many times to ask per case (3 surfaces flaky cases)", _positive),
    Option("fail_on_still_failing", "bool", False,
           "also fail on cases that failed on the baseline and still fail"),
    Option("fail_on_flaky", "bool", False, "also fail on cases whose reps disagree"),
    Option("fail_on_drift", "bool", False,
           "also fail on drift: a case that fails with the baseline's own tools now too (the "
           "model moved, not the pull request; see docs/gate.md)"),
    Option("history", "int", DEFAULT_HISTORY,
           "runs per case the baseline keeps when updated, so a case that wobbles on main is known "
           "as marginal", _positive),
    Option("rule", "str", DEFAULT_RULE,
           f"how a drop is judged a regression: {', '.join(RULE_NAMES)} (see docs/gate.md)",
           rule_problem),
    Option("adaptive", "str", "on",
           "on: ask again, in batches, for a case whose reps the rule cannot settle (and, when "
           "recording, one whose reps disagree); off: fixed reps (see docs/gate.md)",
           lambda v: None if v in ("on", "off") else "must be on or off"),
    Option("max_extra_reps", "int", DEFAULT_MAX_EXTRA_REPS,
           "adaptive reps: at most this many extra calls per case", _non_negative),
    Option("attribution", "str", "on",
           "on: ask a case the gate would block again with the baseline's tools, to tell drift "
           "from the pull request and name the edit that broke it; off: do not (docs/gate.md)",
           lambda v: None if v in ("on", "off") else "must be on or off"),
    Option("attribution_max_calls", "str", "90/450",
           "attribution: at most this many calls per case, and per run (PER_CASE/PER_RUN; per "
           "process under -n)", _max_calls),
    Option("fail_on_suite_drop", "bool", False,
           "also fail when the share of cases held fell against the baseline, beyond its 95% interval"),
    Option("bm25_threshold", "float", 1.0,
           "local/bm25: the lowest score at which the top tool is called", _non_negative),
    Option("discovery_timeout", "float", DEFAULT_DISCOVERY_TIMEOUT,
           "seconds an MCP server gets to start and list its tools", _positive_float),
    Option("max_tokens", "int", 1024, "max_tokens sent with every call", _positive),
    Option("temperature", "float", None,
           "sampling temperature (default: the provider's own, and none is sent)", _non_negative),
    Option("api_base", "str", None,
           "the API's base URL: a gateway, a proxy, or a local OpenAI-compatible server"),
    Option("api_key_env", "str", None,
           "the environment variable holding the API key (default: the provider's usual one)"),
    Option("timeout", "float", 60.0, "seconds one model call may take", _positive_float),
    Option("retries", "int", 4,
           "retries of a call after a 408/409/429/5xx, overload or connection error", _non_negative),
    Option("retry_backoff", "float", 1.0,
           "seconds before the first retry; doubles each time (retry-after wins)", _non_negative),
    Option("no_prompt_caching", "bool", False,
           "anthropic: do not mark the tool list as a cacheable prompt prefix"),
    Option("max_cost_usd", "float", None,
           "stop starting calls once priced calls have spent this much, across all -n workers "
           "(the run exits 2)",
           _non_negative),
    Option("shard", "str", None,
           "run only shard K of N (e.g. 2/3): a stable share of the items by their case key; "
           "`toolselect merge` joins the shards' --toolselect-json files", _shard),
    Option("concurrency", "int", 8, "model calls in flight at once (per process)", _positive),
    Option("harness_tool_search", "str", "auto",
           "claude-code/...: the harness's tool search on, off, or auto (its own default)",
           lambda v: None if v in ("on", "off", "auto") else "must be on, off or auto"),
    Option("harness_user_settings", "bool", False,
           "harness routes: run with your own settings, plugins and CLAUDE.md (default: a "
           "temporary home, so nothing of yours reaches the results)"),
    Option("harness_concurrency", "int", 4, "harness routes: harness processes at once",
           _positive),
    Option("rpm", "float", None, "at most this many requests per minute (spaced evenly)",
           _positive_float),
    Option("tpm", "float", None, "at most this many prompt tokens per minute (estimated)",
           _positive_float),
    Option("cache", "path", None,
           "SQLite response cache: unchanged requests are answered from it, not asked again"),
    Option("cache_mode", "str", None,
           "off, read-write (the default with --toolselect-cache), replay (a miss is an error), "
           "refresh (ask again and overwrite)"),
    Option("seed", "int", 0, "seed of the preference probe's bootstrap (same seed, same CIs)",
           _non_negative),
    Option("min_effect_change", "float", None,
           "preference probe: block when a factor effect or the position bias moved by at least "
           "this much against the baseline, with a CI that excludes 0", _non_negative),
    # a report format's option, one per row of the formats' table
    *(Option(row.name, "path", None, row.option_help) for row in FORMATS),
    Option("lint", "bool", False,
           "add one item per server that lints its tool set (docs/lint.md); error-level findings "
           "the baseline does not hold fail it"),
    Option("dry_run", "bool", False,
           "count the items and calls per group and in total, estimate the cost, call nothing"),
    Option("config", "path", None,
           "toolselect config file (default: toolselect.yaml at the rootdir, "
           "else [tool.toolselect] in pyproject.toml)"),
)

BY_NAME = {o.name: o for o in OPTIONS}
