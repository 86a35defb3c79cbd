"""The one resampling layer (private): resampling units, bootstrap weights, pattern compression.

Every bootstrap in voirdire draws its weights here; what differs between analyses is only the
statistic the weights multiply. The pieces:

units
    :func:`unit_map` maps each item to its resampling unit (the item itself, or its cluster;
    -1 for an item that carries no information), :func:`cluster_index` codes cluster labels
    ``0 .. G-1``, :func:`unit_sums` adds item statistics into unit statistics and
    :func:`resampling_unit` names the unit ("item" or "cluster").
index draws (the classical bootstrap)
    :func:`draw_counts` gives the multiplicities of ``n`` units in ``b`` resamples of ``n``
    draws with replacement; :func:`weight_batches` yields them in memory-bounded batches, spread
    from clusters to their items; :func:`draw_indices` gives the drawn indices themselves, for a
    statistic that is recomputed on the resampled rows rather than from weighted sums.
pattern compression
    :func:`unit_types` groups units whose statistics rows are identical (categorical labels:
    items with the same label counts are interchangeable); :func:`type_counts` then draws the
    multiplicity of each *type* directly from its exact joint law, ``Multinomial(n, n_t / n)``,
    which gives the same bootstrap distribution at O(types) per resample.
weight batches for many distinct units
    :func:`weight_key` / :func:`weighted_sums` / :func:`unit_weights` (from :mod:`._poisson`):
    independent unit weights with mean 1 and variance 1, the same however the units are chunked
    or threaded.
the normal law at large n (no resampling of units)
    :func:`linearised_law` gives a smooth statistic of column sums with its delta-method
    covariance from the units' influence values (one pass over the units instead of one per
    resample), :func:`normal_law_applies` says when every output rests on enough units for it
    (:data:`NORMAL_MIN_UNITS`), and :func:`normal_draws` draws replicates of the few outputs from
    that joint normal law, for decisions that are functions of several of them.

Streams: every draw comes from the ``numpy.random.Generator`` the caller passes. Index draws
take the generator's 32-bit or 64-bit bounded integers (``index_dtype``): the agreement engine
has always drawn 32-bit indices in blocks, the validation tests and the planner 64-bit indices,
and both are kept so that every published figure reproduces from its seed.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ._poisson import GROUP_UNITS, WEIGHT_COUNTS, _blas_single, unit_weights, weight_key, weighted_sums

__all__ = [
    "GROUP_UNITS", "NORMAL_MIN_UNITS", "NORMAL_METHOD", "WEIGHT_COUNTS", "cluster_index", "draw_counts",
    "draw_indices", "group_hashes", "row_codes", "linearised_law", "normal_draws", "normal_law_applies", "resampling_unit", "row_hashes",
    "shared_draws", "type_counts", "unit_map", "unit_sums", "unit_types", "unit_weights", "weight_batches", "weight_key",
    "weighted_sums",
]

# weight-matrix entries per batch of resamples in :func:`weight_batches`
BATCH_CELLS = 4_000_000
# from this many units on, the indices are drawn and counted in blocks of about _COUNT_CELLS (no (b, n)
# int64 temporaries; a HANNA draw of 2,000 x 1,056 in 9 ms, 16 ms counted row by row)
_ROWWISE_UNITS = 512
_COUNT_CELLS = 262_144


def resampling_unit(clusters: np.ndarray | None) -> str:
    """``"item"`` without clusters, ``"cluster"`` with them."""
    return "item" if clusters is None else "cluster"


def cluster_index(clusters: Any) -> tuple[np.ndarray, int]:
    """Cluster labels coded ``0 .. G-1`` in sorted label order, and ``G``."""
    _, inv = np.unique(np.asarray(clusters), return_inverse=True)
    inv = inv.ravel()
    return inv, int(inv.max()) + 1 if inv.size else 0


def unit_map(mask: np.ndarray, clusters: np.ndarray | None) -> tuple[np.ndarray, int, str]:
    """Each item's resampling unit (-1 where ``mask`` is False), the number of units, their kind.

    ``clusters`` are integer cluster codes per item (or None: every informative item is its own
    unit). Units are numbered ``0 .. n_units-1`` in item order (clusters: in code order), so
    unused clusters take no unit.
    """
    if clusters is not None:
        cl = np.asarray(clusters)
        used = np.unique(cl[mask])
        pos = np.full(int(cl.max()) + 1 if cl.size else 0, -1)
        pos[used] = np.arange(used.size)
        unit = np.where(mask, pos[cl], -1)
        return unit, int(used.size), "cluster"
    unit = np.full(mask.shape[0], -1)
    idx = np.flatnonzero(mask)
    unit[idx] = np.arange(idx.size)
    return unit, int(idx.size), "item"


def unit_sums(S: Any, unit: np.ndarray, n_units: int) -> Any:
    """Per-unit sums of the item statistics ``S`` (rows of items with ``unit < 0`` are dropped)."""
    ok = np.flatnonzero(unit >= 0)
    if ok.size == n_units and np.array_equal(unit[ok], np.arange(n_units)):
        return S[ok]
    A = sp.csr_matrix((np.ones(ok.size), (unit[ok], ok)), shape=(n_units, unit.shape[0]))
    out = A @ S
    return out if sp.issparse(out) else np.asarray(out)


def draw_indices(gen: np.random.Generator, b: int, n_units: int, *,
                 index_dtype: type[np.integer] = np.int64) -> np.ndarray:
    """``(b, n_units)`` unit indices: each row one resample of ``n_units`` draws with replacement."""
    return gen.integers(0, n_units, size=(b, n_units), dtype=index_dtype)


class _DrawMemo:
    """The count matrices drawn inside :func:`shared_draws` (read-only floats), by generator state and
    shape, with the state each draw left; at most ``max_bytes`` held."""

    __slots__ = ("draws", "held", "lock", "max_bytes", "pending")

    def __init__(self, max_bytes: int) -> None:
        self.draws: dict[tuple[Any, ...], tuple[np.ndarray, Any]] = {}
        self.held = 0
        self.max_bytes = max_bytes
        # analyses on several threads share the memo (validate_judges_by): a draw being made is in pending
        self.lock = threading.Lock()
        self.pending: dict[tuple[Any, ...], threading.Event] = {}


_MEMO: contextvars.ContextVar[_DrawMemo | None] = contextvars.ContextVar("voirdire_shared_draws", default=None)
#: bytes of count matrices :func:`shared_draws` keeps (beyond it, draws are made as usual): the 17 streams of
#: a HANNA rubric (2,000 resamples of 1,056 stories, 17 MB each as floats) fit
SHARED_DRAW_BYTES = 384 * 2**20


@contextlib.contextmanager
def shared_draws(max_bytes: int = SHARED_DRAW_BYTES) -> Iterator[None]:
    """Within the block, a bootstrap draw that repeats one already made (the same generator state, the
    same number of resamples and units) is served from memory and the generator is left in the state
    the draw leaves: the same counts and the same stream afterwards, without drawing again.

    Analyses of several groups that share their units (the criteria of a rubric: the same items, the
    same named seed streams) thus draw each stream's resamples once (``validate_judges_by``).

    >>> g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    >>> with shared_draws():
    ...     a = draw_counts(g1, 3, 8)
    ...     b = draw_counts(g2, 3, 8)
    >>> bool(np.array_equal(a, b) and g1.integers(100) == g2.integers(100))
    True
    """
    token = _MEMO.set(_DrawMemo(max_bytes))
    try:
        yield
    finally:
        _MEMO.reset(token)


def _state_key(gen: np.random.Generator) -> tuple[Any, ...] | None:
    """A hashable key of a generator's state (``None`` for a bit generator whose state is not plain integers)."""
    st = gen.bit_generator.state
    inner = st.get("state")
    if not isinstance(inner, dict) or not all(isinstance(v, int) for v in inner.values()):
        return None
    return (st.get("bit_generator"), *sorted(inner.items()), st.get("has_uint32"), st.get("uinteger"))


