"""The worst slice (private): is a judge's advantage in one slice clearly below the rest of the pool?

A judge accepted on the whole set can still fail on a fifth of it. For every slice ``s`` (a group
of items: a language, a domain, a criterion) :func:`slice_advantage` compares the judge's mean
per-item advantage in the slice with its mean over the rest of the pool:

    a_i   = mean over the humans k eligible on item i of (W^f_ik - W^h_ik)
    Delta = mean_{i in s} a_i - mean_{i not in s} a_i

where ``W^f_ik`` (``W^h_ik``) says the judge (human ``k``) is at least as close to the other humans
as human ``k`` (the judge) is: the alt-test's indicators (Calderon et al. 2025), so ``a_i`` is the
judge's advantage probability minus the human's on item ``i``. The standard error of ``Delta`` is
the cluster-robust (linearised ratio) one, resampling units = the table's clusters when set; the
one-sided p-value is ``Phi(Delta / se)`` (H1: the slice is below the rest) and the p-values of the
slices are Holm-corrected, so the probability of flagging any slice when no slice differs is at
most ``q`` (asymptotically).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._checks import check_probability
from .._results import ConfidenceInterval, Result
from ..exceptions import InvalidParameterError
from ._alt_test import indicators, rejected_flags
from ._common import check_table, resolve_judges

__all__ = ["SliceAdvantage", "slice_advantage"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SliceAdvantage(Result):
    """The judge's advantage per slice against the rest of the pool (:func:`slice_advantage`).

    Arrays have one entry per slice (``slices``). ``advantage`` is the slice's mean per-item
    advantage, ``advantage_rest`` the rest's, ``difference`` their difference with its interval
    (``low``/``high``) and one-sided ``p_value`` (H1: below); ``below`` says which slices the Holm
    rule at ``q`` finds below the rest; ``n_items`` counts the slice's compared items; ``nan`` marks
    a slice with fewer than ``min_items`` compared items (not tested).
    """

    judge: str
    scoring: str
    slices: tuple[str, ...]
    n_items: np.ndarray
    advantage: np.ndarray
    advantage_rest: np.ndarray
    difference: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p_value: np.ndarray
    below: np.ndarray
    advantage_pool: float
    q: float
    confidence_level: float
    min_items: int
    resampling_unit: str

    def to_frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame({"judge": self.judge, "slice": list(self.slices), "n_items": self.n_items,
                             "advantage": self.advantage, "advantage_rest": self.advantage_rest,
                             "difference": self.difference, "low": self.low, "high": self.high,
                             "p_value": self.p_value, "below": self.below})


def slice_advantage(table: Any, judge: str, item_slice: np.ndarray | Sequence[int], *,
                    slices: Sequence[str] | None = None, scoring: str = "accuracy", min_humans_per_item: int = 2,
                    q: float = 0.05, confidence_level: float = 0.95, min_items: int = 10) -> SliceAdvantage:
    """Per slice, the judge's mean advantage minus the rest of the pool's, tested one-sided (Holm over slices).

    Parameters
    ----------
    table : AnnotationTable
        The pooled table.
    judge : str
    item_slice : array of int
        For every item of ``table``, the index of its slice (``-1``: in no slice).
    slices : sequence of str, optional
        The slices' names (default ``"0"``, ``"1"``...).
    scoring : {"accuracy", "neg_rmse"}, default "accuracy"
        The alt-test's scoring.
    min_humans_per_item : int, default 2
    q : float, default 0.05
        Family-wise error rate of the Holm rule over the slices.
    confidence_level : float, default 0.95
        Of each difference's (two-sided, normal) interval.
    min_items : int, default 10
        A slice (or its rest) with fewer compared items is not tested (``nan``).

    Returns
    -------
    SliceAdvantage

    Examples
    --------
    >>> import numpy as np
    >>> from voirdire._simulation.slices import slice_failure_frame
    >>> from voirdire.data import AnnotationTable
    >>> df = slice_failure_frame(500, np.random.default_rng(0), p_bad=0.5)   # judge a coin on slice E
    >>> t = AnnotationTable.from_frame(df, role="role")
    >>> where = {str(i): s for i, s in zip(df["item"], df["slice"])}
    >>> item_slice = np.array(["ABCDE".index(where[str(i)]) for i in t.items])
    >>> s = slice_advantage(t, "judge", item_slice, slices=list("ABCDE"))
    >>> s.below.tolist(), round(float(s.difference[4]), 2)
    ([False, False, False, False, True], -0.28)

    Notes
    -----
    Validated by simulation (``tests/validation/test_slices.py``, ``bench/bench_slices.py``): a 20%
    slice where the judge is clearly worse is flagged in at least 90% of tables of 300-1,000 items;
    with no slice worse, a slice is flagged in at most 5%.
    """
    func = "slice_advantage"
    table = check_table(table, func)
    q = check_probability(q, "q", func)
    confidence_level = check_probability(confidence_level, "confidence_level", func)
    sl = np.asarray(item_slice, dtype=np.int64)
    if sl.shape != (table.n_items,):
        raise InvalidParameterError(f"The 'item_slice' parameter of {func} must give one slice per item "
                                    f"({table.n_items}). Got shape {sl.shape} instead.")
    S = int(sl.max()) + 1 if sl.size else 0
    names = tuple(str(s) for s in slices) if slices is not None else tuple(str(s) for s in range(S))
    if len(names) < S:
        raise InvalidParameterError(f"{func}: {S} slices in 'item_slice' but {len(names)} names.")
    S = len(names)
    jn, jidx, hidx = resolve_judges(table, judge, func)
    wf, wh, elig, _ = indicators(table, jidx, hidx, scoring, min_humans_per_item)
    ne = elig[:, 0, :].sum(axis=1)
    ok = (ne > 0) & (sl >= 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (wf[:, 0, :].astype(float) - wh[:, 0, :].astype(float)).sum(axis=1) / ne
    a = np.where(ok, a, 0.0)
    cl = table.clusters if table.clusters is not None else np.arange(table.n_items)
    _, cidx = np.unique(cl, return_inverse=True)
    C = int(cidx.max()) + 1 if cidx.size else 0
    z = _z(confidence_level)
    n_s = np.zeros(S, dtype=np.int64)
    adv, rest, diff, low, high, p = (np.full(S, np.nan) for _ in range(6))
    pool = float(a[ok].mean()) if ok.any() else float("nan")
    for s in range(S):
        ins = ok & (sl == s)
        out = ok & (sl != s)
        n_s[s] = int(ins.sum())
        if n_s[s] < min_items or out.sum() < min_items:
            continue
        m1, m0 = a[ins].mean(), a[out].mean()
        u = (np.bincount(cidx, weights=np.where(ins, a - m1, 0.0), minlength=C) / ins.sum()
             - np.bincount(cidx, weights=np.where(out, a - m0, 0.0), minlength=C) / out.sum())
        used = np.bincount(cidx, weights=ok.astype(float), minlength=C) > 0
        c = int(used.sum())
        var = float((u[used] ** 2).sum() * c / (c - 1)) if c > 1 else float("nan")
        se = math.sqrt(var) if var > 0 else float("nan")
        adv[s], rest[s], diff[s] = m1, m0, m1 - m0
        if math.isfinite(se):
            low[s], high[s] = diff[s] - z * se, diff[s] + z * se
            p[s] = _phi(diff[s] / se)
        else:  # every advantage equal: below exactly when the difference is negative
            low[s] = high[s] = diff[s]
            p[s] = 0.0 if diff[s] < 0 else 1.0
    below = np.zeros(S, dtype=bool)
    tested = np.isfinite(p)
    if tested.any():
        below[tested] = rejected_flags(p[tested], q, correction="holm")
    from .._stats.resampling import resampling_unit

    return SliceAdvantage(judge=jn[0], scoring=str(scoring), slices=names, n_items=n_s, advantage=adv,
                          advantage_rest=rest, difference=diff, low=low, high=high, p_value=p, below=below,
                          advantage_pool=pool, q=q, confidence_level=confidence_level, min_items=int(min_items),
                          resampling_unit=resampling_unit(table.clusters))


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _z(level: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(0.5 + level / 2))
