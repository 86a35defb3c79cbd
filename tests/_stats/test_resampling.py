"""The one resampling layer (voirdire/_stats/resampling.py): units, index draws, weight batches,
pattern compression. Its callers' streams are pinned here, so a change of stream shows."""

from __future__ import annotations

import numpy as np
import pytest

from voirdire._stats import resampling as R


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_draw_counts_are_the_multiplicities_of_the_drawn_indices(dtype):
    a = R.draw_counts(np.random.default_rng(3), 7, 11, index_dtype=dtype)
    idx = np.random.default_rng(3).integers(0, 11, size=(7, 11), dtype=dtype)
    want = np.stack([np.bincount(row, minlength=11) for row in idx]).astype(float)
    assert a.dtype == np.float64 and np.array_equal(a, want)
    assert (a.sum(axis=1) == 11).all()


def test_weight_batches_spread_cluster_counts_to_items_in_bounded_batches():
    clusters = np.array(["b", "a", "b", "c", "a", "c", "c"])
    got = list(R.weight_batches(7, 10, np.random.default_rng(1), clusters=clusters, batch=4))
    assert [w.shape for w in got] == [(4, 7), (4, 7), (2, 7)]
    W = np.vstack(got)
    inv, g = R.cluster_index(clusters)
    assert g == 3 and list(inv) == [1, 0, 1, 2, 0, 2, 2]
    # items of one cluster share its weight; the clusters' draws sum to the number of clusters
    assert (W[:, [0, 2]] == W[:, [0]]).all() and (W[:, [3, 5, 6]] == W[:, [3]]).all()
    assert (W[:, [1, 0, 3]].sum(axis=1) == 3).all()
    # the same stream as drawing the cluster counts batch by batch
    gen = np.random.default_rng(1)
    ref = np.vstack([R.draw_counts(gen, b, 3) for b in (4, 4, 2)])[:, inv]
    assert np.array_equal(W, ref)


def test_unit_map_and_unit_sums():
    mask = np.array([True, False, True, True, True])
    unit, n, kind = R.unit_map(mask, None)
    assert (kind, n, list(unit)) == ("item", 4, [0, -1, 1, 2, 3])
    unit, n, kind = R.unit_map(mask, np.array([4, 4, 0, 4, 2]))
    assert (kind, n, list(unit)) == ("cluster", 3, [2, -1, 0, 2, 1])
    S = np.arange(10.0).reshape(5, 2)
    assert np.array_equal(R.unit_sums(S, unit, n), [[4, 5], [8, 9], [6, 8]])
    assert R.resampling_unit(None) == "item" and R.resampling_unit(np.zeros(2)) == "cluster"


def test_rows_with_counts_give_the_types_of_the_units_written_out():
    # distinct rows with their counts (a streamed table's state) group into the same types, in
    # the same order, with the same counts as the units one by one; the draws are then the same
    rng = np.random.default_rng(3)
    S = rng.integers(0, 3, size=(500, 2)).astype(float)
    t, n_t = R.unit_types([S], 500)
    rows, inv = np.unique(S, axis=0, return_inverse=True)
    perm = rng.permutation(rows.shape[0])  # any order of the distinct rows
    w = np.bincount(inv.ravel(), minlength=rows.shape[0])[perm].astype(float)
    tw, n_tw = R.unit_types([rows[perm]], 500, weights=w)
    assert np.array_equal(n_tw, n_t) and n_tw.dtype == n_t.dtype
    assert all((rows[perm][tw == k] == S[t == k][0]).all() for k in range(n_t.size))
    assert np.array_equal(R.type_counts(np.random.default_rng(1), n_tw, 5),
                          R.type_counts(np.random.default_rng(1), n_t, 5))
    assert R.unit_types([rows], 40, weights=np.full(rows.shape[0], 40 / rows.shape[0])) is None  # too few units


