"""Per-item diagnostics: which items are contested beyond what chance predicts (private)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._checks import check_positive_int
from .._results import Result
from .._stats.distances import delta, ordinal_delta
from ..agreement.engine import prepare, resolve_level
from ..data import AnnotationTable
from .._designs import AssignmentResult
from ..exceptions import InvalidParameterError

__all__ = ["ItemDiagnosticsResult", "item_diagnostics"]

_FUNC = "item_diagnostics"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ItemDiagnosticsResult(Result):
    """Observed against chance-expected disagreement on every item (see :func:`item_diagnostics`).

    Per-item arrays, in the table's item order: ``n_labels`` (labels of the pool on the item),
    ``observed`` (mean disagreement over the ordered pairs of labels on the item), ``expected``
    (the same mean if each rater had labelled at random from their own label distribution) and
    ``excess`` = ``observed - expected``; all three in units of the pool's chance disagreement
    ``d_e`` (Krippendorff's expected disagreement), so 1 means "as much disagreement as random
    labels". ``nan`` on items with fewer than two labels. ``rank`` orders the ranking units (items,
    or clusters when the table has them) by ``excess``, largest first (``-1``: not ranked).
    With clusters, ``cluster_*`` hold the same numbers per cluster (pair-weighted means).
    """

    items: np.ndarray
    clusters: np.ndarray | None
    raters: tuple[str, ...]
    level: str
    n_labels: np.ndarray
    observed: np.ndarray
    expected: np.ndarray
    excess: np.ndarray
    rank: np.ndarray
    unit: str
    cluster_ids: np.ndarray | None
    cluster_observed: np.ndarray | None
    cluster_expected: np.ndarray | None
    cluster_excess: np.ndarray | None
    cluster_rank: np.ndarray | None
    chance_disagreement: float
    n_ranked: int
    source_fingerprint: str

    def to_frame(self) -> pd.DataFrame:
        """One row per item, most contested first (unranked items last)."""
        df = pd.DataFrame({"item": self.items, "n_labels": self.n_labels, "observed": self.observed,
                           "expected": self.expected, "excess": self.excess, "rank": self.rank})
        if self.clusters is not None:
            df.insert(1, "cluster", self.clusters)
        key = np.where(self.rank >= 0, self.rank, np.iinfo(np.int64).max)
        return df.iloc[np.argsort(key, kind="stable")].reset_index(drop=True)

    def top(self, k: int) -> np.ndarray:
        """Indices of the items of the ``k`` most contested units (all items of a cluster together)."""
        k = check_positive_int(k, "k", "ItemDiagnosticsResult.top")
        sel = np.flatnonzero((self.rank >= 0) & (self.rank < k))
        return sel[np.argsort(self.rank[sel], kind="stable")]

    def assignments(self, k: int, *, adjudicator: str = "adjudicator") -> AssignmentResult:
        """The ``k`` most contested units as an assignment table for adjudication.

        Write it with :func:`voirdire.design.write_assignments` (CSV with formula escaping, or
        JSONL, and a manifest). ``stratum`` holds ``"rank <r>"``.
        """
        idx = self.top(k)
        n = int(idx.size)
        return AssignmentResult(
            design="adjudication", seed=None, raters=(str(adjudicator),), n_per_rater=(n,),
            rater=np.full(n, str(adjudicator), dtype=object), item=self.items[idx].astype(object),
            stratum=np.array([f"rank {int(r) + 1}" for r in self.rank[idx]], dtype=object), primary=None,
            strata={}, label_dependent=True, source_fingerprint=self.source_fingerprint,
            n_items=int(self.items.size))


def item_diagnostics(table: AnnotationTable, *, raters: Sequence[str] | None = None,
                     level: str | None = None) -> ItemDiagnosticsResult:
    r"""Which items are contested: observed disagreement on each item against chance.

    For item :math:`i` with :math:`r_i \ge 2` labels from the raters :math:`R_i`,

    .. math:: D^o_i = \frac{1}{r_i(r_i - 1)} \sum_{a \ne b \in R_i} \delta(y_{ia}, y_{ib}), \qquad
              D^e_i = \frac{1}{r_i(r_i - 1)} \sum_{a \ne b \in R_i} p_a^\top \Delta\, p_b,

    with :math:`\delta` Krippendorff's metric at ``level`` (:math:`\Delta` its matrix) and
    :math:`p_a` rater :math:`a`'s distribution of labels over all items: :math:`D^e_i` is what the
    same raters would disagree on that item if each labelled at random with their own habits.
    Both are divided by the pool's chance disagreement :math:`d_e` (the denominator of
    Krippendorff's alpha). Items are ranked by the excess :math:`D^o_i - D^e_i`; with clusters
    (several items of one text) the clusters are ranked, by pair-weighted means, and an
    adjudication takes a cluster whole.

    Parameters
    ----------
    table : AnnotationTable
        The labels.
    raters : sequence of str, optional
        The pool (default: the humans).
    level : str, optional
        Level of measurement of the metric (default: the table's scale).

    Returns
    -------
    ItemDiagnosticsResult

    Notes
    -----
    A high excess says the raters split on this item more than their habits explain: an
    ambiguous item, a guideline gap, or one rater who is right against the rest. It is a list
    for a human adjudicator, not a verdict on the item. Items with one label cannot disagree and
    are not ranked.

    Examples
    --------
    >>> from voirdire.data import AnnotationTable
    >>> t = AnnotationTable.from_arrays([1, 1, 2, 2, 3, 3], ["a", "b"] * 3, ["x", "x", "x", "y", "y", "y"])
    >>> r = item_diagnostics(t)
    >>> r.to_frame()["item"].tolist()[0], round(float(r.observed[1]), 3), round(float(r.expected[1]), 3)
    ('2', 1.667, 0.926)
    """
    if not isinstance(table, AnnotationTable):
        raise InvalidParameterError(
            f"The 'table' parameter of {_FUNC} must be an AnnotationTable (see voirdire.data.read_annotations). "
            f"Got {type(table).__name__} instead.")
    names = list(table.humans) if raters is None else ([raters] if isinstance(raters, str) else list(raters))
    if len(names) < 2:
        raise InvalidParameterError(
            f"{_FUNC} needs at least two raters; {table.source} has {len(names)} ({names}).")
    prep = prepare(table, raters=names, policy="exclude", func=_FUNC)
    lvl = resolve_level(level, prep, _FUNC)
    L, n = prep.n_sub, prep.n_items
    K = len(prep.raters)
    pos_of = np.full(table.n_raters, -1, dtype=np.int64)
    pos_of[prep.rater_ids] = np.arange(K)
    rpos = pos_of[prep.rater]
    item, code = prep.item, prep.code
    r = prep.r
    pair = r >= 2
    # per-rater label distributions
    P = np.zeros((K, L))
    np.add.at(P, (rpos, code), 1.0)
    tot = P.sum(axis=1, keepdims=True)
    P = np.divide(P, tot, out=np.zeros_like(P), where=tot > 0)
    c = np.bincount(code[pair[item]], minlength=L).astype(np.float64)
    N = float(c.sum())
    if lvl == "nominal":
        # delta = 1 - I: x' Delta y = sum(x) sum(y) - x.y, so no (items x L) or (L x L) array is needed
        key, cnt = np.unique(item.astype(np.int64) * max(L, 1) + code, return_counts=True)
        cdc = r * r - np.bincount(key // max(L, 1), weights=cnt.astype(np.float64) ** 2, minlength=n)
        A = sp.csr_matrix((np.ones(item.size), (item, rpos)), shape=(n, K))
        G = P @ P.T
        psum = P.sum(axis=1)
        # sum_{a, b in R_i} p_a . p_b = (A G A')_ii, one row of A G per item
        pdp = np.asarray(A @ psum).ravel() ** 2 - np.asarray(A.multiply(A @ G).sum(axis=1)).ravel()
        self_term = psum ** 2 - np.diag(G)
        de_num = N * N - float(c @ c)
    else:
        C = np.zeros((n, L))
        np.add.at(C, (item, code), 1.0)
        Pi = np.zeros((n, L))
        np.add.at(Pi, item, P[rpos])
        if lvl == "ordinal":
            Delta = ordinal_delta(c)
        else:
            Delta = delta(lvl, prep.cat_values.astype(float), n_categories=L)
        cdc = np.einsum("il,lm,im->i", C, Delta, C)
        pdp = np.einsum("il,lm,im->i", Pi, Delta, Pi)
        self_term = np.einsum("kl,lm,km->k", P, Delta, P)
        de_num = float(c @ Delta @ c)
    # pool chance disagreement d_e over the pairable labels (Krippendorff)
    de = de_num / (N * (N - 1)) if N >= 2 else float("nan")
    Qi = np.bincount(item, weights=self_term[rpos], minlength=n)
    npairs = r * (r - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        obs = np.where(pair, cdc / np.where(pair, npairs, 1.0), np.nan)
        exp_ = np.where(pair, (pdp - Qi) / np.where(pair, npairs, 1.0), np.nan)
        if de > 0:
            obs, exp_ = obs / de, exp_ / de
        else:
            obs, exp_ = np.full(n, np.nan), np.full(n, np.nan)
    excess = obs - exp_
    rank = np.full(n, -1, dtype=np.int64)
    ranked = np.flatnonzero(np.isfinite(excess))
    cl = table.clusters
    cids = cobs = cexp = cexc = crank = None
    if cl is None:
        order = ranked[np.lexsort((-r[ranked], -excess[ranked]))]
        rank[order] = np.arange(order.size)
        unit, n_ranked = "item", int(order.size)
    else:
        cids, cinv = np.unique(np.asarray(cl), return_inverse=True)
        w = np.where(pair & np.isfinite(excess), npairs, 0.0)
        sw = np.bincount(cinv, weights=w, minlength=cids.size)
        with np.errstate(invalid="ignore", divide="ignore"):
            cobs = np.bincount(cinv, weights=np.where(w > 0, obs * w, 0.0), minlength=cids.size) / sw
            cexp = np.bincount(cinv, weights=np.where(w > 0, exp_ * w, 0.0), minlength=cids.size) / sw
        cobs = np.where(sw > 0, cobs, np.nan)
        cexp = np.where(sw > 0, cexp, np.nan)
        cexc = cobs - cexp
        crank = np.full(cids.size, -1, dtype=np.int64)
        cr = np.flatnonzero(np.isfinite(cexc))
        corder = cr[np.lexsort((-sw[cr], -cexc[cr]))]
        crank[corder] = np.arange(corder.size)
        rank = np.where(np.isfinite(excess) | (crank[cinv] >= 0), crank[cinv], -1)
        unit, n_ranked = "cluster", int(corder.size)
    return ItemDiagnosticsResult(
        items=np.asarray(table.items), clusters=None if cl is None else np.asarray(cl), raters=tuple(prep.raters),
        level=lvl, n_labels=r.astype(np.int64), observed=obs, expected=exp_, excess=excess, rank=rank, unit=unit,
        cluster_ids=cids, cluster_observed=cobs, cluster_expected=cexp, cluster_excess=cexc, cluster_rank=crank,
        chance_disagreement=de, n_ranked=n_ranked, source_fingerprint=table.fingerprint())
