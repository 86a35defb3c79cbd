"""The pair-list kernel against scikit-learn, krippendorff, irrCAC and closed forms on the same pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from voirdire.exceptions import InvalidParameterError
from voirdire.validation import LooArrays, loo_core
from voirdire.validation._kernel import PairStats, finalize

from .._oracles import oracle

krippendorff = oracle("krippendorff")
CAC = oracle("irrCAC.table").CAC


def _random_codes(seed: int, n: int = 60, K: int = 4, J: int = 2, L: int = 3, miss: float = 0.35,
                  judge_miss: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, L, n)
    codes = np.where(rng.random((n, K + J)) < 0.7, truth[:, None], rng.integers(0, L, (n, K + J)))
    codes[:, :K][rng.random((n, K)) < miss] = -1
    if judge_miss:
        codes[:, K:][rng.random((n, J)) < judge_miss] = -1
    return codes


def _pairs(codes: np.ndarray, K: int, coder: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Naive pair list for held-out human k: (coder_i, y_ir) for eligible i and pool members r."""
    a, b = [], []
    for i in range(codes.shape[0]):
        if codes[i, k] < 0 or codes[i, coder] < 0:
            continue
        pool = [codes[i, r] for r in range(K) if r != k and codes[i, r] >= 0]
        for y in pool:
            a.append(codes[i, coder])
            b.append(y)
    return np.array(a), np.array(b)


def _ac1(a: np.ndarray, b: np.ndarray, L: int) -> float:
    # Gwet (2008), two raters: pa = share equal, pe = sum_c pi_c (1 - pi_c) / (L - 1),
    # pi_c = mean of the two raters' shares of category c.
    pa = np.mean(a == b)
    pi = np.array([(np.mean(a == c) + np.mean(b == c)) / 2 for c in range(L)])
    pe = np.sum(pi * (1 - pi)) / (L - 1)
    return float((pa - pe) / (1 - pe))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("judge_miss", [0.0, 0.2])
def test_kernel_matches_peers(seed: int, judge_miss: float) -> None:
    K, J, L = 4, 2, 3
    codes = _random_codes(seed, K=K, J=J, L=L, judge_miss=judge_miss)
    hc, jc = np.arange(K), np.arange(K, K + J)
    vals = np.array([1.0, 2.0, 4.0])
    res = {
        "agreement": loo_core(codes, hc, jc, n_categories=L),
        "kappa": loo_core(codes, hc, jc, n_categories=L, score="kappa"),
        "ac1": loo_core(codes, hc, jc, n_categories=L, score="ac1"),
        "alpha-nominal": loo_core(codes, hc, jc, n_categories=L, score="alpha"),
        "alpha-ordinal": loo_core(codes, hc, jc, n_categories=L, score="alpha", level="ordinal"),
        "alpha-interval": loo_core(codes, hc, jc, n_categories=L, score="alpha", level="interval",
                                   category_values=vals),
        "alpha-ratio": loo_core(codes, hc, jc, n_categories=L, score="alpha", level="ratio",
                                category_values=vals),
    }
    for k in range(K):
        for j in range(J):
            a, b = _pairs(codes, K, K + j, k)
            ah, bh = _pairs(codes, K, k, k)
            # the human's score on the judge's eligible set: items the judge also labelled
            keep = [i for i in range(codes.shape[0]) if codes[i, K + j] >= 0]
            ah2, bh2 = _pairs(np.where(np.isin(np.arange(codes.shape[0]), keep)[:, None], codes, -1), K, k, k)
            assert res["agreement"].n_pairs_judge[j, k] == a.size
            for name, ref_j, ref_h in [
                ("agreement", np.mean(a == b), np.mean(ah2 == bh2)),
                ("kappa", cohen_kappa_score(a, b), cohen_kappa_score(ah2, bh2)),
                ("ac1", _ac1(a, b, L), _ac1(ah2, bh2, L)),
                ("alpha-nominal", krippendorff.alpha(np.vstack([a, b]), level_of_measurement="nominal"),
                 krippendorff.alpha(np.vstack([ah2, bh2]), level_of_measurement="nominal")),
                ("alpha-ordinal", krippendorff.alpha(np.vstack([a, b]), level_of_measurement="ordinal"),
                 krippendorff.alpha(np.vstack([ah2, bh2]), level_of_measurement="ordinal")),
                ("alpha-interval",
                 krippendorff.alpha(np.vstack([vals[a], vals[b]]), level_of_measurement="interval"),
                 krippendorff.alpha(np.vstack([vals[ah2], vals[bh2]]), level_of_measurement="interval")),
                ("alpha-ratio",
                 krippendorff.alpha(np.vstack([vals[a], vals[b]]), level_of_measurement="ratio"),
                 krippendorff.alpha(np.vstack([vals[ah2], vals[bh2]]), level_of_measurement="ratio")),
            ]:
                r = res[name]
                assert r.s_judge[j, k] == pytest.approx(ref_j, abs=1e-10), (name, j, k)
                assert r.s_human_judge[j, k] == pytest.approx(ref_h, abs=1e-10), (name, j, k)
                assert r.d[j, k] == pytest.approx(ref_j - ref_h, abs=1e-10)
            # s_human ignores the judge's coverage
            assert res["kappa"].s_human[k] == pytest.approx(cohen_kappa_score(ah, bh), abs=1e-10)
            assert res["agreement"].n_pairs[k] == ah.size


