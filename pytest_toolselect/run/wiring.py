"""The run session's settings and wiring: options, config files, model, provider, cache, budget.

Two of the session's parts (``run/session.py`` composes them): ``Settings``, what a run
resolves once from pytest's config and the toolselect config files, and ``Wiring``, what it
builds from them to make calls (the provider, the response cache, the cost budget).
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.spec.options import DEFAULT_MODEL

from .settings import Resolved, resolve

if TYPE_CHECKING:
    from pytest_toolselect.providers import Provider, ProviderSettings
    from pytest_toolselect.spec.config import Config
    from pytest_toolselect.spec.discover import Configs

    from .budget import Budget


class Settings:
    """Options (flag, ini, config file, default), config files, the model, paths."""

    def __init__(self, config: pytest.Config) -> None:
        self.pytest_config = config
        self.rootdir = Path(str(config.rootpath))
        self.is_worker = hasattr(config, "workerinput")
        self._server_secrets: tuple[str, ...] | None = None

    # settings -----------------------------------------------------------------
    def option(self, name: str) -> Resolved:
        cfg = self.config
        label = cfg.path.name if cfg.path is not None else "config file"
        return resolve(self.pytest_config, name, cfg.options, label)

    @cached_property
    def configs(self) -> Configs:
        from pytest_toolselect.spec.discover import Configs

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
            from pytest_toolselect.spec.errors import ToolselectError

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
        from pytest_toolselect.spec.options import BY_NAME

        opt = BY_NAME[name]
        return (self.pytest_config.getoption(opt.ini, default=None) is not None
                or self.pytest_config.getini(opt.ini) not in (None, "", []))

    def in_use(self) -> bool:
        """Whether this run concerns toolselect at all (for the header line)."""
        from pytest_toolselect.spec.options import OPTIONS

        return self.has_config_file() or any(self.option_given(o.name) for o in OPTIONS)

    @cached_property
    def model(self) -> Resolved:
        return self.option("model")

    @cached_property
    def reps(self) -> int:
        return int(self.option("reps").value)

    def flag(self, name: str) -> bool:
        return bool(self.option(name).value)

    def provider_settings(self) -> ProviderSettings:
        from pytest_toolselect.providers import ProviderSettings

        def value(name: str) -> Any:
            return self.option(name).value

        return ProviderSettings(
            bm25_threshold=float(value("bm25_threshold")),
            api_base=value("api_base"),
            api_key_env=value("api_key_env"),
            max_tokens=int(value("max_tokens")),
            temperature=value("temperature"),
            timeout=float(value("timeout")),
            retries=int(value("retries")),
            backoff_base=float(value("retry_backoff")),
            prompt_caching=not value("no_prompt_caching"),
            prices=self.config.prices,
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
        cap = self.option("max_cost_usd").value
        return float(cap) if cap is not None else None


class Wiring:
    """What the run builds from its settings to make calls: the model's provider (or the one a
    hook gives), the response cache, the cost budget, and the subject a baseline belongs to."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def model_line(self) -> str:
        model = self.settings.model
        if model.source == "default" and model.value == DEFAULT_MODEL:
            where = "embedded default"
        else:
            where = f"from {model.source}"
        from pytest_toolselect.providers.routes import ROUTE_NAMES, route

        taken = "hook" if self.custom_provider is not None else route(str(model.value))
        # the embedded model's line stays short; an HTTP route says which client makes the calls
        via = f", via {ROUTE_NAMES[taken]}" if taken != "local" else ""
        return f"toolselect: model {model.value} ({where}), reps {self.settings.reps}{via}"

    # provider and subject -------------------------------------------------------
    @cached_property
    def provider(self) -> Provider:
        from pytest_toolselect.providers import get_provider

        model = str(self.settings.model.value)
        custom = self.custom_provider
        provider = (custom if custom is not None
                    else get_provider(model, self.settings.provider_settings()))
        cache = self.response_cache
        if cache is None:
            return provider
        from .cache import CachingProvider

        return CachingProvider(provider, cache)

    @cached_property
    def custom_provider(self) -> Provider | None:
        """The provider a pytest_toolselect_provider hook gives for the model, if any."""
        config = self.settings.pytest_config
        return config.hook.pytest_toolselect_provider(model=str(self.settings.model.value),
                                                      config=config)

    @cached_property
    def response_cache(self) -> Any:
        """The SQLite response cache, when --toolselect-cache names a file."""
        from .cache import ResponseCache, check_mode

        resolved = self.settings.option("cache")
        mode = check_mode(str(self.settings.option("cache_mode").value or "read-write"))
        if resolved.value is None or mode == "off":
            return None
        return ResponseCache(self.settings.resolve_path(resolved), mode)

    @cached_property
    def subject(self) -> dict[str, Any]:
        # the model and its sampling settings only: the config's system prompt is gated
        # per case (part of each case's tools fingerprint), like MCP instructions
        return dict(self.provider.subject())

    @cached_property
    def budget(self) -> Budget:
        from .spend import make_budget

        return make_budget(self.settings.pytest_config, self.settings.cost_cap)

    def preload_sdk(self) -> bool:
        """Begin importing the model's SDK on a background thread, when this process will
        call it (providers.preload): not for a hook's model, a dry run, --collect-only, a
        replay from the cache, or the xdist controller (its workers make the calls)."""
        config = self.settings.pytest_config
        if (config.getoption("collectonly", False) or self.settings.flag("dry_run")
                or self.settings.option("cache_mode").value == "replay"
                or (not self.settings.is_worker and config.getoption("dist", "no") != "no")
                or self.custom_provider is not None):
            return False
        from pytest_toolselect.providers.routes import route

        module = {"anthropic": "anthropic", "openai": "openai"}.get(route(str(self.settings.model.value)))
        if module is None:
            return False
        from pytest_toolselect.providers.preload import begin

        return begin(module)

    def cache_stats(self) -> Any:
        """This process's response cache counts (CacheStats), None when it opened no cache."""
        cache = self.__dict__.get("response_cache")
        return cache.stats if cache is not None else None

    def close(self) -> None:
        """Close the response cache, if this process opened it."""
        cache = self.__dict__.get("response_cache")
        if cache is not None:
            cache.close()
