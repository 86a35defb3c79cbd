"""Vectorised pair-list kernel for the leave-one-human-out comparison (private).

The leave-one-out scores are computed on *pair lists*: for a held-out human ``k`` and a coder
``c`` (a judge, or ``k`` itself), every eligible item ``i`` and every pool member ``r`` (a human
other than ``k``) that labelled ``i`` give one pair ``(c_i, y_ir)``. All four scores are functions
of a few sums over those pairs, and every sum is a sum over items of a per-item statistic:

* ``n_pairs``: number of pairs;
* ``agree``: number of pairs whose two labels match;
* ``dis``: sum of the disagreement metric ``delta(c_i, y_ir)`` over pairs (nominal, interval,
  ratio Krippendorff alpha);
* ``row`` / ``col`` (length L): category counts of coder 1 / coder 2 over pairs (Cohen kappa);
* ``marg`` (length L): ``row + col`` (Krippendorff alpha, Gwet AC1);
* ``conf`` (L x L): the full pair confusion matrix (ordinal alpha, whose metric depends on the
  margins).

Per-item statistics are stacked as ``(n_items, ..., S)`` arrays; a point estimate sums them over
items, a bootstrap multiplies them by a ``(n_resamples, n_items)`` matrix of resampling counts
(one BLAS matrix product, no Python loop over items or resamples).

Codes follow :meth:`voirdire.data.AnnotationTable.dense`: ``-1`` is missing; a code
``>= n_categories`` is an abstention and is treated as missing (the "exclude" policy).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._checks import check_fits
from .._stats.resampling import cluster_index, unit_sums, weight_batches, weight_key, weighted_sums
from .._stats._poisson import _distinct_columns, spread_columns
from .._stats.distances import delta, ordinal_delta
from ..exceptions import VoirdireError

from .._scores import SCORES  # noqa: E402 - the one registry of score names


def delta_matrix(level: str, n_categories: int, category_values: np.ndarray | None) -> np.ndarray | None:
    """Krippendorff's disagreement metric between categories; ``None`` for ordinal (margin-dependent).

    The returned matrix has an extra trailing row and column of zeros (the "missing" code ``L``).
    """
    L = n_categories
    if level == "ordinal":
        return None
    out = np.zeros((L + 1, L + 1))
    out[:L, :L] = delta("nominal" if category_values is None else level, category_values, n_categories=L)
    return out


def nanmean_last(x: np.ndarray) -> np.ndarray:
    """Mean over the last axis ignoring nan; nan (and no warning) where every value is nan."""
    ok = ~np.isnan(x)
    cnt = ok.sum(axis=-1)
    tot = np.where(ok, x, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)


def index_free(n_items: int, clusters: np.ndarray | None) -> bool:
    """Whether a bootstrap over ``n_items`` items (or their clusters) takes the agreement engine's
    index-free unit weights (:mod:`voirdire._stats._poisson`): from the same number of units,
    :func:`voirdire.agreement.engine.index_free_units`. Below it the resamples draw indices (the
    classical multinomial bootstrap), as before."""
    from ..agreement.engine import index_free_units

    n_units = n_items if clusters is None else cluster_index(clusters)[1]
    return index_free_units(n_units)


def index_free_sums(X: Any, n_resamples: int, rng: np.random.Generator, *, clusters: np.ndarray | None,
                    segments: np.ndarray | None) -> np.ndarray:
    """``(n_resamples, C)`` resampled column sums of the per-item statistics ``X`` (``(n_items, C)``,
    dense or sparse) with independent unit weights (one key drawn from ``rng``), per cluster when
    ``clusters`` is given. ``segments`` names each column's piece (one human's statistics) so that
    repeated pieces are multiplied once (:func:`voirdire._stats._poisson.factor_rows`)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    if clusters is not None:
        inv, n_units = cluster_index(clusters)
        X = sp.csr_matrix(unit_sums(X, inv, n_units))
    return weighted_sums(X, weight_key(rng), n_resamples, segments=segments)