def test_ac1_matches_irrcac() -> None:
    codes = _random_codes(5, K=3, J=1, L=3)
    r = loo_core(codes, np.arange(3), np.array([3]), n_categories=3, score="ac1")
    a, b = _pairs(codes, 3, 3, 0)
    tab = pd.crosstab(pd.Categorical(a, categories=[0, 1, 2]), pd.Categorical(b, categories=[0, 1, 2]),
                      dropna=False)
    ref = CAC(tab, digits=12).gwet()["est"]["coefficient_value"]
    assert r.s_judge[0, 0] == pytest.approx(float(ref), abs=1e-9)


def test_hand_checked_pooled_pairs() -> None:
    # 3 humans (cols 0-2) + 1 judge (col 3), binary labels, -1 = missing.
    # Hold out human 0. Item 0: pool {h1: 1, h2: 1}, judge 1, h0 0 -> judge 2/2 matches, h0 0/2.
    # Item 1: pool {h1: 0} only (h2 missing) -> judge 0 matches 1/1, h0 0 matches 1/1.
    # Item 2: h0 missing -> not eligible.   Item 3: pool empty (h1, h2 missing) -> not eligible.
    # S(judge; P_0) = 3/3 = 1, S(h0; P_0) = 1/3; the item with two pool labels gives two pairs.
    codes = np.array([[0, 1, 1, 1], [0, 0, -1, 0], [-1, 1, 0, 1], [1, -1, -1, 1]])
    r = loo_core(codes, np.array([0, 1, 2]), np.array([3]), n_categories=2)
    assert r.n_items[0] == 2 and r.n_pairs[0] == 3
    assert r.s_judge[0, 0] == pytest.approx(1.0)
    assert r.s_human[0] == pytest.approx(1 / 3)
    assert r.d[0, 0] == pytest.approx(2 / 3)
    # Hold out human 2: items 0 (pool h0=0, h1=1; judge 1 -> 1/2; h2=1 -> 1/2) and 2 (pool h1=1;
    # judge 1 -> 1/1; h2=0 -> 0/1): S(judge) = 2/3, S(h2) = 1/3.
    assert r.s_judge[0, 2] == pytest.approx(2 / 3) and r.s_human[2] == pytest.approx(1 / 3)
    assert r.omega(0.05)[0] == pytest.approx(1.0)


def test_no_eligible_item_is_nan() -> None:
    codes = np.array([[0, -1, 0], [-1, 1, 1], [0, -1, 1]])   # the two humans never share an item
    r = loo_core(codes, np.array([0, 1]), np.array([2]), n_categories=2)
    assert np.isnan(r.s_judge).all() and np.isnan(r.s_human).all()
    assert r.n_items.tolist() == [0, 0]
    assert np.isnan(r.omega()[0])


def test_abstentions_count_as_missing() -> None:
    codes = np.array([[0, 0, 0], [1, 2, 1], [1, 1, 1]])  # code 2 = abstention when L = 2
    r = loo_core(codes, np.array([0, 1]), np.array([2]), n_categories=2)
    assert r.n_items.tolist() == [2, 2]


def test_bootstrap_sums_equal_plain_sums_for_unit_weights() -> None:
    codes = _random_codes(3, n=40, L=4)
    ps = PairStats(codes, np.arange(4), np.arange(4, 6), n_categories=4, score="alpha", level="ordinal",
                   category_values=None)
    sj, sh = ps.sums()
    bj, bh = ps.sums(np.ones((3, 40)))
    assert np.allclose(bj[1], sj) and np.allclose(bh[2], sh)
    a = finalize(sj, ps.layout, score="alpha", level="ordinal", n_categories=4, category_values=None)
    assert np.all(np.isfinite(a))


