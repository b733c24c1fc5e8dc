"""Attribution's pure parts: the changed tools, the variants put back, the paired outcome."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_toolselect.gate import attribution as attr
from pytest_toolselect.gate.toolsdiff import SYSTEM
from pytest_toolselect.records.attribution import Attribution, Cause, ChangedTool, PairedCheck
from pytest_toolselect.run.attribution import _search
from pytest_toolselect.terms.vocabulary import Verdict

NAMES = st.sampled_from(["a", "b", "c", "d", "e", "f"])
TEXTS = st.sampled_from(["find it", "find it now", "list them", "look up"])
SCHEMAS = st.sampled_from([{}, {"type": "object"}, {"type": "object", "required": ["x"]}])
TOOL_SETS = st.lists(st.fixed_dictionaries({"name": NAMES, "description": TEXTS,
                                            "input_schema": SCHEMAS}),
                     max_size=5, unique_by=lambda t: t["name"])
SYSTEMS = st.none() | st.sampled_from(["be brief", "answer with tools"])


def _as_set(tools: list[dict[str, Any]], system: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {t["name"]: (t["description"], t["input_schema"]) for t in tools}
    if system is not None:
        out[SYSTEM] = system
    return out


@given(TOOL_SETS, SYSTEMS, TOOL_SETS, SYSTEMS)
def test_putting_every_change_back_gives_the_baseline_and_none_the_head(
        base: list[dict[str, Any]], base_system: str | None, head: list[dict[str, Any]],
        head_system: str | None) -> None:
    changed = attr.changes(base, base_system, head, head_system)
    assert (not changed) == (_as_set(base, base_system) == _as_set(head, head_system))
    tools, system = attr.variant(base, base_system, head, head_system, changed)
    assert _as_set(tools, system) == _as_set(base, base_system)
    tools, system = attr.variant(base, base_system, head, head_system, [])
    assert tools == head and system == head_system
    # each change put back alone moves exactly that tool (both names of a rename) to its base form
    for c in changed:
        tools, system = attr.variant(base, base_system, head, head_system, [c])
        moved = {c.tool, c.renamed_to} - {None}
        now, was, then = _as_set(tools, system), _as_set(base, base_system), _as_set(head, head_system)
        for name in set(now) | set(was) | set(then):
            assert now.get(name) == (was.get(name) if name in moved else then.get(name))


def test_a_rename_is_one_change_and_the_part_is_named() -> None:
    base = [{"name": "find", "description": "find it", "input_schema": {}},
            {"name": "list", "description": "list them", "input_schema": {}}]
    head = [{"name": "search", "description": "find it", "input_schema": {}},
            {"name": "list", "description": "list them", "input_schema": {"type": "object"}}]
    assert attr.changes(base, None, head, "be brief") == [
        ChangedTool(SYSTEM, "added"),
        ChangedTool("find", "name", renamed_to="search"),
        ChangedTool("list", "input schema")]


COUNTS = st.integers(0, 15).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))
ARMS = st.integers(1, 15).flatmap(lambda n: st.tuples(st.integers(0, n), st.integers(0, n),
                                                       st.just(n)))


@given(COUNTS.filter(lambda c: c[1] > 0), ARMS)
def test_drift_needs_the_baseline_arm_down_and_the_head_no_worse(
        recorded: tuple[int, int], arms: tuple[int, int, int]) -> None:
    b, h, n = arms
    outcome, p = attr.paired_outcome(recorded, (b, n), (h, n))
    assert 0.0 <= p <= 1.0
    if outcome == Verdict.DRIFT:
        assert attr.drifted(recorded, (b, n)) and p > attr.PAIRED_ALPHA
    # the head at least as good as the baseline's tools is never "significantly worse"
    if h >= b:
        assert outcome == (Verdict.DRIFT if attr.drifted(recorded, (b, n)) else Verdict.REGRESSION)
    # a baseline arm in line with what was recorded never excuses the head
    if not attr.drifted(recorded, (b, n)):
        assert outcome == Verdict.REGRESSION


@given(st.integers(2, 9), st.data())
def test_the_search_names_the_one_change_whose_revert_takes_the_case_back(
        k: int, data: st.DataObject) -> None:
    culprit = data.draw(st.integers(0, k - 1))
    changed = [ChangedTool(f"t{i}", "description") for i in range(k)]
    asked: list[int] = []

    async def restores(revert: list[ChangedTool]) -> tuple[bool, tuple[int, int]]:
        asked.append(len(revert))
        ok = any(c.tool == f"t{culprit}" for c in revert)
        return ok, (9, 9) if ok else (0, 9)

    causes, search = asyncio.run(_search(changed, (15, 15), restores))
    assert [c.change.tool for c in causes] == [f"t{culprit}"] and causes[0].evidence == (9, 9)
    if k <= attr.ONE_AT_A_TIME:
        assert search == "one at a time" and len(asked) == k
    else:
        # halving: at most two variants per halving
        assert search == "halving" and len(asked) <= 2 * (k - 1).bit_length()


def test_the_reports_sentences() -> None:
    found = Attribution("drift", recorded=(9, 9), paired=PairedCheck(0.5, (0, 15), (0, 15)))
    assert attr.summary(found) == "drift: fails with the baseline's tools too (0/15 now, 9/9 recorded)"
    found = Attribution("regression", recorded=(9, 9), paired=PairedCheck(0.0, (15, 15), (0, 15)),
                        causes=(Cause(ChangedTool("get_company", "description"), (15, 15)),))
    assert attr.summary(found).startswith("caused by the change to get_company's description")
    shadow = replace(found, causes=(Cause(ChangedTool("find_v2", "added"), (15, 15), shadowing=True),))
    assert attr.summary(shadow).startswith("shadowed by the new tool find_v2")
