"""Doubly-robust, classical (Hajek) and PPI++ estimators of the mean human score (private)."""

from __future__ import annotations

import dataclasses

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import ndtri, stdtrit

from .._checks import as_generator, check_choice, check_confidence_level, check_on_undefined, undefined
from .._results import ConfidenceInterval
from .._stats.linalg import dot as _dot
from ..exceptions import DegenerateDataWarning, InvalidParameterError, SmallSampleWarning
from ._design_check import labelled_count
from ._models import MODELS, cross_fit_predict, resolve_folds
from ._results import EstimateResult

__all__ = ["dr_mean", "dr_mean_table", "classical_mean", "ppi_mean", "item_scores", "judge_matrix"]

log = logging.getLogger(__name__)

TARGETS = ("superpopulation", "finite")
Target = Literal["superpopulation", "finite"]
INTERVALS = ("auto", "t", "normal")
Interval = Literal["auto", "t", "normal"]
ModelName = Literal["calibrated", "identity", "linear", "ridge", "select", "isotonic", "gbm"]
MISSING_JUDGE = ("error", "impute")
#: below this many labelled units (items, or clusters) ``interval="auto"`` uses the t interval
SMALL_SAMPLE = 100
#: fewest labelled items the default (calibrated) model is fitted on; below it, human-only
MIN_CALIBRATED = 10
#: below :data:`SMALL_SAMPLE` labelled units the design term of a refitted model's variance is
#: ``v_lin + JACKKNIFE_WEIGHT (v_J - v_lin)``: the linearised term moved a third of the way to the
#: refitting jackknife (unbiased where the mean of the two, weight 1/2, was 1.05-1.07 of the
#: Monte-Carlo variance; see dr_mean's Notes)
JACKKNIFE_WEIGHT = 1.0 / 3.0


# ---------------------------------------------------------------------------------- input guards
def _as_float_array(value: Any, name: str, func: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be an array of numbers. "
            f"Got values that are not numbers (e.g. {_first_bad(value)!r}).") from None
    if arr.ndim != 1:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be one-dimensional. Got shape {arr.shape}.")
    return arr


def _judge_matrix(value: Any, n: int, func: str, *, covariates: Any = None, missing_judge: str = "error",
                  name: str = "judge_scores") -> tuple[np.ndarray, list[str], int]:
    """``(X, column names, number of judge columns)``: the judges' scores (and covariates) as an
    ``(N, p)`` float matrix. Missing scores are refused, or imputed with the column mean plus a
    missingness indicator when ``missing_judge="impute"``."""
    blocks: list[tuple[str, Any]] = [(name, value)] + ([] if covariates is None else [("covariates", covariates)])
    cols: list[np.ndarray] = []
    names: list[str] = []
    n_judges = 0
    for what, v in blocks:
        labels: list[str] | None = None
        if isinstance(v, pd.DataFrame):
            labels = [str(c) for c in v.columns]
        elif isinstance(v, pd.Series) and v.name is not None:
            labels = [str(v.name)]
        try:
            arr = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"The '{what}' parameter of {func} must be an array of numbers. "
                f"Got values that are not numbers (e.g. {_first_bad(v)!r}).") from None
        if arr.ndim == 1:
            arr = arr.reshape(-1, 1)
        if arr.ndim != 2 or arr.shape[1] == 0:
            raise InvalidParameterError(
                f"The '{what}' parameter of {func} must be one score per item (shape (N,)) or one column per "
                f"judge (shape (N, p)). Got shape {np.shape(v)}.")
        if arr.shape[0] != n:
            raise InvalidParameterError(
                f"The '{what}' and 'human_scores' parameters of {func} must have the same length "
                f"(one value per item). Got {arr.shape[0]} and {n}.")
        if labels is None:
            labels = ([f"judge {k}" for k in range(arr.shape[1])] if what == name
                      else [f"covariate {k}" for k in range(arr.shape[1])])
        if np.isinf(arr).any():
            i, k = map(int, np.argwhere(np.isinf(arr))[0])
            raise InvalidParameterError(f"The '{what}' parameter of {func} holds an infinite value "
                                        f"(item {i}, column {labels[k]!r}).")
        cols.append(arr)
        names += labels
        if what == name:
            n_judges = arr.shape[1]
    X = np.hstack(cols) if len(cols) > 1 else cols[0]
    miss = np.isnan(X)
    if miss.any():
        i, k = map(int, np.argwhere(miss)[0])
        if missing_judge != "impute":
            raise InvalidParameterError(
                f"The '{name}' parameter of {func} must hold a finite score for every item (the judges score "
                f"all items): column {names[k]!r} has no score for {int(miss[:, k].sum())} item(s), e.g. item {i}. "
                "Drop those items, or pass missing_judge='impute' (column mean plus a missingness indicator).")
        extra = []
        for k in np.flatnonzero(miss.any(axis=0)).tolist():
            col = X[:, k]
            if miss[:, k].all():
                raise InvalidParameterError(f"Column {names[k]!r} of {func} holds no score at all.")
            col[miss[:, k]] = float(np.nanmean(col))
            extra.append(miss[:, k].astype(float))
            names.append(f"{names[k]} missing")
        X = np.hstack([X, np.column_stack(extra)])
    return X, names, n_judges


def _first_bad(value: Any) -> Any:
    for v in np.asarray(value, dtype=object).ravel():
        try:
            float(v)
        except (TypeError, ValueError):
            return v
    return None


def _check_inclusion(pi_in: Any, n: int, labelled: np.ndarray, func: str) -> np.ndarray:
    if np.isscalar(pi_in) or np.ndim(pi_in) == 0:
        try:
            p = float(pi_in)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"The 'inclusion_prob' parameter of {func} must be a number in (0, 1] or an array of them. "
                f"Got {pi_in!r} instead.") from None
        if not (0 < p <= 1):
            hint = " Did you give a percentage?" if 1 < p <= 100 else ""
            raise InvalidParameterError(
                f"The 'inclusion_prob' parameter of {func} must be in (0, 1] (every item must have had a chance "
                f"to be scored by humans). Got {p!r}.{hint}")
        return np.full(n, p)
    else:
        pi = _as_float_array(pi_in, "inclusion_prob", func)
        if pi.size != n:
            raise InvalidParameterError(
                f"The 'inclusion_prob' parameter of {func} must have one value per item ({n}). Got {pi.size}.")
    # nan is accepted on items without a human score: only the scored items' probabilities enter
    # the estimate and its variance.
    bad = ~((pi > 0) & (pi <= 1)) & ~(np.isnan(pi) & ~labelled)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = "human-scored item" if labelled[i] else "item"
        hint = " Did you give a percentage?" if 1 < pi[i] <= 100 else ""
        raise InvalidParameterError(
            f"The 'inclusion_prob' parameter of {func} must be in (0, 1] for every item "
            f"(every item must have had a chance to be scored by humans). Got {pi[i]!r} for {what} {i} "
            f"({int(bad.sum())} bad value(s)).{hint}")
    return pi


def _codes(value: Any, n: int, name: str, func: str) -> np.ndarray | None:
    if value is None:
        return None
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.size != n:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must have one value per item ({n}). Got shape {arr.shape}.")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise InvalidParameterError(f"The '{name}' parameter of {func} holds missing values.")
    _, codes = np.unique(arr.astype(str) if arr.dtype == object else arr, return_inverse=True)
    return codes.astype(np.int64)


