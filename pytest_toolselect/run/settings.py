"""The run session's settings: the --toolselect-* options resolved, the config files, the
model, paths.

Precedence: command line, then pytest's ini (``toolselect_<name>``), then the
toolselect config file (``<name>``), then the default. The resolver also says
where each value came from, so the run header can tell the user. ``Options`` holds
every option's value, typed, resolved once; ``Resolved`` one value and its source
(which a path needs: it is relative to where it was written).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.inputs.option_table import BY_NAME, Option

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_toolselect.inputs.config import Config
    from pytest_toolselect.inputs.find_config import Configs
    from pytest_toolselect.providers import ProviderSettings


# -- a model served on this machine ------------------------------------------------------------
# The plain defaults fit a hosted API: 60 s a call, 8 calls in flight, 4 retries. A local
# server on a CPU (an api_base on loopback, as ``providers.preflight.is_loopback`` says, the
# rule the key check reads too) answers one call at a time in seconds to minutes (SmolLM2
# under llama.cpp on two cores: a median 10.6 s, up to 377 s for the first calls, which read
# the whole tool list), so 8 calls in flight queue behind each other and time out, and a
# retry of a call that timed out costs as long again. Each applies only where nothing set
# the option.

#: the option -> its default when api_base is on loopback
LOCAL_DEFAULTS: Mapping[str, float | int] = {"timeout": 600.0, "concurrency": 1, "retries": 1}
#: where a defaulted option says its value came from
LOCAL_SOURCE = "local server default"


def local_summary_line(values: Mapping[str, object]) -> str:
    """The summary's line for the options that took a local server's default."""
    unit = {"timeout": " s"}
    said = ", ".join(f"{k} {v:g}{unit.get(k, '')}" if isinstance(v, float) else f"{k} {v}"
                     for k, v in values.items())
    return (f"toolselect: api_base is on this machine, so a local server's defaults apply: "
            f"{said} (set --toolselect-timeout, -concurrency or -retries to change them)")


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


@dataclass(frozen=True)
class Options:
    """Every --toolselect-* option's value, typed, as this run resolved it (once).

    One field per entry of ``inputs.option_table.OPTIONS``, in its order, typed by its kind (a path
    is its text: ``Settings.path`` makes it a path where it was written); a test holds the
    two to each other."""

    model: str
    baseline: str | None
    update_baseline: bool
    reps: int
    fail_on_still_failing: bool
    fail_on_flaky: bool
    fail_on_drift: bool
    history: int
    rule: str
    adaptive: str
    max_extra_reps: int
    attribution: str
    attribution_max_calls: str
    fail_on_suite_drop: bool
    bm25_threshold: float
    discovery_timeout: float
    max_tokens: int
    temperature: float | None
    api_base: str | None
    api_key_env: str | None
    timeout: float
    retries: int
    retry_backoff: float
    no_prompt_caching: bool
    max_cost_usd: float | None
    shard: str | None
    concurrency: int
    harness_tool_search: str
    harness_user_settings: bool
    harness_concurrency: int
    rpm: float | None
    tpm: float | None
    cache: str | None
    cache_mode: str | None
    seed: int
    min_effect_change: float | None
    json: str | None
    markdown: str | None
    html: str | None
    lint: bool
    dry_run: bool
    config: str | None

    @classmethod
    def read(cls, option: Callable[[str], Resolved]) -> Options:
        return cls(**{f.name: option(f.name).value for f in fields(cls)})


class Settings:
    """Options (flag, ini, config file, default), config files, the model, paths."""

    def __init__(self, config: pytest.Config) -> None:
        self.pytest_config = config
        self.rootdir = Path(str(config.rootpath))
        self.is_worker = hasattr(config, "workerinput")
        self._server_secrets: tuple[str, ...] | None = None

    # settings -----------------------------------------------------------------
    def option(self, name: str) -> Resolved:
        cfg = self.configs.options_source
        label = cfg.path.name if cfg.path is not None else "config file"
        resolved = resolve(self.pytest_config, name, cfg.options, label)
        if resolved.source == "default":
            from pytest_toolselect.providers.preflight import is_loopback


            if name in LOCAL_DEFAULTS and is_loopback(self.option("api_base").value):
                return Resolved(LOCAL_DEFAULTS[name], LOCAL_SOURCE)
        return resolved

    def local_defaults(self) -> dict[str, Any]:
        """The options that took a local server's default (``LOCAL_DEFAULTS``), by name."""
        found = {name: self.option(name) for name in LOCAL_DEFAULTS}
        return {name: r.value for name, r in found.items() if r.source == LOCAL_SOURCE}

    @cached_property
    def options(self) -> Options:
        """Every option's value, resolved once (a bad one is a usage error at the start)."""
        return Options.read(self.option)

    def path(self, name: str) -> Path | None:
        """A path option where it was written (see resolve_path), None when not given."""
        resolved = self.option(name)
        return self.resolve_path(resolved) if resolved.value is not None else None

    @cached_property
    def configs(self) -> Configs:
        from pytest_toolselect.inputs.find_config import Configs

        explicit = resolve(self.pytest_config, "config").value
        path = Path(str(explicit)) if explicit else None
        invoked = Path(str(self.pytest_config.invocation_params.dir))
        if path is not None and not path.is_absolute():
            path = invoked / path
        return Configs(self.rootdir, path, invoked, [str(a) for a in self.pytest_config.args])

    @property
    def config(self) -> Config:
        """The run's config: explicit, at the rootdir, or the nearest to the paths given."""
        return self.configs.main

    def config_for(self, path: Path | None) -> Config:
        """The config that governs the case file at path."""
        return self.configs.for_file(path)

    def server_secrets(self) -> tuple[str, ...]:
        """The values the run's servers declare as secrets (none while the config cannot be
        read: its error is said at the start)."""
        if self._server_secrets is None:
            from pytest_toolselect.messages.errors import ToolselectError

            try:
                servers = self.config.servers.values()
                self._server_secrets = tuple(v for spec in servers for v in spec.secrets)
            except ToolselectError:
                return ()
        return self._server_secrets

    def has_config_file(self) -> bool:
        """Cheap: is there a toolselect config at the rootdir (so the header has something to say)."""
        return self.configs.at_rootdir

    def option_given(self, name: str) -> bool:
        """Set on the command line or in pytest's ini (cheap: no config file read)."""
        from pytest_toolselect.inputs.option_table import BY_NAME

        opt = BY_NAME[name]
        return (self.pytest_config.getoption(opt.ini, default=None) is not None
                or self.pytest_config.getini(opt.ini) not in (None, "", []))

    def in_use(self) -> bool:
        """Whether this run concerns toolselect at all (for the header line)."""
        from pytest_toolselect.inputs.option_table import OPTIONS

        return self.has_config_file() or any(self.option_given(o.name) for o in OPTIONS)

    @cached_property
    def model(self) -> Resolved:
        return self.option("model")

    @property
    def reps(self) -> int:
        return self.options.reps

    def flag(self, name: str) -> bool:
        value = getattr(self.options, name)
        assert isinstance(value, bool), name  # a flag is a bool option
        return value

    def provider_settings(self) -> ProviderSettings:
        from pytest_toolselect.providers import ProviderSettings

        o = self.options
        return ProviderSettings(
            bm25_threshold=o.bm25_threshold,
            api_base=o.api_base,
            api_key_env=o.api_key_env,
            max_tokens=o.max_tokens,
            temperature=o.temperature,
            timeout=o.timeout,
            retries=o.retries,
            backoff_base=o.retry_backoff,
            prompt_caching=not o.no_prompt_caching,
            prices=self.config.prices,
            harness_tool_search=o.harness_tool_search,
            harness_user_settings=o.harness_user_settings,
            harness_concurrency=o.harness_concurrency,
        )

    def resolve_path(self, resolved: Resolved) -> Path:
        """A path option, relative to where it was written: the command line's working
        folder, the ini file's folder, or the toolselect config file's folder."""
        path = Path(str(resolved.value))
        if path.is_absolute():
            return path
        if resolved.source.startswith("--"):
            base = Path(str(self.pytest_config.invocation_params.dir))
        elif resolved.source.startswith("ini"):
            inipath = self.pytest_config.inipath
            base = inipath.parent if inipath is not None else self.rootdir
        else:
            base = self.config.root
        return base / path

    @property
    def cost_cap(self) -> float | None:
        return self.options.max_cost_usd


def in_use(config: pytest.Config) -> bool:
    """Whether a run concerns toolselect at all, asked before its machinery is imported."""
    return Settings(config).in_use()
