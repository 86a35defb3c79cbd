"""The index-free bootstrap for many distinct units (voirdire/_stats/_poisson.py): its weight law, its
independence of chunking and threads, resample-by-resample equality with alpha recomputed on the
reweighted items (krippendorff), and (marker ``statistical``) interval coverage."""

from __future__ import annotations

import numpy as np
import pytest

from voirdire import agreement as A
from voirdire.agreement import _core
from voirdire.agreement._coefficients import _make_spec
from voirdire._stats._poisson import (
    GROUP_UNITS, WEIGHT_COUNTS, unit_weights, weight_key, weighted_sums,
)
from voirdire.agreement._prepare import prepare
from voirdire.data import AnnotationTable

from .._oracles import oracle

krippendorff = oracle("krippendorff")


def test_weight_law_has_mean_one_variance_one():
    p = np.array(WEIGHT_COUNTS) / 256
    k = np.arange(p.size)
    assert p.sum() == 1.0
    assert p @ k == 1.0  # exact: (95 + 92 + 48 + 16 + 5) / 256
    assert p @ (k - 1.0) ** 2 == 1.0  # exact: 256 / 256
    assert p @ (k - 1.0) ** 3 == pytest.approx(252 / 256)
    # the generator follows the law (2.6M draws: each frequency within 5 binomial SEs)
    w = unit_weights(weight_key(np.random.default_rng(0)), 0, 2600, 2600, 1000)
    freq = np.bincount(w.ravel(), minlength=p.size) / w.size
    assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / w.size))


def test_weights_do_not_depend_on_chunks_or_threads():
    n, B = 2 * GROUP_UNITS + 123, 7
    key = weight_key(np.random.default_rng(1))
    whole = unit_weights(key, 0, n, n, B)
    cuts = [0, 5, GROUP_UNITS - 1, GROUP_UNITS + 17, 2 * GROUP_UNITS + 100, n]
    pieces = np.concatenate([unit_weights(key, a, b, n, B) for a, b in zip(cuts[:-1], cuts[1:])])
    assert np.array_equal(whole, pieces)
    S = np.random.default_rng(2).normal(size=(n, 3))
    one = weighted_sums(S, key, B, threads=1)
    assert np.array_equal(one, weighted_sums(S, key, B, threads=3))  # partial sums added in a fixed order
    np.testing.assert_allclose(one, whole.T.astype(float) @ S, rtol=1e-12, atol=1e-9)
    # sparse: groups split among two accumulators (lanes) on threads, added in a fixed order
    import scipy.sparse as sp

    Ssp = sp.csr_matrix(np.where(np.abs(S) > 1.0, S, 0.0))
    one_sp = weighted_sums(Ssp, key, B, threads=1)
    assert np.array_equal(one_sp, weighted_sums(Ssp, key, B, threads=2))
    np.testing.assert_allclose(one_sp, whole.T.astype(float) @ Ssp.toarray(), rtol=1e-12, atol=1e-9)


def test_zero_and_repeated_columns_found_beyond_the_head():
    # weighted_sums multiplies each distinct non-zero column once: a column zero or equal to another
    # in its first rows but not below must still be multiplied
    from voirdire._stats import _poisson as P

    n = 4096 + 50
    rng = np.random.default_rng(3)
    a = rng.normal(size=n)
    late = np.zeros(n)
    late[-1] = 2.5  # zero in the head only
    twin = a.copy()
    twin[-3] += 1.0  # equal to a in the head only
    S = np.column_stack([a, np.zeros(n), late, a, twin, late])
    assert P._distinct_columns(S) == ([0, 2, 4], [0, -1, 1, 0, 2, 1])
    key = weight_key(np.random.default_rng(4))
    W = unit_weights(key, 0, n, n, 9).T.astype(np.float64)
    np.testing.assert_allclose(weighted_sums(S, key, 9), W @ S, rtol=1e-12, atol=1e-9)
    # a column-major S (as the interval statistics come) gives the same sums, bit for bit
    F = np.asfortranarray(np.vstack([S, S, S]))
    assert np.array_equal(weighted_sums(F, key, 9, threads=2), weighted_sums(np.ascontiguousarray(F), key, 9))