# ---------------------------------------------------------------------------------- the one core
def _variance(m: np.ndarray, li: np.ndarray, wce: np.ndarray, ce: np.ndarray, pi_l: np.ndarray, theta: float,
              clusters: np.ndarray | None, strata: np.ndarray | None) -> tuple[float, float, bool]:
    """``(var_total, var_residual, whole_clusters)`` of the mean of ``phi = m + delta/pi * c e``.

    ``li`` indexes the labelled items; ``ce`` is their (scaled) residual ``c_i (y_i - m_i)``,
    ``wce = ce / pi``. ``var_total`` is the sample analogue of ``V = Var(phi)/N``:
    ``sum (phi_i - theta)^2 / N^2`` (items independent), its cluster-robust form
    ``G/(G-1) sum_g Phi_g^2 / N^2`` (``Phi_g`` the cluster sums of ``phi - theta``), and with strata
    the within-stratum (stratified) form. ``var_residual`` is the design (second-stage) term
    ``sum (1 - pi)/pi^2 ce^2 / N^2`` under item-level Poisson sampling, or with cluster sums of
    ``ce`` when whole clusters were sampled (labelled indicator and ``pi`` constant within every
    cluster).
    """
    n_items = m.size
    whole_clusters = False
    n_cl = 0
    if clusters is not None:
        n_cl = int(clusters.max()) + 1
        cl_l = clusters[li]
        cnt = np.bincount(clusters, minlength=n_cl)
        lab_cnt = np.bincount(cl_l, minlength=n_cl)
        pi_min = np.full(n_cl, np.inf)
        pi_max = np.full(n_cl, -np.inf)
        np.minimum.at(pi_min, cl_l, pi_l)
        np.maximum.at(pi_max, cl_l, pi_l)
        sampled = lab_cnt > 0
        whole_clusters = bool(np.any(cnt[sampled] > 1) and np.all(lab_cnt[sampled] == cnt[sampled])
                              and np.all(pi_min[sampled] == pi_max[sampled]))
    if whole_clusters:
        assert clusters is not None
        e_g = np.bincount(cl_l, weights=ce, minlength=n_cl)[sampled]
        pi_g = pi_min[sampled]
        var_res = float(np.sum((1.0 - pi_g) / pi_g**2 * e_g**2)) / n_items**2
    else:
        var_res = float(_dot((1.0 - pi_l) / pi_l**2, ce * ce)) / n_items**2
    if clusters is None and strata is None:
        # sum (phi - theta)^2 without building phi: unlabelled items contribute (m - theta)^2
        d = m - theta
        dl = d[li]
        ss = float(_dot(d, d)) + float(_dot(2.0 * dl + wce, wce))
        return ss / n_items**2, var_res, whole_clusters
    dev = m - theta
    dev[li] += wce
    if clusters is None:
        units: np.ndarray = dev
        unit_stratum = strata
    else:
        units = np.bincount(clusters, weights=dev, minlength=n_cl)
        unit_stratum = None
        if strata is not None:
            unit_stratum = np.zeros(n_cl, dtype=np.int64)
            unit_stratum[clusters] = strata
    if unit_stratum is None:
        g = units.size
        corr = g / (g - 1) if g > 1 else 1.0
        var_tot = corr * float(np.sum((units - units.mean()) ** 2)) / n_items**2
    else:
        n_h = int(unit_stratum.max()) + 1
        g_h = np.bincount(unit_stratum, minlength=n_h).astype(float)
        s_h = np.bincount(unit_stratum, weights=units, minlength=n_h)
        mean_h = np.divide(s_h, g_h, out=np.zeros(n_h), where=g_h > 0)
        ss_h = np.bincount(unit_stratum, weights=(units - mean_h[unit_stratum]) ** 2, minlength=n_h)
        corr_h = np.ones(n_h)
        if clusters is not None:
            corr_h = np.divide(g_h, g_h - 1, out=np.ones(n_h), where=g_h > 1)
        var_tot = float(np.sum(corr_h * ss_h)) / n_items**2
    return var_tot, var_res, whole_clusters


def _nan_result(n_lab: int, n_tot: int, confidence_level: float, model: str, method: str, target: str,
                cross_fit: int) -> EstimateResult:
    nan = float("nan")
    return EstimateResult(
        estimate=nan, se=nan, ci=ConfidenceInterval(low=nan, high=nan, confidence_level=confidence_level,
                                                    method="normal"),
        confidence_level=confidence_level, n_labeled=n_lab, n_total=n_tot, var_human=nan, var_residual=nan,
        model=model, method=method, target=target, cross_fit=cross_fit)


def _effective_df(pi_l: np.ndarray, li: np.ndarray, ce: np.ndarray, clusters: np.ndarray | None, var_h: float,
                  var_r: float, target: str, n_units: int) -> float:
    """Satterthwaite degrees of freedom of the variance estimate.

    The residual (design) term is a sum over the labelled units of ``u_i = a_i c e_i^2`` with
    ``a_i = (1 - pi_i)/pi_i^2`` (summed per cluster). Two effective numbers of units, the smaller
    kept: Kish's ``(sum a)^2 / sum a^2`` (the design weights alone; equal probabilities give
    ``n``) and Satterthwaite's ``3 (sum u)^2 / sum u^2`` (the terms themselves, with the normal
    kurtosis 3: about ``n`` for equal weights and normal residuals, fewer when a few heavily
    weighted or large residuals carry the variance); minus one. With the superpopulation target
    the human-variance term (``n_units - 1`` df) is combined with it by Satterthwaite's formula.
    """
    a = (1.0 - pi_l) / pi_l**2
    u = a * ce * ce
    if clusters is not None:
        a = np.bincount(clusters[li], weights=a)
        u = np.bincount(clusters[li], weights=u)
        keep = a > 0
        a, u = a[keep], u[keep]
    s1, s2 = float(a.sum()), float(np.sum(a * a))
    df_r = s1 * s1 / s2 - 1.0 if s2 > 0 else np.inf
    t1, t2 = float(u.sum()), float(np.sum(u * u))
    if t2 > 0:
        df_r = min(df_r, 3.0 * t1 * t1 / t2 - 1.0)
    df_r = max(df_r, 1.0)
    df_h = max(n_units - 1.0, 1.0)
    var_h = max(var_h, 0.0)
    if target == "finite" or var_h == 0:
        return df_r
    denom = (var_r * var_r / df_r if np.isfinite(df_r) else 0.0) + var_h * var_h / df_h
    return max((var_r + var_h) ** 2 / denom, 1.0) if denom > 0 else np.inf


def _skew_shift(pi_l: np.ndarray, ce: np.ndarray, n_items: int, se: float, q: float) -> float:
    """Hall's (1992) Edgeworth correction of a studentised interval for skewness, in standard errors.

    The estimation error is ``sum_i (delta_i/pi_i - 1) c e_i / N`` over independent (Poisson)
    draws; its third cumulant is ``sum (1 - pi)(1 - 2 pi)/pi^2 (c e)^3 / N^3`` over all items,
    estimated from the labelled ones by weighting with ``1/pi``. With ``k3`` that cumulant over
    ``se^3``, the studentised error has quantiles ``z - k3 (2 z^2 + 1)/6`` (one term of the
    Edgeworth expansion), so both ends move by ``k3 (2 q^2 + 1)/6`` standard errors: downwards
    when a long lower tail of the residuals is under-represented in a small sample (the interval
    was too high), upwards for a long upper tail. With equal probabilities ``pi = f`` it is
    ``(1 - 2f)/sqrt(1 - f)`` times the sample skewness over ``sqrt(n)``: the familiar correction of
    the t interval for a skewed mean, vanishing at ``f = 1/2`` and for symmetric residuals. Capped
    at half the quantile so the estimate stays well inside its interval.
    """
    t = (1.0 - pi_l) * (1.0 - 2.0 * pi_l) / pi_l**2 * ce**3
    num = float(np.sum(t / pi_l))
    var_num = float(np.sum((1.0 - pi_l) / pi_l**2 * t * t))
    if num == 0.0:
        return 0.0
    k3 = num * num * num / (num * num + var_num) / n_items**3 / se**3
    return float(np.clip(k3 * (2.0 * q * q + 1.0) / 6.0, -q / 2.0, q / 2.0))


def _tail_term(w: np.ndarray, v: np.ndarray, q: float, n: int) -> float:
    """Hall's second-order two-sided term of a studentised mean beyond the normal one, in quantile units.

    ``-q (kappa/12 (q^2 - 3) - gamma^2/18 (q^4 + 2 q^2 - 3)) / n`` with ``gamma`` and ``kappa``
    the skewness and excess kurtosis of the values ``v`` under the weights ``w``: the amount the
    normal quantile ``q`` must grow for a two-sided interval to keep its level at ``n`` labels
    (Hall, *The Bootstrap and Edgeworth Expansion*, 1992, eq. 2.55: ``P(|T| <= x) = 2 Phi(x) - 1
    + 2 p_2(x) phi(x)/n``, ``p_2(x) = x (kappa (x^2 - 3)/12 - gamma^2 (x^4 + 2 x^2 - 3)/18
    - (x^2 + 3)/4)``). Only the part owed to the shape (skewness, kurtosis) is taken; the last,
    normal-theory term is the t interval's, left to ``interval="t"``. Never negative.
    """
    sw = float(w.sum())
    d = v - float(_dot(w, v)) / sw
    m2 = float(_dot(w, d * d)) / sw
    if m2 <= 0 or n < 2:
        return 0.0
    gamma = float(_dot(w, d**3)) / sw / m2**1.5
    kappa = float(_dot(w, d**4)) / sw / (m2 * m2) - 3.0
    return max(-q * (kappa * (q * q - 3.0) / 12.0 - gamma * gamma * (q**4 + 2.0 * q * q - 3.0) / 18.0) / n, 0.0)


