"""The leave-one-human-out rule with bootstrap uncertainty (METHODS §2)."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.special import ndtri

from .._checks import as_generator, check_confidence_level, check_positive_int, check_probability
from .._results import ConfidenceInterval, Result
from .._stats import intervals as _iv
from ..exceptions import DegenerateDataWarning, InvalidParameterError
from ._common import category_values, check_epsilon, check_nonneg_int, check_table, resolve_judges
from ._kernel import SCORES, PairStats, finalize
from ._loo import _arrays_from_stats
from .._stats.resampling import (
    NORMAL_METHOD, NORMAL_MIN_UNITS, cluster_index, linearised_law, normal_draws, normal_law_applies, resampling_unit,
    unit_sums,
)

__all__ = ["LeaveOneOutResult", "leave_one_out"]

_TOL = 1e-12
Score = Literal["agreement", "alpha", "kappa", "ac1"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LeaveOneOutResult(Result):
    """Leave-one-human-out comparison of one judge with a pool of humans.

    Per-human columns (arrays in the order of ``humans``): ``n_items`` (|I_k|), ``n_pairs``,
    ``s_judge`` (S(judge; P_k)), ``s_human`` (S(k; P_k)), ``d`` (their difference), ``d_low`` /
    ``d_high`` (BCa bootstrap interval of d_k, the acceleration from the jackknife over units, up to
    2,000 units; percentile above, or where the acceleration is undefined; from
    :data:`~voirdire._stats.resampling.NORMAL_MIN_UNITS` units behind every d, the normal
    approximation ``d +- z se`` with the delta-method SE: ``interval_method`` says which), ``t``
    (T_k = 1[d_k >= -epsilon], nan when the human is not evaluated) and
    ``reason`` (why a human was not evaluated, else ``None``).

    Summary: ``omega`` (winning rate over evaluated humans), ``decision`` ("accept", "reject" or
    "inconclusive"), ``decision_stability`` (bootstrap probability that the decision comes out
    the same), ``p_accept`` (bootstrap probability of "accept"); on large tables both come from
    draws of the d's joint normal law instead of resamples (``stability_method`` says which).
    """

    judge: str
    score: str
    level: str
    epsilon: float
    threshold: float
    confidence_level: float
    n_resamples: int
    min_items: int
    resampling_unit: str
    humans: tuple[str, ...]
    n_items: np.ndarray
    n_pairs: np.ndarray
    s_judge: np.ndarray
    s_human: np.ndarray
    d: np.ndarray
    d_low: np.ndarray
    d_high: np.ndarray
    t: np.ndarray
    reason: tuple[str | None, ...]
    n_evaluated: int
    omega: float
    decision: str
    decision_stability: float
    p_accept: float
    interval_method: str = "percentile bootstrap"
    stability_method: str = "bootstrap"

    def d_ci(self, human: str) -> ConfidenceInterval:
        """The bootstrap interval of d_k for one human."""
        k = self.humans.index(human)
        return ConfidenceInterval(low=float(self.d_low[k]), high=float(self.d_high[k]),
                                  confidence_level=self.confidence_level,
                                  method=f"{self.interval_method} ({self.resampling_unit})")

    def to_frame(self) -> pd.DataFrame:
        """One row per held-out human."""
        return pd.DataFrame({
            "judge": self.judge, "human": list(self.humans), "n_items": self.n_items,
            "n_pairs": self.n_pairs, "s_judge": self.s_judge, "s_human": self.s_human, "d": self.d,
            "d_low": self.d_low, "d_high": self.d_high, "t": self.t, "reason": list(self.reason),
        })


def _bootstrap_d(ps: PairStats, *, score: str, level: str, cvals: np.ndarray, n_resamples: int,
                 rng: np.random.Generator, clusters: np.ndarray | None) -> np.ndarray:
    """Bootstrap replicates of d, shape ``(n_resamples, J, K)``."""
    n, J, K, _ = ps.shape
    out = np.empty((n_resamples, J, K))
    kw: dict[str, Any] = dict(score=score, level=level, n_categories=ps.n_categories, category_values=cvals)
    pos = 0
    for sj, sh in ps.resampled_sums(n_resamples, rng, clusters=clusters, batch=max(1, int(2_000_000 // max(n, 1)))):
        out[pos:pos + sj.shape[0]] = finalize(sj, ps.layout, **kw) - finalize(sh, ps.layout, **kw)
        pos += sj.shape[0]
    return out


def _normal_d(ps: PairStats, *, score: str, level: str, cvals: np.ndarray,
              clusters: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The joint normal law of the d's (``(K,)`` estimates, ``(K, K)`` delta-method covariance, one
    judge), from the units' influence values; None below :data:`NORMAL_MIN_UNITS` contributing units
    for some defined d (the bootstrap then runs)."""
    n_units = ps.shape[0] if clusters is None else cluster_index(clusters)[1]
    if n_units < NORMAL_MIN_UNITS:
        return None
    kw: dict[str, Any] = dict(score=score, level=level, n_categories=ps.n_categories, category_values=cvals)

    def d_of(s: np.ndarray) -> np.ndarray:
        sj, sh = ps.split_sums(s)
        return (finalize(sj, ps.layout, **kw) - finalize(sh, ps.layout, **kw)).reshape(s.shape[0], -1)

    est, cov, cnt = linearised_law(ps.unit_matrix(clusters), d_of)
    return (est, cov) if normal_law_applies(est, cnt, min_units=NORMAL_MIN_UNITS) else None