def resampled_column_sums(X: np.ndarray, n_resamples: int, rng: np.random.Generator, *,
                          clusters: np.ndarray | None, segments: np.ndarray | None) -> Iterator[np.ndarray]:
    """Batches of resampled column sums of ``X`` (``(n_items, C)``): ``W @ X`` for count matrices
    ``W`` below :func:`index_free`'s size, else one batch of :func:`index_free_sums`."""
    if n_resamples and index_free(X.shape[0], clusters):
        yield index_free_sums(X, n_resamples, rng, clusters=clusters, segments=segments)
        return
    if clusters is not None:
        # the items summed to their clusters once, then the clusters' counts times those sums: the same
        # draws, a units x columns product instead of an items x columns one per batch
        inv, n_units = cluster_index(clusters)
        Xu = unit_sums(X, inv, n_units)
        Xu = Xu.toarray() if sp.issparse(Xu) else np.asarray(Xu)
        product = distinct_product(Xu)
        for Wu in weight_batches(n_units, n_resamples, rng):
            yield product(Wu)
        return
    product = distinct_product(X)
    for W in weight_batches(X.shape[0], n_resamples, rng):
        yield product(W)


def distinct_product(X: Any) -> Callable[[np.ndarray], np.ndarray]:
    """``W -> W @ X`` for a dense ``X`` whose columns are often zero or repeated (a statistic that one
    coder's labels leave at zero, a human side shared by judges): only the distinct non-zero columns
    are multiplied (each column's sums are the product of ``W`` with that same column) and copied
    where they repeat; a sparse ``X`` is multiplied as it is.

    >>> X = np.array([[1.0, 0.0, 1.0], [2.0, 0.0, 2.0]])
    >>> distinct_product(X)(np.array([[1.0, 3.0]])).tolist()
    [[7.0, 0.0, 7.0]]
    """
    if sp.issparse(X) or np.ndim(X) != 2:
        return lambda W: W @ X
    Xd = np.asarray(X)
    keep, src = _distinct_columns(Xd)
    if len(keep) == Xd.shape[1]:
        return lambda W: W @ Xd
    Xk = np.ascontiguousarray(Xd[:, keep])
    return lambda W: spread_columns(W @ Xk, src)


def _n_stats(score: str, level: str, L: int, moments: bool = False) -> int:
    """Number of per-item statistics S that :class:`PairStats` keeps for a score (``moments``: interval
    alpha's margins as their three moments, :func:`finalize`'s ``"mom"``)."""
    S = 1                                                     # n_pairs
    if score in ("agreement", "kappa", "ac1") or (score == "alpha" and level == "nominal"):
        S += 1                                                # agree
    if score == "kappa":
        S += 2 * L                                            # row, col
    elif moments:
        S += 3                                                # mom
    elif score == "ac1" or (score == "alpha" and level != "ordinal"):
        S += L                                                # marg
    if score == "alpha" and level == "ordinal":
        S += L * L                                            # conf
    elif score == "alpha" and level != "nominal":
        S += 1                                                # dis
    return S


#: statistics denser than this share of their cells are multiplied as a dense matrix (else sparse)
_DENSE_SHARE = 0.25

#: resamples multiplied at a time by a sparse statistics matrix (their sums stay in cache)
_SPARSE_ROWS = 128

#: up to this many categories, the per-item category counts take one comparison pass per category
_COMPARE_CATEGORIES = 12


def category_counts(Hx: np.ndarray, n_categories: int) -> np.ndarray:
    """``(n_items, L + 1)`` int64 counts of each category among an item's labels ``Hx`` (``(n_items, K)``
    codes, ``L`` = missing), the last column (missing) zero. Without an items x raters x categories
    one-hot: one comparison pass per category when there are few, else one count over (item,
    category) codes (the same integer counts either way).

    >>> category_counts(np.array([[0, 1, 1], [2, 3, 0]]), 3).tolist()
    [[1, 2, 0, 0], [1, 0, 1, 0]]
    """
    L = int(n_categories)
    n = Hx.shape[0]
    if L <= _COMPARE_CATEGORIES:
        C = np.zeros((n, L + 1), dtype=np.int64)
        for c in range(L):
            C[:, c] = np.count_nonzero(Hx == c, axis=1)
        return C
    C = np.bincount((np.arange(n)[:, None] * (L + 1) + Hx).ravel(), minlength=n * (L + 1)).reshape(n, L + 1)
    C[:, L] = 0
    return C

