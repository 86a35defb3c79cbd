"""Cross-fitted calibration models m(X) predicting the human score from the judge score (private).

Every model is fitted on the labelled items only, with weights ``1/pi`` (so that it calibrates the
judge to the whole population, not to the over-sampled strata), and predicts out of fold: the
prediction for an item never uses that item's own human score, which keeps the doubly-robust
estimator exactly unbiased whatever the model.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import isotonic_regression

from ..exceptions import InvalidParameterError

__all__ = ["MODELS", "cross_fit_predict", "fold_ids"]

MODELS = ("identity", "linear", "isotonic")


def fold_ids(n_items: int, n_folds: int, rng: np.random.Generator,
             clusters: np.ndarray | None = None) -> np.ndarray:
    """Random fold (0..n_folds-1) of every item, drawn independently; whole clusters go to one fold.

    Independent uniform folds (rather than a balanced permutation) keep an item's fold independent
    of everything else and cost one pass over the items.
    """
    if clusters is None:
        return rng.integers(0, n_folds, size=n_items)
    n_cl = int(clusters.max()) + 1 if clusters.size else 0
    return rng.integers(0, n_folds, size=n_cl)[clusters]


def _linear_fit_predict(x: np.ndarray, y: np.ndarray, w: np.ndarray, lab: np.ndarray,
                        folds: np.ndarray, n_folds: int) -> np.ndarray:
    """Weighted least squares ``y ~ a + b x`` per fold, all folds at once from additive sums."""
    xl, yl, wl, fl = x[lab], y[lab], w[lab], folds[lab]
    # centre for numerical stability (scores are often ~1-5 or ~0-100)
    cx, cy = float(np.mean(xl)), float(np.mean(yl))
    xc, yc = xl - cx, yl - cy
    sums = np.vstack([
        np.bincount(fl, weights=wl, minlength=n_folds),
        np.bincount(fl, weights=wl * xc, minlength=n_folds),
        np.bincount(fl, weights=wl * yc, minlength=n_folds),
        np.bincount(fl, weights=wl * xc * xc, minlength=n_folds),
        np.bincount(fl, weights=wl * xc * yc, minlength=n_folds),
    ])
    if n_folds > 1:
        train = sums.sum(axis=1, keepdims=True) - sums
    else:
        train = sums
    sw, sx, sy, sxx, sxy = train
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = sx / sw, sy / sw
        vxx = sxx / sw - mx * mx
        vxy = sxy / sw - mx * my
        slope = np.where(vxx > 1e-12 * max(1.0, float(np.max(np.abs(sxx / sw)))), vxy / vxx, 0.0)
    # m = cy + intercept + slope (x - cx) = a + slope x, gathered per fold
    a = cy + (my - slope * mx) - slope * cx
    if n_folds == 1:
        return a[0] + slope[0] * x
    return a[folds] + slope[folds] * x


def _isotonic_one(xs: np.ndarray, ys: np.ndarray, ws: np.ndarray, x_new: np.ndarray) -> np.ndarray:
    """Weighted increasing isotonic fit on (xs sorted), predicted by linear interpolation."""
    # xs is sorted: group ties by the positions where the value changes (no second sort)
    start = np.concatenate(([0], np.flatnonzero(xs[1:] != xs[:-1]) + 1))
    ux = xs[start]
    sw = np.add.reduceat(ws, start)
    swy = np.add.reduceat(ws * ys, start)
    fitted = isotonic_regression(swy / sw, weights=sw, increasing=True).x
    if ux.size == 1:
        return np.full(x_new.shape, fitted[0])
    # The fit is flat within each pooled block: knots inside a flat run do not change the linear
    # interpolation, and dropping them makes np.interp's searches short (few blocks, not n points).
    chg = fitted[1:] != fitted[:-1]
    keep = np.ones(ux.size, dtype=bool)
    keep[1:-1] = chg[:-1] | chg[1:]
    return np.interp(x_new, ux[keep], fitted[keep])


def _isotonic_fit_predict(x: np.ndarray, y: np.ndarray, w: np.ndarray, lab: np.ndarray,
                          folds: np.ndarray, n_folds: int) -> np.ndarray:
    li = np.flatnonzero(lab)
    order = li[np.argsort(x[li], kind="stable")]
    xs, ys, ws, fs = x[order], y[order], w[order], folds[order]
    out = np.empty_like(x, dtype=float)
    if n_folds == 1:
        return _isotonic_one(xs, ys, ws, x)
    for k in range(n_folds):
        tr = fs != k
        target = np.flatnonzero(folds == k)  # index arrays: cheaper than boolean masks on N items
        out[target] = _isotonic_one(xs[tr], ys[tr], ws[tr], x[target])
    return out


def cross_fit_predict(x: np.ndarray, y: np.ndarray, pi: np.ndarray, lab: np.ndarray, *, model: str,
                      n_folds: int, rng: np.random.Generator, clusters: np.ndarray | None,
                      func: str) -> np.ndarray:
    """Out-of-fold predictions ``m(x_i)`` for every item (``n_folds=1``: fit once on all labels)."""
    if model == "identity":
        return x.astype(float, copy=True)
    folds = fold_ids(x.size, n_folds, rng, clusters) if n_folds > 1 else np.zeros(x.size, dtype=np.int64)
    if n_folds > 1:
        per_fold = np.bincount(folds[lab], minlength=n_folds)
        short = int(lab.sum() - per_fold.max())
        need = 2 if model == "linear" else 1
        if short < need:
            raise InvalidParameterError(
                f"The 'cross_fit' parameter of {func} is {n_folds}, but with {int(lab.sum())} labelled "
                f"item(s) some training fold holds fewer than {need}. Use fewer folds, "
                f"cross_fit=1, or model='identity'.")
    w = 1.0 / pi
    if model == "linear":
        return _linear_fit_predict(x, y, w, lab, folds, n_folds)
    if model == "isotonic":
        return _isotonic_fit_predict(x, y, w, lab, folds, n_folds)
    raise InvalidParameterError(f"Unknown model {model!r}.")  # pragma: no cover - checked upstream