def test_loo_core_bad_input() -> None:
    codes = _random_codes(0)
    with pytest.raises(InvalidParameterError, match="'score' parameter of loo_core"):
        loo_core(codes, np.arange(4), np.arange(4, 6), n_categories=3, score="f1")
    with pytest.raises(InvalidParameterError, match="at least two human columns"):
        loo_core(codes, np.arange(1), np.arange(4, 6), n_categories=3)
    with pytest.raises(InvalidParameterError, match="2-D integer array"):
        loo_core(codes.astype(float), np.arange(4), np.arange(4, 6), n_categories=3)


def test_loo_arrays_is_frozen() -> None:
    r = loo_core(_random_codes(0), np.arange(4), np.arange(4, 6), n_categories=3)
    assert isinstance(r, LooArrays)
    with pytest.raises(AttributeError):
        r.d = None  # type: ignore[misc]


@pytest.mark.parametrize(("score", "level"), [("agreement", "nominal"), ("kappa", "nominal"),
                                              ("alpha", "ordinal"), ("alpha", "interval")])
@pytest.mark.parametrize("judge_miss", [0.0, 0.3])
def test_item_chunked_statistics_equal_whole(monkeypatch, score: str, level: str, judge_miss: float) -> None:
    codes = _random_codes(9, n=57, K=4, J=3, L=4, judge_miss=judge_miss)
    args = (codes, np.arange(4), np.arange(4, 7))
    kw = dict(n_categories=4, score=score, level=level, category_values=np.array([0.0, 1.0, 2.5, 4.0]))
    whole = PairStats(*args, **kw)
    monkeypatch.setattr(PairStats, "max_floats", 200)     # forces chunks of a few items
    chunked = PairStats(*args, **kw)
    assert chunked._cache is None and whole._cache is not None
    W = np.random.default_rng(0).integers(0, 3, (5, 57)).astype(float)
    for a, b in zip(whole.sums(), chunked.sums()):
        assert np.allclose(a, b)
    for a, b in zip(whole.sums(W), chunked.sums(W)):
        assert np.allclose(a, b)
    # held whole but built a chunk of items at a time: the same arrays as one build
    monkeypatch.setattr(PairStats, "max_floats", 10**9)
    monkeypatch.setattr(PairStats, "chunk_floats", 200)
    built = PairStats(*args, **kw)
    assert built._cache is not None
    assert np.array_equal(built._cache[0], whole._cache[0]) and np.array_equal(built._cache[1], whole._cache[1])
    assert np.allclose(whole.human_sums(), chunked.human_sums())


@pytest.mark.parametrize(("score", "level"), [("agreement", "nominal"), ("kappa", "nominal"), ("ac1", "nominal"),
                                              ("alpha", "nominal"), ("alpha", "ordinal"), ("alpha", "interval"),
                                              ("alpha", "ratio")])
@pytest.mark.parametrize("judge_miss", [0.0, 0.25])
def test_loo_core_fast_paths_equal_pairstats(score: str, level: str, judge_miss: float) -> None:
    from voirdire.validation._loo import _arrays_from_stats

    codes = _random_codes(11, n=80, K=5, J=3, L=4, judge_miss=judge_miss)
    hc, jc = np.arange(5), np.arange(5, 8)
    cv = np.array([1.0, 2.0, 3.5, 7.0])
    fast = loo_core(codes, hc, jc, n_categories=4, score=score, level=level, category_values=cv)
    ref = _arrays_from_stats(PairStats(codes, hc, jc, n_categories=4, score=score, level=level, category_values=cv),
                             score=score, level=level, category_values=cv)
    for f in LooArrays.__slots__:
        assert np.allclose(np.asarray(getattr(fast, f), float), np.asarray(getattr(ref, f), float),
                           equal_nan=True, atol=1e-12), f


def _engine_weights(gen_seed: int, n_units: int, B: int) -> np.ndarray:
    """The engine's ``(B, n_units)`` unit weights for the key a fresh ``default_rng(gen_seed)`` gives."""
    from voirdire._stats.resampling import unit_weights, weight_key

    key = weight_key(np.random.default_rng(gen_seed))
    return unit_weights(key, 0, n_units, n_units, B).T.astype(float)


@pytest.mark.parametrize(("score", "level"), [("agreement", "nominal"), ("kappa", "nominal"),
                                              ("alpha", "ordinal"), ("alpha", "interval")])