def draw_counts(gen: np.random.Generator, b: int, n_units: int, *,
                index_dtype: type[np.integer] = np.int64) -> np.ndarray:
    """Multiplicities (float) of ``n_units`` units in ``b`` bootstrap resamples; rows sum to ``n_units``.

    Inside :func:`shared_draws`, a draw already made from the same state comes from memory (and one
    being made on another thread is waited for, not made twice)."""
    memo = _MEMO.get()
    sk = None if memo is None else _state_key(gen)
    if memo is None or sk is None:
        return _draw_counts(gen, b, n_units, index_dtype=index_dtype)
    key = (sk, int(b), int(n_units), np.dtype(index_dtype).str)
    with memo.lock:
        hit = memo.draws.get(key)
        busy = memo.pending.get(key) if hit is None else None
        if hit is None and busy is None:
            memo.pending[key] = done = threading.Event()
    if busy is not None:  # another thread makes this very draw: wait for it
        busy.wait()
        with memo.lock:
            hit = memo.draws.get(key)
        if hit is None:  # it was not kept (over max_bytes): draw here
            return _draw_counts(gen, b, n_units, index_dtype=index_dtype)
    if hit is not None:
        gen.bit_generator.state = hit[1]
        return hit[0]
    try:
        W = _draw_counts(gen, b, n_units, index_dtype=index_dtype)
        # kept as the float matrix itself, read-only (every taker reads it; a copy converted from a compact
        # integer type cost as much as the product each taker makes with it)
        W.setflags(write=False)
        with memo.lock:
            if memo.held + W.nbytes <= memo.max_bytes:
                memo.draws[key] = (W, gen.bit_generator.state)
                memo.held += W.nbytes
    finally:
        with memo.lock:
            memo.pending.pop(key, None)
        done.set()
    return W


