"""Krippendorff's alpha on a dense code array (private; the simulation engine's hot loop).

The public coefficient with intervals is :func:`voirdire.agreement.krippendorff_alpha`; this is
the bare point estimate on ``(n_items, n_raters)`` codes, checked against ``krippendorff.alpha``.
"""

from __future__ import annotations

import numpy as np

from .._stats.distances import delta

__all__ = ["alpha_dense"]


def alpha_dense(codes: np.ndarray, n_categories: int, *, level: str = "nominal",
                category_values: np.ndarray | None = None) -> float:
    """Krippendorff's alpha of ``codes`` (items x raters, ``-1`` missing, codes >= L ignored).

    Returns nan when undefined (fewer than two pairable values, or no expected disagreement).
    """
    L = int(n_categories)
    codes = np.asarray(codes)
    ok = (codes >= 0) & (codes < L)
    n = codes.shape[0]
    rows = np.broadcast_to(np.arange(n)[:, None], codes.shape)[ok]
    N = np.bincount(rows * L + codes[ok], minlength=n * L).reshape(n, L).astype(np.float64)
    m = N.sum(axis=1)
    keep = m >= 2
    if not keep.any():
        return float("nan")
    N = N[keep]
    w = 1.0 / (m[keep] - 1.0)
    o = N.T @ (N * w[:, None])
    o[np.diag_indices(L)] -= (N * w[:, None]).sum(axis=0)
    n_c = o.sum(axis=1)
    tot = n_c.sum()
    if tot <= 1:
        return float("nan")
    vals = np.arange(L, dtype=float) if category_values is None else np.asarray(category_values, float)
    d2 = delta(level, vals, n_categories=L, margins=n_c)
    do = float(np.sum(o * d2))
    de = float(n_c @ d2 @ n_c) / (tot - 1.0)
    if de <= 1e-12 * tot:
        return float("nan")
    return 1.0 - do / de
