"""Defaults for a model served on this machine (an ``api_base`` on loopback, as
``providers.preflight.is_loopback`` says, the rule the key check reads too).

The plain defaults fit a hosted API: 60 s a call, 8 calls in flight, 4 retries. A local
server on a CPU answers one call at a time in seconds to minutes (SmolLM2 under llama.cpp
on two cores: a median 10.6 s, up to 377 s for the first calls, which read the whole tool
list), so 8 calls in flight queue behind each other and time out, and a retry of a call
that timed out costs as long again. Each applies only where nothing set the option.
"""

from __future__ import annotations

from collections.abc import Mapping

#: the option -> its default when api_base is on loopback
LOCAL_DEFAULTS: Mapping[str, float | int] = {"timeout": 600.0, "concurrency": 1, "retries": 1}
#: where a defaulted option says its value came from
SOURCE = "local server default"


def summary_line(values: Mapping[str, object]) -> str:
    """The summary's line for the options that took a local server's default."""
    unit = {"timeout": " s"}
    said = ", ".join(f"{k} {v:g}{unit.get(k, '')}" if isinstance(v, float) else f"{k} {v}"
                     for k, v in values.items())
    return (f"toolselect: api_base is on this machine, so a local server's defaults apply: "
            f"{said} (set --toolselect-timeout, -concurrency or -retries to change them)")
