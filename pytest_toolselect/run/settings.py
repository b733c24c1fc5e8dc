"""The --toolselect-* options resolved: one value per option, and where it came from.

Precedence: command line, then pytest's ini (``toolselect_<name>``), then the
toolselect config file (``<name>``), then the default. The resolver also says
where each value came from, so the run header can tell the user.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from pytest_toolselect.spec.options import BY_NAME, Option


def convert(opt: Option, raw: Any, source: str) -> Any:
    """A raw value (string from a flag or ini, or a YAML scalar) as the option's type."""
    try:
        if opt.kind == "bool":
            if isinstance(raw, bool):
                value: Any = raw
            elif str(raw).strip().lower() in ("1", "true", "yes", "on"):
                value = True
            elif str(raw).strip().lower() in ("0", "false", "no", "off", ""):
                value = False
            else:
                raise ValueError(raw)
        elif opt.kind == "int":
            if isinstance(raw, bool):
                raise ValueError(raw)
            value = int(raw)
        elif opt.kind == "float":
            if isinstance(raw, bool):
                raise ValueError(raw)
            value = float(raw)
        else:
            value = str(raw)
    except (TypeError, ValueError):
        raise pytest.UsageError(
            f"{opt.flag} (from {source}): {raw!r} is not a valid {opt.kind}"
        ) from None
    if opt.check is not None:
        problem = opt.check(value)
        if problem:
            raise pytest.UsageError(f"{opt.flag} (from {source}): {raw!r} {problem}")
    return value


@dataclass(frozen=True)
class Resolved:
    value: Any
    source: str  # "command line", "ini", "<config file name>", "default"


def resolve(config: pytest.Config, name: str, file_options: dict[str, Any] | None = None,
            file_label: str = "config file") -> Resolved:
    """One option's value and where it came from: flag, ini, config file, default."""
    opt = BY_NAME[name]
    raw = config.getoption(opt.ini, default=None)
    if raw is not None:
        return Resolved(convert(opt, raw, opt.flag), opt.flag)
    raw = config.getini(opt.ini)
    if raw not in (None, "", []):
        return Resolved(convert(opt, raw, f"ini {opt.ini}"), f"ini {opt.ini}")
    if file_options and file_options.get(name) is not None:
        return Resolved(convert(opt, file_options[name], file_label), file_label)
    return Resolved(opt.default, "default")
