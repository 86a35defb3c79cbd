"""Cross-fitted prediction models m(X) of the human score from judge scores (private).

``X`` is a matrix: one column per judge (several judges, several prompts or samples of one judge)
and optional item covariates. Every model is fitted on the labelled items only, with weights
``1/pi`` (so that it calibrates the judges to the whole population, not to the over-sampled
items), and predicts out of fold: the prediction for an item never uses that item's own human
score, which keeps the doubly-robust estimator unbiased whatever the model. Whole clusters go to
one fold.

Models
------
``identity``   ``m(X) = X`` (one judge; the paper's estimator).
``linear``     weighted least squares on every column (minimum-norm solution when columns are
               collinear).
``ridge``      weighted ridge regression on the standardised columns, its penalty chosen per
               training fold by generalised cross-validation (GCV).
``isotonic``   one increasing (or decreasing, by the sign of the correlation) isotonic fit per
               column, stacked by ridge/GCV when there are several columns.
``gbm``        scikit-learn's ``HistGradientBoostingRegressor`` (small, regularised trees).
``calibrated`` ridge/GCV; :func:`~voirdire.estimation.dr_mean` adds power tuning (the default).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression

from ..exceptions import InvalidParameterError

__all__ = ["MODELS", "cross_fit_predict", "fold_ids"]

MODELS = ("calibrated", "identity", "linear", "ridge", "isotonic", "gbm")

# GCV grid of the ridge penalty, relative to the (weighted) number of training items: from
# practically least squares to a heavy shrinkage of standardised columns.
_ALPHAS = np.logspace(-4, 2, 25)


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
    """Weighted least squares ``y ~ a + b x`` (one column) per fold, all folds at once from additive sums."""
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


# ------------------------------------------------------------------------------ matrix models
class _Fit:
    """A fitted model: ``predict(X)``."""

    def predict(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError


class _LinearFit(_Fit):
    def __init__(self, mean_x: np.ndarray, scale: np.ndarray, coef: np.ndarray, intercept: float):
        self.mean_x, self.scale, self.coef, self.intercept = mean_x, scale, coef, intercept

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.intercept + ((X - self.mean_x) / self.scale) @ self.coef


def _fit_linear(X: np.ndarray, y: np.ndarray, w: np.ndarray, *, ridge: bool) -> _LinearFit:
    """Weighted (ridge) regression with an intercept on standardised columns.

    ``ridge=False``: least squares (minimum-norm when columns are collinear). ``ridge=True``: the
    penalty minimising the generalised cross-validation score ``n RSS / (n - df)^2`` over
    :data:`_ALPHAS` (times the summed weight), from one SVD.
    """
    sw = float(w.sum())
    mean_x = (w @ X) / sw
    Xc = X - mean_x
    scale = np.sqrt((w @ (Xc * Xc)) / sw)
    scale[~(scale > 1e-12)] = 1.0
    Xs = Xc / scale
    ybar = float(w @ y) / sw
    sq = np.sqrt(w)
    A = Xs * sq[:, None]
    b = (y - ybar) * sq
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    keep = s > 1e-10 * (s[0] if s.size else 1.0)
    U, s, Vt = U[:, keep], s[keep], Vt[keep]
    ub = U.T @ b
    n = y.size
    if ridge and s.size:
        s2 = s * s
        alphas = _ALPHAS * sw  # penalty on the scale of A'A (~ sum w per standardised column)
        rss0 = float(b @ b - ub @ ub)  # part of b outside the column space
        f = s2[None, :] / (s2[None, :] + alphas[:, None])
        resid = np.sum(((1.0 - f) * ub[None, :]) ** 2, axis=1) + rss0
        dof = f.sum(axis=1) + 1.0  # + the intercept
        with np.errstate(divide="ignore", invalid="ignore"):
            gcv = np.where(n - dof > 0, n * resid / (n - dof) ** 2, np.inf)
        best_a = alphas[int(np.argmin(gcv))]
        coef = Vt.T @ (s / (s2 + best_a) * ub)
    else:
        coef = Vt.T @ (ub / s) if s.size else np.zeros(X.shape[1])
    return _LinearFit(mean_x, scale, coef, ybar)


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


class _StackedIsotonic(_Fit):
    def __init__(self, X: np.ndarray, y: np.ndarray, w: np.ndarray):
        self.cols = []
        for j in range(X.shape[1]):
            xj = X[:, j]
            c = float(np.cov(xj, y, aweights=w)[0, 1]) if np.ptp(xj) > 0 else 0.0
            sign = -1.0 if c < 0 else 1.0  # a judge scoring in the opposite direction: decreasing fit
            o = np.argsort(sign * xj, kind="stable")
            self.cols.append((sign, sign * xj[o], y[o], w[o]))
        F = self._features(X)
        self.stack = _fit_linear(F, y, w, ridge=True) if X.shape[1] > 1 else None

    def _features(self, X: np.ndarray) -> np.ndarray:
        return np.column_stack([_isotonic_one(xs, ys, ws, sign * X[:, j])
                                for j, (sign, xs, ys, ws) in enumerate(self.cols)])

    def predict(self, X: np.ndarray) -> np.ndarray:
        F = self._features(X)
        return F[:, 0] if self.stack is None else self.stack.predict(F)


class _GBMFit(_Fit):
    def __init__(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, seed: int, func: str):
        try:
            from sklearn.ensemble import HistGradientBoostingRegressor
        except ImportError:  # pragma: no cover - scikit-learn is installed with the [ml] extra
            raise InvalidParameterError(
                f"model='gbm' of {func} needs scikit-learn: pip install 'voirdire[ml]' (or scikit-learn), "
                "or use model='calibrated'.") from None
        n = y.size
        # small, regularised trees: a few hundred labels at most in a typical two-stage design
        self.model = HistGradientBoostingRegressor(
            learning_rate=0.05, max_iter=150, max_leaf_nodes=8, max_depth=3,
            min_samples_leaf=max(5, n // 20), l2_regularization=1.0, early_stopping=False, random_state=seed)
        with _one_thread():
            self.model.fit(X, y, sample_weight=w)

    def predict(self, X: np.ndarray) -> np.ndarray:
        with _one_thread():
            return np.asarray(self.model.predict(X), dtype=float)


def _one_thread() -> Any:
    """One OpenMP thread for the small boosted trees: thread start-up dominates at a few hundred
    items, and on a loaded machine an OpenMP team per fit stalls (minutes instead of 0.1 s)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="openmp")


