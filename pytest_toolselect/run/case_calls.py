"""The run session's case runner: a case's servers and tools, prefetching, the calls."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.discovery.servers import discovered, load_sdk, offered_tools
from pytest_toolselect.inputs.cases import check_offered
from pytest_toolselect.inputs.find_config import unknown_server
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.scoring.contradictions import check_with_tools

from .case_run import CaseRun, case_of
from .probe_items import group_job
from .runner import CaseRunner, calls_to_start, prefetch_window, queued_items

if TYPE_CHECKING:
    from pytest_toolselect.exchange.tool import Tool
    from pytest_toolselect.inputs.cases import Case
    from pytest_toolselect.inputs.config import Config, ServerSpec
    from pytest_toolselect.inputs.groups import Group
    from pytest_toolselect.records.probe_call import ProbeCall

    from .baseline_access import BaselineAccess
    from .case_outcome import CaseOutcome
    from .contracts import CaseSteps
    from .settings import Settings
    from .wiring import Wiring


class CaseCalls:
    """Finds a case's tools and hands its work to the runner (prefetched, then awaited)."""

    def __init__(self, settings: Settings, wiring: Wiring, baselines: BaselineAccess,
                 steps: CaseSteps) -> None:
        self.settings = settings
        #: the provider, cache and budget the runner's calls go through
        self.wiring = wiring
        #: what adaptive reps compare with (the runner's escalation reads it)
        self.baselines = baselines
        #: the features that follow a case's reps (adaptive reps, attribution), as the
        #: plugin registered them: the runner takes them
        self.steps = steps
        #: items whose work was handed to the scheduler (each once)
        self._prefetched: set[str] = set()
        #: where the last item that asked stood in the session's items (items run in order)
        self._cursor = 0
        #: node id -> what a case item did in an earlier attempt of this session (a rerun
        #: plugin ran it again): the next attempt adds its reps to these (run_case)
        self._earlier_runs: dict[str, CaseRun] = {}

    # running a case -----------------------------------------------------------------
    def servers_for(self, case: Case) -> list[str]:
        if case.servers is not None:
            return list(case.servers)
        return list(self.case_config(case).servers)

    def case_config(self, case: Case) -> Config:
        return self._config_of(case.source)

    def _config_of(self, source: str | None) -> Config:
        path = Path(source) if source else None
        return self.settings.config_for(path if path is not None and path.is_file() else None)

    def server_specs(self, case: Case) -> tuple[tuple[ServerSpec, ...], str]:
        """The case's servers as its config declares them, and the folder their paths start at
        (what a harness route starts itself)."""
        config = self.case_config(case)
        return tuple(self._specs(case, config)), str(config.root)

    def _specs(self, case: Case, config: Config) -> list[ServerSpec]:
        names = self.servers_for(case)
        if not names:
            raise ToolselectError(
                "no servers to take tools from", file=case.source or None, place=f"case {case.id}",
                fix="add `servers:` to the case or its file, and define them in toolselect.yaml",
            )
        specs = []
        for name in names:
            spec = config.servers.get(name)
            if spec is None:
                raise unknown_server(self.settings.configs, config, name, case)
            specs.append(spec)
        return specs

    def _discovery(self, case: Case) -> tuple[Config, list[ServerSpec]]:
        """The case's config and its servers' specs as discovery is asked for them."""
        config = self.case_config(case)
        # a server's own `timeout:` wins; the option sets it for the others
        timeout = self.settings.options.discovery_timeout
        return config, [s if s.timeout is not None else replace(s, timeout=timeout)
                        for s in self._specs(case, config)]

    def _harness_tools(self) -> Any:
        provider = self.wiring.provider
        harness = getattr(getattr(provider, "inner", provider), "harness_tools", None)
        return harness if callable(harness) else None

    def tools_for(self, case: Case) -> tuple[tuple[Tool, ...], str | None]:
        """The tools the case offers (its servers' union, and a harness's own tools) and the
        system prompt it sends."""
        return self._tools_from(case, *self._discovery(case))

    def _tools_from(self, case: Case, config: Config,
                    specs: list[ServerSpec]) -> tuple[tuple[Tool, ...], str | None]:
        tools, instructions = offered_tools(specs, config.root, config.tool_name_format)
        harness = self._harness_tools()
        if harness is not None:
            tools = (*tools, *harness(tools))
        check_offered(case, tools)  # a tool or argument path no server offers: a clear error
        check_with_tools(case, tools)  # a decoy the case requires, by the tools' schemas
        system = case.system if case.system is not None else config.system
        if system is None:
            system = instructions
        return tools, system

    async def find_tools(self, case: Case) -> tuple[tuple[Tool, ...], str | None]:
        """tools_for, at once when each of the case's servers was discovered already (it
        cannot block), else in a worker thread (a server to start, a file to read). The
        hop to a thread and back for every case cost a 20,000-case run more than its
        local model's calls."""
        config, specs = self._discovery(case)  # a config's mistake is raised as it was
        if self._harness_tools() is None and all(discovered(s, config.root) for s in specs):
            return self._tools_from(case, config, specs)
        return await asyncio.to_thread(self._tools_from, case, config, specs)

    @cached_property
    def runner(self) -> CaseRunner:
        return CaseRunner(self.settings, self.wiring, self.baselines, self.find_tools,
                          self.server_specs, self.steps)

    def prefetch(self, current: pytest.Item) -> None:
        """Start the calls of this item and of the next items due after it in this process.

        At most a window of items ahead: enough to keep every call slot busy, few enough
        that a suite of 20,000 cases does not hold 20,000 jobs (their frames, tools and
        finished outcomes) at once.
        """
        window = self._window
        upcoming = (queued_items(self.settings.pytest_config, current.session.items, window)
                    if self.settings.is_worker else None)
        if upcoming is None:
            items = current.session.items
            start = self._position(items, current)
            upcoming = items[start:start + window]
        fresh = calls_to_start(upcoming, lambda item: item.nodeid in self._prefetched)
        if not fresh:
            return
        self._prefetched.update(item.nodeid for item in fresh)
        self._load_sdk_for(fresh)
        self.runner.prefetch(job for job in map(self.job_for, fresh) if job is not None)

    @cached_property
    def _window(self) -> int:
        return prefetch_window(self.settings.option("concurrency").value)

    def _position(self, items: list[pytest.Item], current: pytest.Item) -> int:
        """`current`'s index in `items`, looked for from the last one's: linear over a run."""
        at = self._cursor
        if at >= len(items) or items[at] is not current:
            try:
                at = items.index(current, at)
            except ValueError:  # an item run again, or out of order: look from the start
                at = items.index(current) if current in items else 0
        self._cursor = at
        return at

    def _load_sdk_for(self, items: list[pytest.Item]) -> None:
        """Discovery runs in worker threads, and two first imports of the MCP SDK in two
        threads at once deadlock: when an item due here may start a server, the SDK is
        imported now, on the main thread, before the workers start."""
        for item in items:
            owner = getattr(item, "group", None) or case_of(item)
            if owner is None:
                continue
            try:
                servers = self._config_of(owner.source).servers.values()
            except ToolselectError:
                continue  # the item reports its config's error itself
            if any(spec.kind != "tools_file" for spec in servers):
                # a missing SDK: each discovery says so, on the items it touches
                with contextlib.suppress(ImportError):
                    load_sdk()
                return

    def job_for(self, item: pytest.Item) -> tuple[str, Any] | None:
        """The work an item waits for (a case's reps or a group's cells), or None."""
        group = getattr(item, "group", None)
        if group is not None:
            return item.nodeid, lambda: group_job(self.runner, group)
        case = case_of(item)
        if case is not None:
            return item.nodeid, lambda: self.runner.case_job(case, item.nodeid)
        return None

    def stop(self) -> None:
        """-x, --maxfail or Ctrl-C: no queued call starts any more."""
        if "runner" in self.__dict__:
            self.runner.stop()

    def close(self) -> None:
        """The end of the run: the scheduler closed (its queued calls never start)."""
        if "runner" in self.__dict__:
            self.runner.close()

    def run_case(self, nodeid: str, case: Case) -> CaseOutcome:
        """Discover the case's tools, ask the model reps times, score each first turn.

        The calls may already be under way (prefetched); this waits for them.
        """
        outcome: CaseOutcome = self.runner.result(nodeid,
                                                  lambda: self.runner.case_job(case, nodeid))
        run = outcome.run
        # a rerun plugin ran the item again: its reps add to the evidence, never replace it
        # (the last attempt alone would turn 0 of 31 into "held 1 of 1")
        earlier = self._earlier_runs.get(nodeid)
        if earlier is not None:
            run = replace(run, turns=(*earlier.turns, *run.turns), scores=(*earlier.scores, *run.scores),
                          inconclusive=(*earlier.inconclusive, *run.inconclusive))
        self._earlier_runs[nodeid] = run
        return outcome.with_run(run)

    def run_group(self, nodeid: str, group: Group) -> list[ProbeCall]:
        """A preference group's calls, every cell and rep (errors and skips kept as calls).

        They may already be under way (prefetched); this waits for them.
        """
        calls: list[ProbeCall] = self.runner.result(nodeid, lambda: group_job(self.runner, group))
        return calls

    def attempts_over(self, nodeid: str) -> None:
        """The item's attempts are over (its reps are in its record): forget them, so a long
        run keeps no case's reps past its item."""
        self._earlier_runs.pop(nodeid, None)