def _hajek_form(y: np.ndarray, m: np.ndarray, pi: np.ndarray, li: np.ndarray) -> tuple[np.ndarray, float]:
    """``(m + e_H, N / N_hat)``: the prediction shifted by the design-weighted (Hajek) mean residual
    ``e_H``, and the Hajek scale of the residual term.

    With these, :func:`_core` computes the Hajek-normalised DR estimate
    ``mean(m) + sum(delta/pi (Y - m)) / N_hat`` and its linearised variance; with a constant ``m``
    it is exactly :func:`classical_mean` (estimate and standard error).
    """
    wl = 1.0 / pi[li]
    n_hat = float(wl.sum())
    e_h = float(_dot(wl, y[li] - m[li])) / n_hat
    return m + e_h, m.size / n_hat


def _tune(y: np.ndarray, m: np.ndarray, pi: np.ndarray, lab: np.ndarray, clusters: np.ndarray | None,
          strata: np.ndarray | None, target: str) -> tuple[np.ndarray, float, float]:
    """Power tuning: ``m_lam = c + lam (m - c)`` with ``c`` the Hajek mean of the labelled scores and
    ``lam`` in [0, 1] minimising the estimated variance of the (Hajek-normalised) DR estimate for
    ``target``. Returns the prediction to pass to :func:`_core` (shifted, see :func:`_hajek_form`),
    ``lam`` and the residual scale.

    ``lam = 0`` is exactly the human-only (Hajek) estimate with its standard error, so the
    estimated variance at the chosen ``lam`` is never above the human-only one. The estimated
    variance is exactly quadratic in ``lam`` (``phi`` is affine in it), so three evaluations of
    the one variance formula give it.
    """
    li = np.flatnonzero(lab)
    wl = 1.0 / pi[li]
    c = float(_dot(wl, y[li])) / float(wl.sum())

    def form(lam: float) -> tuple[np.ndarray, float]:
        return _hajek_form(y, c + lam * (m - c), pi, li)

    def var(lam: float) -> float:
        m_l, scale = form(lam)
        ce = scale * (y[li] - m_l[li])
        wce = wl * ce
        theta = _theta(m_l, wce)
        v_tot, v_res, _ = _variance(m_l, li, wce, ce, pi[li], theta, clusters, strata)
        return v_tot if target == "superpopulation" else v_res

    v0, vh, v1 = var(0.0), var(0.5), var(1.0)
    cc = 2.0 * (v1 - 2.0 * vh + v0)
    bb = v1 - v0 - cc
    if cc > 0:
        lam = float(np.clip(-bb / (2.0 * cc), 0.0, 1.0))
    else:
        lam = 1.0 if v1 < v0 else 0.0
    if var(lam) > v0:  # rounding at a flat optimum: keep the guarantee exact
        lam = 0.0
    m_l, scale = form(lam)
    return m_l, lam, scale


def _theta(m: np.ndarray, wce: np.ndarray) -> float:
    """The estimate ``(sum_i m_i + sum_labelled c e_i / pi_i) / N`` (``wce`` over the labelled items)."""
    return (float(m.sum()) + float(wce.sum())) / m.size


def _jackknife(thetas: np.ndarray, pi_unit: np.ndarray, strata_unit: np.ndarray | None) -> float:
    """Delete-one-unit jackknife variance of the estimate over the labelled units, with the
    finite-population factor of each deleted unit:
    ``sum_h (n_h - 1)/n_h sum_{k in h} (1 - pi_k) (theta_(k) - mean_h theta_(.))^2``.

    ``theta_(k)`` is the whole estimator (model fit, penalty, power tuning) recomputed without the
    human scores of labelled unit ``k`` (item or cluster; it stays in the population, predicted
    like the other unlabelled items); ``pi_k`` its inclusion probability (a cluster's mean). The
    ``(1 - pi_k)`` factor is the Poisson-sampling finite-population correction (a unit drawn with
    certainty adds no design variance); without it this is the with-replacement jackknife.
    """
    st = np.zeros(thetas.size, dtype=np.int64) if strata_unit is None else strata_unit
    n_h = np.bincount(st).astype(float)
    mean_h = np.bincount(st, weights=thetas) / np.maximum(n_h, 1.0)
    fac = np.divide(n_h - 1.0, n_h, out=np.zeros_like(n_h), where=n_h > 0)
    return float(np.sum(fac[st] * (1.0 - pi_unit) * (thetas - mean_h[st]) ** 2))


def _core(y: np.ndarray, m: np.ndarray, pi: np.ndarray, lab: np.ndarray, *, scale: float,
          clusters: np.ndarray | None, strata: np.ndarray | None, target: str, confidence_level: float,
          model: str, method: str, cross_fit: int, interval: str = "normal", lam: float | None = None,
          r2: float | None = None, n_judges: int = 1, var_jack: float | None = None,
          refitted: bool = False) -> EstimateResult:
    """Everything an estimate needs, from predictions ``m`` and the design (one place, no drift).

    ``var_jack`` (small samples, see :func:`_jackknife`) replaces the linearised design term
    ``var_residual``; the human-variance term stays the linearised one. ``refitted``: ``var_jack``
    is the jackknife of a refitted model, and the design term is the linearised one moved
    :data:`JACKKNIFE_WEIGHT` of the way towards it (the second-order correction of
    :func:`dr_mean`'s Notes).
    """
    n_items = y.size
    li = np.flatnonzero(lab)
    n_lab = li.size
    yl, ml, pi_l = y[li], m[li], pi[li]
    e = yl - ml
    ce = scale * e
    wl = 1.0 / pi_l
    wce = wl * ce
    theta = _theta(m, wce)
    var_tot, var_res, _ = _variance(m, li, wce, ce, pi_l, theta, clusters, strata)
    var_human = var_tot - var_res
    # the skewness correction is a shape (third cumulant over the linearised variance^1.5), in SEs
    se_lin = float(np.sqrt(max(var_tot if target == "superpopulation" else var_res, 0.0)))
    if var_jack is not None:
        var_res = var_res + JACKKNIFE_WEIGHT * (var_jack - var_res) if refitted else var_jack
        var_tot = var_human + var_res
    se = float(np.sqrt(max(var_tot if target == "superpopulation" else var_res, 0.0)))
    # planning quantities on the labelled items (design-weighted)
    sw = float(wl.sum())
    ybar = float(_dot(wl, yl)) / sw
    s2 = float(_dot(wl, (yl - ybar) ** 2)) / sw
    se2 = float(_dot(wl, e * e)) / sw
    if r2 is None:
        r2 = 1.0 - se2 / s2 if s2 > 0 else float("nan")
    n_units_lab = n_lab
    n_units = n_items
    if clusters is not None:
        n_units_lab = int(np.count_nonzero(np.bincount(clusters[li])))
        n_units = int(clusters.max()) + 1
    if n_lab < 10 or n_units_lab < 10:
        import warnings

        warnings.warn(
            f"Only {n_lab} labelled item(s)"
            + (f" in {n_units_lab} cluster(s)" if clusters is not None else "")
            + ": the interval may not reach its nominal coverage.",
            SmallSampleWarning, stacklevel=3)
    use_t = interval == "t" or (interval == "auto" and n_units_lab < SMALL_SAMPLE)
    df = float("inf")
    if use_t:
        df = _effective_df(pi_l, li, ce, clusters, var_human, var_res, target, n_units)
    q = float(stdtrit(df, 0.5 + confidence_level / 2.0)) if np.isfinite(df) else float(ndtri(0.5 + confidence_level / 2.0))
    tail = 0.0
    if interval == "auto" and clusters is None and not np.isfinite(df):
        # heavy tails from 100 labels on (below, the t quantile's Satterthwaite df carries them); the
        # smaller of the residuals' term and the human scores' own (human-only's), so a fitted model
        # never gets a larger quantile than human-only on the same labels
        tail = min(_tail_term(wl, ce, q, n_lab), _tail_term(wl, yl, q, n_lab))
        q += tail
    shift = 0.0
    if interval == "auto" and clusters is None and se_lin > 0:
        shift = _skew_shift(pi_l, ce, n_items, se_lin, q)
    return EstimateResult(
        estimate=theta, se=se,
        ci=ConfidenceInterval(low=theta - (q - shift) * se, high=theta + (q + shift) * se,
                              confidence_level=confidence_level,
                              method="t" if np.isfinite(df) else "normal"),
        confidence_level=confidence_level, n_labeled=n_lab, n_total=n_items, var_human=var_human,
        var_residual=var_res, model=model, method=method, target=target, cross_fit=cross_fit,
        n_clusters=None if clusters is None else int(clusters.max()) + 1,
        n_strata=None if strata is None else int(strata.max()) + 1,
        r2=float(r2), sd_human=float(np.sqrt(s2)), lam=lam, df=df, n_judges=n_judges, skew=shift, tail=tail,
    )