def test_pattern_compression_groups_identical_rows_and_keeps_the_bootstrap_law():
    rng = np.random.default_rng(0)
    S = rng.integers(0, 2, size=(400, 3)).astype(float)  # at most 8 distinct rows
    t, n_t = R.unit_types([S], 400)
    assert n_t.sum() == 400 and n_t.size <= 8
    assert all((S[t == k] == S[t == k][0]).all() for k in range(n_t.size))
    assert R.unit_types([rng.normal(size=(400, 3))], 400) is None  # all distinct: no compression
    # the type multiplicities of one resample have the law of the summed unit multiplicities
    C = R.type_counts(np.random.default_rng(2), n_t, 4000)
    assert (C.sum(axis=1) == 400).all()
    assert np.allclose(C.mean(axis=0), n_t, atol=5 * np.sqrt(n_t) / np.sqrt(4000) + 1e-9)
    assert np.allclose(C.var(axis=0), n_t * (1 - n_t / 400), rtol=0.15)


def test_draw_indices_one_call_per_resample_is_the_generators_plain_stream():
    gen, ref = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(3):
        assert np.array_equal(R.draw_indices(gen, 1, 9)[0], ref.integers(0, 9, size=9))


@pytest.mark.parametrize("n_distinct,layout", [(10, "mixed"), (249, "mixed"), (250, "mixed"), (251, "mixed"),
                                               (400, "first"), (400, "last"), (1000, "first")])
def test_unit_types_answer_as_the_count_of_distinct_rows(n_distinct, layout):
    # types only when at most a quarter as many distinct rows as units (1,000 units here); the
    # shortcut on the first n/4 + 1 rows must never change that answer
    rng = np.random.default_rng(n_distinct)
    rows = rng.normal(size=(n_distinct, 3))
    pick = np.concatenate([np.arange(n_distinct), rng.integers(0, n_distinct, 1000 - n_distinct)])
    if layout == "mixed":
        pick = rng.permutation(pick)
    elif layout == "last":
        pick = pick[::-1].copy()
    S = rows[pick]
    got = R.unit_types([S[:, :2], S[:, 2:]], 1000)
    assert (got is None) == (n_distinct * 4 > 1000)
    if got is not None:
        inv, cnt = got
        assert cnt.sum() == 1000 and cnt.size == n_distinct
        assert all(np.array_equal(S[inv == t][0], S[inv == t][-1]) for t in range(cnt.size))


# ---------------------------------------------------------------------------- the normal law at large n
def test_linearised_law_is_the_ratio_estimator_variance_and_its_joint_covariance():
    rng = np.random.default_rng(5)
    n = 400
    nn = rng.integers(1, 5, n).astype(float)
    a = rng.binomial(nn.astype(int), 0.7).astype(float)
    b = rng.binomial(nn.astype(int), 0.4).astype(float)
    S = np.c_[a, b, nn]
    est, cov, cnt = R.linearised_law(S, lambda s: np.c_[s[:, 0] / s[:, 2], s[:, 1] / s[:, 2]])
    N = nn.sum()
    ea, eb = (a - a.sum() / N * nn) / N, (b - b.sum() / N * nn) / N  # closed-form influence values
    want = np.array([[ea @ ea, ea @ eb], [eb @ ea, eb @ eb]])
    assert np.allclose(est, [a.sum() / N, b.sum() / N], rtol=1e-14)
    assert np.allclose(cov, want, rtol=1e-8)
    assert list(cnt) == [n, n]
    # sparse input, the same law
    import scipy.sparse as sp

    est2, cov2, _ = R.linearised_law(sp.csr_matrix(S), lambda s: np.c_[s[:, 0] / s[:, 2], s[:, 1] / s[:, 2]])
    assert np.allclose(cov2, cov, rtol=1e-12) and np.allclose(est2, est, rtol=1e-14)