def csr_side_by_side(blocks: list[np.ndarray]) -> sp.csr_matrix:
    """Dense 2-d blocks with the same rows, side by side, as one CSR matrix: each row's nonzeros in
    column order, the matrix ``sp.csr_matrix(np.hstack(blocks))`` is (same indptr, indices and data),
    without the dense copy, and without scipy's COO pass per block and one more to join them.

    >>> a, b = np.array([[0.0, 2.0], [3.0, 0.0]]), np.array([[5.0], [0.0]])
    >>> csr_side_by_side([a, b]).toarray().tolist()
    [[0.0, 2.0, 5.0], [3.0, 0.0, 0.0]]
    """
    n = blocks[0].shape[0]
    masks = [blk != 0 for blk in blocks]
    counts = [m.sum(axis=1) for m in masks]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sum(counts), out=indptr[1:])
    nnz = int(indptr[-1])
    width = sum(blk.shape[1] for blk in blocks)
    itype = np.int32 if max(nnz, width) < 2**31 - 1 else np.int64
    data = np.empty(nnz)
    indices = np.empty(nnz, dtype=itype)
    start = indptr[:-1].copy()  # where each row's entries of the next block go
    off = 0
    for blk, m, c in zip(blocks, masks, counts):
        r, col = np.nonzero(m)  # row-major: a row's entries in column order
        first = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(c, out=first[1:])
        pos = start[r] + (np.arange(r.size) - first[r])
        data[pos] = blk[r, col]
        indices[pos] = col + off
        start += c
        off += blk.shape[1]
    return sp.csr_matrix((data, indices, indptr.astype(itype)), shape=(n, width))


FIX_TOO_LARGE = ("treat numeric labels as numbers (--scale interval or ordinal), merge rare categories, or use a "
                 "subset of the items.")


def kernel_bytes(n_items: int, n_categories: int, score: str, level: str) -> float:
    """Bytes the kernel holds per table: the per-item category counts (items x categories), and for
    interval/ratio alpha also the categories x categories distance matrix and its product with the
    counts. (The per-item statistics themselves are built in chunks of :attr:`PairStats.chunk_floats`.)"""
    L1 = float(n_categories) + 1.0
    n_bytes = 8.0 * n_items * L1
    if score == "alpha" and level not in ("nominal", "ordinal"):
        n_bytes += 8.0 * L1 * L1 + 8.0 * n_items * L1
    return n_bytes


def check_kernel_fits(n_items: int, n_categories: int, score: str, level: str) -> None:
    """Refuse before allocating (``too large: N categories x M items needs X GiB ...``).

    Numeric scales count too: the kernel keeps one column per distinct value whatever the scale,
    so this is what a continuous score with many distinct values really needs."""
    check_fits(kernel_bytes(n_items, n_categories, score, level), f"{n_categories:,} categories x {n_items:,} items",
               FIX_TOO_LARGE)


def check_memory(table: Any, score: str | None = None) -> None:
    """Refuse a table too large for memory before any work: one line, ``too large: N categories x
    M items needs X GiB, more than the Y GiB of memory available; ...``.

    The humans' agreement builds items x categories counts on categorical scales (the agreement
    functions check the same), and the leave-one-out kernel (``score`` given) items x categories
    counts on any scale (:func:`kernel_bytes`). Called first by
    :func:`voirdire.workflows.validate_judges` and by the report.
    """
    n, L = int(table.n_items), int(table.n_categories)
    need = 0.0 if table.scale.is_numeric else 16.0 * n * (L + 1)
    if score is not None:
        level = table.scale.level if score == "alpha" else "nominal"
        need = max(need, kernel_bytes(n, L, score, level))
    check_fits(need, f"{L:,} categories x {n:,} items", FIX_TOO_LARGE)


