"""The run session's wiring: what a run builds from its settings (``run/settings.py``) to
make calls: the provider, the response cache, the cost budget, the baseline's subject."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.inputs.option_table import DEFAULT_MODEL
from pytest_toolselect.providers import get_provider
from pytest_toolselect.providers.preload import preload
from pytest_toolselect.providers.routes import HOOK_LABEL, route_of

from .cache import CacheStats, CachingProvider, ResponseCache, check_mode
from .settings import local_summary_line
from .spend import make_budget

if TYPE_CHECKING:
    from pytest_toolselect.exchange.json_value import JSONObject
    from pytest_toolselect.providers import Provider

    from .budget import Budget
    from .settings import Settings


class Wiring:
    """What the run builds from its settings to make calls: the model's provider (or the one a
    hook gives), the response cache, the cost budget, and the subject a baseline belongs to."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        #: the response cache's counts of each xdist worker that opened it (the controller's)
        self._worker_cache_stats: list[JSONObject] = []

    def model_line(self) -> str:
        model = self.settings.model
        if model.source == "default" and model.value == DEFAULT_MODEL:
            where = "embedded default"
        else:
            where = f"from {model.source}"
        # the embedded model's line stays short; an HTTP route says which client makes the calls
        name = self.route_name()
        via = f", via {name}" if name is not None else ""
        return f"toolselect: model {model.value} ({where}), reps {self.settings.reps}{via}"

    def local_line(self) -> str | None:
        """The line naming the local server's defaults this run took (None: it took none)."""
        if self.custom_provider is not None:
            return None
        values = self.settings.local_defaults()
        if not values:
            return None
        return local_summary_line(values)

    def route_name(self) -> str | None:
        """The client that makes the calls, as every report names it (None: embedded)."""
        if self.custom_provider is not None:
            return HOOK_LABEL
        return route_of(str(self.settings.model.value)).label

    # provider and subject -------------------------------------------------------
    @cached_property
    def provider(self) -> Provider:
        model = str(self.settings.model.value)
        custom = self.custom_provider
        provider = (custom if custom is not None
                    else get_provider(model, self.settings.provider_settings()))
        cache = self.response_cache
        if cache is None:
            return provider
        return CachingProvider(provider, cache)

    @cached_property
    def deterministic(self) -> bool:
        """Whether the model answers the same when asked again (its provider says
        ``deterministic = True``: the embedded ones). The one rule adaptive reps, attribution
        and the dry run's cap on extra reps read."""
        provider = self.__dict__.get("provider")
        if provider is None:
            # a dry run makes no call: the provider bare, no response cache opened for it
            provider = (self.custom_provider if self.custom_provider is not None else
                        get_provider(str(self.settings.model.value),
                                     self.settings.provider_settings()))
        return bool(getattr(provider, "deterministic", False))

    @cached_property
    def custom_provider(self) -> Provider | None:
        """The provider a pytest_toolselect_provider hook gives for the model, if any."""
        config = self.settings.pytest_config
        # a firstresult hook (plugin/hooks.py): pluggy's call is untyped, the spec says what it gives
        provider: Provider | None = config.hook.pytest_toolselect_provider(
            model=str(self.settings.model.value), config=config)
        return provider

    @cached_property
    def response_cache(self) -> Any:
        """The SQLite response cache, when --toolselect-cache names a file."""
        path = self.settings.path("cache")
        mode = check_mode(self.settings.options.cache_mode or "read-write")
        if path is None or mode == "off":
            return None
        return ResponseCache(path, mode)

    @cached_property
    def subject(self) -> Subject:
        # the model and its sampling settings only: the config's system prompt is gated
        # per case (part of each case's tools fingerprint), like MCP instructions
        # read once from the provider's JSON (a hook's provider names its own)
        return Subject.from_json(self.provider.subject())

    @cached_property
    def budget(self) -> Budget:
        return make_budget(self.settings.pytest_config, self.settings.cost_cap)

    def preload_sdk(self) -> bool:
        """Begin importing the model's SDK on a background thread, when this process will
        call it (providers.preload): not for a hook's model, a dry run, --collect-only, a
        replay from the cache, or the xdist controller (its workers make the calls)."""
        config = self.settings.pytest_config
        if (config.getoption("collectonly", False) or self.settings.flag("dry_run")
                or self.settings.options.cache_mode == "replay"
                or (not self.settings.is_worker and config.getoption("dist", "no") != "no")
                or self.custom_provider is not None):
            return False
        return preload(str(self.settings.model.value))

    def add_worker_cache_stats(self, stats: JSONObject) -> None:
        """An xdist worker's response cache counts (CacheStats.to_dict()), as it ended."""
        self._worker_cache_stats.append(stats)

    def cache_counts(self) -> dict[str, Any] | None:
        """The response cache's hits, misses and savings: this process's and every worker's."""
        own = self.cache_stats()
        found = [own] if own is not None else []
        found += [CacheStats(**{k: v for k, v in d.items() if k in CacheStats.__dataclass_fields__})
                  for d in self._worker_cache_stats]
        if not found:
            return None
        return sum(found, CacheStats()).to_dict()

    def cache_stats(self) -> Any:
        """This process's response cache counts (CacheStats), None when it opened no cache."""
        cache = self.__dict__.get("response_cache")
        return cache.stats if cache is not None else None

    def close(self) -> None:
        """Close the response cache, if this process opened it."""
        cache = self.__dict__.get("response_cache")
        if cache is not None:
            cache.close()