def _prepare(judge: Any, human: Any, pi_in: Any, strata: Any, clusters: Any, confidence_level: Any,
             target: Any, on_undefined: Any, func: str, *, need_judge: bool = True
             ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None,
                        np.ndarray | None, float]:
    confidence_level = check_confidence_level(confidence_level, func)
    check_choice(target, "target", func, TARGETS)
    check_on_undefined(on_undefined, func)
    y = _as_float_array(human, "human_scores", func)
    if np.isinf(y).any():
        raise InvalidParameterError(f"The 'human_scores' parameter of {func} holds infinite values.")
    x = None
    if need_judge:
        x, _, _ = _judge_matrix(judge, y.size, func)
    lab = ~np.isnan(y)
    pi = None if pi_in is None else _check_inclusion(pi_in, y.size, lab, func)
    st = _codes(strata, y.size, "strata", func)
    cl = _codes(clusters, y.size, "clusters", func)
    if st is not None and cl is not None:
        per = np.zeros(int(cl.max()) + 1, dtype=np.int64) - 1
        per[cl] = st
        if np.any(per[cl] != st):
            raise InvalidParameterError(
                f"The 'clusters' of {func} must be nested in the 'strata': a cluster spans two strata.")
    return x, y, lab, pi, st, cl, confidence_level


