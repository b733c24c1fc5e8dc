"""The preference probe's report: plain data in, lines or a JSON document out (no I/O).

``lines`` follows the shape of the probe reference's example::

    first-listed twin share (baseline): +0.48 [+0.40, +0.56] (groups=40)
      assertive     +0.44 [+0.39, +0.48] (groups=40)
    pair items: both twins 0.278, distractor 0.0114, no call 0.0345
    controls, any tool called: assertive 0.0, baseline 0.0, ...
    same choice on every rep: 0.8576 (modal share 0.9498)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_toolselect.exchange.json_value import JSONDict
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.inputs.groups import Group
from pytest_toolselect.messages.plural import plural
from pytest_toolselect.probe.comparison import Comparison, EffectChange, group_fingerprint
from pytest_toolselect.probe.dry_run import DryRun
from pytest_toolselect.probe.preference import (
    FACTORS,
    cell_plan,
    filled_cues,
    filled_system,
)
from pytest_toolselect.probe.values import Interval, ProbeSummary
from pytest_toolselect.records.baseline_entry import GroupEntry
from pytest_toolselect.records.probe_call import ProbeCall
from pytest_toolselect.terms.vocabulary import Verdict

SCHEMA_VERSION = "tool_preference.v1"


def _rate(x: float | None) -> str:
    # as the reference prints shares: up to 4 decimals, trailing zeros dropped (0.278, 0.0)
    return "n/a" if x is None else str(round(float(x), 4))


def _money(x: float) -> str:
    return f"${x:.2f}" if x >= 0.1 else f"${x:.4f}"


def _ci(stat: Interval) -> str:
    return f"{stat.mean:+.2f} [{stat.low:+.2f}, {stat.high:+.2f}] (groups={stat.n})"


#: what a harness route cannot measure, and why (``lines(..., harness=...)``)
HARNESS_UNMEASURED = ("first-listed twin share and vendor_name: not measured on {harness}: it "
                      "sorts the tools by name, so the order a cell lists is not the order sent, "
                      "and a vendor name moves its tool in that order")
HARNESS_NAMES = ("on {harness} each cell's tools are served by a throwaway MCP server and "
                 "reach the model as mcp__toolselect__<name>, beside its built-in tools")


def _effect_lines(summary: ProbeSummary, indent: str, harness: str | None = None) -> Iterator[str]:
    first = summary.first_twin_share_baseline
    if harness is not None:
        yield f"{indent}{HARNESS_UNMEASURED.format(harness=harness)}"
    elif first is not None:
        yield f"{indent}first-listed twin share (baseline): {_ci(first)}"
    elif summary.n_pair_groups:
        yield f"{indent}first-listed twin share (baseline): no baseline cell scored"
    for factor, stat in sorted(summary.factor_effects.items()):
        yield f"{indent}  {factor:<13} {_ci(stat)}"


def lines(summary: ProbeSummary, *, by_domain: bool = True,
          harness: str | None = None) -> Iterator[str]:
    """The probe's terminal summary. ``summary`` is :func:`preference.summarize`'s output;
    its ``model``, when the session names one, heads it. Without ``by_domain`` (the
    terminal's default; ``-v`` sets it) each domain's slice is one name in one line.
    ``harness`` names the harness the calls ran on (its summary holds no position figure)."""
    head = (f"{plural(summary.n_pair_groups, 'pair group')} and "
            f"{plural(summary.n_control_groups, 'control')}, {plural(summary.reps, 'rep')} "
            f"({plural(summary.n_calls, 'call')}")
    head += f", {_money(summary.cost_usd)})" if summary.cost_usd else ")"
    model = summary.model
    yield f"tool preference: {model + ', ' if model else ''}{head}"
    if not summary.n_scored:
        yield "no call was scored"
    yield from _effect_lines(summary, "", harness)
    if harness is not None:
        yield HARNESS_NAMES.format(harness=harness)
    po = summary.pair_outcomes
    if summary.n_pair_calls:
        yield (f"pair items: both twins {_rate(po['both_twins'])}, distractor {_rate(po['distractor'])}, "
               f"no call {_rate(po['none'])}, unmatched {_rate(po['unmatched'])}")
    if summary.control_over_call:
        yield "controls, any tool called: " + ", ".join(
            f"{f} {_rate(v)}" for f, v in sorted(summary.control_over_call.items()))
    if summary.same_choice_rate is not None:
        yield (f"same choice on every rep: {_rate(summary.same_choice_rate)} "
               f"(modal share {_rate(summary.modal_share)})")
    elif summary.reps == 1:
        yield "same choice on every rep: n/a (one rep; more reps measure the spread)"
    left_out = []
    if summary.n_errors:
        left_out.append(f"{plural(summary.n_errors, 'error')} (failed calls)")
    if summary.n_inconclusive:
        left_out.append(f"{summary.n_inconclusive} inconclusive (cut at max_tokens before any "
                        "tool call; billed)")
    if summary.n_skipped:
        left_out.append(f"{summary.n_skipped} not run (cost cap)")
    if left_out:
        yield "left out of the summary: " + "; ".join(left_out)
    if summary.n_truncated:
        yield (f"cut at max_tokens after their tool call (scored, flagged truncated): "
               f"{summary.n_truncated}")
    if summary.partial_groups:
        per_group = summary.groups or {}
        shown = [f"{g} ({per_group[g].cells_run}/{per_group[g].cells_planned} cells)"
                 if g in per_group else g for g in summary.partial_groups]
        yield ("partial groups, summarized from the cells that ran (A/B counterbalancing "
               "incomplete): " + ", ".join(shown))
    if summary.groups_not_run:
        yield "groups with no scored call: " + ", ".join(summary.groups_not_run)
    domains = {d: part for d, part in (summary.by_domain or {}).items() if part.n_scored}
    # one domain covering every group would only repeat the lines above
    if len(domains) > 1 or any(p.n_groups < summary.n_groups for p in domains.values()):
        # a CI over one group is no CI: those domains are named, not sliced
        single = [d for d, part in domains.items() if part.n_groups < 2]
        domains = {d: part for d, part in domains.items() if part.n_groups >= 2}
        if domains and not by_domain:
            # a slice per domain is eight lines each: named here, shown under -v
            yield f"by domain: {', '.join(domains)} (-v shows each domain's effects)"
            return
        if domains:
            yield "by domain:"
        if single:
            yield f"domains with one group (not sliced): {', '.join(single)}"
        for domain, part in domains.items():
            yield (f"  {domain}: {plural(part.n_pair_groups, 'pair group')}, "
                   f"{plural(part.n_control_groups, 'control')}")
            yield from _effect_lines(part, "    ")
            if part.control_over_call:
                yield "    controls, any tool called: " + ", ".join(
                    f"{f} {_rate(v)}" for f, v in sorted(part.control_over_call.items()))


def comparison_lines(comparison: Comparison, *, every_change: bool = True) -> Iterator[str]:
    """The probe's gate against a baseline (:func:`comparison.compare`'s output). Without
    ``every_change`` (the terminal's default; ``-v`` sets it) only changes whose CI
    excludes 0 (or that block) have a line; the others are named in one."""
    yield "tool preference against the baseline:"
    controls = comparison.controls
    for c in controls:
        if c.verdict == Verdict.REGRESSION:
            yield (f"  regression: control {c.group} over-calls in {_rate(c.now)} of its calls "
                   "(none on the baseline)")
    verdicts: dict[str, int] = {}
    for c in controls:
        verdicts[c.verdict.value] = verdicts.get(c.verdict.value, 0) + 1
    if verdicts:
        yield "  controls: " + ", ".join(f"{n} {v.replace('_', ' ')}" for v, n in sorted(verdicts.items()))
    changes = comparison.effect_changes
    position = comparison.position_bias_change
    rows = ([("position bias", position)] if position else []) + [
        (factor, changes[factor]) for factor in FACTORS if factor in changes]
    shown = [(name, c) for name, c in rows if every_change or c.blocking or not c.holds_zero]
    if shown:
        yield "  change since the baseline (paired over groups):"
    for name, effect in shown:
        yield f"    {name:<13} {_change(effect)}"
    quiet = [name for name, c in rows if (name, c) not in shown]
    if quiet:
        yield (f"  {'other changes' if shown else 'changes'} since the baseline whose 95% CI holds 0: "
               f"{', '.join(quiet)} (-v shows them)")
    if comparison.changed_groups:
        yield ("  groups changed since the baseline (still compared): "
               + ", ".join(comparison.changed_groups))
    if comparison.blocking:
        yield "  blocking: " + "; ".join(comparison.blocking)
    elif comparison.min_effect_change is None:
        yield "  effect changes are reported, not blocking (set a minimum effect change to gate on them)"


def _change(c: EffectChange) -> str:
    mark = "  (blocks)" if c.blocking else ""
    return f"{c.change:+.2f} [{c.low:+.2f}, {c.high:+.2f}] (groups={c.groups}){mark}"


def dry_run_lines(dry: DryRun) -> Iterator[str]:
    """What a run would do (:func:`dry_run.dry_run`'s output): cells and calls per group."""
    yield (f"tool preference dry run: {plural(dry.n_pair_groups, 'pair group')} and "
           f"{plural(dry.n_control_groups, 'control')}, {plural(dry.reps, 'rep')}: "
           f"{dry.cells} cells, {plural(dry.calls, 'call')}")
    width = max((len(r.id) for r in dry.groups), default=0)
    for r in dry.groups:
        kind = "control" if r.control else "pair"
        yield f"  {r.id:<{width}}  {kind:<7}  {r.cells:>3} cells  {r.calls:>5} calls"
    if dry.estimated_cost_usd is not None:
        yield f"cost: about {_money(dry.estimated_cost_usd)}, {dry.estimate_basis}"
    else:
        yield f"cost: {dry.estimate_basis}"


# -- the JSON document -----------------------------------------------------------------


@dataclass(frozen=True)
class GroupGate:
    """A group's gate as its document row holds it: its baseline key, its place in the whole
    suite, this run's baseline entry and the stored one it was compared against."""

    key: str
    order: int
    #: None: no call of the group was scored
    entry: GroupEntry | None
    baseline: GroupEntry | None

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "order": self.order,
                "entry": self.entry.to_json() if self.entry is not None else None,
                "baseline": self.baseline.to_json() if self.baseline is not None else None}


#: a setting the document's ``settings`` adds beside the probe's own
Setting = str | int | float | bool | None


def build_document(calls: Sequence[ProbeCall], summary: ProbeSummary,
                   groups: Sequence[Group], *, max_tokens: int | None, reps: int,
                   subject: Subject | None = None, cues: Mapping[str, str] | None = None,
                   system: str | None = None, extra_settings: Mapping[str, Setting] | None = None,
                   gate: Mapping[str, GroupGate] | None = None,
                   comparison: Comparison | None = None) -> JSONDict:
    """The ``tool_preference.v1`` document: every call, the settings sent, the summary.

    ``settings`` holds the run's system prompt and cues with the defaults filled in; a
    group that overrides either has its own, filled in, under ``groups``. Results are in
    a stable order (group as given, cell as planned, rep), whatever order the calls
    finished in across workers.

    ``gate`` (by group id) adds to a group's row its baseline key, its place in the whole
    suite, this run's baseline entry and the stored one it was compared against: what
    ``toolselect merge`` needs to join shards as one run. ``comparison`` is the gate's
    result against the baseline (:func:`comparison.compare`), when one was compared.
    """
    order = {g.id: i for i, g in enumerate(groups)}
    cell_order = {(g.id, p.cell_id): j for g in groups for j, p in enumerate(cell_plan(g))}
    results = sorted(
        (_result(c) for c in calls),
        key=lambda r: (order.get(r["group"], len(order)), r["group"],
                       cell_order.get((r["group"], r["cell"]), 1 << 30), r["cell"], r["rep"]),
    )
    run_cues = filled_cues(None, cues)
    run_system = filled_system(None, system)
    settings: dict[str, Any] = {
        "max_tokens": max_tokens,
        "reps": reps,
        "system": run_system,
        "cues": run_cues,
        **dict(extra_settings or {}),
    }
    group_rows = []
    for g in groups:
        row: dict[str, Any] = {
            "id": g.id, "expect": g.expect, "domain": g.domain, "query": g.query,
            "cells": len(cell_plan(g)), "source": g.source, "line": g.line,
            "group_fingerprint": group_fingerprint(g),
            "tools": {k: g.twins[k].name or f"{g.twins[k].server}/{g.twins[k].tool}" for k in ("A", "B")},
        }
        if g.system is not None:
            row["system"] = filled_system(g, system)
        if g.cues:
            row["cues"] = filled_cues(g, cues)
        row_gate = (gate or {}).get(g.id)
        if row_gate is not None:
            row.update(_plain(row_gate.to_json()))
        group_rows.append(row)
    document = {
        "schema_version": SCHEMA_VERSION,
        "subject": subject.to_json() if subject is not None else {},
        "settings": settings,
        "groups": group_rows,
        "results": results,
        "summary": _plain(summary.to_json()),
    }
    if gate is not None:
        document["comparison"] = _plain(comparison.to_json()) if comparison is not None else None
    return document


_RESULT_KEYS = ("group", "cell", "factor", "treated", "position", "rep", "domain", "control",
                "calls", "outcome", "error", "skipped", "truncated", "inconclusive", "usage",
                "cost_usd")


def _result(rec: ProbeCall) -> dict[str, Any]:
    # the document's own key order, which is not the record's
    out = {k: getattr(rec, k) for k in _RESULT_KEYS}
    out["calls"] = list(rec.calls)
    out["usage"] = dict(rec.usage)
    return out


def _plain(value: Any) -> Any:
    """Summary data as JSON values (tuples to lists, numpy scalars to floats)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return value
