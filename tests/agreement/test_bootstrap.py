"""The item/cluster bootstrap: reproducible, equal to a naive re-computation, shared across
coefficients, cluster-aware; and (marker ``statistical``) the 95% interval covers in simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

import voirdire.agreement as A
from voirdire.agreement import _core
from voirdire.agreement._coefficients import _make_spec
from voirdire.agreement._prepare import prepare
from voirdire.data import AnnotationTable

from .._oracles import oracle

krippendorff = oracle("krippendorff")


def _sim(n, R=4, q=3, acc=0.7, miss=0.3, seed=0, cluster_size=1, interval=False):
    """Latent-class data: each rater copies the item's class w.p. ``acc``, else a uniform class.
    With ``cluster_size > 1`` the items of a cluster share their class and their difficulty
    (``acc`` drawn per cluster from U(0.2, 1)): dependent items."""
    rng = np.random.default_rng(seed)
    n_cl = n // cluster_size
    truth = np.repeat(rng.integers(0, q, n_cl), cluster_size)
    if cluster_size > 1:  # items of a cluster also share their difficulty
        acc = np.repeat(rng.uniform(0.2, 1.0, n_cl), cluster_size)[:, None]
    X = np.where(rng.random((n, R)) < acc, truth[:, None], rng.integers(0, q, (n, R))).astype(float)
    if interval:
        X = X + rng.normal(0, 0.5, X.shape)
    obs = rng.random((n, R)) >= miss
    obs[:, 0] = True
    ii, rr = np.nonzero(obs)
    clusters = np.repeat(np.arange(n_cl), cluster_size)
    df_cluster = clusters[ii] if cluster_size > 1 else None
    import pandas as pd

    df = pd.DataFrame({"item": ii, "rater": rr, "label": X[ii, rr]})
    if df_cluster is not None:
        df["cluster"] = df_cluster
    t = AnnotationTable.from_frame(df, scale="interval" if interval else "ordinal",
                                   cluster="cluster" if df_cluster is not None else None)
    return t, np.where(obs, X, np.nan)


def test_same_seed_same_interval_and_different_seed_differs():
    t, _ = _sim(80, seed=1)
    a = A.krippendorff_alpha(t, level="nominal", n_resamples=200, rng=7)
    b = A.krippendorff_alpha(t, level="nominal", n_resamples=200, rng=7)
    c = A.krippendorff_alpha(t, level="nominal", n_resamples=200, rng=8)
    assert a.ci == b.ci and a.se == b.se
    assert a.ci != c.ci
    g = np.random.default_rng(7)  # a Generator is accepted too
    assert A.krippendorff_alpha(t, level="nominal", n_resamples=200, rng=g).ci == a.ci


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_bootstrap_equals_naive_recomputation(level):
    # The weight-matrix bootstrap must give, resample by resample, what re-running alpha on the
    # resampled items gives (krippendorff package on the duplicated items).
    t, X = _sim(40, seed=2)
    prep = prepare(t, raters=None, policy="exclude", func="test")
    spec = _make_spec("krippendorff_alpha", prep, level=level)
    mask = spec.unit_mask()
    unit, n_units, kind = _core._units(prep, mask)
    S = _core._aggregate(spec.stats(), unit, n_units)
    B = 25
    boots = _core.bootstrap([spec], [S], unit, n_units, B, 123)[0]
    items = np.flatnonzero(mask)  # unit u is the u-th pairable item (items keep their table order)
    Xt = t.dense_values()
    gen = np.random.default_rng(123)
    idx = gen.integers(0, n_units, size=(B, n_units), dtype=np.int32)
    for b in range(B):
        ref = krippendorff.alpha(Xt[items[idx[b]]].T, level_of_measurement=level,
                                 value_domain=sorted(map(float, t.scale.categories)))
        assert boots[b] == pytest.approx(ref, abs=1e-9)


def test_agreement_shares_the_resamples():
    t, _ = _sim(60, seed=3, miss=0.0)
    tab = A.agreement(t, coefficients=["fleiss_kappa", "krippendorff_alpha", "gwet_ac1"], level="nominal",
                      n_resamples=150, rng=5)
    for name in ("fleiss_kappa", "gwet_ac1"):
        single = getattr(A, name)(t, n_resamples=150, rng=5)
        assert tab[name].estimate == pytest.approx(single.estimate, abs=1e-12)
        assert tab[name].ci == single.ci  # same units (complete data) -> the same draws
    assert tab["krippendorff_alpha"].estimate == pytest.approx(
        A.krippendorff_alpha(t, level="nominal", n_resamples=0).estimate, abs=1e-12)


def test_clusters_are_the_resampling_unit():
    t, _ = _sim(100, seed=4, cluster_size=5)
    r = A.krippendorff_alpha(t, level="nominal", n_resamples=200, rng=0)
    assert r.resampling_unit == "cluster" and r.n_units == 20
    assert "clusters" in r.method
    # dependent items: the cluster interval is wider than the (wrong) item interval
    flat = AnnotationTable.from_frame(t.to_frame().drop(columns="cluster"), scale="ordinal")
    r_items = A.krippendorff_alpha(flat, level="nominal", n_resamples=200, rng=0)
    assert r_items.resampling_unit == "item" and r_items.n_units == r_items.n_items  # pairable items
    assert r.ci.width > r_items.ci.width
    assert r.analytic_se > r_items.analytic_se


def test_wald_interval_without_bootstrap():
    t, _ = _sim(120, seed=5)
    r = A.fleiss_kappa(t, n_resamples=0)
    z = st.norm.ppf(0.975)
    assert r.ci.low == pytest.approx(r.estimate - z * r.analytic_se)
    assert "Wald" in r.ci.method and np.isnan(r.se)


def _coverage(fn, truth, reps, n, seed, **sim):
    hits = 0
    for k in range(reps):
        t, _ = _sim(n, seed=seed + k, **sim)
        r = fn(t)
        hits += r.ci.low <= truth <= r.ci.high
    return hits / reps


def _tolerance(p, reps, z=3.0):
    return z * np.sqrt(p * (1 - p) / reps)


@pytest.mark.statistical
@pytest.mark.parametrize("name, sim", [
    ("nominal alpha", {}),
    ("interval alpha", {"interval": True}),
    ("fleiss", {}),
    ("clustered alpha", {"cluster_size": 4}),
])
def test_bootstrap_coverage(name, sim):
    # Population values from one very large sample (the estimators are consistent ratios).
    big, _ = _sim(200_000, seed=999, **sim)
    if name == "fleiss":
        def fn(t, B=400):
            return A.fleiss_kappa(t, n_resamples=B, rng=0)
    else:
        lvl = "interval" if "interval" in name else "nominal"

        def fn(t, B=400):
            return A.krippendorff_alpha(t, level=lvl, n_resamples=B, rng=0)
    truth = fn(big, B=0).estimate
    reps = 250
    cov = _coverage(fn, truth, reps, n=160, seed=10_000, **sim)
    print(f"coverage {name}: {cov:.3f} over {reps} runs")
    assert abs(cov - 0.95) <= _tolerance(0.95, reps), (name, cov)


def test_type_compressed_bootstrap_has_the_same_distribution():
    # 600 items of 3 complete raters and 3 categories: at most 10 count patterns, so the bootstrap
    # draws the multiplicity of each pattern from Multinomial(n, n_t / n). Its distribution must match
    # the plain index bootstrap (means and SDs of 3000 resamples within Monte Carlo error).
    t, _ = _sim(600, R=3, miss=0.0, seed=11)
    prep = prepare(t, raters=None, policy="exclude", func="test")
    spec = _make_spec("fleiss_kappa", prep)
    unit, n_units, _ = _core._units(prep, spec.unit_mask())
    S = _core._aggregate(spec.stats(), unit, n_units)
    assert _core._unit_types([S], n_units) is not None
    a = _core.bootstrap([spec], [S], unit, n_units, 3000, 1)[0]
    b = _core.bootstrap([spec], [S], unit, n_units, 3000, 2, compress=False)[0]
    se = a.std()
    assert abs(a.mean() - b.mean()) < 4 * se * np.sqrt(2 / 3000)
    assert abs(a.std() / b.std() - 1) < 4 * np.sqrt(1 / 3000)


@pytest.mark.statistical
def test_ignoring_clusters_undercovers():
    # Items in clusters of 4 share class and difficulty. The cluster bootstrap covers (checked above);
    # resampling items as if independent gives intervals that are too narrow.
    big, _ = _sim(200_000, seed=999, cluster_size=4)
    truth = A.krippendorff_alpha(big, level="nominal", n_resamples=0).estimate
    reps, hits_cluster, hits_item = 200, 0, 0
    for k in range(reps):
        t, _ = _sim(160, seed=20_000 + k, cluster_size=4)
        flat = AnnotationTable.from_frame(t.to_frame().drop(columns="cluster"), scale="ordinal")
        rc = A.krippendorff_alpha(t, level="nominal", n_resamples=300, rng=0)
        ri = A.krippendorff_alpha(flat, level="nominal", n_resamples=300, rng=0)
        hits_cluster += rc.ci.low <= truth <= rc.ci.high
        hits_item += ri.ci.low <= truth <= ri.ci.high
    print(f"clustered data: cluster bootstrap {hits_cluster / reps:.3f}, item bootstrap {hits_item / reps:.3f}")
    assert abs(hits_cluster / reps - 0.95) <= _tolerance(0.95, reps)
    assert hits_item / reps < 0.90


@pytest.mark.statistical
@pytest.mark.parametrize("name", ["fleiss_kappa", "gwet_ac1", "krippendorff_alpha"])
def test_analytic_wald_coverage(name):
    # n_resamples=0: the interval is estimate +- z * Gwet's linearised SE.
    big, _ = _sim(200_000, seed=999)
    kw = {"level": "nominal"} if name == "krippendorff_alpha" else {}
    fn = getattr(A, name)
    truth = fn(big, n_resamples=0, **kw).estimate
    reps = 400
    cov = _coverage(lambda t: fn(t, n_resamples=0, **kw), truth, reps, n=160, seed=30_000)
    print(f"Wald coverage {name}: {cov:.3f} over {reps} runs")
    assert abs(cov - 0.95) <= _tolerance(0.95, reps)


@pytest.mark.parametrize("level", ["ordinal", "nominal"])
def test_cluster_bootstrap_equals_naive_recomputation(level):
    t, _ = _sim(60, seed=6, cluster_size=3)
    prep = prepare(t, raters=None, policy="exclude", func="test")
    spec = _make_spec("krippendorff_alpha", prep, level=level)
    unit, n_units, kind = _core._units(prep, spec.unit_mask())
    assert kind == "cluster"
    S = _core._aggregate(spec.stats(), unit, n_units)
    B = 15
    boots = _core.bootstrap([spec], [S], unit, n_units, B, 7, compress=False)[0]
    Xt = t.dense_values()
    gen = np.random.default_rng(7)
    idx = gen.integers(0, n_units, size=(B, n_units), dtype=np.int32)
    for b in range(B):
        rows = np.concatenate([np.flatnonzero(unit == u) for u in idx[b]])
        ref = krippendorff.alpha(Xt[rows].T, level_of_measurement=level,
                                 value_domain=sorted(map(float, t.scale.categories)))
        assert boots[b] == pytest.approx(ref, abs=1e-9)


def test_ordinal_bootstrap_groups_identical_items():
    t, _ = _sim(3000, R=3, miss=0.0, seed=12)
    prep = prepare(t, raters=None, policy="exclude", func="test")
    spec = _make_spec("krippendorff_alpha", prep, level="ordinal")
    unit, n_units, _ = _core._units(prep, spec.unit_mask())
    S = _core._aggregate(spec.stats(), unit, n_units)
    assert _core._unit_types([S], n_units) is not None
    a = _core.bootstrap([spec], [S], unit, n_units, 2000, 1)[0]
    b = _core.bootstrap([spec], [S], unit, n_units, 2000, 2, compress=False)[0]
    assert abs(a.mean() - b.mean()) < 4 * a.std() * np.sqrt(2 / 2000)
    assert abs(a.std() / b.std() - 1) < 4 * np.sqrt(1 / 2000)


def test_side_thread_gives_the_same_results(monkeypatch):
    # from _CONCURRENT_MIN_UNITS units the analytic SEs and jackknives run on a second thread beside
    # the bootstrap: every number (estimates, SEs, BCa/studentized intervals) is the same as in order
    rng = np.random.default_rng(3)
    n = 300
    X = np.clip(rng.integers(1, 6, (n, 1)) + rng.integers(-1, 2, (n, 4)), 1, 5).astype(float)
    X[rng.random(X.shape) < 0.3] = np.nan
    ii, rr = np.nonzero(~np.isnan(X))
    t = AnnotationTable.from_arrays(ii, rr, X[ii, rr], scale="interval")
    monkeypatch.setattr(_core, "_two_cores", lambda: True)
    runs = []
    for limit in (1 << 62, 0):
        monkeypatch.setattr(_core, "_CONCURRENT_MIN_UNITS", limit)
        for method in ("bca", "studentized"):
            runs.append([(r.coefficient, r.estimate, r.analytic_se, r.se, r.ci.low, r.ci.high, r.method)
                         for r in A.agreement(t, level="interval", n_resamples=200, rng=4, method=method)])
    assert runs[:2] == runs[2:]


def test_jackknife_per_type_is_the_jackknife_per_unit_bit_for_bit():
    # categorical labels: units group into types; the leave-one-out value computed once per type
    # (from the same total) equals the one computed unit by unit
    rng = np.random.default_rng(5)
    n = 3000
    t = AnnotationTable.from_arrays(np.repeat(np.arange(n), 3), np.tile(["a", "b", "c"], n),
                                    rng.integers(1, 6, 3 * n), scale="interval")
    for name, kw in (("krippendorff_alpha", {"level": "interval"}), ("fleiss_kappa", {})):
        prep = prepare(t, raters=None, policy="exclude", func="x")
        spec = _make_spec(name, prep, level=kw.get("level"), weights=None)
        unit, n_units, _ = _core._units(prep, spec.unit_mask())
        S = _core._aggregate(spec.stats(), unit, n_units)
        types = _core._unit_types([S], n_units)
        assert types is not None
        a = _core.jackknife_values(spec, S, unit, n_units, True)
        b = _core.jackknife_values(spec, S, unit, n_units, True, None, types)
        assert np.array_equal(a, b)


def test_safe_div_is_the_quotient_with_nan_at_zero_denominators():
    rng = np.random.default_rng(8)
    b = np.where(rng.random(200) < 0.3, 0.0, rng.normal(size=200))
    a = rng.normal(size=200)
    a[:3] = [np.nan, np.inf, 0.0]
    b[3:6] = [np.nan, np.inf, 0.0]
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.where(b != 0, a / np.where(b != 0, b, 1.0), np.nan)
    got = _core._safe_div(a, b)
    assert np.array_equal(got, ref, equal_nan=True) and got.dtype == ref.dtype
    assert np.array_equal(_core._safe_div(np.ones((3, 1)), np.array([0.0, 2.0])), [[np.nan, 0.5]] * 3, equal_nan=True)
