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
``select``     per training set, the GCV choice among ridge on every column, ridge anchored on
               the set's best single column (unpenalised; the others shrunk), and the constant.
``isotonic``   one increasing (or decreasing, by the sign of the correlation) isotonic fit per
               column, stacked by ridge/GCV when there are several columns.
``gbm``        scikit-learn's ``HistGradientBoostingRegressor`` (small, regularised trees).
``calibrated`` ridge/GCV *anchored* on the judges' first principal component (that direction
               unpenalised, the rest shrunk towards it); :func:`~voirdire.estimation.dr_mean`
               adds power tuning (the default).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression

from ..exceptions import InvalidParameterError

__all__ = ["MODELS", "cross_fit_predict", "fold_ids"]

MODELS = ("calibrated", "identity", "linear", "ridge", "select", "isotonic", "gbm")

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


def _ridge_sets(Z: np.ndarray, y: np.ndarray, w: np.ndarray, unit: np.ndarray, n_sets: int, *,
                ridge: bool, select: bool = False, anchor: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted (ridge) regressions of ``y`` on the columns of ``Z`` with an intercept, one per
    training set, all from additive sums: set ``k < n_sets`` leaves out the rows with
    ``unit == k``, set ``n_sets`` uses every row.

    ``ridge=False``: least squares (minimum-norm when columns are collinear). ``ridge=True``: per
    set, the penalty minimising the generalised cross-validation score ``n RSS / (n - df)^2`` over
    :data:`_ALPHAS` (times the set's summed weight), from one eigendecomposition of the set's
    centred Gram matrix (``Z`` should be standardised: the penalty treats its columns alike).
    ``anchor`` (a unit vector over the columns, with ``ridge=True``): the ridge is anchored on it
    (:func:`_anchored_ridge`).
    Returns ``(mean_z, intercept, coef)`` of shape ``(n_sets + 1, p)``, ``(n_sets + 1,)``,
    ``(n_sets + 1, p)``: set ``k`` predicts ``intercept[k] + (z - mean_z[k]) @ coef[k]``.
    """
    n, p = Z.shape
    y0 = float(np.mean(y)) if n else 0.0
    yc = y - y0  # centred for numerical stability (scores are often ~1-5 or ~0-100)
    wz = Z * w[:, None]
    tot = (float(w.sum()), wz.sum(axis=0), float(w @ yc), wz.T @ Z, wz.T @ yc, float(w @ (yc * yc)), float(n))
    if n_sets:
        cnt = np.bincount(unit, minlength=n_sets).astype(float)
        s_w = np.bincount(unit, weights=w, minlength=n_sets)
        s_z = np.stack([np.bincount(unit, weights=wz[:, j], minlength=n_sets) for j in range(p)], axis=1)
        s_y = np.bincount(unit, weights=w * yc, minlength=n_sets)
        s_zy = np.stack([np.bincount(unit, weights=wz[:, j] * yc, minlength=n_sets) for j in range(p)], axis=1)
        s_yy = np.bincount(unit, weights=w * yc * yc, minlength=n_sets)
        s_zz = np.zeros((n_sets, p, p))
        if p * (p + 1) <= 72:  # few columns: one counting pass per pair
            for a in range(p):
                for b in range(a, p):
                    s_zz[:, a, b] = s_zz[:, b, a] = np.bincount(unit, weights=wz[:, a] * Z[:, b], minlength=n_sets)
        elif n_sets <= 64:  # few sets: one product per set, rows grouped by one sort
            order = np.argsort(unit, kind="stable")
            cuts = np.searchsorted(unit[order], np.arange(n_sets + 1))
            for k in range(n_sets):
                rows = order[cuts[k]:cuts[k + 1]]
                s_zz[k] = wz[rows].T @ Z[rows]
        else:
            np.add.at(s_zz, unit, wz[:, :, None] * Z[:, None, :])
        sw = np.append(tot[0] - s_w, tot[0])
        sz = np.vstack([tot[1] - s_z, tot[1]])
        sy = np.append(tot[2] - s_y, tot[2])
        szz = np.concatenate([tot[3] - s_zz, tot[3][None]])
        szy = np.vstack([tot[4] - s_zy, tot[4]])
        syy = np.append(tot[5] - s_yy, tot[5])
        nk = np.append(tot[6] - cnt, tot[6])
    else:
        sw, sy, syy, nk = (np.array([tot[i]]) for i in (0, 2, 5, 6))
        sz, szz, szy = tot[1][None], tot[3][None], tot[4][None]
    with np.errstate(invalid="ignore", divide="ignore"):
        mz = sz / sw[:, None]
        my = sy / sw
    gram = szz - sw[:, None, None] * mz[:, :, None] * mz[:, None, :]
    c = szy - sw[:, None] * mz * my[:, None]
    byy = syy - sw * my * my
    if not ridge:
        s2, V = np.linalg.eigh(gram)
        keep = s2 > 1e-10 * np.maximum(s2.max(axis=1, keepdims=True), 1e-300)
        u = np.where(keep, np.einsum("kpq,kp->kq", V, c), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(keep, u / np.where(keep, s2, 1.0), 0.0)
        return mz, y0 + my, np.einsum("kpq,kq->kp", V, g)
    if anchor is not None and p > 1:  # the anchored path only (plain ridge is not needed)
        return mz, y0 + my, _anchored_ridge(gram, c, byy, nk, sw, np.broadcast_to(anchor, c.shape))[0]
    coef, gcv = _ridge_gcv(gram, c, byy, nk, sw, 1.0)
    if select:
        coef = _select(coef, gcv, gram, c, byy, nk, sw)
    return mz, y0 + my, coef


def _ridge_gcv(gram: np.ndarray, c: np.ndarray, byy: np.ndarray, nk: np.ndarray, sw: np.ndarray,
               fixed_dof: float) -> tuple[np.ndarray, np.ndarray]:
    """Per set, the ridge solution of the centred normal equations ``(gram + a I) b = c`` whose
    penalty ``a`` (over :data:`_ALPHAS` times the set's summed weight) minimises the GCV score
    ``n RSS / (n - df)^2``; ``fixed_dof`` unpenalised parameters (the intercept) are added to the
    ridge's ``df``. Returns ``(coef, gcv)`` at the chosen penalty."""
    s2, V = np.linalg.eigh(gram)
    keep = s2 > 1e-10 * np.maximum(s2.max(axis=1, keepdims=True), 1e-300)
    s2 = np.where(keep, s2, 0.0)
    u = np.where(keep, np.einsum("kpq,kp->kq", V, c), 0.0)
    alphas = _ALPHAS[None, :] * sw[:, None]  # penalty on the scale of Z'WZ (~ sum w per column)
    den = s2[:, None, :] + alphas[:, :, None]
    resid = byy[:, None] - np.sum(u[:, None, :] ** 2 * (s2[:, None, :] + 2.0 * alphas[:, :, None]) / den**2,
                                  axis=2)
    dof = np.sum(s2[:, None, :] / den, axis=2) + fixed_dof
    with np.errstate(divide="ignore", invalid="ignore"):
        gcv = np.where(nk[:, None] - dof > 0, nk[:, None] * resid / (nk[:, None] - dof) ** 2, np.inf)
    k = np.argmin(gcv, axis=1)
    rows = np.arange(gcv.shape[0])
    g = u / (s2 + alphas[rows, k][:, None])
    return np.einsum("kpq,kq->kp", V, g), gcv[rows, k]


def _anchored_ridge(gram: np.ndarray, c: np.ndarray, byy: np.ndarray, nk: np.ndarray, sw: np.ndarray,
                    a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per set, ridge *anchored* on the direction ``a[k]`` (shape ``(K, p)``): the coefficient
    vector is ``t a + g`` with ``t`` unpenalised and ``g`` (orthogonal to ``a`` in the metric of
    the Gram matrix) shrunk by a GCV-chosen penalty. The path runs from least squares on the one
    feature ``z @ a`` (the heaviest penalty) to least squares on every column. Returns
    ``(coef, gcv)``."""
    ga = np.einsum("kpq,kq->kp", gram, a)  # G a
    aga = np.maximum(np.einsum("kp,kp->k", a, ga), 1e-300)
    ca = np.einsum("kp,kp->k", a, c)
    # partial the anchor feature out: G a becomes 0 (a is then a null direction of the ridge)
    gram_p = gram - ga[:, :, None] * ga[:, None, :] / aga[:, None, None]
    c_p = c - ga * (ca / aga)[:, None]
    gamma, gcv = _ridge_gcv(gram_p, c_p, byy - ca * ca / aga, nk, sw, 2.0)
    t = (ca - np.einsum("kp,kp->k", ga, gamma)) / aga
    return gamma + t[:, None] * a, gcv


def _select(coef: np.ndarray, gcv_ridge: np.ndarray, gram: np.ndarray, c: np.ndarray, byy: np.ndarray,
            nk: np.ndarray, sw: np.ndarray) -> np.ndarray:
    """Per training set, the candidate with the smallest GCV score: ridge on every column
    (``coef``), ridge *anchored* on the set's best single column (that column unpenalised, the
    others shrunk towards it; its path runs from least squares on that column alone to least
    squares on every column), or the constant (no column). The anchored path contains the
    single-judge regression (PPI++ on the best judge, with out-of-sample coefficients), so the
    choice nests it; nothing in set ``k`` looks at the rows it leaves out."""
    rows = np.arange(coef.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        gjj = np.diagonal(gram, axis1=1, axis2=2)
        ok = gjj > 1e-12 * np.maximum(gjj.max(axis=1, keepdims=True), 1e-300)
        fit_one = np.where(ok, c * c / np.where(ok, gjj, 1.0), -np.inf)
        gcv_const = np.where(nk > 1, nk * byy / (nk - 1.0) ** 2, np.inf)
    j = np.argmax(fit_one, axis=1)  # the set's best single column (largest explained sum of squares)
    anchored, gcv_anchor = _anchored_ridge(gram, c, byy, nk, sw, np.eye(gram.shape[1])[j])
    score = np.column_stack([gcv_ridge, gcv_anchor, gcv_const])
    pick = np.argmin(score, axis=1)  # ties: ridge first
    out = np.where((pick == 0)[:, None], coef, 0.0)
    return np.where((pick == 1)[:, None], anchored, out)


def _fit_linear(X: np.ndarray, y: np.ndarray, w: np.ndarray, *, ridge: bool, select: bool = False) -> _LinearFit:
    """Weighted (ridge) regression with an intercept on columns standardised by their weighted
    mean and sd (one fit of :func:`_ridge_sets`)."""
    sw = float(w.sum())
    mean_x = (w @ X) / sw
    Xc = X - mean_x
    scale = np.sqrt((w @ (Xc * Xc)) / sw)
    scale[~(scale > 1e-12)] = 1.0
    mz, icpt, coef = _ridge_sets(Xc / scale, y, w, np.zeros(0, dtype=np.int64), 0, ridge=ridge, select=select)
    # intercept + ((x - mean_x)/scale - mz) @ coef
    return _LinearFit(mean_x + mz[0] * scale, scale, coef[0], float(icpt[0]))


def _first_component(Z: np.ndarray) -> np.ndarray:
    """The judges' first principal component (unit vector over the standardised columns of every
    item, signed so that its weights sum to a positive number): the direction the judges agree
    on, found without any human score."""
    Zc = Z - Z.mean(axis=0)
    # eigenvector of the p x p cross-product (an SVD of the N x p matrix, or a threaded BLAS
    # product, stalls on a loaded machine: 0.3 s per call at N = 1056, p = 20)
    _, V = np.linalg.eigh(np.einsum("ij,ik->jk", Zc, Zc))
    a = V[:, -1]
    return a if a.sum() >= 0 else -a


def _linear_cross_fit(X: np.ndarray, y: np.ndarray, w: np.ndarray, lab: np.ndarray, item_set: np.ndarray,
                      n_sets: int, *, ridge: bool, select: bool = False, anchored: bool = False) -> np.ndarray:
    """Predictions of every item from the (ridge) regression fitted without the labelled rows of
    its set: ``item_set[i]`` in ``0..n_sets-1`` (K folds, or one labelled unit each for
    leave-one-out), ``-1`` for the fit on every labelled item.

    The columns are standardised by their mean and sd over **all** items (labelled or not): the
    judges score every item, and a scaling that does not look at any human score is the same for
    every training set and costs no validity. ``anchored`` (``model="calibrated"``): the ridge is
    anchored on the judges' first principal component over all items (:func:`_first_component`,
    :func:`_anchored_ridge`), likewise free of human scores.
    """
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    sd[~(sd > 1e-12)] = 1.0
    li = np.flatnonzero(lab)
    unit = item_set[li]
    if n_sets and (unit < 0).any():  # pragma: no cover - every labelled row belongs to a set
        raise AssertionError("a labelled item outside every training set")
    anchor = _first_component((X - mu) / sd) if anchored and X.shape[1] > 1 else None
    mz, icpt, coef = _ridge_sets((X[li] - mu) / sd, y[li], w[li], unit, n_sets, ridge=ridge, select=select,
                                 anchor=anchor)
    # back on the scale of X: icpt + ((x - mu)/sd - mz) @ coef = a + x @ b
    b = coef / sd
    a = icpt - np.sum((mu + mz * sd) * b, axis=1)
    if n_sets == 0:
        return a[0] + X @ b[0]
    k = np.where(item_set < 0, n_sets, item_set)
    if X.shape[1] == 1:
        return a[k] + X[:, 0] * b[k, 0]
    return a[k] + np.einsum("ip,ip->i", X, b[k])


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
        from .._optional import require

        HistGradientBoostingRegressor = require(
            "sklearn.ensemble", f"model='gbm' of {func} (or use model='calibrated', which does not)",
            extra="ml").HistGradientBoostingRegressor
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
    if model in ("ridge", "calibrated", "select"):
        return _fit_linear(X, y, w, ridge=True, select=model == "select")
    if model == "isotonic":
        return _StackedIsotonic(X, y, w)
    if model == "gbm":
        return _GBMFit(X, y, w, seed, func)
    raise InvalidParameterError(f"Unknown model {model!r}.")  # pragma: no cover - checked upstream


def min_labels(model: str, n_cols: int) -> int:
    """Fewest labelled items a training fold needs for ``model``."""
    if model == "linear":
        return n_cols + 1
    if model in ("ridge", "calibrated", "select"):
        return 3
    if model == "gbm":
        return 10
    return 1


#: ``cross_fit="auto"`` leaves one labelled unit out (the linear models) up to this many labelled units
LOO_MAX_UNITS = 2000
#: models whose leave-one-out fits come in closed form from additive sums
LOO_MODELS = ("linear", "ridge", "select", "calibrated")


def resolve_folds(cross_fit: int | str, model: str, n_units_lab: int, n_cols: int) -> int | str:
    """The folds ``cross_fit`` means here: ``"auto"`` is ``"loo"`` for the linear models with at
    most :data:`LOO_MAX_UNITS` labelled units (and a Gram matrix per unit that fits in memory),
    5 folds otherwise."""
    if cross_fit != "auto":
        return cross_fit
    small = n_units_lab <= LOO_MAX_UNITS and n_units_lab * n_cols * n_cols <= 20_000_000
    return "loo" if model in LOO_MODELS and small else 5


def cross_fit_predict(x: np.ndarray, y: np.ndarray, pi: np.ndarray, lab: np.ndarray, *, model: str,
                      n_folds: int | str, rng: np.random.Generator, clusters: np.ndarray | None,
                      func: str) -> np.ndarray:
    """Out-of-fold predictions ``m(x_i)`` for every item (``n_folds=1``: fit once on all labels).

    ``x`` has shape ``(N,)`` (one judge) or ``(N, p)``. ``n_folds="loo"`` (linear models): every
    item is predicted by the model fitted on every labelled item but itself (leave one out; with
    clusters, but its cluster), so a labelled item's prediction never uses its own human score
    and an unlabelled item's is the fit on all labels; the estimator stays exactly unbiased under
    Poisson sampling (``m_i`` does not depend on whether item ``i`` was drawn), and every fit uses
    ``n - 1`` labels instead of ``(K - 1) n / K``.
    """
    X = x.reshape(-1, 1) if x.ndim == 1 else x
    if model == "identity":
        return X[:, 0].astype(float, copy=True)
    need = min_labels(model, X.shape[1])
    n_lab = int(lab.sum())
    w = 1.0 / pi
    if n_folds == "loo":
        if model not in LOO_MODELS:
            raise InvalidParameterError(
                f"The 'cross_fit' parameter of {func} is 'loo' (leave one out), which model {model!r} does not "
                f"support (only {', '.join(LOO_MODELS)}). Use a number of folds.")
        li = np.flatnonzero(lab)
        item_set = np.full(X.shape[0], -1, dtype=np.int64)
        if clusters is None:
            item_set[li] = np.arange(li.size)
            n_sets, largest = li.size, 1
        else:  # leave one cluster out: every item of a labelled cluster is predicted without it
            used, codes = np.unique(clusters[li], return_inverse=True)
            where = np.full(int(clusters.max()) + 1, -1, dtype=np.int64)
            where[used] = np.arange(used.size)
            item_set = where[clusters]
            n_sets, largest = used.size, int(np.bincount(codes).max())
        if n_lab - largest < need:
            raise InvalidParameterError(
                f"{func}: leaving one labelled {'item' if clusters is None else 'cluster'} out leaves fewer than "
                f"{need} labelled items to fit model {model!r} on {X.shape[1]} column(s) ({n_lab} labelled).")
        return _linear_cross_fit(X, y, w, lab, item_set, n_sets, ridge=model != "linear", select=model == "select",
                                 anchored=model == "calibrated")
    assert isinstance(n_folds, int)
    folds = fold_ids(X.shape[0], n_folds, rng, clusters) if n_folds > 1 else np.zeros(X.shape[0], dtype=np.int64)
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
    if model in LOO_MODELS:
        return _linear_cross_fit(X, y, w, lab, folds if n_folds > 1 else np.full(X.shape[0], -1),
                                 n_folds if n_folds > 1 else 0, ridge=model != "linear", select=model == "select",
                                 anchored=model == "calibrated")
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