def test_weights_are_the_thresholds_of_the_raw_bytes():
    # the weights are made a few hundred units at a time (in cache); they must be the law's map of
    # each random byte (the number of thresholds it reaches), whatever the blocking
    from voirdire._stats import _poisson as P

    key = weight_key(np.random.default_rng(8))
    for n, B in ((1, 5), (P._WEIGHT_ROWS + 3, 11), (3 * P._WEIGHT_ROWS, 2)):
        u = P._raw(key, 0, n, B)
        want = np.searchsorted(np.array(P._THRESHOLDS), u, side="right").astype(np.uint8)
        assert np.array_equal(P._group_weights(key, 0, n, B), want)


@pytest.mark.parametrize("level", ["interval", "nominal"])
def test_poisson_bootstrap_equals_naive_recomputation(monkeypatch, level):
    # each resample's alpha equals krippendorff's alpha on the items repeated by their weights
    monkeypatch.setattr(_core, "_POISSON_MIN_UNITS", 0)
    rng = np.random.default_rng(3)
    n, R = 50, 3
    X = rng.integers(1, 6, size=(n, R)).astype(float)
    X[rng.random((n, R)) < 0.2] = np.nan
    if level == "interval":
        X = X + rng.normal(scale=0.01, size=X.shape)  # all distinct: no type compression
    ii, rr = np.nonzero(~np.isnan(X))
    t = AnnotationTable.from_arrays(ii, np.array(["a", "b", "c"])[rr], X[ii, rr], scale="interval")
    prep = prepare(t, raters=None, policy="exclude", func="test")
    spec = _make_spec("krippendorff_alpha", prep, level=level)
    unit, n_units, _ = _core._units(prep, spec.unit_mask())
    S = _core._aggregate(spec.stats(), unit, n_units)
    B = 12
    boots = _core.bootstrap([spec], [S], unit, n_units, B, 11, compress=False)[0]
    key = weight_key(np.random.default_rng(11))
    W = unit_weights(key, 0, n_units, n_units, B)
    items = np.flatnonzero(spec.unit_mask())
    Xt = t.dense_values()
    for b in range(B):
        rows = np.repeat(items, W[:, b])
        ref = krippendorff.alpha(Xt[rows].T, level_of_measurement=level,
                                 value_domain=sorted(map(float, t.scale.categories)))
        assert boots[b] == pytest.approx(ref, abs=1e-9)


def _interval_table(n, seed, R=4):
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=n)
    X = truth[:, None] + rng.normal(scale=0.8, size=(n, R))
    X[rng.random((n, R)) < 0.25] = np.nan
    ii, rr = np.nonzero(~np.isnan(X))
    return AnnotationTable.from_arrays(ii, rr, X[ii, rr], scale="interval")


def test_large_continuous_tables_take_the_index_free_path(monkeypatch):
    calls = []
    real = _core.weighted_sums
    monkeypatch.setattr(_core, "weighted_sums", lambda *a, **k: calls.append(1) or real(*a, **k))
    t = _interval_table(2 * _core._POISSON_MIN_UNITS, seed=4)
    r = A.krippendorff_alpha(t, level="interval", n_resamples=200, rng=0)
    assert calls and r.n_resamples == 200 and r.n_failed_resamples == 0
    # the bootstrap SE agrees with the analytic (linearised) SE on this large sample
    assert r.se == pytest.approx(r.analytic_se, rel=0.15)
    assert r.ci.low < r.estimate < r.ci.high


@pytest.mark.statistical
def test_poisson_bootstrap_coverage(monkeypatch):
    monkeypatch.setattr(_core, "_POISSON_MIN_UNITS", 0)
    big = _interval_table(200_000, seed=99)
    truth = A.krippendorff_alpha(big, level="interval", n_resamples=0).estimate
    reps, hits = 200, 0
    for k in range(reps):
        r = A.krippendorff_alpha(_interval_table(150, seed=10_000 + k), level="interval", n_resamples=300, rng=k)
        hits += r.ci.low <= truth <= r.ci.high
    cov = hits / reps
    print(f"Poisson-weight bootstrap coverage: {cov:.3f} over {reps} runs")
    # 95% nominal; binomial tolerance at 200 runs (3.5 SE) plus the percentile interval's known
    # small-sample shortfall
    assert 0.88 <= cov <= 0.99


