"""The small-sample world shared by ``tests/estimation/test_statistical.py`` and
``bench/estimation_small_sample.py`` (one copy of the design).

300 items with skewed, discrete 1-5 human ratings (a clipped, rounded gamma tail) and two noisy
judges; humans score about 30 of them. ``design="uniform"``: ``pi = 0.1``; ``"unequal"``:
``pi = 0.15`` where the first judge is above 0 and ``0.05`` elsewhere (about 31 labels, 8 of them
weighted 20: a few heavily weighted labels carry the variance).
"""

from __future__ import annotations

import numpy as np

N_ITEMS = 300
DESIGNS = ("uniform", "unequal")


def small_sample_world(design: str, seed: int = 11) -> tuple[np.random.Generator, np.ndarray, np.ndarray, np.ndarray]:
    """``(rng, X, y_full, pi)``: the generator (go on drawing the human samples from it), the judges'
    scores ``(300, 2)``, every item's human score and the inclusion probabilities."""
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    rng = np.random.default_rng(seed)
    n = N_ITEMS
    z = rng.normal(0, 1, n)
    X = np.column_stack([z + rng.normal(0, 0.7, n), z + rng.normal(0, 0.9, n)])
    y_full = np.clip(np.round(3 + 0.8 * z + rng.gamma(2, 0.4, n) - 0.8), 1, 5)
    pi = np.full(n, 0.1) if design == "uniform" else np.where(X[:, 0] > 0, 0.15, 0.05)
    return rng, X, y_full, pi