def test_linearised_law_undefined_output_and_the_unit_count_rule():
    S = np.c_[np.ones(50), np.zeros(50), np.arange(50.0)]
    est, cov, cnt = R.linearised_law(S, lambda s: np.c_[s[:, 2] / s[:, 0], s[:, 1] / s[:, 1]])
    assert np.isfinite(est[0]) and np.isnan(est[1])
    assert np.isfinite(cov[0, 0]) and np.isnan(cov[1]).all() and np.isnan(cov[:, 1]).all()
    assert R.normal_law_applies(est, cnt, min_units=50) and not R.normal_law_applies(est, cnt, min_units=51)
    assert not R.normal_law_applies(np.array([np.nan]), np.array([10**6]), min_units=1)
    d = R.normal_draws(est, cov, 4000, np.random.default_rng(0))
    assert np.isnan(d[:, 1]).all()
    assert d[:, 0].mean() == pytest.approx(est[0], abs=4 * np.sqrt(cov[0, 0] / 4000))
    assert d[:, 0].std() == pytest.approx(np.sqrt(cov[0, 0]), rel=0.05)


def test_linearised_law_of_blocks_and_of_factors_is_the_law_of_the_whole_matrix():
    # a list of blocks is read as their columns side by side, factors (M, G) as M @ G (never formed):
    # the same outputs, covariance and unit counts
    import scipy.sparse as sp

    rng = np.random.default_rng(8)
    M = sp.random(3000, 40, density=0.05, random_state=1, format="csr")
    M.data[:] = 1.0
    G = sp.csr_matrix(rng.integers(0, 3, (40, 4)).astype(float))
    X = (M @ G).toarray()
    X[:, 3] += 1.0  # a count column, so that every ratio is defined
    M2 = sp.hstack([M, sp.csr_matrix(np.ones((3000, 1)))], format="csr")
    G2 = sp.vstack([G, sp.csr_matrix([[0.0, 0.0, 0.0, 1.0]])], format="csr")

    def f(s):
        return np.c_[s[:, 0] / s[:, 3], (s[:, 1] - s[:, 2]) / s[:, 3]]

    want = R.linearised_law(X, f)
    for got in (R.linearised_law([X[:, :2], sp.csr_matrix(X[:, 2:])], f), R.linearised_law(None, f, factors=(M2, G2))):
        assert np.allclose(got[0], want[0], rtol=1e-14)
        assert np.allclose(got[1], want[1], rtol=1e-7)
        assert np.array_equal(got[2], want[2])


def test_group_hashes_is_numpys_unique():
    # the hash grouping behind unit_types and the streamed rows must give np.unique's sorted keys,
    # first positions and inverse exactly (empty input included)
    from voirdire._stats.resampling import group_hashes

    rng = np.random.default_rng(5)
    for h in (rng.integers(0, 50, 2000).astype(np.uint64), rng.integers(0, 2**63, 300).astype(np.uint64),
              np.zeros(0, dtype=np.uint64), np.full(7, 2**64 - 1, dtype=np.uint64)):
        keys, first, inv = np.unique(h, return_index=True, return_inverse=True)
        got = group_hashes(h)
        assert np.array_equal(got[0], keys) and np.array_equal(got[1], first)
        assert np.array_equal(got[2], inv.ravel())