@pytest.mark.parametrize("judge_miss", [0.0, 0.3])
@pytest.mark.parametrize("clustered", [False, True])
def test_index_free_sums_are_the_engine_weights_times_the_statistics(monkeypatch, score: str, level: str,
                                                                   judge_miss: float, clustered: bool) -> None:
    """From ``_POISSON_MIN_UNITS`` units (here forced to 0) the leave-one-out and alt-test bootstraps
    take the agreement engine's unit weights: their sums are those weights times the per-item
    statistics (per cluster: the cluster's weight on each of its items), chunked or whole."""
    from voirdire.agreement import _core
    from voirdire.validation._kernel import index_free, resampled_column_sums

    codes = _random_codes(11, n=83, K=4, J=2, L=4, judge_miss=judge_miss)
    clusters = np.random.default_rng(1).integers(0, 23, 83) if clustered else None
    kw = dict(n_categories=4, score=score, level=level, category_values=np.array([0.0, 1.0, 2.5, 4.0]))
    B = 37
    if clustered:
        _, inv = np.unique(clusters, return_inverse=True)
        W = _engine_weights(5, int(inv.max()) + 1, B)[:, inv]
    else:
        W = _engine_weights(5, 83, B)
    assert not index_free(83, clusters)
    monkeypatch.setattr(_core, "_POISSON_MIN_UNITS", 0)
    assert index_free(83, clusters)
    for max_floats in (PairStats.max_floats, 300):
        monkeypatch.setattr(PairStats, "max_floats", max_floats)
        ps = PairStats(codes, np.arange(4), np.arange(4, 6), **kw)
        (sj, sh), = list(ps.resampled_sums(B, np.random.default_rng(5), clusters=clusters))
        ej, eh = ps.sums(W)
        assert sj.shape == ej.shape and sh.shape == eh.shape
        np.testing.assert_allclose(sj, ej, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(sh, eh, rtol=1e-12, atol=1e-9)
    X = np.random.default_rng(2).integers(0, 3, (83, 6)).astype(float)
    (S,), = [list(resampled_column_sums(X, B, np.random.default_rng(5), clusters=clusters,
                                        segments=np.tile(np.arange(3), 2)))]
    np.testing.assert_allclose(S, W @ X, rtol=1e-12, atol=1e-9)


def test_below_the_index_free_size_the_resamples_are_the_count_draws() -> None:
    """Small tables keep the classical bootstrap draw for draw: the batches are ``sums(W)`` for
    :func:`weight_batches`' counts from the same generator."""
    from voirdire._stats.resampling import weight_batches

    codes = _random_codes(4, n=50, L=3)
    ps = PairStats(codes, np.arange(4), np.arange(4, 6), n_categories=3, score="kappa", level="nominal",
                   category_values=None)
    got = [b for b in ps.resampled_sums(30, np.random.default_rng(8), clusters=None, batch=7)]
    want = [ps.sums(W) for W in weight_batches(50, 30, np.random.default_rng(8), batch=7)]
    assert len(got) == len(want) == 5
    for (a, b), (c, d) in zip(got, want):
        assert np.array_equal(a, c) and np.array_equal(b, d)


def test_interval_alpha_expected_disagreement_without_the_matrix_product() -> None:
    # interval alpha's expected disagreement marg' D marg (D_ab = (v_a - v_b)^2) is taken as
    # 2 M0 sum_a m_a (v_a - mu)^2; by hand: values (0, 1), marg (1, 1), one disagreeing pair of two
    # (N = 1, dis = 1): D_e = 2 * 2 * (0.25 + 0.25) = 2, alpha = 1 - (2 - 1) * 2 * 1 / 2 = 0
    layout = {"n_pairs": slice(0, 1), "marg": slice(1, 3), "dis": slice(3, 4)}
    kw = dict(score="alpha", level="interval", n_categories=2)
    assert finalize(np.array([1.0, 1.0, 1.0, 1.0]), layout, category_values=np.array([0.0, 1.0]), **kw) == 0.0
    # the same values as the matrix form (the nominal-valued fallback still takes it) on random sums, far
    # from the origin too (values near 1000: the two passes about the mean keep the digits)
    rng = np.random.default_rng(3)
    L = 9
    layout = {"n_pairs": slice(0, 1), "marg": slice(1, 1 + L), "dis": slice(1 + L, 2 + L)}
    for offset in (0.0, 1000.0):
        v = offset + np.sort(rng.normal(size=L))
        marg = rng.integers(0, 5, size=(200, L)).astype(float)
        marg[0] = 0.0  # no pair: nan
        N = marg.sum(axis=1) / 2
        stats = np.column_stack([N, marg, rng.random(200) * N])
        got = finalize(stats, layout, category_values=v, score="alpha", level="interval", n_categories=L)
        D = (v[:, None] - v[None, :]) ** 2
        de = np.einsum("ra,ab,rb->r", marg, D, marg)
        with np.errstate(invalid="ignore", divide="ignore"):
            want = np.where(N > 0, 1.0 - (2 * N - 1.0) * 2.0 * stats[:, -1] / de, np.nan)
        assert np.isnan(got[0]) and np.isnan(want[0])
        np.testing.assert_allclose(got[1:], want[1:], rtol=1e-12)


@pytest.mark.parametrize("offset", [0.0, 1000.0])
def test_interval_alpha_margins_kept_as_moments_give_the_margins_alpha(offset: float) -> None:
    # with more than three values, PairStats keeps interval alpha's margins as their count, sum and sum of
    # squares about the labels' mean (3 columns instead of L); the alphas equal those of the margins (loo_core's
    # path, which keeps them) and krippendorff's on the explicit pairs, far from the origin too
    from voirdire.validation._loo import _arrays_from_stats

    L, K, J = 9, 4, 2
    codes = _random_codes(5, n=120, K=K, J=J, L=L, judge_miss=0.2)
    hc, jc = np.arange(K), np.arange(K, K + J)
    cv = offset + np.sort(np.random.default_rng(1).normal(size=L))
    kw = dict(n_categories=L, score="alpha", level="interval", category_values=cv)
    ps = PairStats(codes, hc, jc, **kw)
    assert "mom" in ps.layout and "marg" not in ps.layout and ps.shape[-1] == 5
    got = _arrays_from_stats(ps, score="alpha", level="interval", category_values=cv)
    ref = loo_core(codes, hc, jc, **kw)
    for f in ("s_judge", "s_human_judge", "s_human", "d"):
        assert np.allclose(np.asarray(getattr(got, f), float), np.asarray(getattr(ref, f), float),
                           equal_nan=True, atol=1e-11, rtol=0), f
    for k in range(K):
        for j in range(J):
            a, b = _pairs(codes, K, K + j, k)
            want = krippendorff.alpha(np.vstack([cv[a], cv[b]]), level_of_measurement="interval")
            assert got.s_judge[j, k] == pytest.approx(want, abs=1e-10)


def test_interval_alpha_moments_of_one_value_are_undefined() -> None:
    # every label the same value (far from 0): the expected disagreement is 0 and alpha is nan, not the
    # rounding of m0 s2 - s1^2 read as a tiny positive disagreement
    from voirdire.validation._loo import _arrays_from_stats

    codes = np.full((30, 5), 2)
    cv = 1000.0 + np.arange(6.0)
    ps = PairStats(codes, np.arange(3), np.arange(3, 5), n_categories=6, score="alpha", level="interval",
                   category_values=cv)
    assert "mom" in ps.layout
    got = _arrays_from_stats(ps, score="alpha", level="interval", category_values=cv)
    assert np.isnan(np.asarray(got.s_judge, float)).all()


def test_interval_alpha_moments_of_one_value_off_the_centre_are_undefined() -> None:
    # a resample whose labels are all one value away from the table's mean (w = v - mean != 0): m0 s2 - s1^2 is
    # 0 up to rounding, and alpha is nan there as when the margins say so
    layout = {"n_pairs": slice(0, 1), "mom": slice(1, 4), "dis": slice(4, 5)}
    kw = dict(score="alpha", level="interval", n_categories=6, category_values=np.arange(6.0))
    for w in (0.1, 3.7, 37.3, 997.0):
        for n in (7.0, 1234.0):
            m0 = 2.0 * n
            stats = np.array([n, m0, m0 * w, m0 * w * w, 0.0])
            assert np.isnan(finalize(stats, layout, **kw)), (w, n)


def test_distinct_product_is_the_product_with_zero_and_repeated_columns_copied():
    # the dense bootstrap products multiply the distinct non-zero columns only and copy them where they repeat
    import scipy.sparse as sp

    from voirdire.validation._kernel import distinct_product

    rng = np.random.default_rng(12)
    base = rng.normal(size=(50, 4))
    X = np.column_stack([base[:, 0], np.zeros(50), base[:, 1], base[:, 0], base[:, 2], base[:, 1], np.zeros(50)])
    W = rng.integers(0, 4, size=(30, 50)).astype(float)
    got = distinct_product(X)(W)
    np.testing.assert_allclose(got, W @ X, rtol=1e-12, atol=1e-12)
    assert np.array_equal(got[:, 0], got[:, 3]) and np.array_equal(got[:, 2], got[:, 5])
    assert not got[:, 1].any() and not got[:, 6].any()
    # sparse: multiplied as it is
    np.testing.assert_allclose(np.asarray(distinct_product(sp.csr_matrix(X))(W)), W @ X, rtol=1e-12, atol=1e-12)