# BCa's acceleration needs d with each unit left out: one weight row per unit, O(n^2) cells.
_JACKKNIFE_MAX_UNITS = 2000


def _jackknife_d(ps: PairStats, *, score: str, level: str, cvals: np.ndarray,
                 clusters: np.ndarray | None) -> np.ndarray | None:
    """d with each unit (item, or cluster) left out in turn, shape ``(n_units, K)``; None above the limit."""
    n = ps.shape[0]
    if clusters is None:
        inv, n_units = np.arange(n), n
    else:
        inv, n_units = cluster_index(clusters)
    if n_units > _JACKKNIFE_MAX_UNITS or n_units < 3:
        return None
    kw: dict[str, Any] = dict(score=score, level=level, n_categories=ps.n_categories, category_values=cvals)
    # the sums without unit u are the total minus u's own sums: one pass over the items (a weight row per
    # unit, items x units, was O(n^2) and most of the leave-one-out's time on a large table)
    X, _ = ps.item_matrix()
    total = np.asarray(X.sum(axis=0)).ravel()
    U = unit_sums(X, inv, n_units)
    U = U.toarray() if sp.issparse(U) else np.asarray(U)
    sj, sh = ps.split_sums(total[None, :] - U)
    return (finalize(sj, ps.layout, **kw) - finalize(sh, ps.layout, **kw))[:, 0, :]