def dr_mean(judge_scores: Any, human_scores: Any, inclusion_prob: Any, *,
            model: ModelName = "calibrated", power_tuning: bool | None = None, cross_fit: int | str = "auto",
            covariates: Any = None, missing_judge: Literal["error", "impute"] = "error",
            strata: Any = None, clusters: Any = None, confidence_level: float = 0.95,
            target: Target = "superpopulation", interval: Interval = "auto",
            rng: int | np.random.Generator | None = None,
            on_undefined: Literal["warn", "raise", "nan"] = "warn") -> EstimateResult:
    r"""Doubly-robust two-stage estimate of the mean human score, from one or several judges.

    The LLM judges score all ``N`` items (``X_i``: one score, or a row of scores from several
    judges, prompts or samples, plus optional item covariates); humans score a subsample drawn
    with known inclusion probabilities ``pi_i`` (``delta_i = 1`` when item ``i`` was scored). The
    estimate is

    .. math:: \hat\theta_{DR} = \frac1N \sum_i \Big[ m(X_i) + \frac{\delta_i}{\pi_i}\big(Y_i - m(X_i)\big) \Big]

    with ``m`` a cross-fitted prediction of the human score from the judges' scores. Because
    ``pi`` is known by design, the estimate is unbiased whatever ``m``: a good ``m`` only makes it
    more precise.

    **Power tuning** (default with ``model="calibrated"``): the prediction is shrunk towards the
    human-only estimate, ``m_lam = c + lam (m - c)`` with ``c`` the design-weighted (Hajek) mean
    of the human scores and ``lam`` in [0, 1] minimising the estimated variance (exactly quadratic
    in ``lam``). ``lam = 0`` is the human-only estimate, so the estimated variance is never above
    the human-only one whatever the judges: a useless judge costs nothing, a good one saves labels.

    Parameters
    ----------
    judge_scores : array-like of float, shape (N,) or (N, p), or DataFrame
        The judges' scores of every item: one column per judge (or prompt, or sample of one
        judge). Finite everywhere unless ``missing_judge="impute"``. A constant column carries no
        information and is dropped with a :class:`DegenerateDataWarning`; collinear columns are
        fine for ``"calibrated"``/``"ridge"`` (the penalty handles them) and give the minimum-norm
        least-squares fit with ``"linear"``.
    human_scores : array-like of float, shape (N,)
        The human score of the labelled items, ``nan`` where humans did not score the item (with
        several humans per item, pass their mean; see :func:`dr_mean_table`).
    inclusion_prob : float or array-like of float, shape (N,)
        The design probability that each item was sent to humans, in (0, 1]. A single number
        means equal probabilities. ``nan`` is accepted on items without a human score (only the
        scored items' probabilities enter the estimate), but every item must have had a
        positive probability when the sample was drawn.
    model : {"calibrated", "identity", "linear", "ridge", "select", "isotonic", "gbm"}, default "calibrated"
        ``m``, fitted on the labelled items with weights ``1/pi``: ``"calibrated"`` is ridge
        regression on every column (penalty by generalised cross-validation) with power tuning;
        ``"identity"`` the judge score itself (one judge; the paper's estimator); ``"linear"``
        weighted least squares; ``"ridge"`` as calibrated without power tuning (PPI++ with a
        vector ``lambda``, one coefficient per judge, fitted out of sample and shrunk towards 0 by
        the penalty); ``"select"`` per training set the generalised-cross-validation choice among
        ridge on every column, ridge *anchored* on the set's best single judge (that judge
        unpenalised, the others shrunk towards 0: a path from the single-judge regression, i.e.
        PPI++ on one judge, to least squares on all) and the constant; ``"isotonic"``
        one weighted isotonic fit per judge (``scipy.optimize.isotonic_regression``; increasing,
        or decreasing for a judge negatively correlated with the humans when there are several),
        stacked by ridge; ``"gbm"`` scikit-learn's ``HistGradientBoostingRegressor`` (needs
        scikit-learn, the ``[ml]`` extra).
    power_tuning : bool, optional
        Shrink the predictions towards the human-only estimate by the variance-minimising
        ``lam`` (see above). ``None`` (default): on for ``"calibrated"`` only, so the other
        models stay the plain DR estimator; ``True`` adds it to any model.
    cross_fit : "auto", "loo" or int, default "auto"
        Cross-fitting of the model: the prediction for an item comes from a model fitted without
        that item's fold (whole clusters go to one fold). An integer ``K`` is K random folds
        (``1`` fits once on all labels: a small in-sample bias). ``"loo"`` (leave one out; the
        linear models ``"calibrated"``, ``"ridge"``, ``"linear"``, exact and in closed form from
        additive sums, one eigendecomposition per labelled unit) predicts every item from the
        fit on every labelled item but itself (with clusters: but its cluster): each fit uses
        ``n - 1`` labels instead of ``(K - 1) n / K``, which matters at a few dozen labels, and
        the estimator stays exactly unbiased. ``"auto"``: ``"loo"`` for the linear models with at
        most 2000 labelled units, else 5 folds. Ignored for ``"identity"``.
    covariates : array-like or DataFrame, shape (N,) or (N, q), optional
        Item covariates (e.g. length) added to the judges' columns as predictors (not judges:
        ``"identity"`` ignores them).
    missing_judge : {"error", "impute"}, default "error"
        A judge without a score on some items: refuse (default), or impute the column mean and add
        a missingness-indicator column (the estimate stays unbiased: the design, not the model,
        carries validity).
    strata : array-like, shape (N,), optional
        Design strata; the standard error then uses the stratified (within-stratum) form.
    clusters : array-like, shape (N,), optional
        Cluster of each item (e.g. the text several items were written about); the standard error
        is then cluster-robust (clusters are the independent units).
    confidence_level : float, default 0.95
    target : {"superpopulation", "finite"}, default "superpopulation"
        ``"superpopulation"``: the items are a sample from a larger population and the SE is
        ``sqrt(var_human + var_residual)`` (the paper's variance). ``"finite"``: the estimand is
        the mean human score over exactly these ``N`` items; only the second-stage term
        ``var_residual`` is random, and the interval is narrower.
    interval : {"auto", "t", "normal"}, default "auto"
        ``"t"``: ``estimate +- t_{df} se`` with Satterthwaite's effective degrees of freedom (Kish's
        effective number of labelled units under the design weights, minus one; combined with
        ``n_units - 1`` for the human-variance term); ``"normal"``: the z interval; both with the
        linearised variance. ``"auto"``: below 100 labelled units (items, or clusters) the t
        interval with the design term of the variance corrected for the model's own estimation
        noise: the linearised term moved a third of the way to the **jackknife** over the
        labelled units (the
        whole estimator, model fit, penalty and power tuning included, recomputed without each
        unit; finite-population factor ``1 - pi``; models with leave-one-out cross-fitting; the
        human-only fallback takes the jackknife of the Hajek mean), from 100 on the normal
        interval with the linearised variance, its quantile grown by Hall's second-order term for
        heavy tails (the residuals' skewness and kurtosis; the smaller of the model residuals'
        and the human scores' own term, so never above human-only's quantile; unclustered
        designs); both with Hall's skewness correction (see ``skew``).
    rng : int, numpy.random.Generator or None
        Randomness of the fold assignment.
    on_undefined : {"warn", "raise", "nan"}, default "warn"
        What to do when no item has a human score.

    Returns
    -------
    EstimateResult
        ``estimate``, ``se``, ``ci``, ``n_labeled``, ``n_total``, ``var_human`` (``Var(Y)/N``),
        ``var_residual`` (the penalty for scoring only a subsample), ``r2`` (cross-fitted, of the
        model before power tuning), ``sd_human``, ``lam`` (power tuning), ``df`` (of the t
        interval; inf for normal), ``n_judges``.

    Raises
    ------
    InvalidParameterError
        Bad probabilities (outside (0, 1]), lengths that differ, non-finite judge scores.

    Notes
    -----
    Variance (METHODS §4): ``V = Var(Y)/N + E[(1/pi - 1)(Y - m(X))^2]/N``. Its sample analogue
    is ``sum_i (phi_i - theta)^2 / N^2`` with ``phi_i = m_i + delta_i/pi_i (Y_i - m_i)``; it
    splits exactly into the residual term ``sum delta (1-pi)/pi^2 (Y-m)^2 / N^2`` and a
    doubly-robust estimate of ``Var(Y)/N``. With clusters the cluster sums of ``phi - theta``
    are the units (factor ``G/(G-1)``); with strata the deviations are taken from the stratum
    means. A :class:`SmallSampleWarning` is raised with fewer than 10 labelled items (or clusters).

    The linearised variance treats the fitted ``m`` as fixed. With a few dozen labels the model's
    own estimation noise (coefficients, penalty, ``lam``: second order, of relative size about
    the number of parameters over the effective number of labels) is not small: with about 30
    labels under unequal probabilities the linearised variance was 0.78 of the Monte-Carlo
    variance and the t interval covered 0.92-0.93. The delete-one jackknife over the labelled
    units, refitting everything (Quenouille; Tukey; for survey estimators Wolter, *Introduction
    to Variance Estimation*, ch. 4), captures it, at the cost of one refit per labelled unit
    (below 100 units only, so at most 99 refits of a closed-form fit), but over-states it: in
    the ANOVA decomposition of the estimator into a linear part and second-order terms (the
    fitted model's dependence on pairs of labels), the jackknife's expectation counts the
    second-order variance about twice (Efron & Stein 1981: ``(k - 1)`` extra times the order-``k``
    component), the linearised variance (whose leave-one-out residuals already carry part of it)
    too little. The default moves the linearised term a third of the way to the jackknife,
    ``v_lin + (v_J - v_lin)/3`` (:data:`JACKKNIFE_WEIGHT`), chosen where the reported variance
    meets the Monte-Carlo variance on two kinds of data: in the 30-label simulation of
    ``bench/estimation_small_sample.py`` the mean reported variance over the Monte-Carlo variance
    is 0.82 (linearised), 1.32 (jackknife), 1.07 (their mean, the previous default) and 0.99 (a
    third of the way); on the four SummEval dimensions at 5% (60 labels, 9 judge columns, 300
    draws each) 0.91, 1.19, 1.05 and 1.00, with the same coverage as the mean (0.939 against
    0.940: the t quantile and the skewness correction carry the coverage) and a 2.3% narrower
    interval (issue 33). ``interval="t"`` keeps the linearised variance.

    From 100 labelled units on, the normal quantile ``q`` of ``interval="auto"`` becomes
    ``q + tail`` with ``tail`` the shape part of Hall's second-order term of a studentised mean
    (:func:`_tail_term`; ``q (gamma^2 (q^4 + 2 q^2 - 3)/18 - kappa (q^2 - 3)/12) / n``, never
    negative): scores piled at the top of the scale with rare low ones (SummEval consistency and
    fluency: residual skewness about -1.5, kurtosis about 7) left the normal interval at 0.929 and
    0.933 coverage over 2,000 draws of 120 labels, human-only at 0.938 and 0.941; with the term
    0.938 and 0.943 (human-only 0.950 and 0.950), 2.0-2.2% wider there (human-only 4.5-4.9%) and
    0-0.2% on the light-tailed dimensions (issue 33).

    ``r2`` is ``1 - sigma_e^2/sigma^2`` for the model used (out of fold); with
    ``model="identity"`` a judge on another scale (or biased) can give ``r2 < 0``: calibrate then.
    A cross-fitted ``r2 < 0`` for a fitted model means the judges do not help: power tuning then
    sets ``lam`` near 0, i.e. the human-only estimate.

    Power tuning is the PPI++ construction of Angelopoulos, Duchi & Zrnic applied to the
    cross-fitted, recalibrated prediction (as in recalibrated PPI, Ji, Lei & Zrnic, and the
    "AutoEval done right" use of PPI++ by Boyeau et al.); choosing ``lam`` from the data adds one
    parameter and leaves the estimator consistent (the variance at the estimated ``lam`` converges
    to the minimum over ``lam``, which is at most the human-only variance).

    Validated by simulation (unbiased with a correct and with a wrong model, 95% coverage) and on
    SummEval and HANNA subsamples; see ``docs/estimation.md``.

    References
    ----------
    Kim et al., *Augmenting human evaluation with LLM raters: how much human review do you
    need?* (arXiv 2605.16354). Robins & Rotnitzky (1994); Kim & Shao (2021).
    Angelopoulos, Duchi & Zrnic, *PPI++: Efficient prediction-powered inference* (arXiv 2311.01453).
    Boyeau, Angelopoulos, Yosef, Malik & Jordan, *AutoEval done right: using synthetic data for
    model evaluation* (arXiv 2403.07008).
    Ji, Lei & Zrnic, *Predictions as surrogates: revisiting surrogate outcomes in the age of AI*
    (recalibrated PPI; arXiv 2501.09731).
    Satterthwaite, *An approximate distribution of estimates of variance components* (1946);
    Kish, *Survey sampling* (1965), effective sample size.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(3, 1, 2000)                        # judge scores, all items
    >>> y = 0.5 + 0.9 * x + rng.normal(0, 0.5, 2000)      # human scores (hidden)
    >>> y[rng.random(2000) >= 0.2] = np.nan               # humans score 20%
    >>> res = dr_mean(x, y, 0.2, model="linear", rng=1)
    >>> round(res.estimate, 2), res.n_labeled, res.n_total
    (3.16, 424, 2000)
    >>> res.ci.low < 0.5 + 0.9 * 3 < res.ci.high
    True
    """
    func = "dr_mean"
    check_choice(model, "model", func, MODELS)
    check_choice(missing_judge, "missing_judge", func, MISSING_JUDGE)
    check_choice(interval, "interval", func, INTERVALS)
    if power_tuning is not None and not isinstance(power_tuning, (bool, np.bool_)):
        raise InvalidParameterError(
            f"The 'power_tuning' parameter of {func} must be True, False or None. Got {power_tuning!r}.")
    tune = model == "calibrated" if power_tuning is None else bool(power_tuning)
    cross_fit = _check_cross_fit(cross_fit, func)
    if model == "identity":  # needs no randomness: only check the argument
        gen = None
        if not (rng is None or isinstance(rng, (int, np.integer, np.random.Generator))):
            as_generator(rng)
    else:
        gen = as_generator(rng)
    _, y, lab, pi, st, cl, confidence_level = _prepare(
        None, human_scores, inclusion_prob, strata, clusters, confidence_level, target,
        on_undefined, func, need_judge=False)
    X, names, n_judges = _judge_matrix(judge_scores, y.size, func, covariates=covariates,
                                       missing_judge=missing_judge)
    if pi is None:
        raise InvalidParameterError(f"The 'inclusion_prob' parameter of {func} is required (the design).")
    if model == "identity" and n_judges != 1:
        raise InvalidParameterError(
            f"model='identity' of {func} uses one judge's score as the prediction; got {n_judges} judge columns. "
            "Use model='calibrated' (or 'linear', 'ridge', 'isotonic', 'gbm') to combine several judges.")
    n_lab = int(lab.sum())
    n_units_lab = n_lab if cl is None else int(np.unique(cl[lab]).size)
    folds = resolve_folds(cross_fit, model, n_units_lab, X.shape[1])
    folds_used = 0 if model == "identity" else (n_units_lab if folds == "loo" else int(folds))
    if n_lab == 0:
        undefined("dr_mean: no item has a human score (human_scores is all nan); the estimate is undefined.",
                  on_undefined)
        return _nan_result(0, y.size, confidence_level, model, "dr", target, folds_used)
    lam: float | None = None
    scale = 1.0
    constant = False
    if gen is None:
        m = X[:, 0].astype(float, copy=True)
    else:
        const = np.ptp(X, axis=0) == 0
        if const.any():
            import warnings

            warnings.warn(
                f"{func}: column(s) {[names[k] for k in np.flatnonzero(const)]} are constant over the items: "
                "they carry no information and are dropped" + (" (no column is left: the model predicts a "
                                                                "constant, i.e. the human-only estimate)."
                                                                if const.all() else "."),
                DegenerateDataWarning, stacklevel=2)
        too_few = model == "calibrated" and n_lab < MIN_CALIBRATED
        if too_few:
            import warnings

            warnings.warn(
                f"{func}: only {n_lab} labelled item(s), too few to fit the calibrated model "
                f"(it needs {MIN_CALIBRATED}): the estimate is the human-only one (lam = 0).",
                SmallSampleWarning, stacklevel=2)
        if const.all() or too_few:
            # nothing to fit: the constant (Hajek) prediction, i.e. the human-only estimate
            li = np.flatnonzero(lab)
            m, scale = _hajek_form(y, np.zeros(y.size), pi, li)
            tune = False
            lam = 0.0 if model == "calibrated" or power_tuning else None
            constant = True
    r2 = None
    if gen is not None and not constant:
        def fit(lab_k: np.ndarray) -> tuple[np.ndarray, np.ndarray, float | None, float]:
            return _fit(X[:, ~const], y, pi, lab_k, model=model, folds=folds, gen=gen, clusters=cl, strata=st,
                        target=target, tune=tune, func=func)

        m_raw, m, lam_fit, scale = fit(lab)
        if tune:
            lam = lam_fit
            li = np.flatnonzero(lab)
            wl = 1.0 / pi[li]
            ybar = float(_dot(wl, y[li])) / float(wl.sum())
            s2 = float(_dot(wl, (y[li] - ybar) ** 2))
            r2 = 1.0 - float(_dot(wl, (y[li] - m_raw[li]) ** 2)) / s2 if s2 > 0 else float("nan")
    var_jack = None
    if interval == "auto" and n_units_lab < SMALL_SAMPLE and gen is not None:
        if constant:
            var_jack = _hajek_jackknife(y, pi, lab, cl, st)
        elif folds == "loo":
            def refit(lab_k: np.ndarray) -> float:
                _, m_k, _, scale_k = fit(lab_k)
                li_k = np.flatnonzero(lab_k)
                return _theta(m_k, scale_k * (y[li_k] - m_k[li_k]) / pi[li_k])

            var_jack = _refit_jackknife(refit, pi, lab, cl, st)
    return _core(y, m, pi, lab, scale=scale, clusters=cl, strata=st, target=target,
                 confidence_level=confidence_level, model=model, method="dr", cross_fit=folds_used,
                 interval=interval, lam=lam, r2=r2, n_judges=n_judges, var_jack=var_jack,
                 refitted=not constant)