def test_sparse_statistics_factored_into_pieces_give_the_same_sums():
    # rater-by-item statistics: each (row, segment) piece is one of a few patterns; W @ S computed as
    # (W @ M) @ G must equal the dense product (same weights), and M @ G must be S exactly
    import scipy.sparse as sp

    from voirdire._stats._poisson import factor_rows

    rng = np.random.default_rng(5)
    n, K, s = 3000, 6, 3
    patterns = rng.integers(-2, 3, (8, s)).astype(float)
    rows, cols, vals = [], [], []
    for i in range(n):
        for k in rng.choice(K, 3, replace=False):
            p = patterns[rng.integers(0, 8)]
            nz = np.flatnonzero(p)
            rows += [i] * nz.size
            cols += (k * s + nz).tolist()
            vals += p[nz].tolist()
    S = sp.csr_matrix((vals, (rows, cols)), shape=(n, K * s))
    seg = np.repeat(np.arange(K), s)
    M, G = factor_rows(S, seg)
    assert M.nnz <= 3 * n and (M @ G != S).nnz == 0 and G.shape[0] <= 8 * K
    key = weight_key(np.random.default_rng(6))
    dense = weighted_sums(S.toarray(), key, 50)
    np.testing.assert_allclose(weighted_sums(S, key, 50, segments=seg), dense, rtol=0, atol=1e-9)
    np.testing.assert_allclose(weighted_sums(S, key, 50), dense, rtol=0, atol=1e-9)
    # nothing repeats: no factoring (None), and the sums still equal
    U = sp.random(400, 12, density=0.5, random_state=1, format="csr")
    assert factor_rows(U, np.arange(12)) is None
    np.testing.assert_allclose(weighted_sums(U, key, 30, segments=np.arange(12)), weighted_sums(U.toarray(), key, 30),
                               rtol=0, atol=1e-12)


def test_float32_pieces_are_exact_on_each_chunk_and_within_their_bound():
    # _split32: every chunk's weighted sum of a piece is exact in float32 (the largest weight on
    # every unit is the worst case), and W @ S is within 5 sum|S - S_hat| of the float64 product,
    # also for columns spanning many orders of magnitude and an offset far from zero
    from voirdire._stats import _poisson as P

    rng = np.random.default_rng(8)
    n = 3 * P._CHUNK + 17
    S = np.column_stack([np.full(n, 2.0), rng.normal(size=n), 1e6 + rng.normal(size=n),
                         rng.normal(size=n) * 10.0 ** rng.integers(-30, 30, n), np.r_[1e9, rng.normal(size=n - 1)]])
    Pc, owner, scale = P._split32(S)
    assert Pc.dtype == np.float32 and np.array_equal(np.bincount(owner), [1, 3, 3, 3, 3])  # an integer column: one piece
    S_hat = np.zeros_like(S)
    np.add.at(S_hat.T, owner, Pc.astype(np.float64).T)
    S_hat *= scale
    for lo in range(0, n, P._CHUNK):
        block = Pc[lo:lo + P._CHUNK].astype(np.float64)
        worst = np.full((1, block.shape[0]), 5.0, dtype=np.float32)
        got = (worst @ Pc[lo:lo + P._CHUNK]).astype(np.float64)[0]
        assert np.array_equal(got, 5.0 * block.sum(axis=0))
        big = np.abs(S[lo:lo + P._CHUNK]).max(axis=0)
        assert np.all(np.abs(S[lo:lo + P._CHUNK] - S_hat[lo:lo + P._CHUNK]) <= big * 2.0 ** -47)
    key = weight_key(np.random.default_rng(9))
    W = unit_weights(key, 0, n, n, 40).T.astype(np.float64)
    bound = 5 * np.abs(S - S_hat).sum(axis=0) + 1e-15 * (W @ np.abs(S)).max(axis=0)  # + float64 rounding
    assert np.all(np.abs(weighted_sums(S, key, 40) - W @ S) <= bound)
    assert np.array_equal(weighted_sums(S[:, :1], key, 40)[:, 0], W @ S[:, 0])  # integers: exact
    # not finite: the float64 product
    S[5, 1] = np.nan
    assert P._split32(S) is None
    got = weighted_sums(S[:, 1:3], key, 40)
    np.testing.assert_allclose(got[:, 1], W @ S[:, 2], rtol=1e-14)  # the float64 product (S_hat would be 1e-11 off)
    assert np.all(np.isnan(got[:, 0]))