def _draw_counts(gen: np.random.Generator, b: int, n_units: int, *,
                 index_dtype: type[np.integer] = np.int64) -> np.ndarray:
    if n_units >= _ROWWISE_UNITS:
        # rows drawn and counted a block at a time (the generator's integers are the same however many rows
        # are drawn at once): index blocks of ~2 MB that stay in cache for their count, and one count per
        # block rather than one per row (2,000 short calls held the interpreter against the other threads)
        W = np.empty((b, n_units))
        step = max(1, _COUNT_CELLS // n_units)
        for a in range(0, b, step):
            z = min(b, a + step)
            idx = draw_indices(gen, z - a, n_units, index_dtype=index_dtype).astype(np.int64, copy=False)
            idx += (np.arange(z - a, dtype=np.int64) * n_units)[:, None]
            W[a:z] = np.bincount(idx.ravel(), minlength=(z - a) * n_units).reshape(z - a, n_units)
        return W
    idx = draw_indices(gen, b, n_units, index_dtype=index_dtype)
    flat = idx.astype(np.int64, copy=False) + (np.arange(b, dtype=np.int64) * n_units)[:, None]
    return np.bincount(flat.ravel(), minlength=b * n_units).reshape(b, n_units).astype(np.float64)


def weight_batches(n_items: int, n_resamples: int, rng: np.random.Generator, *,
                   clusters: np.ndarray | None = None, batch: int | None = None) -> Iterator[np.ndarray]:
    """Yield ``(b, n_items)`` float matrices of bootstrap counts, ``n_resamples`` rows in all.

    Each row is one nonparametric bootstrap resample: ``n`` draws with replacement of the items
    (or, when ``clusters`` is given, of the clusters; an item's weight is then the number of
    times its cluster was drawn). Rows come in batches to bound memory.
    """
    if clusters is None:
        inv, n_units = None, n_items
    else:
        inv, n_units = cluster_index(clusters)
    # the draws come in chunks that depend on the units and resamples alone (a caller's ``batch`` only
    # slices them): the generator's integers are the same however they are chunked, and analyses of
    # tables over the same units (a rubric's criteria and their pool) make the same draws, which
    # :func:`shared_draws` then serves from memory
    chunk = max(1, min(n_resamples, int(BATCH_CELLS // max(n_units, 1))))
    batch = chunk if batch is None else max(1, int(batch))
    done = 0
    while done < n_resamples:
        counts = draw_counts(rng, min(chunk, n_resamples - done), n_units)
        for a in range(0, counts.shape[0], batch):
            part = counts[a:a + batch]
            yield part if inv is None else part[:, inv]
        done += counts.shape[0]


def row_hashes(M: np.ndarray) -> np.ndarray:
    """An exact, platform-independent hash of each row of a float64 matrix: the rows' bit patterns
    times fixed odd constants, summed with uint64 wrap-around (equal rows -> equal hashes; a caller
    that groups by it checks collisions on the values)."""
    return _hash_rows([np.asarray(M, dtype=np.float64)], 0, int(np.shape(M)[0]))


def _hash_rows(mats: Sequence[np.ndarray], lo: int, hi: int) -> np.ndarray:
    """:func:`row_hashes` of rows ``lo .. hi-1`` of the matrices ``mats`` side by side (2-d float64,
    the same rows), without joining them; three buffers of the rows' length, worked in place."""
    n = hi - lo
    h = np.zeros(n, dtype=np.uint64)
    x = np.empty(n, dtype=np.uint64)
    y = np.empty(n, dtype=np.uint64)
    c1, c2, c3 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB), np.uint64(0x9E3779B97F4A7C15)
    j = 0
    for m in mats:
        # (any layout: a column-major m is read a column at a time, contiguously)
        bits = np.asarray(m, dtype=np.float64).reshape(m.shape[0], -1).view(np.uint64)
        for c in range(bits.shape[1]):  # splitmix64 finaliser of each column, combined in order
            b = bits[lo:hi, c]
            np.right_shift(b, np.uint64(30), out=x)
            x ^= b
            x *= c1
            np.right_shift(x, np.uint64(27), out=y)
            x ^= y
            x *= c2
            np.right_shift(x, np.uint64(31), out=y)
            x ^= y
            h ^= x
            h *= c3
            h += np.uint64(j + 1)
            j += 1
    return h


def group_hashes(h: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(h, return_index=True, return_inverse=True)`` of a 1-d array of row hashes by
    hashing (O(n), no sort of the rows): the same sorted keys, first positions and inverse.

    >>> keys, first, inv = group_hashes(np.array([7, 3, 7, 5, 3], dtype=np.uint64))
    >>> keys.tolist(), first.tolist(), inv.tolist()
    ([3, 5, 7], [1, 3, 0], [2, 0, 2, 1, 0])
    """
    codes, uniq = pd.factorize(h)  # codes in order of first appearance
    codes = np.asarray(codes, dtype=np.int64)
    new = np.empty(codes.size, dtype=bool)
    if codes.size:
        new[0] = True
        np.greater(codes[1:], np.maximum.accumulate(codes)[:-1], out=new[1:])
    first_seen = np.flatnonzero(new)  # code k first appears at first_seen[k]
    order = np.argsort(uniq, kind="stable")
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return np.asarray(uniq)[order], first_seen[order], rank[codes]


def row_codes(M: np.ndarray) -> np.ndarray:
    """``np.unique(M, axis=0, return_inverse=True)[1]`` of a 2-d integer matrix (each row's number
    among the distinct rows in lexicographic order), by hashing the rows (:func:`row_hashes`) and
    sorting only the distinct ones: the same numbers, without sorting every row. A hash collision
    (checked on the values) falls back to ``np.unique``.

    >>> row_codes(np.array([[2, 0], [1, 5], [2, 0], [1, 4]])).tolist()
    [2, 1, 2, 0]
    """
    M = np.asarray(M)
    if M.ndim != 2 or M.shape[0] == 0:
        return np.unique(M, axis=0, return_inverse=True)[1].ravel()
    _, first, inv = group_hashes(row_hashes(M.astype(np.float64)))
    reps = M[first]
    if not np.array_equal(reps[inv], M):  # two rows with one hash
        return np.unique(M, axis=0, return_inverse=True)[1].ravel()
    rank = np.unique(reps, axis=0, return_inverse=True)[1].ravel()
    return rank[inv]


def unit_types(stats_list: Sequence[Any], n_units: int,
               weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Group units whose statistics rows are identical in every matrix of ``stats_list``.

    Returns ``(type_of_unit, n_per_type)`` when there are at most a quarter as many types as
    units (categorical data: items with the same label counts are interchangeable), else None.
    Types are numbered in the order of their rows' hashes, so the numbering depends only on the
    set of distinct rows. ``weights``: each row stands for that many identical units (rows of
    distinct values with their counts, as a streamed table holds them; ``n_units`` is their sum):
    the same types and counts as the units written out one by one.
    """
    mats = [st for st in stats_list if st is not None]
    n_rows = n_units if weights is None else int(weights.shape[0])
    if n_units < 64 or not mats or any(sp.issparse(m) for m in mats):
        return None
    cols = [np.asarray(m, dtype=np.float64).reshape(n_rows, -1) for m in mats]
    if sum(c.shape[1] for c in cols) > 256:
        return None
    # the first n_units/4 + 1 rows alone, when all distinct, already make too many types (exact:
    # distinct rows of a part are distinct rows of the whole); distinct-valued data stop here
    head = min(n_rows, n_units // 4 + 1)
    # one column whose head rows are all distinct (continuous data) settles it at a column's cost:
    # the first three columns that vary between the head's ends are tried
    varying = [(c, j) for c in cols for j in range(c.shape[1]) if c[0, j] != c[head - 1, j]][:3]
    if head < n_rows and any(pd.unique(c[:head, j]).size == head for c, j in varying):
        return None
    h = np.empty(n_rows, dtype=np.uint64)
    h[:head] = _hash_rows(cols, 0, head)
    if head < n_rows and pd.unique(h[:head]).size == head:
        return None
    h[head:] = _hash_rows(cols, head, n_rows)
    keys, first, inv = group_hashes(h)
    del h
    if keys.size * 4 > n_units:
        return None
    # a hash collision: do not compress (checked a column at a time)
    if not all(np.array_equal(c[:, j], c[first, j][inv]) for c in cols for j in range(c.shape[1])):
        return None
    if weights is None:
        return inv, np.bincount(inv, minlength=keys.size)
    return inv, np.bincount(inv, weights=weights, minlength=keys.size).round().astype(np.int64)


def type_counts(gen: np.random.Generator, n_per_type: np.ndarray, b: int) -> np.ndarray:
    """Multiplicities (float) of each unit type in ``b`` resamples: ``Multinomial(n, n_t / n)`` rows."""
    n_units = int(n_per_type.sum())
    return gen.multinomial(n_units, n_per_type / n_units, size=b).astype(np.float64)


#: From this many contributing units per output (units whose statistics move it), the validation
#: analyses take the normal law of their statistics (:func:`linearised_law`) instead of resampling
#: units: docs/validation.md "Large tables" gives the comparison with the bootstrap behind it.
NORMAL_MIN_UNITS = 20_000
#: how results name intervals and stabilities computed from that law
NORMAL_METHOD = "normal approximation (delta method)"
_LAW_ROWS = 262_144  # units per chunk of influence values


def _csr_rows(X: sp.csr_matrix, a: int, z: int) -> sp.csr_matrix:
    """Rows ``a .. z-1`` of a CSR matrix as a view of its arrays (no copy of the data)."""
    p0, p1 = int(X.indptr[a]), int(X.indptr[z])
    return sp.csr_matrix((X.data[p0:p1], X.indices[p0:p1], X.indptr[a:z + 1] - p0), shape=(z - a, X.shape[1]))


def _block_sums(X: Any) -> tuple[np.ndarray, np.ndarray]:
    """Column sums and column sums of squares of a dense or CSR block."""
    if sp.issparse(X):
        C = X.shape[1]
        return (np.bincount(X.indices, weights=X.data, minlength=C),
                np.bincount(X.indices, weights=X.data * X.data, minlength=C))
    return X.sum(axis=0), np.einsum("ij,ij->j", X, X)


def linearised_law(S: Any, estimate: Any, *, step: float = 1e-3,
                   factors: tuple[Any, Any] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A statistic of column sums with its delta-method covariance, from the units' influence values.

    ``S`` is ``(n_units, C)`` per-unit statistics (dense or sparse; rows of units, clusters already
    summed), or a list of such blocks with the same rows (read as their columns side by side), or
    None with ``factors=(M, G)``: ``S = M @ G`` (units x pieces times pieces x columns, never formed).
    ``estimate`` maps ``(b, C)`` column sums to ``(b, m)`` outputs. With ``T`` the column sums and
    ``J`` the ``(m, C)`` Jacobian of ``estimate`` at ``T``, unit ``i``'s influence on the outputs is
    ``u_i = J s_i``, and the covariance of the outputs under resampling units (the law the
    nonparametric bootstrap approximates) is ``sum_i (u_i - u_bar)(u_i - u_bar)^T``: for a ratio
    of sums ``A / N`` it is the classical ratio-estimator variance ``sum_i (a_i - (A / N) n_i)^2 / N^2``.
    ``J`` is taken by central differences, each column's step ``step`` times the root sum of squares
    of that column (the scale on which the sum moves between resamples; with ``factors``, of the
    pieces weighted by their counts; an all-zero column has no influence and is skipped).

    Returns ``(est, cov, n_contrib)``: the ``(m,)`` outputs at ``T``, their ``(m, m)`` covariance
    (nan rows and columns where an output or its Jacobian is not finite) and, per output, the
    number of units whose influence on it is not zero (see :func:`normal_law_applies`).

    >>> import numpy as np
    >>> a, n = np.array([1.0, 0.0, 2.0, 1.0]), np.array([1.0, 1.0, 2.0, 2.0])
    >>> est, cov, cnt = linearised_law(np.c_[a, n], lambda s: s[:, :1] / s[:, 1:])
    >>> round(float(est[0]), 6), round(float(cov[0, 0]), 6), int(cnt[0])
    (0.666667, 0.030864, 4)
    >>> round(float(np.sum((a - a.sum() / n.sum() * n) ** 2) / n.sum() ** 2), 6)
    0.030864
    """
    blocks: list[Any] = []
    if factors is not None:
        M, G = sp.csr_matrix(factors[0], dtype=np.float64), sp.csr_matrix(factors[1], dtype=np.float64)
        n_units = M.shape[0]
        cm = np.bincount(M.indices, weights=M.data, minlength=M.shape[1])
        T = np.asarray(G.T @ cm).ravel()
        scale = np.sqrt(np.asarray(G.multiply(G).T @ np.abs(cm)).ravel())
    else:
        for X in (S if isinstance(S, (list, tuple)) else [S]):
            blocks.append(sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64))
        n_units = blocks[0].shape[0]
        parts = [_block_sums(X) for X in blocks]
        T = np.concatenate([t for t, _ in parts])
        scale = np.sqrt(np.concatenate([q for _, q in parts]))
    C = T.size
    live = np.flatnonzero(scale > 0)
    h = step * scale[live]
    pts = np.repeat(T[None, :], 2 * live.size, axis=0)
    pts[np.arange(live.size), live] += h
    pts[live.size + np.arange(live.size), live] -= h
    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.asarray(estimate(T[None, :]), dtype=np.float64).reshape(-1)
        m = est.size
        vals = np.asarray(estimate(pts), dtype=np.float64).reshape(2 * live.size, m) if live.size else np.zeros((0, m))
    J = np.zeros((m, C))
    J[:, live] = ((vals[:live.size] - vals[live.size:]) / (2.0 * h[:, None])).T
    ok = np.isfinite(est) & np.all(np.isfinite(J), axis=1)
    J[~ok] = 0.0
    u_bar = J @ (T / max(n_units, 1))
    if factors is not None:
        V = np.asarray(G @ J.T)                     # each piece's influence

        def rows(a: int, z: int) -> np.ndarray:
            return np.asarray(_csr_rows(M, a, z) @ V)
    else:
        offs = np.cumsum([0] + [X.shape[1] for X in blocks])

        def rows(a: int, z: int) -> np.ndarray:
            U = np.zeros((z - a, m))
            for X, o0, o1 in zip(blocks, offs[:-1], offs[1:]):
                Xr = _csr_rows(X, a, z) if sp.issparse(X) else X[a:z]
                U += np.asarray(Xr @ J[:, o0:o1].T)
            return U
    cov = np.zeros((m, m))
    n_contrib = np.zeros(m, dtype=np.int64)
    with _blas_single():  # threaded BLAS on these thin products only spins on a loaded machine
        for a in range(0, n_units, _LAW_ROWS):
            U = rows(a, min(n_units, a + _LAW_ROWS))
            n_contrib += np.count_nonzero(U, axis=0)
            U -= u_bar
            cov += U.T @ U
    cov[~ok, :] = np.nan
    cov[:, ~ok] = np.nan
    return est, cov, n_contrib


def normal_law_applies(est: np.ndarray, n_contrib: np.ndarray, *, min_units: int = NORMAL_MIN_UNITS) -> bool:
    """Whether the normal law of :func:`linearised_law` stands in for the bootstrap: every output
    that is defined (finite) rests on at least ``min_units`` units, and at least one is defined.
    An output that depends on a few units only (a human with a handful of items) keeps the
    bootstrap for the whole analysis."""
    fin = np.isfinite(est)
    return bool(fin.any() and np.all(n_contrib[fin] >= min_units))


def normal_draws(est: np.ndarray, cov: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_draws, m)`` draws from ``N(est, cov)`` over the finite outputs (nan elsewhere): the
    replicates of a decision that is a function of several outputs (a symmetric square root of
    ``cov``, negative eigenvalues from rounding set to zero)."""
    m = est.size
    out = np.full((n_draws, m), np.nan)
    ok = np.flatnonzero(np.isfinite(est) & np.isfinite(np.diag(cov)))
    if ok.size:
        vals, vecs = np.linalg.eigh(cov[np.ix_(ok, ok)])
        root = vecs * np.sqrt(np.clip(vals, 0.0, None))
        out[:, ok] = est[ok] + rng.standard_normal((n_draws, ok.size)) @ root.T
    return out
