"""The attribution's scenarios for gate_validity.py: drift, and which edit broke a case.

* **drift**: a model update lowers a share of cases for the baseline's tools and the head's
  alike (the pull request changed its tools harmlessly). The gate (the adaptive default)
  flags some; each flagged case gets the paired check (gate.attribution.paired_outcome on
  fresh reps of both arms). False blocks per pull request with and without the check, and
  misses of 3 real regressions (0.95 -> 0.30 in the head only) made under the same drift.
* **attribution**: k of 10 tools changed, one of them responsible (0.95 -> 0.30, or a milder
  0.60); the search of run/attribution.py (the plugin's own) puts tools back and asks
  variants. How often the responsible tool is named, another is, or none, and the calls.

Only the model is simulated; every decision is the plugin's own function.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from pytest_toolselect.gate import attribution as attr
from pytest_toolselect.gate import sequential
from pytest_toolselect.gate import verdict_rules as gate
from pytest_toolselect.gate.stats import wilson
from pytest_toolselect.terms.vocabulary import Verdict

#: a model update: the drifted cases' pass rate falls to this share of what it was
DRIFT_FACTOR = 0.3
DRIFT_SHARES = (0.0, 0.1, 0.3)
TOOLS = 10
CHANGED = (1, 2, 3, 5, 8)


@cache
def _outcome(hp: int, hr: int, b: int, h: int, n: int) -> bool:
    """Does the paired check keep the case a regression?"""
    return attr.paired_outcome((hp, hr), (b, n), (h, n))[0] == Verdict.REGRESSION


def _pct(x: int, n: int) -> str:
    lo, hi = wilson(x, n)
    return f"{x / n * 100:.2f}% [{lo * 100:.2f}, {hi * 100:.2f}]" if n else "n/a"


def drift(rng: np.random.Generator, *, prs: int, cases: int, reps: int, runs: int,
          regressed: int, max_extra: int, population: Any, regressed_from: float,
          regressed_to: float, run_adaptive: Any) -> list[str]:
    found = sequential.design_for(gate.DEFAULT_RULE, reps, max_extra)
    assert found is not None
    design, test = found
    n = attr.paired_reps(reps, deterministic=False)
    shares = np.array([s for s, _ in population])
    probs = np.array([p for _, p in population])
    out = [f"drift: the adaptive default at reps {reps}, {runs} runs of history; flagged cases "
           f"re-asked {n} reps per arm (paired check); {prs} PRs per row",
           f"{'drifted share':>13}  {'false blocks/PR, gate alone':<30}  {'with the paired check':<26}"
           f"  {'misses/regressed case, gate alone':<34}  {'with the check':<24}  calls/PR added"]
    for share in DRIFT_SHARES:
        row: dict[str, list[int]] = {"fb": [0, 0], "fb_pair": [0, 0], "miss": [0, 0],
                                     "miss_pair": [0, 0]}
        added = 0
        for scenario in ("null", "regressed"):
            p_main = probs[rng.choice(len(probs), size=(prs, cases), p=shares / shares.sum())]
            drifted = rng.random((prs, cases)) < share
            hit = np.zeros((prs, cases), dtype=bool)
            if scenario == "regressed":
                p_main[:, :regressed] = regressed_from
                drifted[:, :regressed] = False  # a real regression, not also drifted
                hit[:, :regressed] = True
            p_now = np.where(drifted, p_main * DRIFT_FACTOR, p_main)
            p_head = p_now.copy()
            if scenario == "regressed":
                p_head[:, :regressed] = regressed_to
            hp = rng.binomial(reps, p_main[..., None], size=(prs, cases, runs)).sum(axis=-1)
            hr = np.full(hp.shape, reps * runs)
            blocked, _, _ = run_adaptive(rng, p_head, hp, hr, design, test)
            base_arm = rng.binomial(n, p_now)
            head_arm = rng.binomial(n, p_head)
            kept = np.zeros(blocked.shape, dtype=bool)
            for i, j in zip(*np.nonzero(blocked), strict=True):
                kept[i, j] = _outcome(int(hp[i, j]), int(hr[i, j]), int(base_arm[i, j]),
                                      int(head_arm[i, j]), n)
            if scenario == "null":
                row["fb"] = [int(blocked.any(axis=1).sum()), prs]
                row["fb_pair"] = [int(kept.any(axis=1).sum()), prs]
                added = int(blocked.sum()) * 2 * n
            else:
                row["miss"] = [int((hit & ~blocked).sum()), int(hit.sum())]
                row["miss_pair"] = [int((hit & ~kept).sum()), int(hit.sum())]
        out.append(f"{share:>13.0%}  {_pct(*row['fb']):<30}  {_pct(*row['fb_pair']):<26}  "
                   f"{_pct(*row['miss']):<34}  {_pct(*row['miss_pair']):<24}  {added / prs:.1f}")
    return out


def _bisect(rng: np.random.Generator, k: int, broken: float, n: int, m: int, cap: int
            ) -> tuple[str, int]:
    """One case: (named: right, wrong, none or cleared) and the attribution's calls."""
    from pytest_toolselect.run.attribution import _search

    calls = 2 * n
    base_now = (int(rng.binomial(n, 0.95)), n)
    head_now = (int(rng.binomial(n, broken)), n)
    if attr.paired_outcome((15, 15), base_now, head_now)[0] != Verdict.REGRESSION:
        return "cleared", calls
    changed = [attr.ChangedTool(f"t{i}", "description") for i in range(k)]
    culprit = "t0" if k == 1 else f"t{int(rng.integers(k))}"

    class Capped(Exception):
        pass

    async def restores(revert: Sequence[attr.ChangedTool]) -> tuple[bool, tuple[int, int]]:
        nonlocal calls
        if calls + m > cap:
            raise Capped
        calls += m
        p = 0.95 if any(c.tool == culprit for c in revert) else broken
        seen = (int(rng.binomial(m, p)), m)
        return attr.worse(seen, head_now, attr.RESTORE_ALPHA)[0], seen

    try:
        causes, _ = asyncio.run(_search(changed, base_now, restores))
    except Capped:
        return "capped", calls
    names = [c.change.tool for c in causes]
    if names == [culprit]:
        return "right", calls
    return ("none" if not names else "wrong"), calls


def attribution(rng: np.random.Generator, *, trials: int, reps: int) -> list[str]:
    n = attr.paired_reps(reps, deterministic=False)
    m = attr.variant_reps(reps, deterministic=False)
    cap = attr.DEFAULT_MAX_CALLS[0]
    out = [f"attribution: k of {TOOLS} tools changed, one responsible; {n} reps per arm, {m} per "
           f"variant, at most {cap} calls per case; {trials} cases per row",
           f"{'k':>2}  {'drop':<12}  {'named right':<24}  {'named wrong':<22}  {'none named':<22}"
           f"  {'capped':<10}  {'calls/case':>10}"]
    for broken in (0.30, 0.60):
        for k in CHANGED:
            counts = {"right": 0, "wrong": 0, "none": 0, "capped": 0, "cleared": 0}
            total = 0
            for _ in range(trials):
                what, calls = _bisect(rng, k, broken, n, m, cap)
                counts[what] += 1
                total += calls
            # a case the paired check cleared is not blocked: out of the naming's denominator
            named = trials - counts["cleared"]
            out.append(f"{k:>2}  {f'0.95->{broken:.2f}':<12}  {_pct(counts['right'], named):<24}  "
                       f"{_pct(counts['wrong'], named):<22}  {_pct(counts['none'], named):<22}  "
                       f"{counts['capped'] / max(1, named) * 100:>5.1f}%     {total / trials:>10.1f}")
    return out
