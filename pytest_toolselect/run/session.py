"""The run session: settings, the baseline, each case's run and record, the summary.

One RunSession lives in ``config.stash`` per pytest process. Workers (xdist)
run cases and attach each record to its test report; the controller gathers
the records from the reports, so a serial run and ``-n 2`` see the same data,
and only the controller prints the summary and writes the baseline.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolselect.gate import rules as gate
from pytest_toolselect.spec.errors import ToolselectError
from pytest_toolselect.spec.options import DEFAULT_MODEL

from .records import DECORATED_CASE, CaseRun, first_tool
from .settings import Resolved, resolve

if TYPE_CHECKING:
    from pytest_toolselect.gate.baseline import Baseline
    from pytest_toolselect.providers import Provider, ProviderSettings
    from pytest_toolselect.spec.cases import Case
    from pytest_toolselect.spec.config import Config
    from pytest_toolselect.spec.discover import Configs
    from pytest_toolselect.spec.tools import Tool

    from .budget import Budget
    from .runner import CaseRunner

RUN_SESSION = pytest.StashKey["RunSession"]()


def case_of(item: pytest.Item) -> Case | None:
    """The case an item stands for, or None (not a case, or one that does not parse)."""
    case = getattr(item, "case", None)
    if case is not None:
        return case  # type: ignore[no-any-return]
    # a decorated test's case, handed over by the plugin at collection (absent: it does
    # not parse, and its own setup reports the error)
    return item.stash.get(DECORATED_CASE, None)


def _sum_usage(usages: Iterable[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for usage in usages:
        total.update(usage)
    return dict(sorted(total.items()))


class RunSession:
    def __init__(self, config: pytest.Config) -> None:
        self.pytest_config = config
        self.rootdir = Path(str(config.rootpath))
        self.is_worker = hasattr(config, "workerinput")
        #: nodeid -> record, gathered from reports (controller)
        self.records: dict[str, dict[str, Any]] = {}
        #: nodeid -> a preference group's record (controller)
        self.group_records: dict[str, dict[str, Any]] = {}
        #: baseline keys of the case items collected in this process (or, on the
        #: controller, by the workers), before -k/-m deselection
        self.collected: set[str] = set()
        #: every key a case or groups file read in this run defines, by the file part of
        #: its key (the file's content, whatever filtering pytest did afterwards)
        self.defined: dict[str, set[str]] = {}
        #: node id -> baseline key, for the items of this process
        self.keys: dict[str, str] = {}
        #: a key's file part -> the folder it is relative to
        self.anchor_of: dict[str, Path] = {}
        #: said in the summary under the toolselect section (not failures)
        self.baseline_notes: list[str] = []
        self.baseline_written: Path | None = None
        #: the subject of a baseline that --toolselect-update-baseline re-recorded
        self.replaced_subject: dict[str, Any] | None = None
        self.pytest_session: pytest.Session | None = None
        #: what --toolselect-dry-run found (the run then makes no call)
        self.dry_run_lines: list[str] = []
        #: reports asked for that could not be written (said in the summary; the run fails)
        self.report_problems: list[str] = []
        #: items whose work was handed to the scheduler (each once)
        self._prefetched: set[str] = set()
        self._prefetched_all = False
        self._probe: tuple[list[str], dict[str, Any], dict[str, Any] | None] | None = None
        #: server -> what its --toolselect-lint item found (controller)
        self.lint_records: dict[str, dict[str, Any]] = {}
        #: tool texts this process already put in a record (each travels once)
        self._sent_texts: set[str] = set()

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

    def model_line(self) -> str:
        model = self.model
        if model.source == "default" and model.value == DEFAULT_MODEL:
            where = "embedded default"
        else:
            where = f"from {model.source}"
        from pytest_toolselect.providers.routes import ROUTE_NAMES, route

        taken = "hook" if self.custom_provider is not None else route(str(model.value))
        # the embedded model's line stays short; an HTTP route says which client makes the calls
        via = f", via {ROUTE_NAMES[taken]}" if taken != "local" else ""
        return f"toolselect: model {model.value} ({where}), reps {self.reps}{via}"

    # provider and subject -------------------------------------------------------
    @cached_property
    def provider(self) -> Provider:
        from pytest_toolselect.providers import get_provider

        model = str(self.model.value)
        custom = self.custom_provider
        provider = custom if custom is not None else get_provider(model, self.provider_settings())
        cache = self.response_cache
        if cache is None:
            return provider
        from .cache import CachingProvider

        return CachingProvider(provider, cache)

    @cached_property
    def custom_provider(self) -> Provider | None:
        """The provider a pytest_toolselect_provider hook gives for the model, if any."""
        return self.pytest_config.hook.pytest_toolselect_provider(model=str(self.model.value),
                                                                  config=self.pytest_config)

    @cached_property
    def response_cache(self) -> Any:
        """The SQLite response cache, when --toolselect-cache names a file."""
        from .cache import ResponseCache, check_mode

        resolved = self.option("cache")
        mode = check_mode(str(self.option("cache_mode").value or "read-write"))
        if resolved.value is None or mode == "off":
            return None
        return ResponseCache(self.resolve_path(resolved), mode)

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

    @cached_property
    def subject(self) -> dict[str, Any]:
        # the model and its sampling settings only: the config's system prompt is gated
        # per case (part of each case's tools fingerprint), like MCP instructions
        return dict(self.provider.subject())

    # baseline ---------------------------------------------------------------------
    @cached_property
    def baseline_path(self) -> Path | None:
        resolved = self.option("baseline")
        if resolved.value is None:
            return None
        return self.resolve_path(resolved)

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

    @cached_property
    def baseline(self) -> Baseline | None:
        """The stored baseline to compare with (None: none yet, or no baseline asked for)."""
        from pytest_toolselect.gate.baseline import load, subject_mismatch

        if self.baseline_path is None:
            return None
        stored = load(self.baseline_path)
        if stored is None or stored.empty:
            # an empty baseline gates nothing: it counts as absent, and this run records
            return None
        differ = subject_mismatch(stored.subject, self.subject)
        if differ and self.flag("update_baseline"):
            # asked to re-record for this subject: the other subject's entries are not compared
            self.replaced_subject = stored.subject
            return None
        if differ:
            detail = "; ".join(
                f"{k}: baseline {stored.subject.get(k)!r}, this run {self.subject.get(k)!r}"
                for k in differ
            )
            raise pytest.UsageError(
                f"{self.baseline_path}: this baseline belongs to another subject ({detail}). "
                "A baseline is only compared with runs of the same model and settings: "
                "record one for this subject with --toolselect-update-baseline, "
                "or point --toolselect-baseline at another file."
            )
        return stored

    def check_setup(self) -> None:
        """Refuse a bad config or a bad or foreign baseline before anything runs (usage error)."""
        try:
            _ = self.config
            if self.custom_provider is None:  # a bad model string or a missing key: no request
                from pytest_toolselect.providers.preflight import check

                check(str(self.model.value), self.provider_settings())
            mode = self.option("cache_mode").value
            if mode is not None:
                from .cache import check_mode

                check_mode(str(mode))
            if self.baseline_path is not None:
                from pytest_toolselect.run.lifecycle import check_ci

                check_ci(self)
                _ = self.baseline
            # a misspelled gate rule or a bad history is refused before any call is made
            for name in ("rule", "history", "shard", "adaptive", "max_extra_reps"):
                _ = self.option(name)
        except ToolselectError as e:
            raise pytest.UsageError(str(e)) from None

    @property
    def have_baseline(self) -> bool:
        """Verdicts compare with a baseline (an existing one, or one this run records)."""
        return self.baseline_path is not None

    def baseline_entry(self, nodeid: str) -> dict[str, Any] | None:
        base = self.baseline
        return base.cases.get(self.key_of(nodeid)) if base is not None else None

    def key_of(self, nodeid: str) -> str:
        """The baseline key of an item of this process (its node id if not collected here)."""
        return self.keys.get(nodeid, nodeid)

    def add_item_key(self, item: pytest.Item) -> str:
        from pytest_toolselect.gate.keys import key_for

        anchor = self.config_for(item.path).root
        key = key_for(item.path, item.nodeid, anchor)
        self.keys[item.nodeid] = key
        self.anchor_of[key.partition("::")[0]] = anchor
        return key

    @cached_property
    def _by_case_fingerprint(self) -> dict[str, list[str]]:
        from .lineage import by_case_fingerprint

        return by_case_fingerprint(self.baseline.cases if self.baseline is not None else {})

    def renamed_from(self, case_fp: str) -> str | None:
        """The gone baseline entry a new case with this content was renamed from, if one."""
        from pytest_toolselect.run.lifecycle import known_keys

        from .lineage import renamed_from

        # keys of cases that still exist, filtered out of this run or not
        return renamed_from(self._by_case_fingerprint, case_fp, known_keys(self))

    @cached_property
    def budget(self) -> Budget:
        from .spend import make_budget

        return make_budget(self.pytest_config, self.cost_cap)

    @property
    def cost_cap(self) -> float | None:
        cap = self.option("max_cost_usd").value
        return float(cap) if cap is not None else None

    # running a case -----------------------------------------------------------------
    def servers_for(self, case: Case) -> list[str]:
        if case.servers is not None:
            return list(case.servers)
        return list(self.case_config(case).servers)

    def case_config(self, case: Case) -> Config:
        source = Path(case.source) if case.source else None
        return self.config_for(source if source is not None and source.is_file() else None)

    def tools_for(self, case: Case) -> tuple[tuple[Tool, ...], str | None]:
        """The tools the case offers (its servers' union) and the system prompt it sends."""
        from pytest_toolselect.discovery.servers import offered_tools

        names = self.servers_for(case)
        if not names:
            raise ToolselectError(
                "no servers to take tools from", file=case.source or None, place=f"case {case.id}",
                fix="add `servers:` to the case or its file, and define them in toolselect.yaml",
            )
        specs = []
        config = self.case_config(case)
        for name in names:
            spec = config.servers.get(name)
            if spec is None:
                from pytest_toolselect.spec.discover import unknown_server

                raise unknown_server(self.configs, config, name, case)
            specs.append(spec)
        # a server's own `timeout:` wins; the option sets it for the others
        timeout = float(self.option("discovery_timeout").value)
        specs = [s if s.timeout is not None else replace(s, timeout=timeout) for s in specs]
        tools, instructions = offered_tools(specs, config.root, config.tool_name_format)
        from pytest_toolselect.spec.cases import check_offered

        check_offered(case, tools)  # a tool or argument path no server offers: a clear error
        system = case.system if case.system is not None else config.system
        if system is None:
            system = instructions
        return tools, system

    @cached_property
    def runner(self) -> CaseRunner:
        from .runner import CaseRunner

        return CaseRunner(self)

    def prefetch(self, current: pytest.Item) -> None:
        """Start the calls of this item and of the case items due after it in this process."""
        from .runner import queued_items

        session = current.session
        upcoming = queued_items(self.pytest_config, session.items) if self.is_worker else None
        if upcoming is None:
            # serial: every item from here on is due in this process; hand them over once
            if self._prefetched_all:
                return
            self._prefetched_all = True
            items = session.items
            start = items.index(current) if current in items else 0
            upcoming = items[start:]
        fresh = [item for item in upcoming if item.nodeid not in self._prefetched]
        self._prefetched.update(item.nodeid for item in fresh)
        self.runner.prefetch(job for job in map(self.job_for, fresh) if job is not None)

    def job_for(self, item: pytest.Item) -> tuple[str, Any] | None:
        """The work an item waits for (a case's reps or a group's cells), or None."""
        group = getattr(item, "group", None)
        if group is not None:
            from .probe_items import group_job

            return item.nodeid, lambda: group_job(self.runner, group)
        case = case_of(item)
        if case is not None:
            return item.nodeid, lambda: self.runner.case_job(case, item.nodeid)
        return None

    def stop_calls(self) -> None:
        if "runner" in self.__dict__:
            self.runner.stop()

    def close_calls(self) -> None:
        if "runner" in self.__dict__:
            self.runner.close()
        cache = self.__dict__.get("response_cache")
        if cache is not None:
            cache.close()

    def run_case(self, nodeid: str, case: Case) -> CaseRun:
        """Discover the case's tools, ask the model reps times, score each first turn.

        The calls may already be under way (prefetched); this waits for them.
        """
        return self.runner.result(nodeid, lambda: self.runner.case_job(case, nodeid))  # type: ignore[no-any-return]

    def record(self, nodeid: str, order: int, case: Case, run: CaseRun | None,
               error: str | None = None, verdict: str = gate.ERROR) -> dict[str, Any]:
        """The JSON-able record of one case, the unit the controller gathers."""
        from pytest_toolselect.gate.baseline import fingerprint
        from pytest_toolselect.spec.clip import clip_call

        rec: dict[str, Any] = {
            "nodeid": nodeid,
            "key": self.key_of(nodeid),
            "order": order,
            "case_id": case.id,
            "question": case.question,
            "category": case.category,
            "intent": case.intent,
            "why": case.why,
            "expect_tool": list(case.expect_tool) if case.expect_tool is not None else None,
            "allow_no_tool": case.allow_no_tool,
            "case_fingerprint": fingerprint(case.fingerprint_data()),
        }
        if run is None:
            # not scored: the baseline keeps its entry for this case
            rec.update(status=None, verdict=verdict, error=error, passes=0, reps=0)
            return rec
        firsts = [first_tool(t) for t in run.turns]
        modal = Counter(firsts).most_common(1)[0][0] if firsts else None
        failing: dict[str, str] = {}
        for s in run.scores:
            for name, check in s.checks.items():
                if not check.passed and name not in failing:
                    failing[name] = check.detail
        from pytest_toolselect.gate.evidence import dropped_from

        from .lineage import tool_fields

        status = run.status
        base = self.baseline_entry(nodeid)
        renamed = self.renamed_from(rec["case_fingerprint"]) if base is None else None
        if renamed is not None:
            base = self.baseline_entry(renamed)
        rule: str | gate.Rule = str(self.option("rule").value)
        if run.escalation is not None:
            from .escalation import verdict_rule

            rule = verdict_rule(self, nodeid, run.escalation, len(run.scores)) or rule
        verdict = gate.classify(run.passes, len(run.scores), base, have_baseline=self.have_baseline,
                                rule=rule)
        tools_fp = fingerprint({"tools": [t.to_dict() for t in run.tools], "system": run.system})
        secrets = [v for n in self.servers_for(case) if n in self.config.servers
                   for v in self.config.servers[n].secrets]
        rec.update(tool_fields(run, tools_fp, base, self.baseline, self._sent_texts, secrets),
                   renamed_from=renamed, dropped_from=dropped_from(verdict, base),
                   in_baseline=base is not None)
        rec.update(
            status=status,
            verdict=verdict,
            passes=run.passes,
            reps=len(run.scores),
            first_tools=firsts,
            model=self.provider.model,
            usage=_sum_usage(t.usage for t in run.turns),
            costs=[t.cost_usd for t in run.turns],
            # a turn answered from the response cache was not asked again (attempts 0)
            cached=[getattr(t, "attempts", 1) == 0 for t in run.turns],
            truncated=sum(1 for t in run.turns if getattr(t, "truncated", False)),
            dropped_schema_keys=sorted({k for t in run.turns
                                        for k in getattr(t, "dropped_schema_keys", ())}),
            first_tool=modal,
            # bounded: a record travels to the controller and into every report
            calls=[[clip_call(c) for c in t.calls] for t in run.turns],
            failing_checks=sorted(failing),
            failing_detail=failing,
            # every check of every rep, for the results document
            checks=[[{"name": name, "passed": c.passed, "detail": c.detail}
                     for name, c in s.checks.items()] for s in run.scores],
            tools_fingerprint=tools_fp,
            # a report can say the tools (or the system prompt) moved under the case
            tools_changed=base is not None and base.get("tools_fingerprint") not in (None, tools_fp),
            case_changed=base is not None
            and base.get("case_fingerprint") not in (None, rec["case_fingerprint"]),
            error=None,
        )
        if run.escalation is not None:
            rec["escalation"] = dict(run.escalation)
        return rec

    # outcome ---------------------------------------------------------------------------
    def outcome(self, verdict: str) -> str:
        return gate.pytest_outcome(
            verdict,
            fail_on_flaky=self.flag("fail_on_flaky"),
            fail_on_still_failing=self.flag("fail_on_still_failing"),
            accept_regressions=self.flag("update_baseline"),
        )

    # controller ------------------------------------------------------------------------
    def add_record(self, rec: dict[str, Any]) -> None:
        if rec.get("kind") == "group":
            self.group_records[rec["nodeid"]] = rec
        else:
            self.records[rec["nodeid"]] = rec

    def baseline_group(self, nodeid: str) -> dict[str, Any] | None:
        base = self.baseline
        return base.groups.get(self.key_of(nodeid)) if base is not None else None

    def ordered_group_records(self) -> list[dict[str, Any]]:
        return sorted(self.group_records.values(), key=lambda r: (r["order"], r["nodeid"]))

    def ordered_records(self) -> list[dict[str, Any]]:
        return sorted(self.records.values(), key=lambda r: (r["order"], r["nodeid"]))

    def gone_cases(self) -> list[str]:
        """Baseline keys whose case was removed from its file (or whose file is gone)."""
        from pytest_toolselect.run.lifecycle import gone, migrate

        base = self.baseline
        if base is None:
            return []
        migrate(self, base)
        return gone(self, base.cases)

    def shown_gone(self) -> list[str]:
        """The gone cases a report lists: an entry a renamed case took over is not gone."""
        if not self.baseline:
            return []
        renamed = {r.get("renamed_from") for r in self.records.values()}
        return [k for k in self.gone_cases() if k not in renamed]

    def cache_savings(self) -> dict[str, float]:
        """USD the cache reads saved, by model: what those tokens would have cost as input."""
        reads: Counter[str] = Counter()
        for rec in self.records.values():
            if rec.get("model"):
                reads[rec["model"]] += (rec.get("usage") or {}).get("cache_read_tokens", 0)
        if not any(reads.values()):
            return {}
        from pytest_toolselect.providers import price_per_token

        saved = {}
        for model, tokens in reads.items():
            price = price_per_token(model, self.config.prices) if tokens else None
            if price is not None:
                saved[model] = tokens * (price["input"] - price["cache_read"])
        return saved

    def cost_capped(self) -> bool:
        return (any(r["verdict"] == gate.SKIPPED for r in self.records.values())
                or any(c.get("skipped") for r in self.group_records.values() for c in r["calls"]))

    def suite(self) -> dict[str, Any] | None:
        """The share of cases held now against the baseline (None: no baseline compared)."""
        base = self.baseline
        if base is None:
            return None
        # --toolselect-update-baseline accepts the drop, as it accepts regressions
        blocking = self.flag("fail_on_suite_drop") and not self.flag("update_baseline")
        return gate.suite_change(self.ordered_records(), base.cases, fail_on_drop=blocking)

    # the preference probe (controller) -------------------------------------------------
    def probe(self) -> tuple[list[str], dict[str, Any], dict[str, Any] | None]:
        """The probe's summary lines, summary and baseline comparison (computed once)."""
        if self._probe is None:
            from .probe_items import summary_lines

            stored = self.baseline.groups if self.baseline is not None else {}
            mec = self.option("min_effect_change").value
            self._probe = summary_lines(
                self.ordered_group_records(), stored, seed=int(self.option("seed").value),
                model=str(self.model.value), min_effect_change=mec,
            )
        return self._probe

    def probe_lines(self) -> list[str]:
        return self.probe()[0]

    def probe_blocks(self) -> bool:
        """Effect or position-bias changes block only under --toolselect-min-effect-change."""
        if not self.group_records or self.flag("update_baseline"):
            return False
        comparison = self.probe()[2]
        return bool(comparison and comparison.get("blocking"))

    def preference_document(self) -> dict[str, Any] | None:
        """The probe's tool_preference.v1 document (None: no group ran)."""
        if not self.group_records:
            return None
        from pytest_toolselect.report.preference import build_document

        from .probe_items import load_groups

        records = self.ordered_group_records()
        calls = [c for r in records for c in r["calls"]]
        return build_document(calls, self.probe()[1], load_groups(records),
                              max_tokens=int(self.option("max_tokens").value), reps=self.reps,
                              subject=self.subject)

    def results_input(self, exitstatus: int | None = None) -> dict[str, Any]:
        """Everything the results document needs, as plain data (report.results.build)."""
        from .provenance import provenance

        summary = self.summary_input()
        settings = {name: self.option(name).value for name in (
            "reps", "rule", "history", "adaptive", "max_extra_reps", "max_tokens", "temperature",
            "fail_on_flaky", "fail_on_still_failing", "fail_on_suite_drop", "update_baseline",
            "min_effect_change")}
        base = self.baseline
        return {
            "provenance": provenance(self.rootdir, self.pytest_config.invocation_params.args,
                                     exitstatus),
            "subject": self.subject,
            "settings": settings,
            "records": summary["records"],
            "baseline_cases": base.cases if base is not None else {},
            "baseline_path": summary["baseline"],
            "baseline_mode": summary["baseline_mode"],
            "baseline_written": summary["baseline_written"],
            "gone": summary["gone"],
            "suite": summary["suite"],
            "escalations": summary["escalations"],
            "cache_savings": summary["cache_savings"],
            "cost_cap": summary["cost_cap"],
            "capped": self.cost_capped(),
            "probe_blocks": self.probe_blocks(),
            "preference": self.preference_document(),
            "lint": self.lint_document(),
        }

    def lint_document(self) -> dict[str, Any] | None:
        if not self.lint_records:
            return None
        from pytest_toolselect.lint.findings import merged_document

        return merged_document(self.lint_records)

    def write_reports(self, exitstatus: int | None = None) -> None:
        """--toolselect-json, -markdown and -html: the results document and its renderings."""
        wanted = {name: self.option(name) for name in ("json", "markdown", "html")}
        wanted = {name: r for name, r in wanted.items() if r.value is not None}
        if not wanted or self.is_worker or not (self.records or self.group_records or self.lint_records):
            return
        from pytest_toolselect.report.results import build

        from .report_files import write_reports

        document = build(self.results_input(exitstatus))
        self.report_problems += write_reports(
            document, {name: self.resolve_path(r) for name, r in wanted.items()})

    def dry_run(self, items: Sequence[pytest.Item]) -> None:
        """Count items and calls (and estimate the cost where the model is priced); no call."""
        from pytest_toolselect.report.preference import dry_run_lines

        groups = [item.group for item in items if getattr(item, "group", None) is not None]
        cases = [item for item in items if case_of(item) is not None]
        lines = [f"selection cases: {len(cases)} items, {len(cases) * self.reps} calls "
                 f"({self.reps} reps)"]
        if groups:
            from pytest_toolselect.probe.preference import dry_run

            from .probe_items import resolve

            prices = self._per_mtok_prices()
            resolved = []
            for group in groups:
                try:
                    resolved.append(resolve(self, group))
                except ToolselectError:
                    resolved.append(group)  # its references count at an estimated size
            lines.extend(dry_run_lines(dry_run(resolved, self.reps, prices=prices)))
        self.dry_run_lines = lines

    def _per_mtok_prices(self) -> dict[str, float] | None:
        model = str(self.model.value)
        if model.startswith("local/"):
            return {"input_per_mtok": 0.0, "output_per_mtok": 0.0}
        from pytest_toolselect.providers import price_per_token

        price = price_per_token(model, self.config.prices)
        if price is None:
            return None
        return {"input_per_mtok": price["input"] * 1e6, "output_per_mtok": price["output"] * 1e6}

    def summary_input(self) -> dict[str, Any]:
        """Everything the terminal summary needs, as plain data."""
        from pytest_toolselect.report.results import escalations

        if self.baseline_path is None:
            mode = None
        elif self.baseline is None:
            mode = "replaced" if self.replaced_subject is not None else "recorded"
        elif self.flag("update_baseline"):
            mode = "updated"
        else:
            mode = "compared"
        return {
            "model_line": self.model_line(),
            "cache_savings": self.cache_savings(),
            "cost_cap": self.option("max_cost_usd").value,
            "verbose": self.pytest_config.get_verbosity() > 0,
            "cache": (str(self.resolve_path(self.option("cache")))
                      if self.option("cache").value is not None else None),
            "baseline": str(self.baseline_path) if self.baseline_path else None,
            "baseline_mode": mode,
            "baseline_written": self.baseline_written is not None,
            "records": self.ordered_records(),
            "gone": self.shown_gone(),
            "suite": self.suite(),
            "escalations": escalations(self.records.values()),
        }

    def interrupted(self) -> bool:
        """The run stopped before its end: Ctrl-C, pytest.exit() or an internal error."""
        session = self.pytest_session
        return session is not None and session.exitstatus in (pytest.ExitCode.INTERRUPTED,
                                                              pytest.ExitCode.INTERNAL_ERROR)

    def finish(self) -> None:
        """Write the baseline (controller only): recorded when absent, or on request."""

        path = self.baseline_path
        if path is None or self.is_worker or not (self.records or self.group_records or self.lint_records):
            return
        if self.baseline is not None and not self.flag("update_baseline"):
            return
        if self.interrupted():
            # Ctrl-C or a crash mid-run: the cases not reached would be recorded as absent
            # (or, on update, half the suite as of now): the old file stays as it was
            return
        from pytest_toolselect.run.lifecycle import write_baseline

        write_baseline(self)
