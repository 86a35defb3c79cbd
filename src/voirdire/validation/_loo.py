"""Leave-one-human-out core on dense code arrays (private; used by the simulation engine too)."""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import _options
from .._checks import check_fits
from ..exceptions import InvalidParameterError
from ._kernel import FIX_TOO_LARGE, SCORES, PairStats, delta_matrix, finalize, kernel_bytes

__all__ = ["LooArrays", "loo_core"]

_LEVELS = _options.LEVELS  # the one registry of option values


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LooArrays:
    """Raw leave-one-human-out arrays for several judges and every held-out human.

    Attributes
    ----------
    s_judge : ndarray, shape (n_judges, K)
        ``S(judge; P_k)`` on the judge's eligible pairs.
    s_human : ndarray, shape (K,)
        ``S(k; P_k)`` on the items labelled by ``k`` and by at least one pool member. When
        every judge labels every such item (the usual case) this is also the human score on
        each judge's eligible set.
    s_human_judge : ndarray, shape (n_judges, K)
        ``S(k; P_k)`` on judge ``j``'s eligible set (differs from ``s_human`` only when judges
        miss items).
    d : ndarray, shape (n_judges, K)
        ``s_judge - s_human_judge``.
    n_items : ndarray of int, shape (K,)
        ``|I_k|`` ignoring judge coverage (equal to ``n_items_judge[j]`` when judge ``j`` labels
        every item).
    n_pairs : ndarray of int, shape (K,)
        Number of comparison pairs on those items.
    n_items_judge, n_pairs_judge : ndarray of int, shape (n_judges, K)
        The same counts on each judge's eligible set.

    ``nan`` marks a human with no eligible item (or an undefined chance-corrected score).
    """

    s_judge: np.ndarray
    s_human: np.ndarray
    s_human_judge: np.ndarray
    d: np.ndarray
    n_items: np.ndarray
    n_pairs: np.ndarray
    n_items_judge: np.ndarray
    n_pairs_judge: np.ndarray

    def tests(self, epsilon: float = 0.05) -> np.ndarray:
        """``T_k = 1[d_k >= -epsilon]`` as floats ``(n_judges, K)``; ``nan`` where ``d_k`` is nan."""
        with np.errstate(invalid="ignore"):
            return np.where(np.isnan(self.d), np.nan, (self.d >= -epsilon).astype(float))

    def omega(self, epsilon: float = 0.05) -> np.ndarray:
        """Winning rate per judge ``(n_judges,)``: mean of ``T_k`` over humans with a defined ``d_k``."""
        t = self.tests(epsilon)
        cnt = np.sum(~np.isnan(t), axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(cnt > 0, np.nansum(t, axis=-1) / np.maximum(cnt, 1), np.nan)


def _check_core_args(codes: np.ndarray, human_cols: np.ndarray, judge_cols: np.ndarray,
                     n_categories: int, score: str, level: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if score not in SCORES:
        raise InvalidParameterError(
            f"The 'score' parameter of loo_core must be one of {list(SCORES)}. Got {score!r} instead.")
    if level not in _LEVELS:
        raise InvalidParameterError(
            f"The 'level' parameter of loo_core must be one of {list(_LEVELS)}. Got {level!r} instead.")
    codes = np.asarray(codes)
    if codes.ndim != 2 or not np.issubdtype(codes.dtype, np.integer):
        raise InvalidParameterError(
            f"The 'codes' parameter of loo_core must be a 2-D integer array. Got shape {codes.shape}, dtype {codes.dtype}.")
    hc = np.asarray(human_cols, dtype=np.intp).ravel()
    jc = np.asarray(judge_cols, dtype=np.intp).ravel()
    if n_categories < 1:
        raise InvalidParameterError(f"The 'n_categories' parameter of loo_core must be >= 1. Got {n_categories}.")
    if hc.size < 2:
        raise InvalidParameterError(f"loo_core needs at least two human columns. Got {hc.size}.")
    return codes, hc, jc


def loo_core(codes: np.ndarray, human_cols: np.ndarray, judge_cols: np.ndarray, *, n_categories: int,
             score: str = "agreement", category_values: np.ndarray | None = None,
             level: str = "nominal") -> LooArrays:
    """Leave-one-human-out scores for several judges on a dense code array (fast path).

    Parameters
    ----------
    codes : ndarray of int, shape (n_items, n_raters)
        Category codes, ``-1`` for a missing label (as :meth:`AnnotationTable.dense`); codes
        ``>= n_categories`` (abstentions) count as missing.
    human_cols, judge_cols : ndarray of int
        Columns of the humans (K >= 2) and of the judges.
    n_categories : int
        Number of substantive categories L.
    score : {"agreement", "alpha", "kappa", "ac1"}, default "agreement"
        The agreement score S, computed on the pooled pair list (METHODS §2).
    category_values : ndarray, optional
        Numeric value of each category (interval/ratio alpha). Defaults to ``0..L-1``.
    level : {"nominal", "ordinal", "interval", "ratio"}, default "nominal"
        Level of measurement for ``score="alpha"``.

    Returns
    -------
    LooArrays

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 0, 1, 0], [1, 1, 1, 1], [0, 1, 0, 0]])  # 3 humans, 1 judge (last column)
    >>> r = loo_core(codes, np.array([0, 1, 2]), np.array([3]), n_categories=2)
    >>> r.s_judge.round(3).tolist(), r.s_human.round(3).tolist()
    ([[0.667, 0.833, 0.833]], [0.667, 0.5, 0.5])
    >>> r.d.round(3).tolist(), float(r.omega(0.05)[0])
    ([[0.0, 0.333, 0.333]], 1.0)
    >>> r.n_pairs.tolist()
    [6, 6, 6]
    """
    codes, hc, jc = _check_core_args(codes, human_cols, judge_cols, n_categories, score, level)
    if score == "agreement":
        return _loo_agreement(codes, hc, jc, n_categories)
    if category_values is None:
        category_values = np.arange(n_categories, dtype=float)
    return _loo_point(codes, hc, jc, n_categories, score, level, np.asarray(category_values, dtype=float))


def _arrays_from_stats(ps: PairStats, *, score: str, level: str, category_values: np.ndarray | None) -> LooArrays:
    sj, sh = ps.sums()
    kw = dict(score=score, level=level, n_categories=ps.n_categories, category_values=category_values)
    s_judge = finalize(sj, ps.layout, **kw)  # type: ignore[arg-type]
    s_human_judge = finalize(sh, ps.layout, **kw)  # type: ignore[arg-type]
    hs = ps.human_sums()
    s_human = finalize(hs, ps.layout, **kw)  # type: ignore[arg-type]
    npos = ps.layout["n_pairs"].start
    n_items = ps.elig_human.sum(axis=0)
    n_items_judge = ps.elig_judge.sum(axis=0)
    n_pairs = np.rint(hs[..., npos]).astype(np.int64)
    n_pairs_judge = np.rint(sj[..., npos]).astype(np.int64)
    return LooArrays(s_judge=s_judge, s_human=s_human, s_human_judge=s_human_judge,
                     d=s_judge - s_human_judge, n_items=n_items, n_pairs=n_pairs,
                     n_items_judge=n_items_judge, n_pairs_judge=n_pairs_judge)


def _loo_agreement(codes: np.ndarray, hc: np.ndarray, jc: np.ndarray, L: int) -> LooArrays:
    """Observed-agreement fast path (no one-hot arrays; the simulation engine's hot loop)."""
    H = codes[:, hc]
    G = codes[:, jc]
    vk = (H >= 0) & (H < L)
    vj = (G >= 0) & (G < L)
    nh = vk.sum(axis=1)
    m = np.where(vk, nh[:, None] - 1, 0)                       # pool labels per (i, k)
    ek = m >= 1                                                 # implies vk
    eqh = (H[:, :, None] == H[:, None, :]) & vk[:, None, :]     # (n, K, K)
    agh = np.where(ek, eqh.sum(axis=2) - 1, 0)                  # matches of y_ik with its pool
    eq = (G[:, :, None] == H[:, None, :]) & vk[:, None, :]      # (n, J, K)
    cg = eq.sum(axis=2)                                         # (n, J)
    fj = vj.astype(np.float64)
    fk = ek.astype(np.float64)
    # judge side: sum_i vj*ek*(cg - eq) and sum_i vj*ek*m
    ag_j = np.einsum("ij,ik->jk", fj * cg, fk) - np.einsum("ijk,ij,ik->jk", eq, fj, fk)
    mf = (fk * m)
    np_j = fj.T @ mf
    nit_j = fj.T @ fk
    ag_h_j = fj.T @ agh.astype(np.float64)
    np_h = mf.sum(axis=0)
    ag_h = agh.sum(axis=0).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        s_judge = np.where(np_j > 0, ag_j / np_j, np.nan)
        s_hj = np.where(np_j > 0, ag_h_j / np_j, np.nan)
        s_h = np.where(np_h > 0, ag_h / np_h, np.nan)
    return LooArrays(s_judge=s_judge, s_human=s_h, s_human_judge=s_hj, d=s_judge - s_hj,
                     n_items=ek.sum(axis=0), n_pairs=np.rint(np_h).astype(np.int64),
                     n_items_judge=np.rint(nit_j).astype(np.int64),
                     n_pairs_judge=np.rint(np_j).astype(np.int64))


def _loo_point(codes: np.ndarray, hc: np.ndarray, jc: np.ndarray, L: int, score: str, level: str,
               cvals: np.ndarray) -> LooArrays:
    """Point estimates of the chance-corrected scores: the sums of :class:`PairStats`, contracted
    directly with ``einsum`` instead of materialising per-item statistics (about twice as fast)."""
    # this direct contraction holds items x (humans + judges) x categories one-hot arrays at once
    n_it = codes.shape[0]
    check_fits(8.0 * n_it * (L + 1) * (3 * len(hc) + len(jc) + 1) + kernel_bytes(n_it, L, score, level),
               f"{L:,} categories x {n_it:,} items", FIX_TOO_LARGE)
    H = codes[:, hc]
    G = codes[:, jc]
    vk = (H >= 0) & (H < L)
    vj = (G >= 0) & (G < L)
    Hx = np.where(vk, H, L)
    Gx = np.where(vj, G, L)
    eye = np.eye(L + 1)
    Cx = eye[Hx].sum(axis=1)
    Cx[:, L] = 0.0
    C = Cx[:, :L]
    OH = eye[Hx][..., :L]                                   # (n, K, L)
    OG = eye[Gx][..., :L]                                   # (n, J, L)
    nh = vk.sum(axis=1)
    m = np.where(vk, nh[:, None] - 1, 0).astype(float)
    ek = vk & (m >= 1)
    fk = ek.astype(float)
    fjv = vj.astype(float)
    mf = fk * m
    pool = C[:, None, :] - OH                               # (n, K, L) pool category counts
    fpool = fk[..., None] * pool
    OGf = OG * fjv[..., None]
    pj: dict[str, np.ndarray] = {"n_pairs": (fjv.T @ mf)[..., None]}      # (J, K, s)
    ph: dict[str, np.ndarray] = {"n_pairs": mf[..., None]}                # per item (n, K, s)
    if score in ("kappa", "ac1") or (score == "alpha" and level == "nominal"):
        Cg = np.take_along_axis(Cx, Gx, axis=1)
        eq = ((Gx[:, :, None] == Hx[:, None, :]) & vk[:, None, :]).astype(float)
        pj["agree"] = (np.einsum("ij,ik->jk", fjv * Cg, fk) - np.einsum("ijk,ij,ik->jk", eq, fjv, fk))[..., None]
        ph["agree"] = (fk * np.maximum(np.take_along_axis(Cx, Hx, axis=1) - 1.0, 0.0))[..., None]
    rowj = np.einsum("ija,ik->jka", OGf, mf)
    colj = np.einsum("ij,ikb->jkb", fjv, fpool)
    rowh = mf[..., None] * OH
    if score == "kappa":
        pj["row"], pj["col"], ph["row"], ph["col"] = rowj, colj, rowh, fpool
    elif score == "ac1" or level != "ordinal":
        pj["marg"], ph["marg"] = rowj + colj, rowh + fpool
    if score == "alpha" and level == "ordinal":
        conf = np.einsum("ija,ikb->jkab", OGf, fpool)
        pj["conf"] = conf.reshape(conf.shape[0], conf.shape[1], L * L)
        ch = (OH * fk[..., None])[..., :, None] * pool[..., None, :]
        ph["conf"] = ch.reshape(ch.shape[0], ch.shape[1], L * L)
    elif score == "alpha" and level != "nominal":
        dm = delta_matrix(level, L, cvals)
        assert dm is not None
        D = Cx @ dm
        Dg = np.take_along_axis(D, Gx, axis=1)
        dgh = dm[Gx[:, :, None], Hx[:, None, :]]
        pj["dis"] = (np.einsum("ij,ik->jk", fjv * Dg, fk) - np.einsum("ijk,ij,ik->jk", dgh, fjv, fk))[..., None]
        ph["dis"] = (fk * np.take_along_axis(D, Hx, axis=1))[..., None]
    layout: dict[str, slice] = {}
    pos = 0
    for name, arr in pj.items():
        layout[name] = slice(pos, pos + arr.shape[-1])
        pos += arr.shape[-1]
    sj = np.concatenate(list(pj.values()), axis=-1)
    hx = np.concatenate(list(ph.values()), axis=-1)          # (n, K, S)
    hs = hx.sum(axis=0)
    shj = np.einsum("ij,iks->jks", fjv, hx)
    kw = dict(score=score, level=level, n_categories=L, category_values=cvals)
    s_judge = finalize(sj, layout, **kw)  # type: ignore[arg-type]
    s_hj = finalize(shj, layout, **kw)  # type: ignore[arg-type]
    return LooArrays(
        s_judge=s_judge, s_human=finalize(hs, layout, **kw), s_human_judge=s_hj,  # type: ignore[arg-type]
        d=s_judge - s_hj, n_items=ek.sum(axis=0), n_pairs=np.rint(hs[:, 0]).astype(np.int64),
        n_items_judge=np.rint(fjv.T @ fk).astype(np.int64), n_pairs_judge=np.rint(sj[..., 0]).astype(np.int64))
