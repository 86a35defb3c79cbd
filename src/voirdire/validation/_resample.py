"""Bootstrap resampling weights over items or clusters (private)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def resampling_unit(clusters: np.ndarray | None) -> str:
    return "item" if clusters is None else "cluster"


def weight_batches(n_items: int, n_resamples: int, rng: np.random.Generator, *,
                   clusters: np.ndarray | None = None, batch: int | None = None) -> Iterator[np.ndarray]:
    """Yield ``(b, n_items)`` float matrices of bootstrap counts, ``n_resamples`` rows in all.

    Each row is one nonparametric bootstrap resample: ``n`` draws with replacement of the items
    (or, when ``clusters`` is given, of the clusters; an item's weight is then the number of
    times its cluster was drawn). Rows come in batches to bound memory.
    """
    if clusters is None:
        units = np.arange(n_items)
        n_units = n_items
    else:
        units, inv = np.unique(np.asarray(clusters), return_inverse=True)
        n_units = units.size
    if batch is None:
        batch = max(1, min(n_resamples, int(4_000_000 // max(n_units, 1))))
    done = 0
    while done < n_resamples:
        b = min(batch, n_resamples - done)
        draws = rng.integers(0, n_units, size=(b, n_units))
        flat = (draws + (np.arange(b) * n_units)[:, None]).ravel()
        counts = np.bincount(flat, minlength=b * n_units).reshape(b, n_units).astype(np.float64)
        yield counts if clusters is None else counts[:, inv]
        done += b
