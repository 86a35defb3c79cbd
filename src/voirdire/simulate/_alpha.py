"""Krippendorff's alpha on a dense code array (private; the simulation engine's hot loop).

The public coefficient with intervals is :func:`voirdire.agreement.krippendorff_alpha`; this is
the bare point estimate on ``(n_items, n_raters)`` codes, checked against ``krippendorff.alpha``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["alpha_dense"]


def _delta2(level: str, n_c: np.ndarray, values: np.ndarray) -> np.ndarray:
    L = n_c.size
    if level == "nominal":
        return 1.0 - np.eye(L)
    if level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        a = np.arange(L)
        lo = np.minimum.outer(a, a)
        hi = np.maximum.outer(a, a)
        s = cum[hi + 1] - cum[lo]
        return (s - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    v = np.asarray(values, dtype=float)
    diff = v[:, None] - v[None, :]
    if level == "interval":
        return diff**2
    tot = v[:, None] + v[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(tot == 0, 0.0, diff / np.where(tot == 0, 1.0, tot))
    return r**2


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
    d2 = _delta2(level, n_c, vals)
    do = float(np.sum(o * d2))
    de = float(n_c @ d2 @ n_c) / (tot - 1.0)
    if de <= 1e-12 * tot:
        return float("nan")
    return 1.0 - do / de