def _fit(X: np.ndarray, y: np.ndarray, pi: np.ndarray, lab: np.ndarray, *, model: str, folds: int | str,
         gen: np.random.Generator, clusters: np.ndarray | None, strata: np.ndarray | None, target: str,
         tune: bool, func: str) -> tuple[np.ndarray, np.ndarray, float | None, float]:
    """``(m_raw, m, lam, scale)``: the cross-fitted prediction from the labels ``lab``, and the one
    :func:`_core` takes (power-tuned when ``tune``, see :func:`_tune`; else ``m_raw`` itself, ``lam``
    ``None`` and scale 1). The one fit of :func:`dr_mean`, also refitted by its small-sample
    jackknife without each labelled unit."""
    m_raw = cross_fit_predict(X, y, pi, lab, model=model, n_folds=folds, rng=gen, clusters=clusters, func=func)
    if not tune:
        return m_raw, m_raw, None, 1.0
    m, lam, scale = _tune(y, m_raw, pi, lab, clusters, strata, target)
    return m_raw, m, lam, scale


def _labelled_units(pi: np.ndarray, lab: np.ndarray, clusters: np.ndarray | None, strata: np.ndarray | None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(unit of every labelled item (0..n_units-1), each unit's mean pi, each unit's stratum)``:
    the labelled items, or the labelled clusters."""
    li = np.flatnonzero(lab)
    if clusters is None:
        unit = np.arange(li.size)
    else:
        unit = np.unique(clusters[li], return_inverse=True)[1].astype(np.int64)
    cnt = np.bincount(unit).astype(float)
    pi_unit = np.bincount(unit, weights=pi[li]) / cnt
    st_unit = None
    if strata is not None:
        st_unit = np.zeros(cnt.size, dtype=np.int64)
        st_unit[unit] = strata[li]
    return unit, pi_unit, st_unit


def _refit_jackknife(refit: Any, pi: np.ndarray, lab: np.ndarray, clusters: np.ndarray | None,
                     strata: np.ndarray | None) -> float | None:
    """:func:`_jackknife` of the estimate ``refit(labelled mask)`` over the labelled units (the
    model refitted without each unit). ``None`` when a refit is impossible (too few labels left)."""
    li = np.flatnonzero(lab)
    unit, pi_unit, st_unit = _labelled_units(pi, lab, clusters, strata)
    thetas = np.empty(pi_unit.size)
    for k in range(pi_unit.size):
        lab_k = lab.copy()
        lab_k[li[unit == k]] = False
        try:
            thetas[k] = refit(lab_k)
        except InvalidParameterError:
            return None
    return _jackknife(thetas, pi_unit, st_unit)


def _hajek_jackknife(y: np.ndarray, pi: np.ndarray, lab: np.ndarray, clusters: np.ndarray | None,
                     strata: np.ndarray | None) -> float | None:
    """:func:`_jackknife` of the Hajek mean, in closed form (deleting unit ``k`` removes its
    weighted sums)."""
    li = np.flatnonzero(lab)
    unit, pi_unit, st_unit = _labelled_units(pi, lab, clusters, strata)
    if pi_unit.size < 2:
        return None
    w = 1.0 / pi[li]
    sw_k = np.bincount(unit, weights=w)
    swy_k = np.bincount(unit, weights=w * y[li])
    sw, swy = float(w.sum()), float(swy_k.sum())
    return _jackknife((swy - swy_k) / (sw - sw_k), pi_unit, st_unit)


def _check_cross_fit(value: Any, func: str) -> int | str:
    if isinstance(value, str) and value in ("auto", "loo"):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidParameterError(
            f"The 'cross_fit' parameter of {func} must be 'auto', 'loo' or an integer >= 1 (number of folds; "
            f"1 = no cross-fitting). Got {value!r} instead.")
    return int(value)


def classical_mean(human_scores: Any, inclusion_prob: Any = None, *, strata: Any = None, clusters: Any = None,
                   confidence_level: float = 0.95, target: Target = "superpopulation", interval: Interval = "auto",
                   on_undefined: Literal["warn", "raise", "nan"] = "warn") -> EstimateResult:
    r"""Human-only, design-weighted (Hajek) estimate of the mean human score.

    .. math:: \hat\theta_H = \frac{\sum_i \delta_i Y_i/\pi_i}{\sum_i \delta_i/\pi_i}

    The Hajek (ratio) form is used rather than Horvitz-Thompson ``(1/N) sum delta Y/pi``: it
    does not move when the realised number of labels differs from its expectation (Poisson
    sampling), and with equal probabilities it is the plain mean of the labelled items.

    Parameters
    ----------
    human_scores : array-like of float, shape (N,)
        Human score of each item, ``nan`` where not scored. ``N`` is the number of items in the
        population the labelled ones were drawn from.
    inclusion_prob : float or array-like, optional
        Design probabilities in (0, 1]. ``None``: a simple random sample, ``pi = n/N``.
    strata, clusters, confidence_level, target, interval, on_undefined
        As in :func:`dr_mean`.

    Returns
    -------
    EstimateResult
        ``model="constant"``, ``method="classical (hajek)"``.

    Notes
    -----
    The standard error is that of :func:`dr_mean` with the constant prediction ``m = theta_H``
    and the Hajek linearisation ``phi_i = theta + (N/N_hat) delta_i/pi_i (Y_i - theta)``,
    ``N_hat = sum delta/pi``. With equal probabilities and ``target="superpopulation"`` it is
    ``std(Y)/sqrt(n)`` (ddof 0): exactly ``ppi_py.classical_mean_ci`` (validated in the tests).
    With ``interval="auto"`` below 100 labelled units the design term is the jackknife of the
    Hajek mean instead (closed form; with equal probabilities ``pi = f`` it is the textbook
    ``(1 - f) s^2 / n``, ``s^2`` with ddof 1). With a single labelled item (or cluster) the standard error is undefined: the estimate is that
    value, ``se`` and the interval are ``nan`` (``on_undefined`` decides warn/raise/nan).

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([4.0, np.nan, 3.0, 5.0, np.nan, 4.0, np.nan, np.nan, 2.0, 4.0, 3.0, 5.0, 4.0, 3.0])
    >>> res = classical_mean(y)
    >>> round(res.estimate, 6), res.n_labeled, res.n_total
    (3.7, 10, 14)
    """
    func = "classical_mean"
    check_choice(interval, "interval", func, INTERVALS)
    _, y, lab, pi, st, cl, confidence_level = _prepare(
        None, human_scores, inclusion_prob, strata, clusters, confidence_level, target, on_undefined, func,
        need_judge=False)
    n_lab = int(lab.sum())
    if n_lab == 0:
        undefined("classical_mean: no item has a human score; the estimate is undefined.", on_undefined)
        return _nan_result(0, y.size, confidence_level, "constant", "classical (hajek)", target, 0)
    if pi is None:
        pi = np.full(y.size, n_lab / y.size)
    w = np.zeros(y.size)
    w[lab] = 1.0 / pi[lab]
    yz = np.where(lab, y, 0.0)
    n_hat = float(w.sum())
    theta = float(_dot(w, yz)) / n_hat
    n_units = n_lab if cl is None else int(np.unique(cl[lab]).size)
    if n_units == 1:
        # the Hajek residuals of a single unit are 0 by construction: its SE would read 0, not unknown
        unit = "item" if cl is None else "cluster"
        undefined(f"classical_mean: only one {unit} has a human score; the standard error is undefined "
                  "(no spread to estimate it from).", on_undefined)
        res = _nan_result(n_lab, y.size, confidence_level, "constant", "classical (hajek)", target, 0)
        return dataclasses.replace(res, estimate=theta, n_clusters=None if cl is None else int(cl.max()) + 1,
                                   n_strata=None if st is None else int(st.max()) + 1)
    m = np.full(y.size, theta)
    var_jack = None
    if interval == "auto" and n_units < SMALL_SAMPLE:
        var_jack = _hajek_jackknife(y, pi, lab, cl, st)
    return _core(yz, m, pi, lab, scale=y.size / n_hat, clusters=cl, strata=st, target=target,
                 confidence_level=confidence_level, model="constant", method="classical (hajek)", cross_fit=0,
                 interval=interval, n_judges=0, var_jack=var_jack)


def ppi_mean(judge_scores: Any, human_scores: Any, *, lam: float | None = None, confidence_level: float = 0.95,
             on_undefined: Literal["warn", "raise", "nan"] = "warn") -> EstimateResult:
    r"""Prediction-powered (PPI++) estimate of the mean human score, for comparison.

    The labelled items (human score present) and the other items (judge score only) are the two
    samples of Angelopoulos et al.:

    .. math:: \hat\theta_\lambda = \lambda\,\overline{\hat Y}_{unl} + \overline{(Y - \lambda \hat Y)}_{lab}

    with the power-tuning ``lambda = Cov(Y, Yhat) / ((1 + n/N_unl) Var(Yhat))`` (the covariance
    over the labelled pairs, the variance over all judge scores, clipped to [0, 1]).

    Parameters
    ----------
    judge_scores : array-like of float, shape (N,)
    human_scores : array-like of float, shape (N,)
        ``nan`` where not scored. PPI assumes the labelled items are a uniform random subset.
    lam : float, optional
        Fixed ``lambda`` (``1``: plain PPI, ``0``: classical); ``None`` tunes it (PPI++).
    confidence_level : float, default 0.95
        Note that ``ppi_py`` defaults to 90% (``alpha=0.1``).
    on_undefined : {"warn", "raise", "nan"}
        Policy when no item (or every item) is labelled.

    Returns
    -------
    EstimateResult
        ``method="ppi++"`` and ``lam``; ``var_human`` holds PPI's imputed term
        ``lam^2 Var(Yhat_unl)/N_unl`` and ``var_residual`` its rectifier ``Var(Y - lam Yhat)/n``
        (both ddof 0, as in ``ppi_py``).

    Notes
    -----
    Matches ``ppi_py.ppi_mean_ci`` and ``ppi_py.ppi_mean_pointestimate`` (``ppi-python`` 0.2.3) on
    the same arrays to 1e-10 (tests). Unlike :func:`dr_mean` it has no design weights, strata or
    clusters: it is valid for a uniform i.i.d. labelled subsample only.

    References
    ----------
    Angelopoulos, Duchi & Zrnic, *PPI++: Efficient Prediction-Powered Inference* (arXiv 2311.01453).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(3, 1, 1000)
    >>> y = x + rng.normal(0, 0.5, 1000)
    >>> y[200:] = np.nan
    >>> res = ppi_mean(x, y)
    >>> res.method, res.n_labeled, 0 <= res.lam <= 1
    ('ppi++', 200, True)
    """
    func = "ppi_mean"
    confidence_level = check_confidence_level(confidence_level, func)
    check_on_undefined(on_undefined, func)
    if lam is not None:
        if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating, np.integer)) or not np.isfinite(lam):
            raise InvalidParameterError(f"The 'lam' parameter of {func} must be a finite float or None. Got {lam!r}.")
        lam = float(lam)
    X, y, lab, _, _, _, _ = _prepare(judge_scores, human_scores, None, None, None, confidence_level,
                                     "superpopulation", on_undefined, func)
    assert X is not None
    if X.shape[1] != 1:
        raise InvalidParameterError(
            f"{func} takes one judge's scores (PPI++ with one predictor); got {X.shape[1]} columns. "
            "Use dr_mean(..., model='calibrated') to combine several judges.")
    x = X[:, 0]
    n, n_unl = int(lab.sum()), int((~lab).sum())
    if n < 2 or n_unl == 0:
        undefined(f"ppi_mean: needs at least 2 labelled and 1 unlabelled item (got {n} and {n_unl}).",
                  on_undefined)
        res = _nan_result(n, y.size, confidence_level, "ppi++", "ppi++", "superpopulation", 0)
        return res
    yl, xl, xu = y[lab], x[lab], x[~lab]
    if lam is None:
        cov = float(np.mean((yl - yl.mean()) * (xl - xl.mean())))
        var_all = float(np.var(x, ddof=1))
        lam = 0.0 if var_all == 0 else float(np.clip(cov / ((1.0 + n / n_unl) * var_all), 0.0, 1.0))
    est = float(lam * xu.mean() + np.mean(yl - lam * xl))
    v_imp = float(np.var(lam * xu)) / n_unl
    v_rect = float(np.var(yl - lam * xl)) / n
    se = float(np.sqrt(v_imp + v_rect))
    z = float(ndtri(0.5 + confidence_level / 2.0))
    s2 = float(np.var(yl))
    return EstimateResult(
        estimate=est, se=se,
        ci=ConfidenceInterval(low=est - z * se, high=est + z * se, confidence_level=confidence_level,
                              method="normal"),
        confidence_level=confidence_level, n_labeled=n, n_total=y.size, var_human=v_imp, var_residual=v_rect,
        model="ppi++", method="ppi++", target="superpopulation", cross_fit=0,
        r2=float(1.0 - np.var(yl - lam * xl - np.mean(yl - lam * xl)) / s2) if s2 > 0 else float("nan"),
        sd_human=float(np.sqrt(s2)), lam=lam,
    )


# ---------------------------------------------------------------------------------- tables
def item_scores(table: Any, judge: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-item judge score, mean human score (``nan`` when no human scored it) and human count.

    Abstentions are ignored (an item whose humans all abstained counts as not human-scored).
    """
    from ..data import AnnotationTable

    if not isinstance(table, AnnotationTable):
        raise InvalidParameterError(
            f"The 'table' parameter must be an AnnotationTable. Got {type(table).__name__}.")
    if table.scale.categories is not None and not table.scale.is_numeric:
        raise InvalidParameterError(
            f"The scores in {table.source} are not numbers (categories {list(table.scale.categories)[:5]}): "
            "the mean human score needs a numeric scale. Read the file with scale='interval' "
            "(or 'ordinal' with numeric categories).")
    j = table.rater_index(judge)
    n_items = table.n_items
    li = table.label_item
    ok = ~table.is_abstention & np.isfinite(table.values)
    is_h = (table.roles[table.rater_idx] == "human") & ok
    is_j = (table.rater_idx == j) & ok
    cnt = np.bincount(li[is_h], minlength=n_items).astype(float)
    tot = np.bincount(li[is_h], weights=table.values[is_h], minlength=n_items)
    human = np.divide(tot, cnt, out=np.full(n_items, np.nan), where=cnt > 0)
    judge_scores = np.full(n_items, np.nan)
    judge_scores[li[is_j]] = table.values[is_j]
    return judge_scores, human, cnt.astype(np.int64)


def _per_item(value: Any, items: np.ndarray, name: str, func: str, *, missing_ok: bool = False) -> Any:
    """A scalar, an array aligned with the items, or a mapping / Series keyed by item id.

    With ``missing_ok`` items absent from a mapping get ``nan``.
    """
    if value is None or np.isscalar(value):
        return value
    if isinstance(value, (Mapping, pd.Series)):
        lookup = {str(k): v for k, v in (value.items())}
        if missing_ok:
            return np.asarray([lookup.get(str(i), np.nan) for i in items], dtype=float)
        missing = [str(i) for i in items if str(i) not in lookup]
        if missing:
            raise InvalidParameterError(
                f"The '{name}' parameter of {func} has no value for {len(missing)} item(s), e.g. {missing[:3]}.")
        return np.asarray([lookup[str(i)] for i in items])
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.size != items.size:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be a number, a mapping from item id, or an array with "
            f"one value per item ({items.size}). Got shape {arr.shape}.")
    return arr


