"""The preference probe's pure core: cells, outcomes, the summary, the report, the gate.

The acceptance tests drive simulated models of known bias through the real cells and
check that the summary recovers that bias.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_toolselect.exchange.tool import ToolCall
from pytest_toolselect.gate.subject import Subject
from pytest_toolselect.inputs.groups import Group, ToolSpec, Twin, load_groups_file
from pytest_toolselect.positions.sourcemap import compile_schema, load_schema
from pytest_toolselect.probe.comparison import baseline_entries, compare
from pytest_toolselect.probe.dry_run import dry_run
from pytest_toolselect.probe.preference import (
    DEFAULT_CUES,
    DEFAULT_SYSTEM,
    FACTORS,
    Cell,
    call_record,
    cell_plan,
    cells_for,
    outcome,
    summarize,
)
from pytest_toolselect.probe.values import ProbeSummary
from pytest_toolselect.providers import Turn
from pytest_toolselect.records.baseline_entry import GroupEntry
from pytest_toolselect.records.probe_call import ProbeCall
from pytest_toolselect.report.probe_report import (
    build_document,
    comparison_lines,
    dry_run_lines,
    lines,
)

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "preference.groups.json"
#: few resamples keep the tests fast; the statistics are the same code at any count
RESAMPLES = 2_000


def twin(name: str, *, full: bool = True, **extra: str) -> Twin:
    fields: dict[str, Any] = dict(vendor_name=f"vendor_{name}", detail=f"{name} covers everything.",
                                  example=f"{name}(query='x')", exclusion=f"Do NOT use {name} for edits.")
    return Twin(name=name, description=f"The {name} tool.", **(fields if full else {}), **extra)


def group(gid: str = "G01", *, control: bool = False, a: Twin | None = None, b: Twin | None = None,
          distractors: Sequence[str] = ("read_file", "web_search"), domain: str | None = None,
          **kw: Any) -> Group:
    return Group(
        id=gid, query=f"Request {gid}", expect="none" if control else "pair",
        twins={"A": a or twin(f"a_{gid.lower()}"), "B": b or twin(f"b_{gid.lower()}")},
        distractors=tuple(ToolSpec(name=f"{d}_{gid.lower()}", description=f"The {d} tool.")
                          for d in distractors),
        domain=domain, source="mem.groups.json", line=1, **kw,
    )


def turn(*names: str, truncated: bool = False, cost: float | None = 0.001) -> Turn:
    return Turn(calls=tuple(ToolCall(n) for n in names), usage={"input_tokens": 100, "output_tokens": 20},
                cost_usd=cost, truncated=truncated)


Policy = Callable[[Cell, int, random.Random], Sequence[str]]


def simulate(groups: Sequence[Group], policy: Policy, reps: int = 1, seed: int = 0) -> list[ProbeCall]:
    """Every cell of every group, each rep, answered by ``policy``: call records."""
    rng = random.Random(seed)
    records = []
    for g in groups:
        for cell in cells_for(g):
            for rep in range(reps):
                records.append(call_record(cell, g, rep, turn(*policy(cell, rep, rng))))
    # records arrive from xdist workers in any order and as JSON
    rng.shuffle(records)
    return [ProbeCall.from_json(r) for r in json.loads(json.dumps([r.to_json() for r in records]))]


def twins_of(cell: Cell) -> tuple[str, str]:
    return cell.tools[0].name, cell.tools[-1].name


def first_listed(cell: Cell, rep: int, rng: random.Random) -> list[str]:
    return [twins_of(cell)[0]]


def assertive_else_first(cell: Cell, rep: int, rng: random.Random) -> list[str]:
    for tool in (cell.tools[0], cell.tools[-1]):
        if DEFAULT_CUES["assertive"] in tool.description:
            return [tool.name]
    return [twins_of(cell)[0]]


def both_twins(cell: Cell, rep: int, rng: random.Random) -> list[str]:
    return list(twins_of(cell))


def pairs(n: int, **kw: Any) -> list[Group]:
    return [group(f"G{i:02d}", **kw) for i in range(n)]


def approx(x: float) -> Any:
    return pytest.approx(x, abs=1e-9)


def test_building_cells_and_records_imports_no_numpy() -> None:
    # the session builds cells in every run that collects a groups file; numpy waits
    # for the summary
    code = ("import sys, pathlib\n"
            "from pytest_toolselect.inputs.groups import load_groups_file\n"
            "from pytest_toolselect.probe.preference import cells_for, call_record\n"
            "from pytest_toolselect.probe.dry_run import dry_run\n"
            "import pytest_toolselect.report.probe_report\n"
            f"gs = load_groups_file(pathlib.Path({str(EXAMPLE)!r}))\n"
            "cells = [c for g in gs for c in cells_for(g)]\n"
            "dry_run(gs, 3, 0.001)\n"
            "print([m for m in ('numpy', 'litellm', 'anthropic', 'mcp') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- cells -----------------------------------------------------------------------------


def test_a_full_pair_group_has_2_plus_4_per_factor_cells() -> None:
    cells = cells_for(group())
    assert len(cells) == 2 + 4 * len(FACTORS) == 22
    ids = [c.cell_id for c in cells]
    assert ids[:2] == ["baseline:A-first", "baseline:B-first"]
    assert ids[2:6] == ["vendor_name:A:first", "vendor_name:A:last",
                        "vendor_name:B:first", "vendor_name:B:last"]
    assert {c.factor for c in cells} == {"baseline", *FACTORS}
    assert len(set(ids)) == 22


def test_a_control_has_2_plus_2_per_factor_cells_crossing_position_only() -> None:
    cells = cells_for(group(control=True))
    assert len(cells) == 2 + 2 * len(FACTORS) == 12
    factor_cells = [c for c in cells if c.factor != "baseline"]
    # the twin crossing is dropped, the position crossing kept: A treated, first and last
    assert {c.treated for c in factor_cells} == {"A"}
    assert [c.position for c in factor_cells] == ["first", "last"] * len(FACTORS)


def test_a_factor_a_twin_has_no_field_for_is_skipped_for_that_twin() -> None:
    # B has only its neutral description: vendor_name, long_desc and exclusion treat A only
    g = group(b=twin("plain", full=False))
    cells = cells_for(g)
    assert len(cells) == 2 + 4 * 2 + 2 * 3 == 16
    assert not [c for c in cells
                if c.treated == "B" and c.factor in ("vendor_name", "long_desc", "exclusion")]
    # long_desc needs detail or example, not both
    g2 = group(a=twin("a", full=False, example="a(query='x')"), b=twin("b", full=False))
    assert [c.cell_id for c in cells_for(g2) if c.factor == "long_desc"] == [
        "long_desc:A:first", "long_desc:A:last"]
    assert len(cell_plan(g2)) == len(cells_for(g2)) == 2 + 4 * 2 + 2


def test_a_control_treats_b_when_only_b_has_the_field() -> None:
    g = group(control=True, a=twin("a", full=False), b=twin("b"))
    cells = {c.cell_id for c in cells_for(g)}
    assert {"vendor_name:B:first", "vendor_name:B:last", "assertive:A:first"} <= cells
    assert len(cells) == 12
    g2 = group(control=True, a=twin("a", full=False), b=twin("b", full=False))
    assert len(cells_for(g2)) == 2 + 2 * 2  # only the cue factors apply


def test_twins_sit_at_the_ends_with_distractors_between_in_order() -> None:
    g = group(distractors=("one", "two", "three"))
    for cell in cells_for(g):
        names = [t.name for t in cell.tools]
        assert names[1:4] == ["one_g01", "two_g01", "three_g01"]
        assert cell.roles == (cell.first_twin, "distractor", "distractor", "distractor",
                              "B" if cell.first_twin == "A" else "A")
        if cell.treated:
            at = 0 if cell.position == "first" else -1
            assert cell.roles[at] == cell.treated
    by_id = {c.cell_id: c for c in cells_for(g)}
    assert [t.name for t in by_id["baseline:A-first"].tools][::4] == ["a_g01", "b_g01"]
    assert [t.name for t in by_id["baseline:B-first"].tools][::4] == ["b_g01", "a_g01"]


def test_each_factor_changes_only_the_treated_twin() -> None:
    g = group()
    a, b = g.twins["A"], g.twins["B"]
    by_id = {c.cell_id: c for c in cells_for(g)}

    def tools(cell_id: str) -> dict[str, Any]:
        cell = by_id[cell_id]
        return dict(zip(cell.roles, cell.tools, strict=True))

    neutral = tools("baseline:A-first")
    assert (neutral["A"].name, neutral["A"].description) == (a.name, a.description)
    vendor = tools("vendor_name:A:last")
    assert vendor["A"].name == "vendor_a_g01" and vendor["A"].description == a.description
    assert vendor["B"] == neutral["B"]
    assert tools("assertive:B:first")["B"].description == f"{b.description} {DEFAULT_CUES['assertive']}"
    assert tools("social_proof:A:first")["A"].description == f"{a.description} {DEFAULT_CUES['social_proof']}"
    assert tools("long_desc:A:first")["A"].description == (
        "The a_g01 tool. a_g01 covers everything. Example: a_g01(query='x')")
    assert tools("exclusion:B:last")["B"].description == "The b_g01 tool. Do NOT use b_g01 for edits."
    for cell_id, cell in by_id.items():
        if cell.treated:
            assert tools(cell_id)["B" if cell.treated == "A" else "A"] == neutral[
                "B" if cell.treated == "A" else "A"]


def test_cues_and_system_prompt_defaults_and_overrides() -> None:
    g = group()
    cell = cells_for(g)[0]
    assert cell.system == DEFAULT_SYSTEM and cell.query == "Request G01"
    run = cells_for(g, cues={"assertive": "Run cue."}, system="Run system.")
    assertive = next(c for c in run if c.cell_id == "assertive:A:first")
    assert assertive.tools[0].description.endswith(" Run cue.") and assertive.system == "Run system."
    own = replace(g, cues={"assertive": "Group cue."}, system="")
    cells = cells_for(own, cues={"assertive": "Run cue."}, system="Run system.")
    assertive = next(c for c in cells if c.cell_id == "assertive:A:first")
    assert assertive.tools[0].description.endswith(" Group cue.")
    assert cells[0].system is None  # "" sends no system prompt
    social = next(c for c in cells if c.cell_id == "social_proof:A:first")
    assert social.tools[0].description.endswith(DEFAULT_CUES["social_proof"])


def test_a_description_without_a_full_stop_gets_one_before_the_cue() -> None:
    g = group(a=Twin(name="a", description="Searches the docs"))
    cell = next(c for c in cells_for(g) if c.cell_id == "assertive:A:first")
    assert cell.tools[0].description == f"Searches the docs. {DEFAULT_CUES['assertive']}"


# -- outcomes --------------------------------------------------------------------------


def test_outcomes_from_the_first_turn() -> None:
    g = group()
    cell = cells_for(g)[0]  # a_g01, read_file_g01, web_search_g01, b_g01
    assert outcome(cell, turn("a_g01"), g) == "A"
    assert outcome(cell, turn("b_g01"), g) == "B"
    assert outcome(cell, turn("b_g01", "a_g01"), g) == "both"
    assert outcome(cell, turn("read_file_g01"), g) == "distractor"
    # a twin beside a distractor counts as the twin: the model did reach for it
    assert outcome(cell, turn("read_file_g01", "b_g01"), g) == "B"
    assert outcome(cell, turn("made_up"), g) == "unmatched"
    assert outcome(cell, turn(""), g) == "unmatched"
    assert outcome(cell, turn("made_up", "web_search_g01"), g) == "distractor"
    assert outcome(cell, turn(), g) == "none"
    assert outcome(cell, None, g) == "none"
    with pytest.raises(ValueError, match="belongs to group"):
        outcome(cell, turn("a_g01"), group("G02"))


def test_a_vendor_renamed_twin_maps_back() -> None:
    g = group()
    cell = next(c for c in cells_for(g) if c.cell_id == "vendor_name:B:first")
    assert outcome(cell, turn("vendor_b_g01"), g) == "B"
    assert outcome(cell, turn("vendor_b_g01", "a_g01"), g) == "both"
    # the twin's own name was not offered in this cell
    assert outcome(cell, turn("b_g01"), g) == "unmatched"


def test_call_records_for_errors_skips_and_truncation() -> None:
    g = group()
    cell = cells_for(g)[3]
    ok = call_record(cell, g, 2, turn("b_g01", truncated=True)).to_json()
    assert ok["outcome"] == "B" and ok["truncated"] and ok["rep"] == 2 and ok["calls"] == ["b_g01"]
    assert ok["cell"] == cell.cell_id and ok["factor"] == "vendor_name" and ok["treated"] == "A"
    cut = call_record(cell, g, 0, turn(cost=0.002),
                      error="truncated at max_tokens before any tool call").to_json()
    assert cut["outcome"] is None and cut["cost_usd"] == 0.002 and cut["usage"]["input_tokens"] == 100
    skipped = call_record(cell, g, 0, skipped=True).to_json()
    assert skipped["skipped"] and skipped["outcome"] is None and skipped["cost_usd"] is None
    json.dumps([ok, cut, skipped])  # JSON-able: records travel between xdist workers


# -- acceptance: simulated policies of known bias ------------------------------------------


def test_always_first_listed_recovers_full_position_bias_and_no_effects() -> None:
    groups = pairs(20)
    s = summarize(simulate(groups, first_listed, reps=2), groups, seed=1, resamples=RESAMPLES).to_json()
    first = s["first_twin_share_baseline"]
    assert first["mean"] == approx(1.0) and first["ci"][0] <= 1.0 <= first["ci"][1]
    assert first["groups"] == 20
    assert set(s["factor_effects"]) == set(FACTORS)
    for stat in s["factor_effects"].values():
        assert stat["mean"] == approx(0.0) and stat["ci"][0] <= 0.0 <= stat["ci"][1]
        assert stat["groups"] == 20
    assert s["pair_outcomes"] == {"both_twins": 0.0, "distractor": 0.0, "none": 0.0, "unmatched": 0.0}
    assert s["same_choice_rate"] == 1.0 and s["modal_share"] == 1.0


def test_assertive_twin_else_first_listed_recovers_a_half_assertive_effect() -> None:
    groups = pairs(20)
    s = summarize(simulate(groups, assertive_else_first), groups, seed=1, resamples=RESAMPLES).to_json()
    effect = s["factor_effects"]["assertive"]
    # treated first: 1 vs 1 in the baseline; treated last: 1 vs 0; mean +0.5
    assert effect["mean"] == approx(0.5) and effect["ci"][0] <= 0.5 <= effect["ci"][1]
    for factor in ("vendor_name", "social_proof", "long_desc", "exclusion"):
        assert s["factor_effects"][factor]["mean"] == approx(0.0)
    assert s["first_twin_share_baseline"]["mean"] == approx(1.0)


def test_a_noisy_policy_recovers_its_effects_within_the_ci() -> None:
    # first-listed twin with p=0.7 (else the last); an assertive twin wins with p=0.6, else
    # the position rule applies. Expected: first share 0.7; assertive effect
    # 0.5 * ((0.6 + 0.4*0.7 - 0.7) + (0.6 + 0.4*0.3 - 0.3)) = 0.3; others 0.
    def policy(cell: Cell, rep: int, rng: random.Random) -> list[str]:
        first, last = twins_of(cell)
        for tool in (cell.tools[0], cell.tools[-1]):
            if DEFAULT_CUES["assertive"] in tool.description and rng.random() < 0.6:
                return [tool.name]
        return [first if rng.random() < 0.7 else last]

    groups = pairs(60)
    s = summarize(simulate(groups, policy, reps=5, seed=0), groups, seed=2, resamples=RESAMPLES).to_json()
    first = s["first_twin_share_baseline"]
    assert first["ci"][0] <= 0.7 <= first["ci"][1]
    assert first["ci"][1] - first["ci"][0] > 0.01  # a real interval, not a point
    effect = s["factor_effects"]["assertive"]
    assert effect["ci"][0] <= 0.3 <= effect["ci"][1]
    for factor in ("vendor_name", "social_proof", "long_desc", "exclusion"):
        lo, hi = s["factor_effects"][factor]["ci"]
        assert lo <= 0.0 <= hi, factor
    assert 0 < s["same_choice_rate"] < 1 and s["same_choice_rate"] < s["modal_share"] < 1


def test_calling_both_twins_counts_half_for_each() -> None:
    groups = pairs(8)
    records = simulate(groups, both_twins)
    s = summarize(records, groups, seed=1, resamples=RESAMPLES).to_json()
    assert s["first_twin_share_baseline"]["mean"] == approx(0.5)
    assert all(stat["mean"] == approx(0.0) for stat in s["factor_effects"].values())
    assert s["pair_outcomes"]["both_twins"] == 1.0
    # half of each twin: a group where B also gets called alone half the time
    per = s["groups"]["G00"]
    assert per["first_twin_share"] == approx(0.5)


def test_shares_mix_single_and_both_calls() -> None:
    g = group()
    cells = {c.cell_id: c for c in cells_for(g)}
    records = [
        call_record(cells["baseline:A-first"], g, 0, turn("a_g01")),
        call_record(cells["baseline:A-first"], g, 1, turn("a_g01", "b_g01")),  # 0.5 to A
        call_record(cells["baseline:B-first"], g, 0, turn("web_search_g01")),  # 0 to B
        call_record(cells["baseline:B-first"], g, 1, turn("b_g01")),
        call_record(cells["exclusion:A:last"], g, 0, turn("a_g01")),  # A last: 1 vs baseline 0.5
    ]
    s = summarize(records, [g], seed=0, resamples=200).to_json()
    per = s["groups"]["G01"]
    assert per["first_twin_share"] == approx((0.75 + 0.5) / 2)
    # A listed last in the baseline is baseline:B-first, where A's share is 0
    assert per["effects"] == {"exclusion": approx(1.0)}
    assert s["pair_outcomes"] == {"both_twins": 0.2, "distractor": 0.2, "none": 0.0, "unmatched": 0.0}


def test_controls_count_any_call_as_over_calling() -> None:
    controls = [group(f"C{i}", control=True) for i in range(3)]

    def policy(cell: Cell, rep: int, rng: random.Random) -> list[str]:
        if cell.factor == "assertive":
            return [cell.tools[0].name]
        if cell.factor == "social_proof":
            return ["invented_tool"]  # unmatched: still over-calling
        return []

    groups = [*pairs(2), *controls]
    s = summarize(simulate(groups, policy), groups, seed=0, resamples=200).to_json()
    assert s["control_over_call"] == {"assertive": 1.0, "baseline": 0.0, "exclusion": 0.0,
                                      "long_desc": 0.0, "social_proof": 1.0, "vendor_name": 0.0}
    assert s["control_calls"]["baseline"] == 6 and s["control_calls"]["assertive"] == 6
    assert s["n_control_groups"] == 3 and s["n_pair_groups"] == 2
    # controls are not in the pair measures
    assert s["first_twin_share_baseline"]["groups"] == 2
    assert s["groups"]["C0"]["over_call_share"] == approx(4 / 12)
    assert s["pair_outcomes"]["none"] == approx(14 / 22) and s["pair_outcomes"]["unmatched"] == approx(4 / 22)


def test_partial_groups_are_summarized_from_the_cells_that_ran() -> None:
    groups = pairs(4)
    records = simulate(groups, assertive_else_first)
    # G03 ran only its first 8 cells (the cost cap stopped the run); the rest are skipped
    planned = [p.cell_id for p in cell_plan(groups[3])]
    records = [replace(r, skipped=True, outcome=None, calls=(), cost_usd=None, usage={})
               if r.group == "G03" and planned.index(r.cell) >= 8 else r for r in records]
    # G02 lost its B-first baseline to errors: comparisons needing it are left out
    records = [replace(r, error="HTTP 500 after 4 retries", outcome=None)
               if r.group == "G02" and r.cell == "baseline:B-first" else r for r in records]
    s = summarize(records, groups, seed=0, resamples=200).to_json()
    assert s["partial_groups"] == ["G02", "G03"]
    assert s["groups"]["G03"]["cells_run"] == 8 and s["groups"]["G03"]["cells_planned"] == 22
    assert s["n_skipped"] == 14 and s["n_errors"] == 1 and s["n_scored"] == 4 * 22 - 15
    # G03 ran baseline, vendor_name and assertive:A:first/last (8 cells)
    assert s["factor_effects"]["assertive"]["groups"] == 4
    assert s["factor_effects"]["social_proof"]["groups"] == 3
    assert s["groups"]["G03"]["effects"]["assertive"] == approx(0.5)  # (0 + 1) / 2 over A's cells
    # G02 keeps only comparisons against baseline:A-first: treated A first, treated B last
    assert s["groups"]["G02"]["effects"]["assertive"] == approx(0.5)
    assert s["groups"]["G02"]["first_twin_share"] == approx(1.0)
    assert s["factor_effects"]["assertive"]["mean"] == approx(0.5)


def test_errors_skips_and_truncation_are_counted() -> None:
    g = group()
    cells = cells_for(g)
    records = [
        call_record(cells[0], g, 0, turn("a_g01", truncated=True)),
        call_record(cells[1], g, 0, turn("b_g01")),
        call_record(cells[2], g, 0, error="timeout"),
        call_record(cells[3], g, 0, turn(cost=0.003), error="truncated at max_tokens before any tool call"),
        call_record(cells[4], g, 0, skipped=True),
        call_record(cells[5], g, 0, turn("a_g01", cost=None)),
    ]
    s = summarize(records, [g], seed=0, resamples=200).to_json()
    assert (s["n_calls"], s["n_scored"], s["n_errors"], s["n_skipped"], s["n_truncated"]) == (6, 3, 2, 1, 1)
    assert s["cost_usd"] == approx(0.001 * 2 + 0.003)
    assert s["n_unpriced"] == 1
    assert s["same_choice_rate"] is None  # one rep: no spread to measure


def test_summaries_are_seeded_and_reproducible() -> None:
    def policy(cell: Cell, rep: int, rng: random.Random) -> list[str]:
        return [rng.choice(twins_of(cell))]

    groups = pairs(15)
    records = simulate(groups, policy, reps=2, seed=5)
    one = summarize(records, groups, seed=7, resamples=RESAMPLES).to_json()
    again = summarize(list(reversed(records)), groups, seed=7, resamples=RESAMPLES).to_json()
    other = summarize(records, groups, seed=8, resamples=RESAMPLES).to_json()
    assert one == again
    assert one["factor_effects"]["assertive"]["ci"] != other["factor_effects"]["assertive"]["ci"]
    assert one["factor_effects"]["assertive"]["mean"] == other["factor_effects"]["assertive"]["mean"]


def test_same_choice_rate_and_modal_share() -> None:
    g = group()
    a_first, b_first = cells_for(g)[:2]
    records = [call_record(a_first, g, r, turn(n)) for r, n in enumerate(["a_g01", "a_g01", "a_g01"])]
    records += [call_record(b_first, g, r, turn(*n)) for r, n in enumerate([["b_g01"], ["a_g01"], ["b_g01"]])]
    s = summarize(records, [g], seed=0, resamples=200).to_json()
    assert s["same_choice_rate"] == approx(0.5)
    assert s["modal_share"] == approx((1 + 2 / 3) / 2)
    assert s["n_repeated_items"] == 2


def test_slices_by_domain() -> None:
    groups = [group("G1", domain="docs"), group("G2", domain="docs"), group("G3", domain="code"),
              group("G4"), group("C1", control=True, domain="code")]
    s = summarize(simulate(groups, first_listed), groups, seed=0, resamples=200).to_json()
    assert set(s["by_domain"]) == {"code", "docs"}
    docs = s["by_domain"]["docs"]
    assert docs["n_pair_groups"] == 2 and docs["first_twin_share_baseline"]["groups"] == 2
    code = s["by_domain"]["code"]
    assert code["n_pair_groups"] == 1 and code["n_control_groups"] == 1
    assert code["control_over_call"]["baseline"] == 1.0
    assert "groups" not in docs and "by_domain" not in docs


def test_records_must_match_the_groups() -> None:
    g = group()
    records = [call_record(cells_for(g)[0], g, 0, turn("a_g01"))]
    with pytest.raises(ValueError, match="G01"):
        summarize(records, [group("G02")], seed=0)


# -- the report and the document ---------------------------------------------------------


def _noisy_summary() -> tuple[list[Group], list[ProbeCall], ProbeSummary]:
    def policy(cell: Cell, rep: int, rng: random.Random) -> list[str]:
        if cell.query.startswith("Request C"):
            return []
        first, last = twins_of(cell)
        x = rng.random()
        return [first] if x < 0.6 else [last] if x < 0.85 else [first, last] if x < 0.95 else []

    groups = [*pairs(10, domain="docs"), group("C1", control=True, domain="chat")]
    records = simulate(groups, policy, reps=3, seed=1)
    records[0] = replace(records[0], error="HTTP 529 overloaded", outcome=None)
    # the cost cap stopped the run before G09's last cell
    records = [replace(r, skipped=True, outcome=None, calls=(), usage={}, cost_usd=None)
               if r.group == "G09" and r.cell == "exclusion:B:last" else r for r in records]
    return groups, records, summarize(records, groups, seed=0, resamples=500)


def test_lines_have_the_reference_shape() -> None:
    _, _, s = _noisy_summary()
    out = list(lines(replace(s, model="local/bm25")))
    text = "\n".join(out)
    num = r"[+-]\d\.\d\d"
    assert out[0].startswith("tool preference: local/bm25, 10 pair groups and 1 control, 3 reps (696 calls")
    ci = rf"{num} \[{num}, {num}\]"
    assert re.search(rf"^first-listed twin share \(baseline\): {ci} \(groups=10\)$", text, re.M)
    effect_lines = [line for line in out if re.match(rf"^  [a-z_]+ +{ci} \(groups=\d+\)$", line)]
    assert [line.split()[0] for line in effect_lines] == sorted(FACTORS)
    assert "  assertive     " in text and "  social_proof  " in text  # the reference's column
    assert re.search(r"^pair items: both twins 0\.\d+, distractor 0\.0, no call 0\.\d+, unmatched 0\.0$",
                     text, re.M)
    assert re.search(r"^controls, any tool called: assertive 0\.0, baseline 0\.0, exclusion 0\.0, "
                     r"long_desc 0\.0, social_proof 0\.0, vendor_name 0\.0$", text, re.M)
    assert re.search(r"^same choice on every rep: 0\.\d+ \(modal share 0\.\d+\)$", text, re.M)
    assert "left out of the summary: 1 error" in text and "3 not run (cost cap)" in text
    assert "partial groups, summarized from the cells that ran" in text and "G09 (21/22 cells)" in text
    assert "by domain:" in text and "  docs: 10 pair groups, 0 controls" in text
    assert "domains with one group (not sliced): chat" in text


def test_the_document_validates_against_its_schema() -> None:
    import jsonschema

    groups, records, s = _noisy_summary()
    groups[0] = replace(groups[0], system="", cues={"assertive": "Group cue."})
    doc = build_document(records, s, groups, max_tokens=1024, reps=3,
                         subject=Subject.from_json({"provider": "local", "model": "local/bm25"}),
                         extra_settings={"seed": 0, "resamples": 500})
    schema = load_schema("tool_preference.v1")
    jsonschema.Draft202012Validator.check_schema(schema)
    compile_schema(schema).validate(doc)
    doc = json.loads(json.dumps(doc))  # JSON all the way down
    compile_schema(schema).validate(doc)
    assert doc["settings"]["cues"] == dict(DEFAULT_CUES) and doc["settings"]["system"] == DEFAULT_SYSTEM
    assert doc["settings"]["max_tokens"] == 1024
    assert doc["groups"][0]["system"] == "" and doc["groups"][0]["cues"]["assertive"] == "Group cue."
    assert doc["groups"][0]["cues"]["social_proof"] == DEFAULT_CUES["social_proof"]
    assert len(doc["results"]) == len(records) == 696
    first = doc["results"][0]
    assert (first["group"], first["cell"], first["rep"]) == ("G00", "baseline:A-first", 0)
    assert {r["outcome"] for r in doc["results"]} <= {"A", "B", "both", "none", None}
    assert all(r["domain"] == ("chat" if r["control"] else "docs") for r in doc["results"])
    bad = json.loads(json.dumps(doc))
    bad["results"][0]["outcome"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        compile_schema(schema).validate(bad)


# -- dry run ---------------------------------------------------------------------------


def test_dry_run_counts_cells_and_calls_and_estimates_cost() -> None:
    groups = [group(), group("G02", b=twin("plain", full=False)), group("C1", control=True)]
    dry = dry_run(groups, reps=3)
    assert [(r.cells, r.calls) for r in dry.groups] == [(22, 66), (16, 48), (12, 36)]
    assert (dry.cells, dry.calls) == (50, 150)
    assert dry.estimated_cost_usd is None and "no cost estimate" in dry.estimate_basis
    per_call = dry_run(groups, reps=3, price_per_call=0.001)
    assert per_call.estimated_cost_usd == approx(0.15)
    assert per_call.estimate_basis.startswith("an estimate")
    tokens = dry_run(groups, reps=3, prices={"input_per_mtok": 1.0, "output_per_mtok": 5.0})
    cost = (tokens.input_tokens_estimate * 1.0 + 150 * 80 * 5.0) / 1e6
    assert tokens.estimated_cost_usd == approx(cost)
    assert tokens.input_tokens_estimate > 150 * 350
    assert "an estimate" in tokens.estimate_basis and "4 characters a token" in tokens.estimate_basis
    out = list(dry_run_lines(tokens))
    assert out[0] == "tool preference dry run: 2 pair groups and 1 control, 3 reps: 50 cells, 150 calls"
    assert out[-1].startswith("cost: about $") and "an estimate" in out[-1]


def test_dry_run_of_the_example_and_of_unresolved_references() -> None:
    groups = load_groups_file(EXAMPLE)
    dry = dry_run(groups, reps=1)
    assert dry.calls == sum(len(cells_for(g)) for g in groups)
    ref = group(a=Twin(server="docs", tool="search", vendor_name="v"))
    assert dry_run([ref], reps=2).groups[0].cells == 2 + 4 * 3 + 2 * 2


# -- gate ------------------------------------------------------------------------------


def _entries(policy: Policy, groups: Sequence[Group], seed: int = 0,
             reps: int = 1) -> dict[str, GroupEntry]:
    s = summarize(simulate(groups, policy, reps=reps, seed=seed), groups, seed=0, resamples=200)
    return baseline_entries(s, groups)


def test_baseline_entries() -> None:
    groups = [*pairs(2), group("C1", control=True)]
    entries = {k: e.to_json() for k, e in _entries(first_listed, groups, reps=2).items()}
    assert set(entries) == {"G00", "G01", "C1"}
    pair = entries["G00"]
    assert pair["kind"] == "group" and pair["control"] is False and pair["reps"] == 2
    assert pair["first_twin_share"] == 1.0 and pair["effects"]["assertive"] == 0.0
    assert pair["over_call_share"] is None
    assert pair["group_fingerprint"].startswith("sha256:")
    control = entries["C1"]
    assert control["control"] is True and control["over_call_share"] == 1.0
    assert control["effects"] == {} and control["first_twin_share"] is None
    json.dumps(entries)


def test_a_control_that_starts_over_calling_is_a_regression() -> None:
    groups = [*pairs(3), group("C1", control=True), group("C2", control=True)]

    def quiet_controls(cell: Cell, rep: int, rng: random.Random) -> list[str]:
        return [] if cell.group_id.startswith("C") else first_listed(cell, rep, rng)

    def c1_over_calls(cell: Cell, rep: int, rng: random.Random) -> list[str]:
        if cell.group_id == "C1":
            return [cell.tools[0].name]
        return quiet_controls(cell, rep, rng)

    before = _entries(quiet_controls, groups)
    now = _entries(c1_over_calls, groups)
    result = compare(before, now, seed=0, resamples=200).to_json()
    assert result["regressions"] == ["C1"]
    assert [(c["group"], c["verdict"]) for c in result["controls"]] == [("C1", "regression"), ("C2", "held")]
    assert result["blocking"] == ["control C1 over-calls now (it did not on the baseline)"]
    back = compare(now, before, seed=0, resamples=200).to_json()
    assert [c["verdict"] for c in back["controls"]] == ["fixed", "held"] and not back["blocking"]
    assert [c.verdict for c in compare({}, now, seed=0).controls] == ["new", "new"]
    # a stored entry of another kind (a selection case under the same key) is not compared
    case_entry = {"C1": GroupEntry.from_json({"status": "held", "passes": 1, "reps": 1})}
    assert compare(case_entry, now, seed=0).controls[0].verdict == "new"


def test_effect_changes_block_only_past_a_minimum_with_a_ci_excluding_zero() -> None:
    groups = pairs(12)
    before = _entries(first_listed, groups)
    now = _entries(assertive_else_first, groups)
    reported = compare(before, now, seed=0, resamples=500).to_json()
    change = reported["effect_changes"]["assertive"]
    assert change["change"] == approx(0.5) and change["groups"] == 12 and not change["blocking"]
    assert reported["effect_changes"]["exclusion"]["change"] == approx(0.0)
    assert reported["position_bias_change"]["change"] == approx(0.0)
    assert reported["blocking"] == []
    gated = compare(before, now, seed=0, resamples=500, min_effect_change=0.2)
    assert gated.effect_changes["assertive"].blocking
    assert not gated.effect_changes["exclusion"].blocking
    assert gated.blocking == ("assertive effect changed by +0.50 [+0.50, +0.50]",)
    assert not compare(before, now, seed=0, resamples=500, min_effect_change=0.6).blocking
    text = "\n".join(comparison_lines(gated))
    assert "assertive     +0.50 [+0.50, +0.50] (groups=12)  (blocks)" in text
    assert "blocking: assertive effect changed" in text


def test_position_bias_change_is_paired_over_groups() -> None:
    groups = pairs(30)

    def noisy(p: float) -> Policy:
        def policy(cell: Cell, rep: int, rng: random.Random) -> list[str]:
            first, last = twins_of(cell)
            return [first if rng.random() < p else last]
        return policy

    before = _entries(noisy(0.5), groups, seed=1, reps=4)
    now = _entries(noisy(0.9), groups, seed=2, reps=4)
    result = compare(before, now, seed=0, resamples=1_000, min_effect_change=0.1).to_json()
    pos = result["position_bias_change"]
    assert pos["ci"][0] <= 0.4 <= pos["ci"][1] and pos["ci"][0] > 0 and pos["blocking"]
    assert any(b.startswith("position bias changed by +") for b in result["blocking"])
    # an edited group is still compared, and listed
    edited = dict(now)
    edited["G00"] = replace(now["G00"], group_fingerprint="sha256:other")
    assert compare(before, edited, seed=0, resamples=200).changed_groups == ("G00",)