def test_shared_draws_serve_a_repeated_draw_from_memory_with_the_same_stream_after(monkeypatch):
    made = []
    real = R._draw_counts
    monkeypatch.setattr(R, "_draw_counts", lambda *a, **k: made.append(a[1:]) or real(*a, **k))
    want = [R.draw_counts(np.random.default_rng(9), 5, 40) for _ in range(2)]
    after = np.random.default_rng(9)
    R.draw_counts(after, 5, 40)
    made.clear()
    with R.shared_draws():
        g1, g2, g3 = np.random.default_rng(9), np.random.default_rng(9), np.random.default_rng(10)
        a, b = R.draw_counts(g1, 5, 40), R.draw_counts(g2, 5, 40)
        c = R.draw_counts(g3, 5, 40)            # another state: drawn
        d = R.draw_counts(np.random.default_rng(9), 6, 40)  # another shape: drawn
    assert np.array_equal(a, want[0]) and np.array_equal(b, want[1])
    # one matrix serves both, read-only (no taker can change what the next one reads)
    assert not a.flags.writeable and not b.flags.writeable
    with pytest.raises(ValueError):
        b[0, 0] = 99.0
    assert made == [(5, 40), (5, 40), (6, 40)] and not np.array_equal(c, a) and d.shape == (6, 40)
    # the generator served from memory is left where drawing would leave it
    assert g2.integers(1 << 30) == after.integers(1 << 30) == g1.integers(1 << 30)
    made.clear()
    with R.shared_draws(max_bytes=0):                   # nothing held: every draw is made
        R.draw_counts(np.random.default_rng(9), 5, 40)
        R.draw_counts(np.random.default_rng(9), 5, 40)
    R.draw_counts(np.random.default_rng(9), 5, 40)      # outside the block: drawn as always
    assert len(made) == 3


def test_row_codes_are_np_unique_rows_inverse():
    rng = np.random.default_rng(8)
    for _ in range(100):
        n, L = int(rng.integers(1, 200)), int(rng.integers(1, 30))
        M = rng.integers(0, int(rng.integers(1, 4)), size=(n, L))
        assert np.array_equal(R.row_codes(M), np.unique(M, axis=0, return_inverse=True)[1].ravel())


def test_weight_batches_make_the_same_draws_whatever_the_batch():
    # the draws come in chunks set by the units and resamples alone; a caller's batch only slices them, so a
    # table with wider statistics (smaller batches) draws what a narrower one draws (shared_draws serves it)
    clusters = np.repeat(np.arange(40), 3)
    whole = np.vstack(list(R.weight_batches(120, 70, np.random.default_rng(2), clusters=clusters)))
    for batch in (1, 7, 64, 500):
        parts = list(R.weight_batches(120, 70, np.random.default_rng(2), clusters=clusters, batch=batch))
        assert max(p.shape[0] for p in parts) <= batch
        assert np.array_equal(np.vstack(parts), whole)


def test_a_shared_draw_requested_on_two_threads_at_once_is_made_once(monkeypatch):
    import threading

    made = []
    real = R._draw_counts
    gate = threading.Event()

    def slow(*a, **k):
        made.append(a[1:])
        gate.wait(0.5)  # the other thread asks for the same draw meanwhile
        return real(*a, **k)

    monkeypatch.setattr(R, "_draw_counts", slow)
    out: list = [None, None]
    gens = [np.random.default_rng(5), np.random.default_rng(5)]
    with R.shared_draws():
        import contextvars

        ts = [threading.Thread(target=contextvars.copy_context().run,
                               args=(lambda i=i: out.__setitem__(i, R.draw_counts(gens[i], 20, 30)),))
              for i in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    assert len(made) == 1
    assert np.array_equal(out[0], out[1])
    assert gens[0].integers(1000) == gens[1].integers(1000)  # both generators left where the draw leaves them


@pytest.mark.parametrize("n_units", [600, 1056, 5000])
def test_counts_drawn_in_blocks_are_the_row_by_row_counts(n_units):
    # from _ROWWISE_UNITS units the indices are drawn and counted a block of rows at a time: the same counts
    # as each row's indices counted alone, and the generator left where one draw of them all leaves it
    for b, dt in ((1, np.int64), (700, np.int64), (2000, np.int32)):
        g, g2 = np.random.default_rng(n_units + b), np.random.default_rng(n_units + b)
        W = R._draw_counts(g, b, n_units, index_dtype=dt)
        idx = g2.integers(0, n_units, size=(b, n_units), dtype=dt)
        assert np.array_equal(W, np.stack([np.bincount(r, minlength=n_units) for r in idx]).astype(float))
        assert g.integers(1 << 40) == g2.integers(1 << 40)