def judge_matrix(table: Any, judges: str | Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-item judge scores as an ``(N, p)`` matrix (``nan`` where a judge did not score an item),
    the mean human score (``nan`` when no human scored it) and the human count.

    The multi-judge form of :func:`item_scores` (same item order, abstentions ignored).
    """
    names = [judges] if isinstance(judges, str) else list(judges)
    if not names:
        raise InvalidParameterError("judge_matrix needs at least one judge.")
    cols = []
    human = cnt = None
    for j in names:
        x, human, cnt = item_scores(table, j)
        cols.append(x)
    assert human is not None and cnt is not None
    return np.column_stack(cols), human, cnt


def _check_design_count(table: Any, judges: list[str], labelled: np.ndarray, pi: Any, clusters: Any,
                        func: str) -> None:
    """Raise when the table's human-scored count is one the inclusion probabilities make impossible
    (:func:`~voirdire.estimation.labelled_count`), naming the table and its humans."""
    try:
        p = np.broadcast_to(np.asarray(pi, dtype=float), labelled.shape)
    except (TypeError, ValueError):
        return  # a malformed inclusion_prob: dr_mean's own check names it
    count = labelled_count(labelled, p, clusters)
    if count is None or not count.impossible:
        return
    humans = [str(h) for h in table.humans]
    shown = ", ".join(repr(h) for h in humans[:8]) + (" ..." if len(humans) > 8 else "")
    from ..exceptions import SchemaError

    raise SchemaError(
        f"{func}: {count.sentence()}, so these are not the designed human sample. The table counts as humans: "
        f"{shown} (judges: {', '.join(repr(j) for j in judges)}); if some are LLM judges, give them the judge role "
        "(read_annotations(..., judges=[...]) or table.with_roles(judges=[...])). Otherwise 'inclusion_prob' is "
        "not the design the sample was drawn with, or whole groups of items were sent to humans together "
        "(declare them as the table's clusters).", source=str(table.source))


def dr_mean_table(table: Any, judge: str | Sequence[str], *, inclusion_prob: Any,
                  model: ModelName = "calibrated", power_tuning: bool | None = None,
                  cross_fit: int | str = "auto", covariates: Any = None, strata: Any = None, use_clusters: bool = True,
                  drop_unscored: bool = False, missing_judge: Literal["error", "impute"] = "error",
                  confidence_level: float = 0.95, target: Target = "superpopulation", interval: Interval = "auto",
                  rng: int | np.random.Generator | None = None,
                  on_undefined: Literal["warn", "raise", "nan"] = "warn") -> EstimateResult:
    """:func:`dr_mean` on an :class:`~voirdire.data.AnnotationTable`: one or several judges, the humans' mean.

    Each item's human score ``Y_i`` is the **mean of the humans who scored it** (abstentions
    ignored), so the estimand is the mean over items of the per-item human mean: the quantity a
    report of "mean human score" means when several humans rate an item. The item (not the label)
    is the sampling unit: the inclusion probability is the probability that the item was sent to
    humans, whatever number of humans then scored it.

    Parameters
    ----------
    table : AnnotationTable
        Numeric scale; humans and the judges.
    judge : str or sequence of str
        The judge(s) whose scores predict the humans (each must score every item unless
        ``drop_unscored`` or ``missing_judge="impute"``).
    inclusion_prob : float, array (one per item, in ``table.items`` order) or mapping item -> prob
        A column of the long file becomes a mapping with
        ``df.groupby("item")["pi"].first()`` (a pandas Series indexed by item id); the table
        itself keeps only item, rater and label. A mapping may leave out items nobody scored
        (only the scored items' probabilities enter the estimate), not a human-scored item.
    model, power_tuning, cross_fit, covariates, missing_judge, confidence_level, target, interval, rng, on_undefined
        As in :func:`dr_mean` (``covariates`` in ``table.items`` order).
    strata : array or mapping item -> stratum, optional
    use_clusters : bool, default True
        Use ``table.clusters`` (when set) for the cluster-robust standard error and the folds.
    drop_unscored : bool, default False
        Drop items some judge did not score (or abstained on) instead of raising. This changes the
        estimand to the items every judge scored.

    Returns
    -------
    EstimateResult

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> res = dr_mean_table(t, ["ChatGPT", "Beluga-13B"], inclusion_prob=1.0, drop_unscored=True, rng=0)
    >>> res.n_labeled == res.n_total, res.n_clusters, res.n_judges
    (True, 1056, 2)
    """
    func = "dr_mean_table"
    names = [judge] if isinstance(judge, str) else list(judge)
    X, y, _ = judge_matrix(table, names)
    items = np.asarray(table.items)
    pi = _per_item(inclusion_prob, items, "inclusion_prob", func, missing_ok=True)
    if isinstance(pi, np.ndarray) and pi.dtype.kind == "f":
        gap = np.flatnonzero(np.isnan(pi) & np.isfinite(y))
        if gap.size:
            raise InvalidParameterError(
                f"The 'inclusion_prob' parameter of {func} has no probability for {gap.size} human-scored "
                f"item(s), e.g. {[str(items[g]) for g in gap[:3]]}.")
    st = _per_item(strata, items, "strata", func)
    cov = None if covariates is None else np.asarray(covariates, dtype=float)
    cl = table.clusters if use_clusters else None
    _check_design_count(table, names, np.isfinite(y), pi, cl, func)
    keep = np.isfinite(X).all(axis=1)
    if not keep.all() and missing_judge != "impute":
        if not drop_unscored:
            k = int(np.flatnonzero(~np.isfinite(X).all(axis=0))[0])
            bad = items[~np.isfinite(X[:, k])]
            raise InvalidParameterError(
                f"Judge {names[k]!r} has no score for {bad.size} of {items.size} item(s) in {table.source} "
                f"(e.g. {[str(b) for b in bad[:3]]}). The estimator needs every judge's score on every item; "
                "pass drop_unscored=True to estimate over the items every judge scored, or "
                "missing_judge='impute'.")
        X, y = X[keep], y[keep]
        if pi is not None and not np.isscalar(pi):
            pi = np.asarray(pi)[keep]
        if st is not None and not np.isscalar(st):
            st = np.asarray(st)[keep]
        if cov is not None:
            cov = cov[keep]
        if cl is not None:
            cl = np.unique(np.asarray(cl)[keep], return_inverse=True)[1]
        log.info("dr_mean_table: dropped %d item(s) without a score from every judge", int((~keep).sum()))
    frame = pd.DataFrame(X, columns=names)
    return dr_mean(frame if frame.shape[1] > 1 else frame.iloc[:, 0].to_numpy(), y, pi, model=model,
                   power_tuning=power_tuning, cross_fit=cross_fit, covariates=cov, missing_judge=missing_judge,
                   strata=st, clusters=cl, confidence_level=confidence_level, target=target, interval=interval,
                   rng=rng, on_undefined=on_undefined)
