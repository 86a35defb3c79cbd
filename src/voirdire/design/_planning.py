"""Planning formulas: overlap needed to certify one judge (m*_cert) or to rank several (m*_rank)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri  # the normal cdf / quantile scipy.stats.norm calls (no scipy.stats import: ~1 s)

from .._checks import as_generator, check_choice, check_positive_int, check_probability
from .._results import Result
from ..data import AnnotationTable
from ..exceptions import InfeasiblePlanError, InvalidParameterError
from .._checks import check_epsilon
from .._scores import SCORES
from .._stats.resampling import cluster_index, draw_indices

__all__ = ["CertificationPlanResult", "RankingPlanResult", "plan_certification", "plan_ranking",
           "false_reject_probability"]

_CERT_ASSUMPTIONS = (
    "asymptotic normal approximation of the leave-one-out difference d_k (CLT over items)",
    "independent items (with clusters in the pilot, sigma0 is inflated by the estimated design effect)",
    "observed agreement as the score; the per-item difference D_i has mean mu_d and variance sigma0^2",
    "targets one leave-one-out comparison's false-reject probability (<= significance_level / 2), "
    "not the whole vote over humans and not false accepts of weak judges",
    "a planning aid, not an error certificate: the pilot's mu_d and sigma0 are themselves estimates",
)
_CERT_ASSUMPTIONS_RATIO = (
    "asymptotic normal approximation of the leave-one-out difference d_k (delta method for a ratio score)",
    "independent items, or independent clusters when the pilot has them (the bootstrap resamples clusters)",
    "sigma0_k^2 = eligible items x bootstrap variance of d_k: the O(1/m) variance of a ratio with a fixed, "
    "non-degenerate denominator (unstable under strong label skew)",
    "targets one leave-one-out comparison's false-reject probability (<= significance_level / 2), "
    "not the whole vote over humans and not false accepts of weak judges",
    "a planning aid, not an error certificate: the pilot's mu_d and sigma0 are themselves estimates",
)
_RANK_ASSUMPTIONS = (
    "asymptotic normal approximation of each judge's score against the human pool",
    "independent items",
    "roughly equal per-item variance sigma0^2 for every judge",
    "negligible covariance between judges' scores (the factor 2); judges scored on the same items are "
    "usually positively correlated, which m_star_paired accounts for",
    "Bonferroni over the J-1 rivals of the best judge",
)


def false_reject_probability(m: Any, *, mu_d: float, sigma0: float, epsilon: float = 0.05) -> Any:
    """One comparison's false-reject probability ``Phi(-(mu_d + epsilon) sqrt(m) / sigma0)``.

    Examples
    --------
    >>> round(false_reject_probability(100, mu_d=0.0, sigma0=0.5, epsilon=0.05), 4)
    0.1587
    """
    func = "false_reject_probability"
    epsilon = check_epsilon(epsilon, func)
    for name, v in (("mu_d", mu_d), ("sigma0", sigma0)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v):
            raise InvalidParameterError(f"The '{name}' parameter of {func} must be a finite float. Got {v!r} instead.")
    if sigma0 <= 0:
        raise InvalidParameterError(f"The 'sigma0' parameter of {func} must be a float > 0. Got {sigma0!r} instead.")
    try:
        mm = np.asarray(m, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"The 'm' parameter of {func} must be a number of items or an array of them. "
                                    f"Got {m!r} instead.") from None
    if np.any(mm < 0):
        raise InvalidParameterError(f"The 'm' parameter of {func} must hold numbers >= 0. Got {m!r} instead.")
    z = (mu_d + epsilon) * np.sqrt(mm) / sigma0
    out = ndtr(-z)
    return float(out) if np.ndim(out) == 0 else out


#: the largest number of items a plan may ask for; beyond it the figure is an overflow, not a plan
_MAX_ITEMS = 1e12


def _items(x: float) -> int:
    """``ceil(x)`` as a number of items, or an :class:`InfeasiblePlanError` when no design can hold it."""
    if not (math.isfinite(x) and x <= _MAX_ITEMS):
        raise InfeasiblePlanError(
            f"Infeasible: the plan needs {x:.3g} items per comparison, more than {_MAX_ITEMS:g} (a standard "
            "deviation this large, or a margin or gap this small, has no practical design). Check the inputs.")
    return int(math.ceil(x - 1e-9))


def _m_cert(margin: float, sigma0: float, z: float) -> int:
    with np.errstate(over="ignore"):
        return _items(z * z * (sigma0 / margin) * (sigma0 / margin))  # no underflow of margin^2 to 0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CertificationPlanResult(Result):
    """Overlap needed per leave-one-out comparison to certify a judge (see :func:`plan_certification`).

    Attributes
    ----------
    m_star : int
        ``ceil(z^2_{1-a/2} sigma0^2 / (mu_d + epsilon)^2)``: eligible items each held-out human
        needs (for a secondary human, roughly its number of re-annotated items).
    mu_d, sigma0 : float
        Mean and standard deviation of the per-item difference used (pooled over humans for a pilot).
    epsilon, significance_level, z : float
        Tolerance, significance level and the normal quantile ``z_{1-a/2}``.
    margin : float
        ``mu_d + epsilon``.
    source : {"pilot", "moments"}
        Where mu_d and sigma0 came from.
    judge : str or None
        The judge planned for (pilot only).
    design_effect : float
        Variance inflation from item clusters in the pilot (1 without clusters).
    humans : tuple of str
        Held-out humans of the pilot (empty for given moments).
    mu_d_by_human, sigma0_by_human, eligible_by_human : numpy.ndarray
        Per held-out human: mean difference ``d_k``, its per-item standard deviation, and the
        eligible items the pilot has now.
    m_star_by_human : numpy.ndarray
        Per-human ``m*`` (nan where that comparison's margin is not positive).
    false_reject_now : numpy.ndarray
        Per-human approximate false-reject probability at the pilot's current eligible items.
    assumptions : tuple of str
        What the formula assumes.
    """

    m_star: int
    mu_d: float
    sigma0: float
    epsilon: float
    significance_level: float
    z: float
    margin: float
    source: str
    judge: str | None
    design_effect: float
    humans: tuple[str, ...]
    mu_d_by_human: np.ndarray
    sigma0_by_human: np.ndarray
    eligible_by_human: np.ndarray
    m_star_by_human: np.ndarray
    false_reject_now: np.ndarray
    assumptions: tuple[str, ...]
    score: str = "agreement"

    def false_reject_at(self, m: Any) -> Any:
        """Approximate false-reject probability of one comparison with ``m`` eligible items."""
        return false_reject_probability(m, mu_d=self.mu_d, sigma0=self.sigma0, epsilon=self.epsilon)

    def to_frame(self) -> pd.DataFrame:
        """Per held-out human (pilot) or one row (moments): mu_d, sigma0, eligible, m*."""
        if not self.humans:
            return pd.DataFrame([{"human": None, "mu_d": self.mu_d, "sigma0": self.sigma0,
                                  "eligible_items": None, "m_star": self.m_star,
                                  "false_reject_now": None}])
        return pd.DataFrame({"human": list(self.humans), "mu_d": self.mu_d_by_human,
                             "sigma0": self.sigma0_by_human, "eligible_items": self.eligible_by_human,
                             "m_star": self.m_star_by_human, "false_reject_now": self.false_reject_now})


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RankingPlanResult(Result):
    """Overlap needed to rank several judges (see :func:`plan_ranking`).

    Attributes
    ----------
    m_star : int
        ``ceil(2 z^2_{1-a/(J-1)} sigma0^2 / Delta_min^2)`` items labelled by the humans.
    m_star_paired : int or None
        The same target from the variance of the observed per-item differences between the
        best judge and each rival (covariance included), the maximum over rivals. None for
        given moments.
    sigma0, delta_min, significance_level, z : float
        Per-item standard deviation of one judge's score, the smallest gap between the best
        judge and a rival, the significance level and ``z_{1-a/(J-1)}``.
    n_judges : int
        J.
    source : {"pilot", "moments"}
    judges : tuple of str
        Judges, best first (pilot only).
    scores, sigma_by_judge : numpy.ndarray
        Each judge's observed agreement with the human pool and its per-item standard deviation.
    correlation : float
        Mean correlation of per-item scores between the best judge and its rivals (nan for moments).
    assumptions : tuple of str
    """

    m_star: int
    m_star_paired: int | None
    sigma0: float
    delta_min: float
    significance_level: float
    z: float
    n_judges: int
    source: str
    judges: tuple[str, ...]
    scores: np.ndarray
    sigma_by_judge: np.ndarray
    correlation: float
    n_items_pilot: int
    assumptions: tuple[str, ...]

    def to_frame(self) -> pd.DataFrame:
        """One row per judge (best first) with its score and per-item standard deviation."""
        if not self.judges:
            return pd.DataFrame([{"judge": None, "score": None, "sigma": self.sigma0, "m_star": self.m_star}])
        return pd.DataFrame({"judge": list(self.judges), "score": self.scores, "sigma": self.sigma_by_judge,
                             "gap_to_best": self.scores[0] - self.scores})


def _pilot_arrays(table: AnnotationTable) -> tuple[np.ndarray, np.ndarray, int]:
    codes = table.dense()
    L = table.n_categories
    return codes, (codes >= 0) & (codes < L), L


def _lin_var(D: np.ndarray, w: np.ndarray, est: float, clusters: np.ndarray | None) -> tuple[float, float]:
    """(sigma0^2 with independent items, design effect) of the ratio estimator sum(wD)/sum(w)."""
    r = w * (D - est)
    mw = w.mean()
    s2 = float(np.mean(r**2) / mw**2)
    if clusters is None or s2 <= 0:
        return s2, 1.0
    inv, _ = cluster_index(clusters)
    rc = np.bincount(inv, weights=r)
    n_cl = rc.size
    if n_cl < 2:
        return s2, 1.0  # one cluster: no design effect can be estimated
    # cluster-robust (CR1-type, C / (C - 1)) over independent-item variance of the same ratio
    var_cl = float(np.sum(rc**2) / (w.sum() ** 2)) * n_cl / (n_cl - 1)
    var_ind = float(np.sum(r**2) / (w.sum() ** 2)) * r.size / max(r.size - 1, 1)
    return s2, max(var_cl / var_ind, 1e-12) if var_ind > 0 else 1.0


def plan_certification(
    pilot: AnnotationTable | None = None,
    *,
    judge: str | None = None,
    mu_d: float | None = None,
    sigma0: float | None = None,
    epsilon: float = 0.05,
    significance_level: float = 0.05,
    score: str = "agreement",
    n_resamples: int = 200,
    rng: int | np.random.Generator | None = 0,
) -> CertificationPlanResult:
    """Eligible items per leave-one-out comparison needed to certify a judge (m*_cert).

    ``m*_cert = ceil(z^2_{1-a/2} sigma0^2 / (mu_d + epsilon)^2)`` (METHODS §2), where ``mu_d``
    and ``sigma0^2`` are the mean and variance of the per-item difference
    ``D_i = S_i(judge; P_k) - S_i(k; P_k)``. With it, one comparison's false-reject probability
    ``Phi(-(mu_d + epsilon) sqrt(m) / sigma0)`` is at most ``a / 2``.

    Parameters
    ----------
    pilot : AnnotationTable, optional
        A pilot with the judge and at least two humans. For each held-out human ``k`` the
        per-item difference uses the observed agreement with the other humans on the item,
        ``D_i = (a_i - b_i) / w_i`` (``a_i``/``b_i``: pool labels matching the judge / ``k``,
        ``w_i``: pool labels), and ``d_k = sum(a - b) / sum(w)`` (the pair-weighted statistic
        the rule uses). ``sigma0^2`` is the linearised variance of that ratio times the eligible
        items; with item clusters it is multiplied by the estimated design effect. Pooled values
        are the means over held-out humans (of ``d_k`` and of ``sigma0_k^2``).
    judge : str, optional
        The judge (required when the pilot has several).
    mu_d, sigma0 : float, optional
        Given moments instead of a pilot.
    epsilon : float, default 0.05
        Tolerance of the rule ``T_k = 1[d_k >= -epsilon]``.
    significance_level : float, default 0.05
        ``a``: the target false-reject probability of one comparison is ``a / 2``.
    score : {"agreement", "alpha", "kappa", "ac1"}, default "agreement"
        The rule's score S (pilot only). Observed agreement uses the closed-form per-item
        linearisation above. The chance-corrected scores are ratios (METHODS §2: same planning
        form by the delta method); their ``d_k`` comes from :func:`voirdire.validation.loo_core` and
        ``sigma0_k^2 = m_k * Var_boot(d_k)`` from a bootstrap of items (of clusters when the pilot
        has them, so no separate design effect is applied).
    n_resamples : int, default 200
        Bootstrap resamples for the chance-corrected scores.
    rng : int, numpy.random.Generator or None, default 0
        Seed of that bootstrap.

    Returns
    -------
    CertificationPlanResult

    Raises
    ------
    InfeasiblePlanError
        When ``mu_d + epsilon <= 0``: the judge falls short of the human baseline by more than the
        tolerance, and more overlap only makes rejection more certain.
    InvalidParameterError
        Neither a pilot nor both moments, or bad values.

    Notes
    -----
    Assumptions (also in ``result.assumptions``): asymptotic normality, independent items,
    observed agreement as the score, a single comparison's error (not the vote over humans, nor
    false accepts). It is a planning aid, not an error certificate; check a plan with
    :func:`plan_by_simulation`.

    Validated against: the closed form (hand-computed cases), an independent per-item loop and
    :func:`voirdire.validation.loo_core` (same ``d_k``), and simulation (at ``m*`` the realised
    false-reject rate of one comparison matches ``Phi(-(mu_d + epsilon) sqrt(m) / sigma0)``).

    References
    ----------
    *LLM Judge Validation Under Sparse Overlap: From Inference to Design*, arXiv 2609.31857, §3.

    Examples
    --------
    >>> from voirdire.design import plan_certification
    >>> plan_certification(mu_d=0.0, sigma0=0.5, epsilon=0.05).m_star   # 1.96^2 * 0.25 / 0.0025
    385
    """
    func = "plan_certification"
    epsilon = check_epsilon(epsilon, func)
    sig = check_probability(significance_level, "significance_level", func)
    z = float(ndtri(1 - sig / 2))
    score = check_choice(score, "score", func, SCORES)
    n_resamples = check_positive_int(n_resamples, "n_resamples", func, minimum=20)
    if pilot is None:
        if mu_d is None or sigma0 is None:
            raise InvalidParameterError(f"{func} needs a pilot table, or both mu_d= and sigma0=.")
        mu, s0 = float(mu_d), float(sigma0)
        if not (np.isfinite(s0) and s0 > 0):
            raise InvalidParameterError(f"The 'sigma0' parameter of {func} must be a float > 0. Got {sigma0!r} instead.")
        if not np.isfinite(mu):
            raise InvalidParameterError(f"The 'mu_d' parameter of {func} must be a finite float. Got {mu_d!r} instead.")
        humans: tuple[str, ...] = ()
        arrs = [np.array([], dtype=float)] * 5
        deff = 1.0
        jname = None
    else:
        if not isinstance(pilot, AnnotationTable):
            raise InvalidParameterError(
                f"The 'pilot' parameter of {func} must be an AnnotationTable. Got {type(pilot).__name__} instead.")
        if mu_d is not None or sigma0 is not None:
            raise InvalidParameterError(f"{func}: give a pilot or the moments mu_d/sigma0, not both.")
        jname = _one_judge(pilot, judge, func)
        codes, present, L = _pilot_arrays(pilot)
        hidx = pilot.human_idx
        if hidx.size < 2:
            raise InvalidParameterError(f"{func} needs a pilot with at least two humans; {pilot.source} has {hidx.size}.")
    if pilot is not None and score != "agreement":
        # jname is set by _one_judge whenever there is a pilot
        mu_k, s_k, e_k, deff_k = _bootstrap_moments(pilot, cast(str, jname), score=score, n_resamples=n_resamples,
                                                    rng=rng)
    elif pilot is not None:
        g = codes[:, pilot.rater_index(cast(str, jname))]
        vg = present[:, pilot.rater_index(cast(str, jname))]
        H = codes[:, hidx]
        vh = present[:, hidx]
        nh = vh.sum(axis=1)
        # C[i, c]: human labels of category c on item i
        C = np.zeros((pilot.n_items, L), dtype=np.int64)
        rows, cols = np.nonzero(vh)
        np.add.at(C, (rows, H[rows, cols]), 1)
        gi = np.where(vg, g, 0)
        K = hidx.size
        mu_k, s_k, e_k, deff_k = (np.full(K, np.nan) for _ in range(4))
        for k in range(K):
            w = np.where(vh[:, k], nh - 1, 0)
            el = vh[:, k] & vg & (w >= 1)
            e_k[k] = el.sum()
            if el.sum() < 2:
                continue
            yk = H[el, k]
            a = C[el, gi[el]] - (yk == g[el])
            b = C[el, yk] - 1
            ww = w[el].astype(float)
            D = (a - b) / ww
            est = float((a - b).sum() / ww.sum())
            s2, de = _lin_var(D, ww, est, None if pilot.clusters is None else pilot.clusters[el])
            mu_k[k], s_k[k], deff_k[k] = est, math.sqrt(s2 * de), de
    if pilot is not None:
        ok = np.isfinite(mu_k) & np.isfinite(s_k) & (s_k > 0)
        if not ok.any():
            raise InvalidParameterError(
                f"{func}: the pilot {pilot.source} has no held-out human with two or more eligible items "
                f"(labelled by the human, the judge and another human) and a non-zero variance.")
        mu = float(np.mean(mu_k[ok]))
        s0 = float(math.sqrt(np.mean(s_k[ok] ** 2)))
        deff = float(np.mean(deff_k[ok]))
        humans = tuple(str(pilot.raters[h]) for h in hidx)
        with np.errstate(invalid="ignore", divide="ignore"):
            m_k = np.where((mu_k + epsilon) > 0, np.ceil(z * z * s_k**2 / (mu_k + epsilon) ** 2 - 1e-9), np.nan)
            fr = ndtr(-(mu_k + epsilon) * np.sqrt(e_k) / s_k)
        arrs = [mu_k, s_k, e_k, m_k, fr]
    margin = mu + epsilon
    if margin <= 0:
        raise InfeasiblePlanError(
            f"mu_d + epsilon = {mu:.4g} + {epsilon:g} = {margin:.4g} is not positive: the judge falls short of "
            f"the human baseline by more than the tolerance, so more overlap only makes rejection more "
            f"certain. No budget certifies it (check epsilon, or the judge).")
    return CertificationPlanResult(
        m_star=_m_cert(margin, s0, z), mu_d=mu, sigma0=s0, epsilon=epsilon, significance_level=sig, z=z,
        margin=margin, source="moments" if pilot is None else "pilot", judge=jname, design_effect=deff,
        humans=humans, mu_d_by_human=arrs[0], sigma0_by_human=arrs[1], eligible_by_human=arrs[2],
        m_star_by_human=arrs[3], false_reject_now=arrs[4], score=score,
        assumptions=_CERT_ASSUMPTIONS if score == "agreement" else _CERT_ASSUMPTIONS_RATIO,
    )


def _bootstrap_moments(pilot: AnnotationTable, judge: str, *, score: str, n_resamples: int,
                       rng: int | np.random.Generator | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """d_k, sigma0_k, eligible items and design effect (1) for a ratio score, by the item/cluster bootstrap."""
    from ..validation import loo_core

    codes = pilot.dense()
    hidx = pilot.human_idx
    jcol = np.array([pilot.rater_index(judge)])
    L = pilot.n_categories
    cv = np.asarray([float(c) for c in (pilot.scale.categories or ())], dtype=float) if pilot.scale.is_numeric else None
    kw = dict(n_categories=L, score=score, category_values=cv, level=pilot.scale.level)
    la = loo_core(codes, hidx, jcol, **kw)  # type: ignore[arg-type]
    d = la.d[0].astype(float)
    e = la.n_items_judge[0].astype(float)
    gen = as_generator(rng)
    if pilot.clusters is None:
        groups = [np.array([i]) for i in range(pilot.n_items)]
        unit_items = np.arange(pilot.n_items)[:, None]
        starts = None
    else:
        inv, _ = cluster_index(pilot.clusters)
        order = np.argsort(inv, kind="stable")
        sizes = np.bincount(inv)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        groups = [order[starts[c]:starts[c + 1]] for c in range(sizes.size)]
        unit_items = None
    n_units = len(groups)
    boot = np.full((n_resamples, hidx.size), np.nan)
    for b in range(n_resamples):
        pick = draw_indices(gen, 1, n_units)[0]  # one call per resample: the planner's stream
        idx = unit_items[pick, 0] if unit_items is not None else np.concatenate([groups[u] for u in pick])
        boot[b] = loo_core(codes[idx], hidx, jcol, **kw).d[0]  # type: ignore[arg-type]
    # sample variance over the finite resamples of each human, nan below two (np.nanvar would warn
    # "Degrees of freedom <= 0" on a column with fewer, e.g. a one-category pilot)
    fin = np.isfinite(boot)
    n_fin = fin.sum(axis=0)
    x = np.where(fin, boot, 0.0)
    mean = x.sum(axis=0) / np.maximum(n_fin, 1)
    ss = (np.where(fin, boot - mean, 0.0) ** 2).sum(axis=0)
    var = np.where(n_fin >= 2, ss / np.maximum(n_fin - 1, 1), np.nan)
    s = np.sqrt(var * e)
    return d, s, e, np.ones_like(d)


def _one_judge(table: AnnotationTable, judge: str | None, func: str) -> str:
    if judge is None:
        if len(table.judges) != 1:
            raise InvalidParameterError(
                f"{func}: the table has {len(table.judges)} judges {list(table.judges)}; name one with judge=.")
        return table.judges[0]
    idx = table.rater_index(judge)
    if table.roles[idx] != "judge":
        raise InvalidParameterError(f"Rater {judge!r} is not a judge in {table.source}. Judges: {list(table.judges)}.")
    return str(judge)


def plan_ranking(
    pilot: AnnotationTable | None = None,
    *,
    judges: Sequence[str] | None = None,
    sigma0: float | None = None,
    delta_min: float | None = None,
    n_judges: int | None = None,
    significance_level: float = 0.05,
) -> RankingPlanResult:
    """Items needed to tell the best of J judges from every rival (m*_rank).

    ``m*_rank = ceil(2 z^2_{1-a/(J-1)} sigma0^2 / Delta_min^2)`` (METHODS §2): Bonferroni over
    the J-1 rivals; the factor 2 is the variance of a difference of two judges' scores when
    their covariance is negligible.

    Parameters
    ----------
    pilot : AnnotationTable, optional
        A pilot with at least two judges and two humans. Each judge's score is its observed
        agreement with the human pool (``sum_i a_ji / sum_i w_i``, ``a_ji`` humans matching the
        judge on item ``i``, ``w_i`` human labels); ``sigma0^2`` is the mean over judges of the
        linearised per-item variance, ``Delta_min`` the gap between the best and the second judge.
    judges : sequence of str, optional
        Judges to rank (default: all in the pilot).
    sigma0, delta_min : float, optional
        Given moments instead of a pilot.
    n_judges : int, optional
        J, with given moments.
    significance_level : float, default 0.05
        ``a`` (family-wise over the J-1 comparisons).

    Returns
    -------
    RankingPlanResult
        ``m_star`` (formula) and, from a pilot, ``m_star_paired``: the same target computed from
        the observed variance of per-item score differences between the best judge and each
        rival, which includes their covariance (usually much smaller than the factor 2 assumes).

    Raises
    ------
    InfeasiblePlanError
        When ``Delta_min <= 0`` (the best two judges tie: no budget separates them).

    Examples
    --------
    >>> from voirdire.design import plan_ranking
    >>> r = plan_ranking(sigma0=0.4, delta_min=0.05, n_judges=3)
    >>> r.m_star   # 2 * z_{1-0.025}^2 * 0.16 / 0.0025 = 2 * 3.8415 * 64
    492
    """
    func = "plan_ranking"
    sig = check_probability(significance_level, "significance_level", func)
    if pilot is None:
        if sigma0 is None or delta_min is None or n_judges is None:
            raise InvalidParameterError(f"{func} needs a pilot table, or sigma0=, delta_min= and n_judges=.")
        if isinstance(n_judges, bool) or not isinstance(n_judges, (int, np.integer)) or n_judges < 2:
            raise InvalidParameterError(f"The 'n_judges' parameter of {func} must be an integer >= 2. Got {n_judges!r} instead.")
        s0, dmin, J = float(sigma0), float(delta_min), int(n_judges)
        if not (np.isfinite(s0) and s0 > 0):
            raise InvalidParameterError(f"The 'sigma0' parameter of {func} must be a float > 0. Got {sigma0!r} instead.")
        names: tuple[str, ...] = ()
        scores = sig_j = np.array([], dtype=float)
        m_paired = None
        corr = float("nan")
        n_pilot = 0
    else:
        if not isinstance(pilot, AnnotationTable):
            raise InvalidParameterError(
                f"The 'pilot' parameter of {func} must be an AnnotationTable. Got {type(pilot).__name__} instead.")
        names_in = list(pilot.judges) if judges is None else [str(j) for j in judges]
        for j in names_in:
            if pilot.roles[pilot.rater_index(j)] != "judge":
                raise InvalidParameterError(f"Rater {j!r} is not a judge in {pilot.source}.")
        J = len(names_in)
        if J < 2:
            raise InvalidParameterError(f"{func} needs at least two judges; got {names_in}.")
        codes, present, L = _pilot_arrays(pilot)
        hidx = pilot.human_idx
        H = codes[:, hidx]
        vh = present[:, hidx]
        w = vh.sum(axis=1)
        jc = [pilot.rater_index(j) for j in names_in]
        vj = present[:, jc]
        el = (w >= 1) & vj.all(axis=1)
        if el.sum() < 2:
            raise InvalidParameterError(f"{func}: fewer than two items are labelled by every judge and a human.")
        n_pilot = int(el.sum())
        G = codes[el][:, jc]
        Hh, vhh, ww = H[el], vh[el], w[el].astype(float)
        A = ((G[:, :, None] == Hh[:, None, :]) & vhh[:, None, :]).sum(axis=2).astype(float)  # (n, J)
        S = A.sum(axis=0) / ww.sum()
        D = A / ww[:, None]
        order = np.argsort(-S, kind="stable")
        S, D = S[order], D[:, order]
        names = tuple(names_in[o] for o in order)
        sig_j = np.array([math.sqrt(_lin_var(D[:, j], ww, float(S[j]), None)[0]) for j in range(J)])
        s0 = float(math.sqrt(np.mean(sig_j**2)))
        dmin = float(S[0] - S[1])
        scores = S
        zb = float(ndtri(1 - sig / (J - 1)))
        mp = []
        cors = []
        for r in range(1, J):
            gap = S[0] - S[r]
            v = _lin_var(D[:, 0] - D[:, r], ww, float(gap), None)[0]
            if sig_j[0] > 0 and sig_j[r] > 0:
                cors.append((sig_j[0] ** 2 + sig_j[r] ** 2 - v) / (2 * sig_j[0] * sig_j[r]))
            if gap > 0:
                mp.append(_items(zb * zb * v / (gap * gap)))
        m_paired = max(mp) if mp and dmin > 0 else None
        corr = float(np.mean(cors)) if cors else float("nan")
    if not np.isfinite(dmin) or dmin <= 0:
        raise InfeasiblePlanError(
            f"Delta_min = {dmin:.4g} is not positive: the best judges tie"
            + (f" ({names[0]} and {names[1]})" if names else "")
            + ", so no budget can separate them. Rank them as tied, or plan for a gap you care about.")
    z = float(ndtri(1 - sig / (J - 1)))
    m_star = _items(2 * z * z * (s0 / dmin) * (s0 / dmin))
    return RankingPlanResult(
        m_star=m_star, m_star_paired=m_paired, sigma0=s0, delta_min=dmin, significance_level=sig, z=z,
        n_judges=J, source="moments" if pilot is None else "pilot", judges=names, scores=scores,
        sigma_by_judge=sig_j, correlation=corr, n_items_pilot=n_pilot, assumptions=_RANK_ASSUMPTIONS,
    )
