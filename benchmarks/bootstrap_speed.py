"""Time the bootstrap the probe's summary runs: 500 groups x 10,000 resamples.

Prints the best of several runs (warm: numpy imported, memory touched once), for one
statistic and for the six a summary computes (first-listed twin share and five factor
effects, each its own bootstrap over the same groups).

    python benchmarks/bootstrap_speed.py
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable

import numpy as np

from pytest_toolselect.probe.bootstrap import mean_ci

GROUPS = 500
RESAMPLES = 10_000
RUNS = 5


def best_of(fn: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    # per-group effects in [-1, 1], as the summary resamples them
    stats = rng.uniform(-1.0, 1.0, size=(6, GROUPS))
    mean_ci(stats[0], seed=0, resamples=RESAMPLES)  # warm up
    one = best_of(lambda: mean_ci(stats[0], seed=0, resamples=RESAMPLES))
    six = best_of(lambda: [mean_ci(s, seed=0, resamples=RESAMPLES) for s in stats])
    print(f"bootstrap, {GROUPS} groups x {RESAMPLES:,} resamples (numpy {np.__version__}, "
          f"Python {platform.python_version()}, best of {RUNS}):")
    print(f"  one statistic:          {one * 1000:.0f} ms")
    print(f"  a summary's six:        {six * 1000:.0f} ms")


if __name__ == "__main__":
    main()
