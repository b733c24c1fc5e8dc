"""The preference probe inside a pytest run: group items, their calls, the summary and gate.

A group is one item that runs all its cells x reps on the scheduler. A call that
fails is kept with its error (left out of the shares, counted); a call the cost
cap stopped is kept as skipped. The controller summarises every group's calls
from the records on the reports, so a run under xdist sums up like a serial one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_toolselect.discovery.servers import discover
from pytest_toolselect.inputs.groups import load_groups_file, resolve_group
from pytest_toolselect.messages.errors import ToolselectError
from pytest_toolselect.probe.comparison import baseline_entry, compare
from pytest_toolselect.probe.preference import call_record, cells_for, group_stats, summarize
from pytest_toolselect.providers import TruncatedError, TurnRequest
from pytest_toolselect.providers.routes import route_of
from pytest_toolselect.records.run_records import GroupRecord
from pytest_toolselect.terms.vocabulary import Verdict

from .budget import CostCapReached
from .runner import _token_estimate
from .scheduler import Stopped

if TYPE_CHECKING:
    from pytest_toolselect.inputs.groups import Group
    from pytest_toolselect.probe.comparison import Comparison
    from pytest_toolselect.probe.values import ProbeSummary
    from pytest_toolselect.records.baseline_entry import GroupEntry
    from pytest_toolselect.records.probe_call import ProbeCall

    from .runner import CaseRunner
    from .settings import Settings

def resolve(settings: Settings, group: Group) -> Group:
    """Replace a group's {server, tool} references with the servers' real tools."""
    if group.resolved:
        return group
    # the config nearest to the groups file governs it, as for a case file
    config = settings.config_for(Path(group.source) if group.source else None)

    def lookup(server: str, tool: str) -> Any:
        spec = config.servers.get(server)
        if spec is None:
            known = ", ".join(config.servers) or "none defined"
            raise group.error(f"unknown server {server!r}", f"servers in the config: {known}")
        for t in discover(spec, config.root).tools:
            if t.name == tool:
                return t
        raise group.error(f"server {server!r} offers no tool {tool!r}")

    return resolve_group(group, lookup)


async def group_job(runner: CaseRunner, group: Group) -> list[ProbeCall]:
    """Every cell x rep of the group, as call records (errors and skips kept)."""
    settings = runner.settings
    resolved = await asyncio.to_thread(resolve, settings, group)
    cells = cells_for(resolved)

    async def one(cell: Any, rep: int) -> ProbeCall:
        request = TurnRequest(question=cell.query, tools=cell.tools, system=cell.system, rep=rep)
        tokens = _token_estimate(cell.query, cell.tools, cell.system)
        try:
            turn = await runner.call(request, tokens)
        except (CostCapReached, Stopped) as e:
            return call_record(cell, resolved, rep, skipped=True, error=str(e))
        except TruncatedError as e:  # the gate's rule: billed and counted, not scored
            return call_record(cell, resolved, rep, e.turn, inconclusive=True)
        except ToolselectError as e:
            return call_record(cell, resolved, rep, getattr(e, "turn", None), error=str(e))
        return call_record(cell, resolved, rep, turn)

    return list(await asyncio.gather(*(one(c, r) for c in cells for r in range(settings.reps))))


def group_record(nodeid: str, order: int, path: Path, group: Group,
                 calls: Sequence[ProbeCall], base: GroupEntry | None,
                 *, key: str) -> GroupRecord:
    """The record of one group item: its calls, its stats, its baseline entry."""
    stats = group_stats(calls, group)
    entry = baseline_entry(group, stats)
    verdict = Verdict.HELD
    scored = [c for c in calls if c.outcome is not None]
    if group.is_control and scored:
        over = entry.over_call_share or 0.0
        was = base.over_call_share if base else None
        if was == 0 and over > 0.5:
            verdict = Verdict.REGRESSION
    return GroupRecord(nodeid=nodeid, order=order, file=str(path), group_id=group.id,
                       control=group.is_control, calls=tuple(calls),
                       entry=entry if scored else None,
                       verdict=verdict, over_call_share=entry.over_call_share, key=key)


def regression_text(rec: GroupRecord, base: GroupEntry | None) -> str:
    was = base.over_call_share if base else None
    return (f"control group {rec.group_id}: a tool was called in "
            f"{rec.over_call_share or 0.0:.0%} of its calls (baseline {was:.0%}); the request needs "
            "no tool, so a description change now pulls the model into over-calling")


def load_groups(records: Iterable[GroupRecord]) -> list[Group]:
    """The groups the records came from, read again from their files (in record order)."""
    by_file: dict[str, dict[str, Group]] = {}
    out: list[Group] = []
    for rec in records:
        if rec.file not in by_file:
            by_file[rec.file] = {g.id: g for g in load_groups_file(Path(rec.file))}
        group = by_file[rec.file].get(rec.group_id)
        if group is not None and group not in out:
            out.append(group)
    return out


def summary_lines(records: Sequence[GroupRecord], stored: Mapping[str, GroupEntry],
                  *, seed: int, model: str, min_effect_change: float | None, verbose: bool = False
                  ) -> tuple[list[str], ProbeSummary, Comparison | None]:
    """The probe's section of the terminal summary (short; every slice and change under
    ``verbose``); also the summary and comparison data."""
    from dataclasses import replace

    # reports are imported where one is made, not with the run's parts (run/imports.py)
    from pytest_toolselect.report.probe_report import comparison_lines, lines

    groups = load_groups(records)
    summary = replace(summarize(list(iter_calls(records)), groups, seed), model=model)
    harness = harness_name(model)
    if harness is not None:
        summary = unpositioned(summary)
    out = list(lines(summary, by_domain=verbose, harness=harness))
    comparison = None
    current = {rec.key: rec.entry for rec in records if rec.entry}
    if stored:
        comparison = compare(stored, current, seed=seed, min_effect_change=min_effect_change)
        out.extend(comparison_lines(comparison, every_change=verbose))
    return out, summary, comparison


def harness_name(model: str) -> str | None:
    """The harness a model string runs on when it sorts the tools (the listed order is not
    the order sent: its route's ``harness.sorts_tools``), or None."""
    route = route_of(model)
    return route.name if route.harness is not None and route.harness.sorts_tools else None


def unpositioned(summary: ProbeSummary) -> ProbeSummary:
    """The summary without what a harness that sorts its tools cannot measure: the position
    bias, and vendor_name (a new name is a new place in the sorted list)."""
    from dataclasses import replace

    def strip(part: ProbeSummary) -> ProbeSummary:
        return replace(part, first_twin_share_baseline=None,
                       factor_effects={k: v for k, v in part.factor_effects.items()
                                       if k != "vendor_name"})

    by_domain = summary.by_domain
    return replace(strip(summary), by_domain=None if by_domain is None else
                   {d: strip(p) for d, p in by_domain.items()})


def iter_calls(records: Iterable[GroupRecord]) -> Iterator[ProbeCall]:
    """The records' calls, record by record."""
    for rec in records:
        yield from rec.calls