def fit_model(X: np.ndarray, y: np.ndarray, w: np.ndarray, model: str, *, seed: int = 0,
              func: str = "dr_mean") -> _Fit:
    """One fit of ``model`` on ``(X, y)`` with weights ``w`` (no cross-fitting)."""
    if model == "linear":
        return _fit_linear(X, y, w, ridge=False)
    if model in ("ridge", "calibrated"):
        return _fit_linear(X, y, w, ridge=True)
    if model == "isotonic":
        return _StackedIsotonic(X, y, w)
    if model == "gbm":
        return _GBMFit(X, y, w, seed, func)
    raise InvalidParameterError(f"Unknown model {model!r}.")  # pragma: no cover - checked upstream


def min_labels(model: str, n_cols: int) -> int:
    """Fewest labelled items a training fold needs for ``model``."""
    if model == "linear":
        return n_cols + 1
    if model in ("ridge", "calibrated"):
        return 3
    if model == "gbm":
        return 10
    return 1


def cross_fit_predict(x: np.ndarray, y: np.ndarray, pi: np.ndarray, lab: np.ndarray, *, model: str,
                      n_folds: int, rng: np.random.Generator, clusters: np.ndarray | None,
                      func: str) -> np.ndarray:
    """Out-of-fold predictions ``m(x_i)`` for every item (``n_folds=1``: fit once on all labels).

    ``x`` has shape ``(N,)`` (one judge) or ``(N, p)``.
    """
    X = x.reshape(-1, 1) if x.ndim == 1 else x
    if model == "identity":
        return X[:, 0].astype(float, copy=True)
    folds = fold_ids(X.shape[0], n_folds, rng, clusters) if n_folds > 1 else np.zeros(X.shape[0], dtype=np.int64)
    need = min_labels(model, X.shape[1])
    n_lab = int(lab.sum())
    if n_folds > 1:
        per_fold = np.bincount(folds[lab], minlength=n_folds)
        short = int(n_lab - per_fold.max())
        if short < need:
            raise InvalidParameterError(
                f"The 'cross_fit' parameter of {func} is {n_folds}, but with {n_lab} labelled "
                f"item(s) some training fold holds fewer than {need} (model {model!r} on {X.shape[1]} "
                f"column(s)). Use fewer folds, cross_fit=1, or a simpler model.")
    elif n_lab < need:
        raise InvalidParameterError(
            f"{func}: model {model!r} on {X.shape[1]} column(s) needs at least {need} labelled items; got {n_lab}.")
    w = 1.0 / pi
    if X.shape[1] == 1 and model == "linear":
        return _linear_fit_predict(X[:, 0], y, w, lab, folds, n_folds)
    if X.shape[1] == 1 and model == "isotonic":
        return _isotonic_fit_predict(X[:, 0], y, w, lab, folds, n_folds)
    seed = int(rng.integers(0, 2**31 - 1))
    if n_folds == 1:
        return fit_model(X[lab], y[lab], w[lab], model, seed=seed, func=func).predict(X)
    out = np.empty(X.shape[0])
    for k in range(n_folds):
        tr = lab & (folds != k)
        target = np.flatnonzero(folds == k)
        if target.size == 0:
            continue
        out[target] = fit_model(X[tr], y[tr], w[tr], model, seed=seed + k, func=func).predict(X[target])
    return out
