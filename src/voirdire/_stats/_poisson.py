"""Bootstrap weights drawn without indices: one byte per unit and resample, a fixed weight law,
and the resampled sums of per-unit statistics as blocked matrix products.

The classical bootstrap draws ``n`` indices per resample and counts them (a multinomial weight
vector). For many distinct units (continuous scores: no two items alike) that costs two passes
of scattered memory per unit and resample. Here every unit gets an independent weight per
resample from the law

    w = 0, 1, 2, 3, 4, 5   with probabilities   (94, 95, 46, 16, 4, 1) / 256,

which has mean 1, variance 1 and third central moment 0.984, like the Poisson(1) weights of
the Poisson bootstrap (1, 1, 1) and the multinomial weights they approximate (1, 1 - 1/n,
about 1). Any independent weights with mean 1 and variance 1 give a first-order correct
bootstrap (Mason and Newton 1992; Praestgaard and Wellner 1993); matching the third moment as
well keeps the skewness of the resampled sums. A weight is one random byte compared with five
thresholds, so drawing costs a fraction of a nanosecond, and the weights of unit ``i`` in
resample ``b`` depend only on the key, ``i`` and ``b`` (each group of units reads its own
stretch of one PCG64 stream, reached by jumping ahead): a table read whole, in chunks from disk, or in partitions on
several machines gets the same weights and so the same bootstrap distribution.

References
----------
Mason, D. M. and Newton, M. A. (1992). A rank statistics approach to the consistency of a
general bootstrap. Annals of Statistics 20(3), 1611-1624.
Hanley, J. A. and MacGibbon, B. (2006). Creating non-parametric bootstrap samples using
Poisson frequencies. Computer Methods and Programs in Biomedicine 83(1), 57-62.
Chamandy, N., Muralidharan, O., Najmi, A. and Naidu, S. (2012). Estimating uncertainty for
massive data streams. Google technical report.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

__all__ = ["WEIGHT_COUNTS", "weight_key", "unit_weights", "weighted_sums"]

WEIGHT_COUNTS = (94, 95, 46, 16, 4, 1)  # out of 256: P(w = 0), ..., P(w = 5)
_THRESHOLDS = tuple(int(t) for t in np.cumsum(WEIGHT_COUNTS)[:-1])  # w = #(thresholds <= byte)
GROUP_UNITS = 16384  # units per generator stream (the unit of work of a thread)
_CHUNK = 4096  # units per matrix product (BLAS calls on fewer rows cost more than they save)


def weight_key(gen: np.random.Generator) -> int:
    """A 128-bit seed drawn from ``gen``: everything random downstream."""
    hi, lo = (int(x) for x in gen.integers(0, 2**63, size=2, dtype=np.int64))
    return (hi << 64) | lo


def _group_weights(key: int, group: int, n_units: int, B: int) -> np.ndarray:
    """Weights (uint8) of the units of one group in ``B`` resamples, shape ``(units, B)``.

    Group ``g`` reads the generator's stream from position ``g * ceil(GROUP_UNITS * B / 8)``
    (PCG64 jumps there in O(log) steps), so groups can be drawn in any order, on any thread.
    """
    m = min(GROUP_UNITS, n_units - group * GROUP_UNITS)
    bg = np.random.PCG64(key)
    bg.advance(group * -(-GROUP_UNITS * B // 8))
    u = bg.random_raw(-(-m * B // 8)).view(np.uint8)[: m * B].reshape(m, B)
    w = np.greater_equal(u, _THRESHOLDS[0]).view(np.uint8)
    tmp = np.empty(u.shape, dtype=bool)
    for t in _THRESHOLDS[1:]:
        np.greater_equal(u, t, out=tmp)
        w += tmp.view(np.uint8)
    return w


def unit_weights(key: int, start: int, stop: int, n_units: int, B: int) -> np.ndarray:
    """Weights (uint8) of units ``start .. stop-1`` in ``B`` resamples, shape ``(stop - start, B)``."""
    if stop <= start:
        return np.zeros((0, B), dtype=np.uint8)
    g0, g1 = start // GROUP_UNITS, (stop - 1) // GROUP_UNITS
    parts = [_group_weights(key, g, n_units, B) for g in range(g0, g1 + 1)]
    w = parts[0] if len(parts) == 1 else np.concatenate(parts)
    off = start - g0 * GROUP_UNITS
    return w[off: off + stop - start]


def _threads() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return max(1, min(n, 8))


def weighted_sums(S: Any, key: int, B: int, *, threads: int | None = None) -> np.ndarray:
    """``W @ S`` for the ``(B, n_units)`` weight matrix of ``key``, without ever holding it whole.

    ``S`` is ``(n_units, K)``. Units are taken in groups of :data:`GROUP_UNITS`; groups run on
    threads (NumPy and BLAS release the GIL) and their partial sums are added in group order, so
    the result does not depend on the number of threads.
    """
    S = np.ascontiguousarray(S, dtype=np.float64)
    n, K = S.shape
    n_groups = -(-n // GROUP_UNITS)

    def work(g: int) -> np.ndarray:
        w = _group_weights(key, g, n, B)
        base = g * GROUP_UNITS
        acc = np.zeros((B, K))
        for lo in range(0, w.shape[0], _CHUNK):
            wc = w[lo: lo + _CHUNK]
            acc += wc.astype(np.float64).T @ S[base + lo: base + lo + wc.shape[0]]
        return acc

    t = threads or _threads()
    if t > 1 and n_groups > 1:
        with ThreadPoolExecutor(max_workers=min(t, n_groups)) as ex:
            partial = list(ex.map(work, range(n_groups)))
    else:
        partial = [work(g) for g in range(n_groups)]
    out = np.zeros((B, K))
    for p in partial:
        out += p
    return out
