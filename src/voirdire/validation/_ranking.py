"""Ranking several judges with bootstrap probabilities (METHODS §2)."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from .. import _options
from .._checks import as_generator, check_choice, check_confidence_level, check_positive_int
from .._results import Result
from ..exceptions import InvalidParameterError, SmallSampleWarning
from ._alt_test import _check_scoring, bootstrap_alt_stats, indicators
from ._common import category_values, check_epsilon, check_nonneg_int, check_table, resolve_judges
from ._kernel import SCORES, PairStats, finalize, nanmean_last
from ._leave_one_out import _omega
from .._stats.resampling import resampling_unit

__all__ = ["RankingResult", "rank_judges"]

BY = _options.RANK_BY  # the one registry of option values


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RankingResult(Result):
    """A ranking of judges with its bootstrap uncertainty.

    ``judges`` keeps the input order; ``statistic``, ``rank`` (1 = best), ``p_best`` follow it.
    ``order`` lists the judges best first. ``p_order[a, b]`` is the bootstrap probability that
    judge ``a`` ranks above judge ``b`` (ties count one half). ``separable`` says whether the top
    two are told apart: ``P(first above second) >= confidence_level``.
    """

    by: str
    score: str
    scoring: str
    epsilon: float
    judges: tuple[str, ...]
    statistic: np.ndarray
    rank: np.ndarray
    order: tuple[str, ...]
    p_best: np.ndarray
    p_order: np.ndarray
    confidence_level: float
    separable: bool
    n_resamples: int
    resampling_unit: str

    def to_frame(self) -> pd.DataFrame:
        """One row per judge, best first."""
        idx = np.argsort(self.rank, kind="stable")
        return pd.DataFrame({
            "rank": self.rank[idx], "judge": [self.judges[i] for i in idx], self.by: self.statistic[idx],
            "p_best": self.p_best[idx],
        })

    def order_frame(self) -> pd.DataFrame:
        """The pairwise order probabilities as a judge x judge frame (row above column)."""
        return pd.DataFrame(self.p_order, index=list(self.judges), columns=list(self.judges))


def _loo_stats(table: Any, jidx: np.ndarray, hidx: np.ndarray, by: str, score: str, epsilon: float,
               min_items: int, n_resamples: int, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    level = table.scale.level if score == "alpha" else "nominal"
    cvals = category_values(table)
    ps = PairStats(table.dense(), hidx, jidx, n_categories=table.n_categories, score=score, level=level,
                   category_values=cvals, full_pool=(by == "score"))
    kw: dict[str, Any] = dict(score=score, level=level, n_categories=table.n_categories, category_values=cvals)

    def stat(sj: np.ndarray, sh: np.ndarray) -> np.ndarray:
        if by == "score":
            return finalize(sj[..., -1, :], ps.layout, **kw)
        d = finalize(sj, ps.layout, **kw) - finalize(sh, ps.layout, **kw)
        d = np.where(evaluated, d, np.nan)
        if by == "omega":
            return _omega(d, epsilon)[0]
        return nanmean_last(d)

    evaluated = ps.elig_judge.sum(axis=0)[:, :hidx.size] >= min_items      # (J, K), as in leave_one_out
    point = stat(*ps.sums())
    boot = np.empty((n_resamples, jidx.size))
    pos = 0
    n = table.n_items
    for sj, sh in ps.resampled_sums(n_resamples, gen, clusters=table.clusters, batch=max(1, int(2_000_000 // max(n, 1)))):
        boot[pos:pos + sj.shape[0]] = stat(sj, sh)
        pos += sj.shape[0]
    return point, boot


def rank_judges(table: Any, judges: Sequence[str] | None = None, *, by: Literal["rho", "omega", "mean_d", "score"] = "rho",
                score: Literal["agreement", "alpha", "kappa", "ac1"] = "agreement", scoring: Any = None,
                epsilon: float = 0.05, min_items: int = 10, min_humans_per_item: int = 2,
                min_items_per_human: int = 30,
                confidence_level: float = 0.95, n_resamples: int = 1000,
                rng: int | np.random.Generator | None = None) -> RankingResult:
    """Rank judges and say how sure the ranking is (bootstrap over items or clusters).

    Parameters
    ----------
    table : AnnotationTable
    judges : sequence of str, optional
        The judges to rank (default: every judge in the table; at least two).
    by : {"rho", "omega", "mean_d", "score"}, default "rho"
        ``rho``: the alt-test's average advantage probability (independent of epsilon; the
        authors' ranking figure). ``omega``: the leave-one-out winning rate at ``epsilon``.
        ``mean_d``: the mean over humans of the leave-one-out difference d_k. ``score``: the
        agreement ``score`` of the judge with every human label (all humans as the pool).
    score : {"agreement", "alpha", "kappa", "ac1"}, default "agreement"
        Agreement score for ``omega``, ``mean_d`` and ``score``.
    scoring : {"accuracy", "neg_rmse"} or callable, optional
        Alt-test scoring for ``rho`` (default: ``neg_rmse`` for numeric ordinal, interval and
        ratio labels, else ``accuracy``).
    epsilon : float in [0, 1), default 0.05
        Leave-one-out tolerance (``by="omega"``).
    min_items : int, default 10
        Leave-one-out: humans with fewer eligible items are left out (``by="omega"``, ``"mean_d"``).
    min_humans_per_item, min_items_per_human : int
        Alt-test filters (``by="rho"``).
    confidence_level : float, default 0.95
        The top two judges count as separable when the first ranks above the second in at least
        this share of resamples; otherwise a :class:`SmallSampleWarning` is raised.
    n_resamples : int >= 1, default 1000
    rng : int, Generator or None

    Returns
    -------
    RankingResult

    Notes
    -----
    Every judge is evaluated on the same resample, so ``p_order`` reflects the judges' shared
    items. Ties (frequent with ``omega``, which takes few values) share ``p_best`` equally and
    count one half in ``p_order``; the point ranking breaks ties by the order of ``judges``.
    A statistic that is undefined in a resample ranks last there.

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> r = rank_judges(t, by="score", n_resamples=200, rng=0)
    >>> len(r.order), round(float(r.p_best.sum()), 6)
    (5, 1.0)
    """
    func = "rank_judges"
    table = check_table(table, func)
    by = check_choice(by, "by", func, BY)  # type: ignore[assignment]
    score = check_choice(score, "score", func, SCORES)  # type: ignore[assignment]
    epsilon = check_epsilon(epsilon, func)
    min_items = check_positive_int(min_items, "min_items", func)
    confidence_level = check_confidence_level(confidence_level, func)
    n_resamples = check_nonneg_int(n_resamples, "n_resamples", func)
    if n_resamples < 1:
        raise InvalidParameterError(f"The 'n_resamples' parameter of {func} must be an integer >= 1. Got 0 instead.")
    gen = as_generator(rng)
    names, jidx, hidx = resolve_judges(table, list(table.judges) if judges is None else judges, func)
    if len(names) < 2:
        raise InvalidParameterError(f"{func} needs at least two judges. Got {names}.")
    if scoring is None:
        numeric = table.scale.level in ("ordinal", "interval", "ratio") and table.scale.is_numeric
        scoring = "neg_rmse" if numeric else "accuracy"
    scoring_name = _check_scoring(scoring, table, func) if by == "rho" else str(getattr(scoring, "__name__", scoring))
    if by == "rho":
        wf, wh, elig, _ = indicators(table, jidx, hidx, scoring, min_humans_per_item)
        tested = elig.sum(axis=0) >= min_items_per_human              # (J, K)
        if not tested.any(axis=1).all():
            bad = [names[j] for j in np.flatnonzero(~tested.any(axis=1))]
            raise InvalidParameterError(
                f"No human has {min_items_per_human} items in common with judge(s) {bad} (after the "
                f"alt-test's filters); rho is undefined. Lower min_items_per_human or use by='score'.")
        ef = (elig & tested[None]).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            rho_jk = np.where(tested, (wf * ef).sum(axis=0) / np.maximum(ef.sum(axis=0), 1), np.nan)
        point = nanmean_last(rho_jk)
        d = wh.astype(float) - wf.astype(float)
        _, boot = bootstrap_alt_stats(d, ef, wf.astype(float), 0.0, 0.05, "by", n_resamples, gen, table.clusters)
    else:
        point, boot = _loo_stats(table, jidx, hidx, by, score, epsilon, min_items, n_resamples, gen)
        if np.isnan(point).any():
            bad = [names[j] for j in np.flatnonzero(np.isnan(point))]
            raise InvalidParameterError(
                f"The ranking statistic {by!r} is undefined for judge(s) {bad}: no item is shared with the "
                f"humans, or the {score} score is undefined (no variation). Try score='agreement'.")
    J = len(names)
    order_idx = np.argsort(-point, kind="stable")
    rank = np.empty(J, dtype=np.int64)
    rank[order_idx] = np.arange(1, J + 1)
    b = np.where(np.isnan(boot), -np.inf, boot)
    top = b == b.max(axis=1, keepdims=True)
    p_best = (top / top.sum(axis=1, keepdims=True)).mean(axis=0)
    gt = (b[:, :, None] > b[:, None, :]).mean(axis=0)
    eq = (b[:, :, None] == b[:, None, :]).mean(axis=0)
    p_order = gt + 0.5 * eq
    np.fill_diagonal(p_order, np.nan)
    first, second = order_idx[0], order_idx[1]
    separable = bool(p_order[first, second] >= confidence_level)
    if not separable:
        warnings.warn(
            f"The top two judges by {by}, {names[first]!r} and {names[second]!r}, cannot be told apart: "
            f"{names[first]!r} ranks above in {p_order[first, second]:.0%} of {n_resamples} resamples "
            f"(< {confidence_level:.0%}). More overlapping human labels would be needed to separate them.",
            SmallSampleWarning, stacklevel=2)
    return RankingResult(
        by=by, score=score, scoring=scoring_name, epsilon=epsilon, judges=tuple(names), statistic=point,
        rank=rank, order=tuple(names[i] for i in order_idx), p_best=p_best, p_order=p_order,
        confidence_level=confidence_level, separable=separable, n_resamples=n_resamples,
        resampling_unit=resampling_unit(table.clusters),
    )