class PairStats:
    """Per-item pair statistics for every (judge, held-out human) and (held-out human) combination.

    Attributes
    ----------
    shape : tuple
        ``(n_items, J, K, S)``: the per-item statistics of the pairs (judge_i, pool label) on the
        judge's eligible items, and (y_ik, pool label) on the items labelled by k and >= 1 pool
        member (``(n_items, K, S)``). They are built whole when small, else in item chunks.
    judge_valid : ndarray of bool, shape (n_items, J)
        Whether each judge labelled each item (the human statistics of judge ``j`` are
        ``human`` restricted to these items).
    complete_judges : bool
        True when every judge labelled every item a human-side pair exists for (then the human
        statistics do not depend on the judge).
    elig_judge : ndarray of bool, shape (n_items, J, K)
        Eligibility of item i for (judge j, human k).
    elig_human : ndarray of bool, shape (n_items, K)
        Eligibility of item i for human k (judges ignored).
    """

    __slots__ = ("judge_valid", "complete_judges", "elig_judge", "elig_human", "layout", "n_categories",
                 "n_items", "shape", "_score", "_level", "_dm", "_Hx", "_Gx", "_vk", "_C", "_m", "_cache", "_hsum",
                 "_items", "_moments", "_wpow")

    #: per-item statistics are materialised whole below this many floats, else in item chunks
    max_floats = 50_000_000
    #: ... and, above ``max_floats``, materialised on demand in item chunks of this many floats
    chunk_floats = 20_000_000
    #: a table held whole is built in item chunks of this many floats (temporaries of a few MB, which
    #: the allocator hands out again from chunk to chunk instead of mapping fresh pages each time)
    build_floats = 2_000_000

    def __init__(self, codes: np.ndarray, human_cols: np.ndarray, judge_cols: np.ndarray, *,
                 n_categories: int, score: str, level: str, category_values: np.ndarray | None,
                 full_pool: bool = False) -> None:
        L = int(n_categories)
        codes = np.asarray(codes)
        check_kernel_fits(codes.shape[0], L, score, level)
        H = codes[:, human_cols]
        G = codes[:, judge_cols]
        vk = (H >= 0) & (H < L)
        vj = (G >= 0) & (G < L)
        Hx = np.where(vk, H, L)
        Gx = np.where(vj, G, L)
        n = H.shape[0]
        # human category counts (+ a column for "missing", kept at zero)
        C = category_counts(Hx, L).astype(np.float64)
        nh = vk.sum(axis=1)               # (n,)
        m = vk * np.maximum(nh - 1, 0).astype(float)[:, None]   # (n, K) pool size when k labelled i
        ek = vk & (m >= 1)                # (n, K)
        if full_pool:
            # one extra "held-out human" who labels nothing: its pool is every human, so the
            # judge-side statistics of this column compare the judge with the full pool.
            Hx = np.concatenate([Hx, np.full((n, 1), L)], axis=1)
            vk = np.concatenate([vk, np.zeros((n, 1), dtype=bool)], axis=1)
            m = np.concatenate([m, nh[:, None].astype(float)], axis=1)
            ek = np.concatenate([ek, (nh >= 1)[:, None]], axis=1)
        self.judge_valid = vj
        self.elig_human = ek
        self.elig_judge = vj[:, :, None] & ek[:, None, :]              # (n, J, K)
        self.complete_judges = bool(vj[ek.any(axis=1)].all())
        self.n_categories = L
        self.n_items = n
        self._score, self._level = score, level
        self._dm = delta_matrix(level, L, category_values) if score == "alpha" and level not in ("nominal", "ordinal") else None
        # interval alpha: the expected disagreement needs only the margins' moments (count, sum and sum of
        # squares of the values, taken about the labels' mean so that m0 s2 - s1^2 does not cancel), so
        # three columns stand for the L of the margins: the same alpha to rounding, and a bootstrap
        # product over 3 columns instead of one per distinct value (many on averaged or fine scales)
        self._moments = score == "alpha" and level == "interval" and category_values is not None and L > 3
        self._wpow: np.ndarray | None = None
        if self._moments:
            v = np.asarray(category_values, dtype=float)[:L]
            counts = np.bincount(H[vk], minlength=L)[:L] + np.bincount(G[vj], minlength=L)[:L]
            w = v - (float(counts @ v) / float(counts.sum()) if counts.sum() else 0.0)
            wp = np.zeros((3, L + 1))  # w^0, w^1, w^2 per code; the "missing" code L counts nothing
            wp[0, :L], wp[1, :L], wp[2, :L] = 1.0, w, w * w
            self._wpow = wp
        self._Hx, self._Gx, self._vk, self._C, self._m = Hx, Gx, vk, C, m
        self._cache: tuple[np.ndarray, np.ndarray] | None = None
        self._hsum: np.ndarray | None = None  # human_sums(), once summed
        self._items: tuple[sp.csr_matrix, np.ndarray] | None = None  # item_matrix() of a table held whole
        J, K = Gx.shape[1], Hx.shape[1]
        S = _n_stats(score, level, L, self._moments)
        if n * J * K * S <= self.max_floats:
            step = max(1, min(self.build_floats, self.max_floats) // max(J * K * S, 1))
            if n <= step:
                j_all, h_all, self.layout = self._build(slice(0, n))
            else:  # held whole, built a chunk of items at a time (the build's temporaries stay chunk-sized)
                j_all = np.empty((n, J, K, S))
                h_all = np.empty((n, K, S))
                for a in range(0, n, step):
                    sl = slice(a, min(n, a + step))
                    _, _, self.layout = self._build(sl, out=(j_all[sl], h_all[sl]))
            self._cache = (j_all, h_all)
        else:
            _, _, self.layout = self._build(slice(0, 1))
        self.shape = (n, J, K, max(s.stop for s in self.layout.values()))

    def _build(self, sl: slice, out: tuple[np.ndarray, np.ndarray] | None = None
               ) -> tuple[np.ndarray, np.ndarray, dict[str, slice]]:
        """Per-item statistics of the items in ``sl``: judge side (b, J, K, S), human side (b, K, S),
        written into ``out`` when given (each statistic straight into its columns, no concatenation)."""
        L = self.n_categories
        score, level = self._score, self._level
        Hx, Gx, vk, Cx, m = self._Hx[sl], self._Gx[sl], self._vk[sl], self._C[sl], self._m[sl]
        ek = self.elig_human[sl]
        ej = self.elig_judge[sl]
        C = Cx[:, :L]
        eye = np.eye(L + 1)[:, :L]
        fj = ej.astype(float)
        fh = ek.astype(float)
        b, J, K = ej.shape
        S = _n_stats(score, level, L, self._moments)
        outj, outh = out if out is not None else (np.empty((b, J, K, S)), np.empty((b, K, S)))
        layout: dict[str, slice] = {}
        filled = 0

        def add(name: str, pj: np.ndarray, ph: np.ndarray) -> None:
            nonlocal filled
            pj = pj[..., None] if pj.ndim == 3 else pj
            ph = ph[..., None] if ph.ndim == 2 else ph
            layout[name] = slice(filled, filled + pj.shape[-1])
            outj[..., layout[name]] = pj
            outh[..., layout[name]] = ph
            filled += pj.shape[-1]

        # the first statistics straight into their columns (a bool times a float is the float or 0.0:
        # the values of fj * x, without the float copy of the mask)
        npj, nph = outj[..., 0], outh[..., 0]
        np.multiply(ej, m[:, None, :], out=npj)
        np.multiply(ek, m, out=nph)
        layout["n_pairs"] = slice(0, 1)
        filled = 1
        if score in ("agreement", "kappa", "ac1") or (score == "alpha" and level == "nominal"):
            Cg = np.take_along_axis(Cx, Gx, axis=1)                     # (n, J)
            eq = (Gx[:, :, None] == Hx[:, None, :]) & vk[:, None, :]    # (n, J, K)
            np.multiply(ej, Cg[:, :, None] - eq, out=outj[..., 1])
            Ch = np.take_along_axis(Cx, Hx, axis=1)                     # (n, K)
            Ch -= 1.0
            np.maximum(Ch, 0.0, out=Ch)
            np.multiply(ek, Ch, out=outh[..., 1])
            layout["agree"] = slice(1, 2)
            filled = 2
        if self._moments:
            # the margins below, as sum_c marg_c w_c^p (p = 0, 1, 2) without forming them: the pool's counts
            # times w^p, less the held-out human's own label, plus n_pairs at the coder's label
            wp = self._wpow
            assert wp is not None
            sm = slice(filled, filled + 3)
            layout["mom"] = sm
            filled += 3
            for p in range(3):
                cp = Cx @ wp[p]                                         # (b,)
                wh, wg = wp[p][Hx], wp[p][Gx]                           # (b, K), (b, J): 0 where missing
                np.multiply(fj, cp[:, None, None] - wh[:, None, :], out=outj[..., sm.start + p])
                outj[..., sm.start + p] += npj * wg[:, :, None]
                np.multiply(fh, cp[:, None] - wh, out=outh[..., sm.start + p])
                outh[..., sm.start + p] += nph * wh
        elif score == "ac1" or (score == "alpha" and level != "ordinal"):
            # marg = row + col written straight into its columns, without the (n, J, K, L) one-hots and their
            # products: the coder's category counts C times eligibility, minus the held-out human's own label
            # (the pool is C less it), plus n_pairs at the coder's label. Integer counts, so the same floats
            # as the one-hot sums (and a third of the build's time on many distinct values: bench/slices.md)
            sm = slice(filled, filled + L)
            layout["marg"] = sm
            filled += L
            mj, mh = outj[..., sm], outh[..., sm]
            np.multiply(fj[..., None], C[:, None, None, :], out=mj)
            np.multiply(fh[..., None], C[:, None, :], out=mh)
            ih, kh = np.nonzero(Hx < L)
            ch = Hx[ih, kh]
            mj[ih, :, kh, ch] -= fj[ih, :, kh]
            mh[ih, kh, ch] += nph[ih, kh] - fh[ih, kh]
            ig, jg = np.nonzero(Gx < L)
            mj[ig, jg, :, Gx[ig, jg]] += npj[ig, jg, :]
        if score == "kappa" or (score == "alpha" and level == "ordinal"):
            OH = eye[Hx]                                                # (n, K, L) one-hot, zero when missing
            pool = C[:, None, :] - OH                                   # (n, K, L)
            colj = fj[..., None] * pool[:, None, :, :]                  # (n, J, K, L)
            colh = fh[..., None] * pool                                 # (n, K, L)
            OG = eye[Gx]                                                # (n, J, L)
            rowj = npj[..., None] * OG[:, :, None, :]
            rowh = nph[..., None] * OH
            if score == "kappa":
                add("row", rowj, rowh)
                add("col", colj, colh)
            else:
                confj = OG[:, :, None, :, None] * pool[:, None, :, None, :] * fj[..., None, None]
                confh = OH[:, :, :, None] * pool[:, :, None, :] * fh[..., None, None]
                b, J, K = confj.shape[:3]
                add("conf", confj.reshape(b, J, K, L * L), confh.reshape(b, K, L * L))
        if score == "alpha" and level not in ("nominal", "ordinal"):
            dm = self._dm
            if dm is None:  # set in __init__ for exactly this score/level
                raise VoirdireError("internal error: no delta matrix for an interval/ratio alpha kernel")
            D = Cx @ dm                                            # (n, L+1): sum_b C_b delta(a, b)
            Dg = np.take_along_axis(D, Gx, axis=1)                  # (n, J)
            dgh = dm[Gx[:, :, None], Hx[:, None, :]]                # (n, J, K)
            disj = fj * (Dg[:, :, None] - dgh)
            Dh = np.take_along_axis(D, Hx, axis=1)
            dish = fh * Dh
            add("dis", disj, dish)
        if filled != S:  # pragma: no cover - _n_stats counts what is added above
            raise VoirdireError(f"internal error: {filled} pair statistics built, {S} expected")
        return outj, outh, layout

    def _chunks(self):
        """Yield ``(slice, judge_stats, human_stats)`` over item chunks (one chunk when cached)."""
        if self._cache is not None:
            yield slice(0, self.n_items), self._cache[0], self._cache[1]
            return
        n, J, K, S = self.shape
        step = max(1, min(self.chunk_floats, self.max_floats) // max(J * K * S, 1))
        for a in range(0, n, step):
            sl = slice(a, min(n, a + step))
            pj, ph, _ = self._build(sl)
            yield sl, pj, ph

    def human_sums(self) -> np.ndarray:
        """Human-side statistics summed over items, ignoring judge coverage: ``(K, S)``."""
        if self._hsum is None:
            self._hsum = sum(ph.sum(axis=0) for _, _, ph in self._chunks())  # type: ignore[assignment]
        return self._hsum.copy()  # type: ignore[union-attr]

    def item_matrix(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """The per-item statistics as one sparse ``(n_items, J*K*S + H)`` matrix, judge side first
        (``H`` = ``K*S`` when :attr:`complete_judges`, else ``J*K*S``: the human side restricted to
        each judge's items), and each column's segment (one (judge, human) pair or one human)."""
        if self._items is not None:  # the bootstrap and the jackknife both read it
            return self._items
        n, J, K, S = self.shape
        vjf = self.judge_valid.astype(float)
        parts = []
        for sl, pj, ph in self._chunks():
            b = pj.shape[0]
            hx = ph if self.complete_judges else vjf[sl][:, :, None, None] * ph[:, None, :, :]
            # both sides as one CSR matrix (the rows, indices and values of one dense concatenation converted,
            # without copying the dense blocks into it, nor a COO pass per side and one more to join them)
            parts.append(csr_side_by_side([pj.reshape(b, -1), hx.reshape(b, -1)]))
        X = parts[0] if len(parts) == 1 else sp.vstack(parts, format="csr")
        seg_j = np.repeat(np.arange(J * K), S)
        seg_h = J * K + (np.repeat(np.arange(K), S) if self.complete_judges else seg_j)
        out = (X, np.concatenate([seg_j, seg_h]))
        if self._cache is not None:
            self._items = out
        return out

    def split_sums(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Column sums of :meth:`item_matrix` ``(b, columns)`` as :meth:`sums` gives them: judge side and
        human side, each ``(b, J, K, S)``."""
        _, J, K, S = self.shape
        b = s.shape[0]
        sj = s[:, :J * K * S].reshape(b, J, K, S)
        if self.complete_judges:
            return sj, np.broadcast_to(s[:, J * K * S:].reshape(b, 1, K, S), sj.shape)
        return sj, s[:, J * K * S:].reshape(sj.shape)

    def unit_matrix(self, clusters: np.ndarray | None) -> Any:
        """:meth:`item_matrix` summed to the resampling units (items, or clusters when given); items of a
        table held whole come as its two dense blocks (judge side, human side), not copied into one."""
        if clusters is None and self._cache is not None:
            pj, ph = self._cache
            n = pj.shape[0]
            hx = ph if self.complete_judges else self.judge_valid.astype(float)[:, :, None, None] * ph[:, None, :, :]
            return [pj.reshape(n, -1), hx.reshape(n, -1)]
        X, _ = self.item_matrix()
        if clusters is None:
            return X
        inv, n_units = cluster_index(clusters)
        return sp.csr_matrix(unit_sums(X, inv, n_units))

    def resampled_sums(self, n_resamples: int, rng: np.random.Generator, *, clusters: np.ndarray | None,
                       batch: int | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Batches of resampled :meth:`sums` ``(b, J, K, S)`` (judge side, human side), ``n_resamples``
        in all: bootstrap counts ``W`` (``batch`` rows at a time) below :func:`index_free`'s size,
        else one batch of independent unit weights over :meth:`item_matrix`."""
        n = self.shape[0]
        if n_resamples and index_free(n, clusters):
            X, seg = self.item_matrix()
            yield self.split_sums(index_free_sums(X, n_resamples, rng, clusters=clusters, segments=seg))
            return
        if self._cache is not None:
            # the statistics summed to the units once (clusters: :meth:`unit_matrix`), then each batch of the
            # units' counts times them: the same draws as counts spread to the items, units x columns per
            # batch, and over the nonzero statistics only when they are sparse (one-hot categories)
            X = sp.csr_matrix(self.item_matrix()[0] if clusters is None else self.unit_matrix(clusters))
            dense = X.nnz > _DENSE_SHARE * X.shape[0] * X.shape[1]
            product = distinct_product(X.toarray()) if dense else None
            XT = X.T  # CSC over the units (no copy)
            for Wu in weight_batches(X.shape[0], n_resamples, rng, batch=batch):
                if product is not None:
                    yield self.split_sums(product(Wu))
                    continue
                # sparse: ``Wu @ X`` is scipy's ``(X.T @ Wu.T).T``, X.T read as CSC over the units: each column's
                # sum taken over the units in the same order as a CSR transpose times a contiguous copy of Wu.T
                # (the same floats), without the CSR transpose; row-major after, as finalize's sums expect. A few
                # resamples at a time: each nonzero adds a resample-long row into its column's sums, and with
                # _SPARSE_ROWS resamples those rows stay in cache (all 2,000 at once streamed them from memory:
                # 23 -> 13 ms a HANNA criterion's judge); each sum is still added over the units in order
                s = np.empty((Wu.shape[0], X.shape[1]))
                for a in range(0, Wu.shape[0], _SPARSE_ROWS):
                    s[a:a + _SPARSE_ROWS] = (XT @ Wu[a:a + _SPARSE_ROWS].T).T  # scipy's Wu @ X, XT made once
                yield self.split_sums(s)
            return
        for W in weight_batches(n, n_resamples, rng, clusters=clusters, batch=batch):
            yield self.sums(W)

    # ------------------------------------------------------------------ reductions
    def sums(self, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Summed statistics: judge side ``(..., J, K, S)`` and human side ``(..., J, K, S)``.

        ``weights`` is ``None`` (plain sum over items) or a ``(B, n_items)`` matrix of item weights
        (bootstrap counts); the leading ``...`` is then ``B``.
        """
        n, J, K, S = self.shape
        vjf = self.judge_valid.astype(float)
        if weights is None:
            sj = np.zeros((J, K, S))
            sh = np.zeros((J, K, S)) if not self.complete_judges else np.zeros((K, S))
            for sl, pj, ph in self._chunks():
                sj += pj.sum(axis=0)
                if self.complete_judges:
                    sh += ph.sum(axis=0)
                else:
                    sh += np.einsum("ij,iks->jks", vjf[sl], ph)
            if self.complete_judges:
                self._hsum = sh.copy()  # the same sums, added in the same order, as human_sums()
                sh = np.broadcast_to(sh, (J, K, S))
            return sj, sh
        W = np.asarray(weights, dtype=float)
        B = W.shape[0]
        sj = np.zeros((B, J * K * S))
        sh = np.zeros((B, K * S)) if self.complete_judges else np.zeros((B, J * K * S))
        for sl, pj, ph in self._chunks():
            Ws = W[:, sl]
            b = pj.shape[0]
            sj += Ws @ pj.reshape(b, -1)
            if self.complete_judges:
                sh += Ws @ ph.reshape(b, -1)
            else:
                hx = vjf[sl][:, :, None, None] * ph[:, None, :, :]
                sh += Ws @ hx.reshape(b, -1)
        sjr = sj.reshape(B, J, K, S)
        if self.complete_judges:
            return sjr, np.broadcast_to(sh.reshape(B, 1, K, S), (B, J, K, S))
        return sjr, sh.reshape(B, J, K, S)


def finalize(stats: np.ndarray, layout: dict[str, slice], *, score: str, level: str,
             n_categories: int, category_values: np.ndarray | None) -> np.ndarray:
    """Score from summed pair statistics ``(..., S)`` -> ``(...)``; nan where undefined."""
    N = stats[..., layout["n_pairs"]][..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        if score == "agreement":
            out = stats[..., layout["agree"]][..., 0] / N
        elif score == "kappa":
            po = stats[..., layout["agree"]][..., 0] / N
            pe = np.sum(stats[..., layout["row"]] * stats[..., layout["col"]], axis=-1) / N**2
            out = np.where(pe < 1.0 - 1e-12, (po - pe) / (1.0 - pe), np.nan)
        elif score == "ac1":
            L = n_categories
            po = stats[..., layout["agree"]][..., 0] / N
            pi = stats[..., layout["marg"]] / (2.0 * N[..., None])
            pe = np.sum(pi * (1.0 - pi), axis=-1) / (L - 1) if L > 1 else np.full_like(po, np.nan)
            out = np.where(pe < 1.0 - 1e-12, (po - pe) / (1.0 - pe), np.nan)
        elif score == "alpha":
            nn = 2.0 * N
            if level == "ordinal":
                L = n_categories
                conf = stats[..., layout["conf"]].reshape(stats.shape[:-1] + (L, L))
                marg = conf.sum(axis=-1) + conf.sum(axis=-2)
                dl = ordinal_delta(marg)
                dis = np.sum(conf * dl, axis=(-1, -2))
                de = np.einsum("...a,...ab,...b->...", marg, dl, marg)
            elif "mom" in layout:  # interval, margins as moments about the labels' mean (PairStats)
                dis = stats[..., layout["dis"]][..., 0]
                mom = stats[..., layout["mom"]]
                m0, s1, s2 = mom[..., 0], mom[..., 1], mom[..., 2]
                # marg^T dl marg = 2 (M0 sum m w^2 - (sum m w)^2); below 1e-12 of M0 sum m w^2 it is rounding
                # (every value of the resample equal), and alpha is undefined there as when it is exactly 0
                de = 2.0 * (m0 * s2 - s1 * s1)
                de = np.where(de > 1e-12 * m0 * s2, de, 0.0)
            else:
                marg = stats[..., layout["marg"]]
                if level == "nominal":
                    dis = N - stats[..., layout["agree"]][..., 0]
                    de = nn**2 - np.sum(marg**2, axis=-1)
                elif level == "interval" and category_values is not None:
                    dis = stats[..., layout["dis"]][..., 0]
                    # marg^T dl marg with dl_ab = (v_a - v_b)^2 is 2 M0 sum_a m_a (v_a - mu)^2 (M0 = sum_a m_a,
                    # mu = sum_a m_a v_a / M0): L operations per output instead of the L^2 of the matrix
                    # product (most of a bootstrap's time on many distinct values), taken about the
                    # outputs' own mean (two passes: positive terms, no cancellation); M0 = 0 gives nan
                    v = np.asarray(category_values, dtype=float)[:n_categories]
                    m0 = marg.sum(axis=-1)
                    mu = np.einsum("...a,a->...", marg, v) / m0
                    de = 2.0 * m0 * np.einsum("...a,...a->...", marg, (v - mu[..., None]) ** 2)
                else:
                    dm = delta_matrix(level, n_categories, category_values)
                    assert dm is not None
                    dl = dm[:n_categories, :n_categories]
                    dis = stats[..., layout["dis"]][..., 0]
                    # marg^T dl marg: one matrix product (a three-operand einsum loops over a and b in C,
                    # L^2 per output: most of a bootstrap's time on scores with many distinct values)
                    md = (marg.reshape(-1, n_categories) @ dl).reshape(marg.shape)
                    de = np.einsum("...a,...a->...", md, marg)
            # alpha = 1 - (n.. - 1) * sum_ab o_ab delta_ab / sum_ab n_a n_b delta_ab, o = N + N^T
            out = np.where(de > 1e-12 * np.maximum(nn, 1.0) ** 2, 1.0 - (nn - 1.0) * 2.0 * dis / de, np.nan)
        else:  # pragma: no cover - checked by callers
            raise ValueError(score)
    return np.where(N > 0, out, np.nan)
