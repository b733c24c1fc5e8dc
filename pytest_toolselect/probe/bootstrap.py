"""Percentile bootstrap over groups, vectorised with numpy.

The unit of resampling is the group: cells of one group share a request and two tools,
so they are not independent, and a CI that resampled calls would be too narrow.

Every resample is one row of a (resamples x n) index matrix drawn at once, and all
means come from one fancy-indexed array; nothing loops in Python per resample. The
generator is ``numpy.random.default_rng(seed)`` created afresh for every statistic, so
a statistic's CI depends only on its own values and the seed (adding a factor or a
group elsewhere does not move it), and statistics over the same groups share their
resamples.

Only ``preference`` imports this module, and only inside the functions that need it:
numpy costs tens of milliseconds and pytest loads the plugin in every run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .values import Interval as Interval  # its values are typed beside the others

DEFAULT_RESAMPLES = 10_000
#: index matrices above this many cells are drawn in row blocks, bounding memory
#: (int32 indices plus float64 values: 12 bytes a cell, so about 100 MB a block)
_BLOCK_CELLS = 8_000_000


def resample_means(values: npt.ArrayLike, *, seed: int,
                   resamples: int = DEFAULT_RESAMPLES) -> npt.NDArray[np.float64]:
    """The mean of each of ``resamples`` resamples (with replacement) of ``values``.

    ``values`` is (n,) for one statistic or (k, n) for k statistics over the same n
    groups, which then share each resample; the result is (resamples,) or (k, resamples).
    """
    v = np.asarray(values, dtype=np.float64)
    n = v.shape[-1]
    if n == 0:
        raise ValueError("no values to resample")
    if resamples < 1:
        raise ValueError("resamples must be 1 or more")
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK_CELLS // (n * (v.shape[0] if v.ndim == 2 else 1)))
    out = np.empty((*v.shape[:-1], resamples), dtype=np.float64)
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        # int32 halves the matrix; n is a count of groups, far below 2**31
        idx = rng.integers(0, n, size=(stop - start, n), dtype=np.int32)
        out[..., start:stop] = v[..., idx].mean(axis=-1)
    return out


def mean_ci(values: Sequence[float] | npt.ArrayLike, *, seed: int,
            resamples: int = DEFAULT_RESAMPLES, level: float = 0.95) -> Interval | None:
    """The mean of per-group values and its percentile bootstrap CI (None for no groups).

    One group gives a zero-width interval: there is nothing to resample, and the report
    shows groups=1 beside it.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return None
    means = resample_means(v, seed=seed, resamples=resamples)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    # the quantiles of a mean of identical values can differ from it by a rounding
    # error; clip so that the interval always holds the point estimate
    mean = float(v.mean())
    return Interval(mean=mean, low=min(float(low), mean), high=max(float(high), mean), n=int(v.size))


def paired_difference_ci(after: Sequence[float] | npt.ArrayLike, before: Sequence[float] | npt.ArrayLike,
                         *, seed: int, resamples: int = DEFAULT_RESAMPLES,
                         level: float = 0.95) -> Interval | None:
    """The mean change ``after - before`` over paired groups, with a bootstrap CI.

    Pairing (resampling groups, each carrying both its values) removes the between-group
    spread from the change: a group that always prefers its first tool does so in both runs.
    """
    a = np.asarray(after, dtype=np.float64)
    b = np.asarray(before, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired values differ in shape: {a.shape} and {b.shape}")
    return mean_ci(a - b, seed=seed, resamples=resamples, level=level)
