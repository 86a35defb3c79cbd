"""Bootstrap weights drawn without indices: one byte per unit and resample, a fixed weight law,
and the resampled sums of per-unit statistics as blocked matrix products.

The classical bootstrap draws ``n`` indices per resample and counts them (a multinomial weight
vector). For many distinct units (continuous scores: no two items alike) that costs two passes
of scattered memory per unit and resample. Here every unit gets an independent weight per
resample from the law

    w = 0, 1, 2, 3, 4, 5   with probabilities   (94, 95, 46, 16, 4, 1) / 256,

which has mean 1, variance 1 and third central moment 0.984, like the Poisson(1) weights of
the Poisson bootstrap (1, 1, 1) and the multinomial weights they approximate (1, 1 - 1/n,
about 1). Any independent weights with mean 1 and variance 1 give a first-order correct
bootstrap (Mason and Newton 1992; Praestgaard and Wellner 1993); matching the third moment as
well keeps the skewness of the resampled sums. A weight is one random byte compared with five
thresholds, so drawing costs a fraction of a nanosecond, and the weights of unit ``i`` in
resample ``b`` depend only on the key, ``i`` and ``b`` (each group of units reads its own
stretch of one PCG64 stream, reached by jumping ahead): a table read whole, in chunks from disk, or in partitions on
several machines gets the same weights and so the same bootstrap distribution.

References
----------
Mason, D. M. and Newton, M. A. (1992). A rank statistics approach to the consistency of a
general bootstrap. Annals of Statistics 20(3), 1611-1624.
Hanley, J. A. and MacGibbon, B. (2006). Creating non-parametric bootstrap samples using
Poisson frequencies. Computer Methods and Programs in Biomedicine 83(1), 57-62.
Chamandy, N., Muralidharan, O., Najmi, A. and Naidu, S. (2012). Estimating uncertainty for
massive data streams. Google technical report.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._optional import optional_import
from .parallel import n_threads

__all__ = ["WEIGHT_COUNTS", "factor_rows", "spread_columns", "weight_key", "unit_weights", "weighted_sums"]

WEIGHT_COUNTS = (94, 95, 46, 16, 4, 1)  # out of 256: P(w = 0), ..., P(w = 5)
_THRESHOLDS = tuple(int(t) for t in np.cumsum(WEIGHT_COUNTS)[:-1])  # w = #(thresholds <= byte)
GROUP_UNITS = 16384  # units per generator stream (the unit of work of a thread)
_CHUNK = 96  # units per dense matrix product: their bytes, weights and float32 weights stay in L2
_DRAW_UNITS = 4 * _CHUNK  # units whose weights are made together (bytes, weights and scratch: 1.2 KB a unit at B = 1,000)
_SPARSE_CHUNK = 4096  # units per sparse product (sparse calls on fewer rows cost more than they save)


def weight_key(gen: np.random.Generator) -> int:
    """A 128-bit seed drawn from ``gen``: everything random downstream."""
    hi, lo = (int(x) for x in gen.integers(0, 2**63, size=2, dtype=np.int64))
    return (hi << 64) | lo


def _stride(B: int) -> int:
    """Bytes of the stream per unit: ``B`` rounded up to whole 64-bit words."""
    return -(-B // 8) * 8


def _stream(key: int, group: int, B: int) -> np.random.PCG64:
    """The bit generator of ``key`` placed at the first word of group ``group``'s stretch.

    Unit ``i`` (``i = group * GROUP_UNITS + j``) owns bytes ``j * stride .. j * stride + B - 1``
    of its group's stretch, which starts at word ``group * GROUP_UNITS * stride / 8`` of the one
    PCG64 stream of ``key`` (PCG64 jumps there in O(log) steps), so units can be drawn in any
    order, on any thread, by chunks of any size.
    """
    bg = np.random.PCG64(key)
    bg.advance(group * GROUP_UNITS * (_stride(B) // 8))
    return bg


def _next_bytes(bg: np.random.PCG64, m: int, B: int) -> np.ndarray:
    """The random bytes of the next ``m`` units of ``bg``'s stretch, shape ``(m, B)`` (a view)."""
    st = _stride(B)
    return bg.random_raw(m * st // 8).view(np.uint8).reshape(m, st)[:, :B]


def _raw(key: int, group: int, n_units: int, B: int) -> np.ndarray:
    """The random bytes of one group's units in ``B`` resamples, shape ``(units, B)``."""
    m = min(GROUP_UNITS, n_units - group * GROUP_UNITS)
    return _next_bytes(_stream(key, group, B), m, B)


def _weights_into(u: np.ndarray, w: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """The weights of random bytes ``u`` (the number of thresholds each byte reaches) into ``w``
    (uint8, same shape; ``tmp``: a bool scratch array of that shape)."""
    np.greater_equal(u, _THRESHOLDS[0], out=tmp)
    w[...] = tmp.view(np.uint8)
    for t in _THRESHOLDS[1:]:
        np.greater_equal(u, t, out=tmp)
        np.add(w, tmp.view(np.uint8), out=w)
    return w


#: units whose bytes are turned into weights together (their bytes stay in cache for the five passes)
_WEIGHT_ROWS = 256


def _group_weights(key: int, group: int, n_units: int, B: int) -> np.ndarray:
    """Weights (uint8) of the units of one group in ``B`` resamples, shape ``(units, B)``."""
    u = _raw(key, group, n_units, B)
    w = np.empty(u.shape, dtype=np.uint8)
    tmp = np.empty((min(_WEIGHT_ROWS, u.shape[0]), B), dtype=bool)
    for lo in range(0, u.shape[0], _WEIGHT_ROWS):
        m = min(_WEIGHT_ROWS, u.shape[0] - lo)
        _weights_into(u[lo:lo + m], w[lo:lo + m], tmp[:m])
    return w


def unit_weights(key: int, start: int, stop: int, n_units: int, B: int) -> np.ndarray:
    """Weights (uint8) of units ``start .. stop-1`` in ``B`` resamples, shape ``(stop - start, B)``."""
    if stop <= start:
        return np.zeros((0, B), dtype=np.uint8)
    g0, g1 = start // GROUP_UNITS, (stop - 1) // GROUP_UNITS
    parts = [_group_weights(key, g, n_units, B) for g in range(g0, g1 + 1)]
    w = parts[0] if len(parts) == 1 else np.concatenate(parts)
    off = start - g0 * GROUP_UNITS
    return w[off: off + stop - start]


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser (uint64 in, uint64 out, wrap-around arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def factor_rows(S: Any, segments: np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix] | None:
    """``S = M @ G`` with ``G`` the distinct *pieces* of ``S`` and ``M`` counting them per row.

    A piece is a row's entries in one segment of columns (``segments[j]``: the segment of column
    ``j``). Where many rows carry the same pieces (a rater's statistics on an item depend only on
    the item's label counts and the rater's label), ``M`` has far fewer non-zeros than ``S`` and
    ``W @ S`` is cheaper as ``(W @ M) @ G``. Exact: pieces are matched by a hash of their columns
    and values and the product ``M @ G`` is compared with ``S``; None when it differs (a hash
    collision) or when factoring saves nothing.
    """
    S = sp.csr_matrix(S, dtype=np.float64)
    S.sum_duplicates()
    S.eliminate_zeros()
    n, k = S.shape
    seg = np.asarray(segments, dtype=np.int64)
    # columns in segment order, so each piece is a contiguous run of a row's sorted indices
    order = np.argsort(seg, kind="stable")  # column j of Sp is column order[j] of S
    Sp = S[:, order].tocsr()
    Sp.sort_indices()
    if Sp.nnz == 0:
        return None
    rows = np.repeat(np.arange(n), np.diff(Sp.indptr))
    sg = seg[order][Sp.indices]
    key = rows * (int(seg.max()) + 1) + sg
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    h = _mix(Sp.indices.astype(np.uint64) + np.uint64(1)) * (_mix(Sp.data.view(np.uint64)) | np.uint64(1))
    with np.errstate(over="ignore"):
        ph = np.add.reduceat(h, starts)
    ph = _mix(ph ^ _mix(sg[starts].astype(np.uint64)))
    types, first, tid = np.unique(ph, return_index=True, return_inverse=True)
    if types.size * 2 > starts.size:
        return None  # pieces hardly repeat: nothing to gain
    tid = tid.ravel()
    M = sp.csr_matrix((np.ones(starts.size), (rows[starts], tid)), shape=(n, types.size))
    M.sum_duplicates()
    ends = np.r_[starts[1:], Sp.nnz]
    fs, fe = starts[first], ends[first]
    cnt = fe - fs
    idx = np.repeat(fs, cnt) + (np.arange(cnt.sum()) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    G = sp.csr_matrix((Sp.data[idx], (np.repeat(np.arange(types.size), cnt), order[Sp.indices[idx]])),
                      shape=(types.size, k))
    if (M @ G != S).nnz:  # pragma: no cover - a 64-bit hash collision
        return None
    return M, G


def _blas_single() -> Any:
    """A context in which BLAS runs on the calling thread only (the groups are the parallel
    work: BLAS threads inside each group's small products only spin and contend)."""
    tp = optional_import("threadpoolctl")
    return tp.threadpool_limits(1, user_api="blas") if tp is not None else contextlib.nullcontext()


def _distinct_columns(S: np.ndarray) -> tuple[list[int], list[int]]:
    """The columns of ``S`` to multiply and where each column's sums come from.

    Returns ``(keep, src)``: ``keep`` the first column of each distinct non-zero column, ``src[k]``
    the position in ``keep`` of column ``k``'s copy (``-1``: column ``k`` is zero). Columns are
    keyed by one weighted sum each (the same operations for every column, so equal columns get
    equal keys) and only columns with equal keys are compared whole, so the answer is exact at
    about two passes over ``S``.

    >>> S = np.array([[0.0, 1.0, 2.0, 1.0], [0.0, 3.0, 4.0, 3.0]])
    >>> _distinct_columns(S)
    ([1, 2], [-1, 0, 1, 0])
    """
    S = np.asarray(S)
    nonzero = np.asarray(S.any(axis=0), dtype=bool)
    weights = np.random.default_rng(0x5EED).random(size=(S.shape[0], 1))
    with np.errstate(invalid="ignore", over="ignore"):
        keys = np.asarray((S * weights).sum(axis=0), dtype=np.float64).reshape(-1)
    src: list[int] = []
    keep: list[int] = []
    seen: dict[Any, list[int]] = {}
    for k in range(S.shape[1]):
        if not nonzero[k]:
            src.append(-1)
            continue
        key = keys[k].tobytes()  # nan keys too (compared whole below)
        cands = seen.setdefault(key, [])
        same = next((j for j in cands if np.array_equal(S[:, keep[j]], S[:, k])), None)
        if same is None:
            keep.append(k)
            same = len(keep) - 1
            cands.append(same)
        src.append(same)
    return keep, src


def weighted_sums(S: Any, key: int, B: int, *, threads: int | None = None,
                  segments: np.ndarray | None = None,
                  factors: tuple[Any, Any] | None = None) -> np.ndarray:
    """``W @ S`` for the ``(B, n_units)`` weight matrix of ``key``, without ever holding it whole.

    ``S`` is ``(n_units, K)``, dense or sparse. Units are taken in groups of :data:`GROUP_UNITS`;
    groups run on threads (NumPy and BLAS release the GIL) and their partial sums are added in
    group order, so the result does not depend on the number of threads. A sparse ``S`` with
    column ``segments`` is factored first (:func:`factor_rows`): ``(W @ M) @ G``, the same sums;
    a caller that built ``S`` as ``M @ G`` passes ``factors=(M, G)`` and the factoring is skipped
    (the caller answers for ``M @ G == S``).
    Dense: within a group the weights are made :data:`_CHUNK` units at a time, so bytes, weights
    and their float copy stay in cache for the product; columns of ``S`` that are zero or repeat
    an earlier column are not multiplied again. The product runs in float32 on pieces of ``S``
    whose chunk sums float32 holds exactly (:func:`_split32`: three pieces per column, one for
    small integers such as label counts), at about half the cost of the float64 product; the
    sums differ from the float64 product by at most ``5 sum_i |s_i - s_hat_i|`` (``s_hat``: ``S``
    kept to ``2**-47`` of each chunk's largest value), about the float64 product's own rounding.
    """
    if sp.issparse(S):
        return _weighted_sums_sparse(S, key, B, threads=threads, segments=segments, factors=factors)
    # any layout: a column-major S (a column per statistic) is compared and read a column at a time
    S = np.asarray(S, dtype=np.float64)
    n, K = S.shape
    n_groups = -(-n // GROUP_UNITS)
    keep, src = _distinct_columns(S)
    Ku = len(keep)

    def work(g: int) -> np.ndarray:
        bg = _stream(key, g, B)
        base = g * GROUP_UNITS
        m_g = min(GROUP_UNITS, n - base)
        Sg = S[base: base + m_g][:, keep]  # this group's rows (copied on its thread)
        split = _split32(Sg)
        # float32 pieces whose chunk sums are exact (_split32); float64 if a statistic is not finite
        P, owner, scale = split if split is not None else (Sg, np.arange(Ku), np.ones(Ku))
        Kp = P.shape[1]
        acc = np.zeros((B, Kp))
        out = np.empty((B, Kp), dtype=P.dtype)
        w = np.empty((_DRAW_UNITS, B), dtype=np.uint8)
        tmp = np.empty((_DRAW_UNITS, B), dtype=bool)
        buf = np.empty((_CHUNK, B), dtype=P.dtype)
        for lo in range(0, m_g, _DRAW_UNITS):  # weights of several chunks at once (fewer calls)
            mw = min(_DRAW_UNITS, m_g - lo)
            _weights_into(_next_bytes(bg, mw, B), w[:mw], tmp[:mw])
            for c in range(0, mw, _CHUNK):
                m = min(_CHUNK, mw - c)
                buf[:m] = w[c: c + m]
                np.matmul(buf[:m].T, P[lo + c: lo + c + m], out=out)
                acc += out
        res = np.zeros((B, Ku))
        for j in range(Kp):  # a column's pieces, largest first; its scale put back exactly
            res[:, owner[j]] += acc[:, j]
        res *= scale
        return res

    t = threads or n_threads()
    with _blas_single():
        if Ku == 0:
            partial: list[np.ndarray] = []
        elif t > 1 and n_groups > 1:
            with ThreadPoolExecutor(max_workers=min(t, n_groups)) as ex:
                partial = list(ex.map(work, range(n_groups)))
        else:
            partial = [work(g) for g in range(n_groups)]
    sums = np.zeros((B, Ku))
    for p in partial:
        sums += p
    return spread_columns(sums, src)


def spread_columns(sums: np.ndarray, src: list[int]) -> np.ndarray:
    """The sums of every column from those of the distinct ones (:func:`_distinct_columns`' ``src``):
    column ``k`` is ``sums[:, src[k]]``, or zeros where ``src[k]`` is ``-1``.

    >>> spread_columns(np.array([[7.0, 2.0]]), [0, -1, 1, 0]).tolist()
    [[7.0, 0.0, 2.0, 7.0]]
    """
    where = np.asarray(src, dtype=np.int64)
    out = np.zeros((sums.shape[0], where.size))
    has = np.flatnonzero(where >= 0)
    if has.size:
        out[:, has] = sums[:, where[has]]
    return out


#: bits of one float32 piece: a chunk's weighted sum of pieces, at most 5 * _CHUNK * 2**15 < 2**24
#: steps of the piece, is exact in float32
_PIECE_BITS = int(np.floor(np.log2(2**24 / (5 * _CHUNK))))
#: pieces per column: the column's values kept to 2**-47 of their chunk's largest
_PIECES = 3


def _split32(S: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """One group's statistics ``S`` (float64) as a sum of float32 pieces whose weighted chunk
    sums are exact.

    Within each chunk of :data:`_CHUNK` (96) units, column ``k``'s values are written as
    ``a_0 q + a_1 q 2**-16 + a_2 q 2**-32`` with integers ``|a_p| <= 2**15`` and a power of two
    ``q`` fixed by the chunk's largest value ``|s| < 2**e`` (``q = 2**(e - 15)``). With weights
    ``w <= 5`` every partial sum of a piece over one chunk is an integer multiple of its step
    below ``5 * 96 * 2**15 < 2**24`` steps, so a float32 matrix product (any order, FMA or not)
    gives it exactly, and the float64 accumulation across chunks rounds as the float64 product
    did. What is lost is the representation: ``|s - s_hat| <= 2**(e - 48)``, at most ``2**-47``
    of the chunk's largest value, so each resampled sum is off by at most
    ``5 sum_i |s_i - s_hat_i|`` (about ``1e-14`` of ``sum_i |s_i|`` on continuous data; at most
    ``3.5e-12`` of it, a chunk holding one large value and 95 tiny ones). Columns are first scaled by a power of two (put back exactly
    afterwards) so that no piece leaves float32's normal range. Returns the pieces
    ``(n_units, n_pieces)``, the column each piece belongs to and each column's scale; None when
    ``S`` is not finite.
    """
    n, K = S.shape
    n_chunks = -(-n // _CHUNK)
    # worked column by column, as (columns, chunks, units): every elementwise pass runs along a
    # chunk's 96 units (laid out as (units, columns), NumPy's inner loops ran over K columns only)
    r = np.zeros((K, n_chunks, _CHUNK))
    r.reshape(K, -1)[:, :n] = S.T  # the padding units stay zero
    cmax = np.abs(r).max(axis=2)  # (columns, chunks); nan or inf when a statistic is not finite
    if not np.isfinite(cmax).all():
        return None
    E = np.frexp(cmax.max(axis=1))[1]  # each column: every |s| < 2**E
    # the chunk's exponent, relative to the column's; at least -60 (pieces stay above 2**-105)
    e = np.maximum(np.frexp(cmax)[1] - E[:, None], -60)
    r *= np.ldexp(1.0, -E)[:, None, None]  # exact: a power of two
    a = np.empty_like(r)
    cand = np.empty((_PIECES, K, n_chunks * _CHUNK), dtype=np.float32)
    kept = np.zeros((_PIECES, K), dtype=bool)
    for p in range(_PIECES):
        step = e - _PIECE_BITS - (_PIECE_BITS + 1) * p  # q 2**(-15 p), per column and chunk
        # multiplying by a power of two is exact (as ldexp): a = rint(r / 2**step), piece = a 2**step
        np.multiply(r, np.ldexp(1.0, -step)[:, :, None], out=a)
        np.rint(a, out=a)
        kept[p] = a.any(axis=(1, 2)) | (p == 0)
        a *= np.ldexp(1.0, step)[:, :, None]
        r -= a  # exact: the residual needs fewer bits than r had
        cand[p] = a.reshape(K, -1)
    pieces = [(p, k) for p in range(_PIECES) for k in range(K) if kept[p, k]]
    P = np.empty((len(pieces), n), dtype=np.float32)
    for j, (p, k) in enumerate(pieces):
        P[j] = cand[p, k, :n]
    P = np.ascontiguousarray(P.T)  # (units, pieces), as the products read them
    owner = [k for _, k in pieces]
    return P, np.asarray(owner), np.ldexp(1.0, E)


#: largest (pieces x resamples) accumulator of the factored product, in float32 cells
_FACTOR_CELLS = 64_000_000
#: bytes of one block of the accumulator (resamples processed together; about an L2 cache)
_BLOCK_BYTES = 1 << 20


#: independent accumulators of the sparse product (groups ``g`` with ``g % _LANES == j`` add into
#: lane ``j``; lanes are added in order): the same sums on any number of threads
_LANES = 2
#: largest lane accumulator (bytes) for which the lanes run on threads; above it one lane, in order
_LANE_BYTES = 128 << 20


def _weighted_sums_sparse(S: Any, key: int, B: int, *, threads: int | None,
                          segments: np.ndarray | None, factors: tuple[Any, Any] | None = None) -> np.ndarray:
    """The sparse case of :func:`weighted_sums`: the groups of units split among :data:`_LANES`
    accumulators (the factored one, pieces x resamples, can be large) that run on threads (the
    sparse kernels and the weights release the GIL), lanes added in a fixed order, so the sums do
    not depend on ``threads``."""
    S = sp.csr_matrix(S, dtype=np.float64)
    n = S.shape[0]
    fac: tuple[Any, Any] | None = None
    if factors is not None:
        fac = (sp.csr_matrix(factors[0], dtype=np.float64), sp.csr_matrix(factors[1], dtype=np.float64))
    elif segments is not None:
        fac = factor_rows(S, segments)
    if fac is not None and fac[0].shape[1] * B > _FACTOR_CELLS:
        fac = None
    A = S if fac is None else fac[0]
    # float32 holds the factored counts exactly: integer weights <= 5 times integer counts, below 2**24
    exact32 = fac is not None and 5.0 * float(abs(A).sum(axis=0).max()) < 2.0 ** 24
    dt = np.float32 if exact32 else np.float64
    A = sp.csr_matrix(A.astype(dt))
    # resamples in blocks whose accumulator stays in cache (the scatter-add is memory-bound)
    bb = max(16, min(B, _BLOCK_BYTES // max(1, A.shape[1] * np.dtype(dt).itemsize)))
    n_groups = -(-n // GROUP_UNITS)
    lanes = min(_LANES, n_groups) if A.shape[1] * B * np.dtype(dt).itemsize <= _LANE_BYTES else 1

    def lane(j: int) -> list[np.ndarray]:
        acc = [np.zeros((A.shape[1], min(bb, B - b0)), dtype=dt) for b0 in range(0, B, bb)]
        for g in range(j, n_groups, lanes):
            w = _group_weights(key, g, n, B)
            base = g * GROUP_UNITS
            for lo in range(0, w.shape[0], _SPARSE_CHUNK):
                wc = w[lo: lo + _SPARSE_CHUNK]
                Ac = A[base + lo: base + lo + wc.shape[0]].T.tocsr()
                for k, b0 in enumerate(range(0, B, bb)):
                    acc[k] += Ac @ wc[:, b0:b0 + bb].astype(dt)
        return acc

    t = min(threads or n_threads(), lanes)
    if t > 1:
        with ThreadPoolExecutor(max_workers=t) as ex:
            parts = list(ex.map(lane, range(lanes)))
    else:
        parts = [lane(j) for j in range(lanes)]
    N = np.hstack(parts[0]).astype(np.float64)
    for p in parts[1:]:
        N += np.hstack(p)
    if fac is None:
        return np.ascontiguousarray(N.T)
    return np.asarray((fac[1].T @ N).T)