def _omega(d: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Winning rate over the last axis (humans with nan d leave the denominator) and its count."""
    ok = ~np.isnan(d)
    with np.errstate(invalid="ignore"):
        t = (d >= -epsilon - _TOL) & ok
    cnt = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        om = np.where(cnt > 0, t.sum(axis=-1) / np.maximum(cnt, 1), np.nan)
    return om, cnt


def _decide(omega: np.ndarray, n_eval: np.ndarray, threshold: float) -> np.ndarray:
    """0 = reject, 1 = accept, 2 = inconclusive (fewer than two evaluated humans)."""
    with np.errstate(invalid="ignore"):
        dec = np.where(omega >= threshold - _TOL, 1, 0)
    return np.where(n_eval < 2, 2, dec)


_DECISIONS = ("reject", "accept", "inconclusive")


def leave_one_out(table: Any, judge: str, *, score: Score = "agreement", epsilon: float = 0.05,
                  threshold: float = 0.5, confidence_level: float = 0.95, n_resamples: int = 2000,
                  min_items: int = 10, rng: int | np.random.Generator | None = None) -> LeaveOneOutResult:
    r"""Leave-one-human-out test: may the judge stand in for each human in turn?

    For each human :math:`k` the pool :math:`P_k` is every other human; the eligible items
    :math:`I_k` are those labelled by :math:`k`, by the judge and by at least one pool member,
    and each (item, pool member) gives one comparison pair, so an item with more pool labels
    gives more pairs. With :math:`S` the agreement score on a pair list,

    .. math:: d_k = S(\text{judge}; P_k) - S(k; P_k), \quad T_k = 1[d_k \ge -\varepsilon],
              \quad \omega = \frac{1}{K'}\sum_k T_k,

    and the judge is accepted when :math:`\omega \ge` ``threshold``.

    Parameters
    ----------
    table : AnnotationTable
        Labels of the humans and of the judge (roles set: the judge must be marked as a judge).
    judge : str
        Name of the judge under test.
    score : {"agreement", "alpha", "kappa", "ac1"}, default "agreement"
        Observed agreement, Krippendorff's alpha (at the level of the table's scale), Cohen's
        kappa (unweighted) or Gwet's AC1, on the pair list read as a two-coder table (coder 1 =
        judge or k, coder 2 = the pool label).
    epsilon : float in [0, 1), default 0.05
        Tolerance: the judge may score up to epsilon below the human and still win.
    threshold : float in (0, 1], default 0.5
        Accept when omega reaches it.
    confidence_level : float in (0, 1), default 0.95
        Level of the per-human bootstrap intervals of d_k.
    n_resamples : int >= 0, default 2000
        Bootstrap resamples of items (of clusters when the table has clusters); 0 skips the
        bootstrap (intervals and stability are then nan).
    min_items : int >= 1, default 10
        A human with fewer eligible items is reported (with its scores) but not evaluated: its
        T_k would rest on a handful of items. ``min_items=1`` gives the plain rule of the paper.
    rng : int, Generator or None
        Randomness of the bootstrap.

    Returns
    -------
    LeaveOneOutResult

    Raises
    ------
    InvalidParameterError
        Unknown judge, a judge marked human, fewer than two humans, no eligible item for any
        human, or a bad parameter.

    Notes
    -----
    *Humans that cannot be evaluated* (no item shared with the judge and a pool member, fewer
    than ``min_items`` eligible items, or a chance-corrected score that is undefined because the
    pairs show no variation) are reported with the reason and leave omega's denominator K'. When fewer than two humans can be
    evaluated the decision is ``"inconclusive"``: omega would rest on one comparison.
    Undefined scores also raise a :class:`DegenerateDataWarning`. All-tied data give
    ``d_k = 0`` with observed agreement (every T_k = 1, accept), but an undefined kappa/alpha/AC1.

    The T_k share items and pools, so omega is not a binomial proportion; the bootstrap
    resamples items (clusters when set) and reports the probability that the same decision
    comes out (``decision_stability``); below about 0.8 the decision should be read as fragile.
    Abstentions count as missing labels.

    References
    ----------
    *LLM Judge Validation Under Sparse Overlap: From Inference to Design* (arXiv 2609.31857).

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> r = leave_one_out(t, t.judges[0], n_resamples=200, rng=0)
    >>> r.decision in ("accept", "reject", "inconclusive"), len(r.humans)
    (True, 3)
    """
    func = "leave_one_out"
    table = check_table(table, func)
    if score not in SCORES:
        raise InvalidParameterError(
            f"The 'score' parameter of {func} must be one of {list(SCORES)}. Got {score!r} instead.")
    epsilon = check_epsilon(epsilon, func)
    threshold = check_probability(threshold, "threshold", func, open_low=True, open_high=False)
    confidence_level = check_confidence_level(confidence_level, func)
    n_resamples = check_nonneg_int(n_resamples, "n_resamples", func)
    min_items = check_positive_int(min_items, "min_items", func)
    gen = as_generator(rng)
    names, jidx, hidx = resolve_judges(table, judge, func)
    if len(names) != 1:
        raise InvalidParameterError(f"{func} tests one judge at a time; use rank_judges for several.")
    level = table.scale.level if score == "alpha" else "nominal"
    cvals = category_values(table)
    ps = PairStats(table.dense(), hidx, jidx, n_categories=table.n_categories, score=score, level=level,
                   category_values=cvals)
    arr = _arrays_from_stats(ps, score=score, level=level, category_values=cvals)
    humans = tuple(str(table.raters[h]) for h in hidx)
    n_items = arr.n_items_judge[0]
    if not np.any(n_items > 0):
        raise InvalidParameterError(
            f"No item in {table.source} is labelled by a human, by the judge {names[0]!r} and by another "
            f"human, so no human can be compared with the judge. Check the judge name and the item ids.")
    d = arr.d[0]
    reasons: list[str | None] = []
    undefined_names = []
    for k in range(hidx.size):
        if n_items[k] == 0:
            reasons.append("no item labelled by this human, the judge and another human")
        elif n_items[k] < min_items:
            reasons.append(f"only {int(n_items[k])} eligible item(s) < min_items={min_items}")
        elif np.isnan(d[k]):
            reasons.append(f"{score} undefined on this human's pairs (no variation in the labels)")
            undefined_names.append(humans[k])
        else:
            reasons.append(None)
    if undefined_names:
        warnings.warn(
            f"{score} is undefined for the pairs of held-out human(s) {undefined_names} (the labels show no "
            f"variation); they leave omega's denominator. Observed agreement ('agreement') stays defined.",
            DegenerateDataWarning, stacklevel=2)
    evaluated = np.array([r is None for r in reasons])
    d_eval = np.where(evaluated, d, np.nan)
    om, cnt = _omega(d_eval, epsilon)
    dec = int(_decide(om, cnt, threshold))
    with np.errstate(invalid="ignore"):
        t = np.where(np.isnan(d_eval), np.nan, (d_eval >= -epsilon - _TOL).astype(float))
    d_low = np.full(d.shape, np.nan)
    d_high = np.full(d.shape, np.nan)
    stability = p_accept = float("nan")
    methods: set[str] = set()
    law = None if n_resamples == 0 else _normal_d(ps, score=score, level=level, cvals=cvals, clusters=table.clusters)
    if law is not None:
        # many units behind every d: the bootstrap's law is the normal one to Monte-Carlo precision
        # (docs/validation.md "Large tables"); intervals from the delta-method SEs, the decision's
        # stability from draws of the joint normal law of the d's
        est, cov = law
        se = np.sqrt(np.diag(cov))
        zq = float(ndtri(0.5 + confidence_level / 2))
        fin = np.isfinite(d) & np.isfinite(se)
        d_low[fin], d_high[fin] = d[fin] - zq * se[fin], d[fin] + zq * se[fin]
        methods.add("normal")
        db = normal_draws(np.where(np.isfinite(d), d, np.nan), cov, n_resamples, gen)
        omb, cntb = _omega(np.where(evaluated, db, np.nan), epsilon)
        decb = _decide(omb, cntb, threshold)
        stability = float(np.mean(decb == dec))
        p_accept = float(np.mean(decb == 1))
    elif n_resamples > 0:
        db = _bootstrap_d(ps, score=score, level=level, cvals=cvals, n_resamples=n_resamples, rng=gen,
                          clusters=table.clusters)[:, 0, :]
        dj = _jackknife_d(ps, score=score, level=level, cvals=cvals, clusters=table.clusters)
        for k in range(d.size):
            col = db[:, k]
            col = col[~np.isnan(col)]
            if col.size and not np.isnan(d[k]):
                if dj is not None and np.all(np.isfinite(dj[:, k])):
                    r = _iv.bca(float(d[k]), col, dj[:, k], confidence_level)
                else:
                    r = _iv.percentile(col, confidence_level)
                d_low[k], d_high[k] = r.low, r.high
                methods.add(r.method)
        omb, cntb = _omega(np.where(evaluated, db, np.nan), epsilon)
        decb = _decide(omb, cntb, threshold)
        stability = float(np.mean(decb == dec))
        p_accept = float(np.mean(decb == 1))
    return LeaveOneOutResult(
        judge=names[0], score=score, level=level, epsilon=epsilon, threshold=threshold,
        confidence_level=confidence_level, n_resamples=n_resamples, min_items=min_items,
        resampling_unit=resampling_unit(table.clusters), humans=humans, n_items=n_items.astype(np.int64),
        n_pairs=arr.n_pairs_judge[0], s_judge=arr.s_judge[0], s_human=arr.s_human_judge[0], d=d,
        d_low=d_low, d_high=d_high, t=t, reason=tuple(reasons), n_evaluated=int(cnt), omega=float(om),
        decision=_DECISIONS[dec], decision_stability=stability, p_accept=p_accept,
        interval_method=(NORMAL_METHOD if methods == {"normal"} else "BCa bootstrap" if methods == {"bca"}
                         else "percentile bootstrap" if methods == {"percentile"}
                         else "BCa bootstrap (percentile where the acceleration is undefined)" if methods
                         else "none"),
        stability_method="none" if n_resamples == 0 else NORMAL_METHOD if law is not None else "bootstrap",
    )
