"""Equality with the peer libraries, in the same test run.

- krippendorff (alpha, all four levels): 1e-9.
- irrCAC (``raw.CAC``: fleiss, gwet AC1/AC2, krippendorff, conger, bp) values and standard errors:
  irrCAC rounds to ``digits`` (default 5); we pass ``digits=12`` and compare at 1e-9.
  irrCAC's ``krippendorff()`` with quadratic weights is interval alpha; its ``"ordinal"``
  weights are rank weights, not Krippendorff's ordinal metric, so ordinal alpha is checked
  against the krippendorff package only.
- statsmodels: ``fleiss_kappa`` on complete tables (it cannot take missing labels) and
  ``cohens_kappa`` (kappa and ``std_kappa``, unweighted, linear, quadratic).
- scikit-learn: ``cohen_kappa_score`` (unweighted, linear, quadratic; its weights use label
  positions, ours category values: equal on equally spaced categories 1..q).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import voirdire.agreement as A
from voirdire.data import AnnotationTable, read_annotations

from .._oracles import oracle
from ..conftest import shared_data

krippendorff = oracle("krippendorff")
irr_raw = oracle("irrCAC.raw")
sm_ir = oracle("statsmodels.stats.inter_rater")
skm = pytest.importorskip("sklearn.metrics")

TOL = 1e-9


def _random_wide(seed: int, n: int, R: int, q: int, missing: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, q + 1, n)
    acc = rng.uniform(0.3, 0.9, R)
    X = np.where(rng.random((n, R)) < acc, truth[:, None], rng.integers(1, q + 1, (n, R))).astype(float)
    X[rng.random((n, R)) < missing] = np.nan
    return X


def _fast_table(X: np.ndarray, scale: str = "ordinal", q: int | None = None) -> AnnotationTable:
    ii, rr = np.nonzero(~np.isnan(X))
    assume(np.unique(rr).size >= 2)
    cats = list(range(1, q + 1)) if q else None
    return AnnotationTable.from_arrays(ii, [f"r{k}" for k in rr], X[ii, rr], scale=scale, categories=cats)


def _cac(X: np.ndarray, cats, weights="identity"):
    # raters without any label are not raters of our table; irrCAC would count them in Conger's r
    X = X[:, ~np.isnan(X).all(axis=0)]
    return irr_raw.CAC(pd.DataFrame(X), weights=weights, categories=list(map(float, cats)), digits=12)


def _irr(X, cats, method, weights="identity"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(_cac(X, cats, weights), method)()["est"]


random_tables = st.tuples(st.integers(0, 2**31), st.integers(4, 30), st.integers(2, 6), st.integers(2, 5),
                          st.sampled_from([0.0, 0.2, 0.5]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables)
def test_alpha_equals_krippendorff_package(params):
    seed, n, R, q, miss = params
    X = _random_wide(seed, n, R, q, miss)
    t = _fast_table(X, scale="interval")
    assume(t.n_categories >= 2)
    for level in ("nominal", "ordinal", "interval", "ratio"):
        ours = A.krippendorff_alpha(t, level=level, n_resamples=0, on_undefined="nan").estimate
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ref = krippendorff.alpha(X.T, level_of_measurement=level)
            except ValueError:  # krippendorff refuses data without pairable values
                continue
        if np.isnan(ref):
            assert np.isnan(ours)
        else:
            assert ours == pytest.approx(ref, abs=TOL), level


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables)
def test_gwet_family_equals_irrcac(params):
    seed, n, R, q, miss = params
    X = _random_wide(seed, n, R, q, miss)
    t = _fast_table(X, q=q)
    cats = list(range(1, q + 1))
    pairs = [("fleiss", A.fleiss_kappa, {}), ("gwet", A.gwet_ac1, {}), ("bp", A.bennett_s, {}),
             ("conger", A.conger_kappa, {}), ("krippendorff", A.krippendorff_alpha, {"level": "nominal"})]
    for method, fn, kw in pairs:
        ours = fn(t, n_resamples=0, on_undefined="nan", **kw)
        assume(np.isfinite(ours.estimate) and ours.n_items >= 2)  # irrCAC divides by n(n-1)
        ref = _irr(X, cats, method)
        assume(ref["se"] > 1e-12)
        assert ours.estimate == pytest.approx(ref["coefficient_value"], abs=TOL), method
        assert ours.analytic_se == pytest.approx(ref["se"], abs=TOL), method
    for w in ("linear", "quadratic"):
        for method, fn in (("gwet", A.gwet_ac2), ("fleiss", A.fleiss_kappa), ("bp", A.bennett_s)):
            ours = fn(t, weights=w, n_resamples=0, on_undefined="nan")
            assume(np.isfinite(ours.estimate))
            ref = _irr(X, cats, method, w)
            assume(ref["se"] > 1e-12)
            assert ours.estimate == pytest.approx(ref["coefficient_value"], abs=TOL), (method, w)
            assert ours.analytic_se == pytest.approx(ref["se"], abs=TOL), (method, w)
    # interval alpha == irrCAC krippendorff with quadratic weights (moment path vs matrix)
    ours = A.krippendorff_alpha(t, level="interval", n_resamples=0, on_undefined="nan")
    ref = _irr(X, cats, "krippendorff", "quadratic") if np.isfinite(ours.estimate) else {"se": 0}
    if ref["se"] > 1e-12:
        assert ours.estimate == pytest.approx(ref["coefficient_value"], abs=TOL)
        assert ours.analytic_se == pytest.approx(ref["se"], abs=TOL)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(5, 40), st.integers(2, 6), st.integers(2, 5))
def test_fleiss_equals_statsmodels_on_complete_tables(seed, n, R, q):
    X = _random_wide(seed, n, R, q, 0.0)
    t = _fast_table(X, q=q)
    counts, _ = sm_ir.aggregate_raters(X.astype(int), n_cat=q + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels divides 0/0 when every label is one category
        ref = sm_ir.fleiss_kappa(counts[:, 1:])
    ours = A.fleiss_kappa(t, n_resamples=0, on_undefined="nan").estimate
    assume(np.isfinite(ref))
    assert ours == pytest.approx(ref, abs=TOL)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31), st.integers(6, 60), st.integers(2, 5), st.sampled_from([0.0, 0.3]))
def test_cohen_equals_sklearn_and_statsmodels(seed, n, q, miss):
    X = _random_wide(seed, n, 2, q, miss)
    t = _fast_table(X, q=q)
    both = ~np.isnan(X).any(axis=1)
    assume(both.sum() >= 2)
    a, b = X[both, 0].astype(int), X[both, 1].astype(int)
    cats = list(range(1, q + 1))
    for w in (None, "linear", "quadratic"):
        ours = A.cohen_kappa(t, raters=["r0", "r1"], weights=w, n_resamples=0, on_undefined="nan")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = skm.cohen_kappa_score(a, b, labels=cats, weights=w)
        if not np.isfinite(ref):
            assert not np.isfinite(ours.estimate)
            continue
        assert ours.estimate == pytest.approx(ref, abs=TOL), w
        tab = pd.crosstab(pd.Categorical(a, cats), pd.Categorical(b, cats), dropna=False).to_numpy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # statsmodels divides by zero on degenerate tables
            sm = sm_ir.cohens_kappa(tab, wt=w) if w else sm_ir.cohens_kappa(tab)
        assert ours.estimate == pytest.approx(sm.kappa, abs=TOL)
        if np.isfinite(sm.var_kappa):
            # compare variances: near 0, statsmodels' subtraction (a - b^2) leaves ~1e-16 whose sqrt is ~1e-8
            assert ours.analytic_se ** 2 == pytest.approx(sm.var_kappa, abs=1e-12)
            if sm.std_kappa > 1e-6:
                assert ours.analytic_se == pytest.approx(sm.std_kappa, abs=TOL)
        assert ours.n_items == int(both.sum())


# ------------------------------------------------------------------ real data sets
ALTTEST_NUMERIC = {"10k_prompts", "cebab_stars", "summeval", "lesion"}
ALTTEST_ALL = ["10k_prompts", "cebab_aspects", "cebab_stars", "framing", "kilogram", "lesion", "lgbteen",
               "mtbench", "summeval", "wax"]


def _dense_codes(t: AnnotationTable) -> np.ndarray:
    D = t.dense().astype(float)
    D[D < 0] = np.nan
    return D


def _nominal_alpha_reference(X: np.ndarray) -> float:
    """Nominal alpha straight from Krippendorff (2011): coincidences from every pairable unit."""
    from collections import Counter

    n_c: Counter = Counter()
    do = 0.0
    n = 0
    for row in X:
        vals = [v for v in row if not np.isnan(v)]
        m = len(vals)
        if m < 2:
            continue
        cnt = Counter(vals)
        n_c.update(cnt)
        n += m
        do += (m * m - sum(c * c for c in cnt.values())) / (m - 1)
    de = (n * n - sum(c * c for c in n_c.values())) / (n - 1)
    return 1 - do / de


def _fleiss_reference(X: np.ndarray) -> float:
    """Fleiss' kappa, Gwet's missing-data form: pa over items with 2+ labels, pi over all labelled items."""
    from collections import Counter

    pa, n2, pi, n1 = 0.0, 0, Counter(), 0
    for row in X:
        vals = [v for v in row if not np.isnan(v)]
        m = len(vals)
        if m == 0:
            continue
        cnt = Counter(vals)
        n1 += 1
        for k, c in cnt.items():
            pi[k] += c / m
        if m >= 2:
            n2 += 1
            pa += sum(c * (c - 1) for c in cnt.values()) / (m * (m - 1))
    pa /= n2
    pe = sum((v / n1) ** 2 for v in pi.values())
    return (pa - pe) / (1 - pe)


@pytest.mark.parametrize("name", ALTTEST_ALL)
def test_alttest_datasets_against_peers(name):
    path = shared_data("alttest", name)
    numeric = name in ALTTEST_NUMERIC
    t = read_annotations(path, scale="ordinal" if numeric else "nominal")
    selections = [t.humans, t.humans + (t.judges[0],)]
    for raters in selections:
        sub = t.select(raters=list(raters))
        Xc = _dense_codes(sub)  # codes: nominal comparisons are invariant to the coding
        Xv = sub.dense_values()
        ours = A.krippendorff_alpha(sub, level="nominal", n_resamples=0).estimate
        if name == "kilogram":
            # 4,142 distinct free-text labels: krippendorff builds a 993 x V x V array (127 GiB);
            # check against Krippendorff's definition in plain Python instead.
            assert ours == pytest.approx(_nominal_alpha_reference(Xc), abs=TOL)
        else:
            assert ours == pytest.approx(krippendorff.alpha(Xc.T, level_of_measurement="nominal"), abs=TOL)
        if numeric:
            for level in ("ordinal", "interval"):
                ours = A.krippendorff_alpha(sub, level=level, n_resamples=0).estimate
                ref = krippendorff.alpha(Xv.T, level_of_measurement=level,
                                         value_domain=sorted(map(float, t.scale.categories)))
                assert ours == pytest.approx(ref, abs=TOL), level
        if name == "kilogram":
            # 4,434 free-text categories: irrCAC's per-category pandas loop is too slow here;
            # Fleiss' kappa from its definition in plain Python instead (no q x q matrix on our side)
            assert A.fleiss_kappa(sub, n_resamples=0).estimate == pytest.approx(_fleiss_reference(Xc), abs=TOL)
            continue
        cats = list(range(t.n_categories))
        for method, fn, kw in (("fleiss", A.fleiss_kappa, {}), ("gwet", A.gwet_ac1, {}),
                               ("krippendorff", A.krippendorff_alpha, {"level": "nominal"})):
            r = fn(sub, n_resamples=0, **kw)
            ref = _irr(Xc, cats, method)
            assert r.estimate == pytest.approx(ref["coefficient_value"], abs=TOL), method
            assert r.analytic_se == pytest.approx(ref["se"], abs=TOL), method
        if numeric:
            vals = list(map(float, t.scale.categories))
            r = A.krippendorff_alpha(sub, level="interval", n_resamples=0)
            ref = _irr(Xv, vals, "krippendorff", "quadratic")
            assert r.estimate == pytest.approx(ref["coefficient_value"], abs=TOL)
            assert r.analytic_se == pytest.approx(ref["se"], abs=TOL)
            r = A.gwet_ac2(sub, n_resamples=0)
            ref = _irr(Xv, vals, "gwet", "quadratic")
            assert r.estimate == pytest.approx(ref["coefficient_value"], abs=TOL)
            assert r.analytic_se == pytest.approx(ref["se"], abs=TOL)


@pytest.mark.parametrize("name", ["summeval", "framing", "cebab_aspects", "lesion", "mtbench", "wax"])
def test_alttest_statsmodels_and_sklearn(name):
    t = read_annotations(shared_data("alttest", name))
    hum = t.select(raters=list(t.humans))
    Xc = _dense_codes(hum)
    r_i = (~np.isnan(Xc)).sum(axis=1)
    # statsmodels fleiss_kappa needs the same number of labels per item: keep the items with the modal count
    k = int(np.bincount(r_i).argmax())
    keep = np.flatnonzero(r_i == k)
    sub = hum.select(items=keep)
    counts = np.stack([np.bincount(row[~np.isnan(row)].astype(int), minlength=t.n_categories) for row in Xc[keep]])
    assert A.fleiss_kappa(sub, n_resamples=0).estimate == pytest.approx(sm_ir.fleiss_kappa(counts), abs=TOL)
    # scikit-learn cohen_kappa_score on the two humans who share the most items, and the first judge
    D = hum.dense()
    R = D.shape[1]
    shared = [((D[:, a] >= 0) & (D[:, b] >= 0)).sum() if a != b else -1 for a in range(R) for b in range(R)]
    a, b = divmod(int(np.argmax(shared)), R)
    both = (D[:, a] >= 0) & (D[:, b] >= 0)
    ours = A.cohen_kappa(hum, raters=[hum.raters[a], hum.raters[b]], n_resamples=0).estimate
    assert ours == pytest.approx(skm.cohen_kappa_score(D[both, a], D[both, b]), abs=TOL)
    j = t.judges[0]
    Dj = t.dense()[:, t.rater_index(j)]
    bj = (D[:, a] >= 0) & (Dj >= 0)
    ours = A.cohen_kappa(t, raters=[hum.raters[a], j], n_resamples=0).estimate
    assert ours == pytest.approx(skm.cohen_kappa_score(D[bj, a], Dj[bj]), abs=TOL)


def test_alttest_conger_on_mtbench_and_wax():
    for name in ("mtbench", "wax"):
        t = read_annotations(shared_data("alttest", name))
        sub = t.select(raters=list(t.humans))
        Xc = _dense_codes(sub)
        r = A.conger_kappa(sub, n_resamples=0)
        ref = _irr(Xc, list(range(t.n_categories)), "conger")
        assert r.estimate == pytest.approx(ref["coefficient_value"], abs=TOL)
        assert r.analytic_se == pytest.approx(ref["se"], abs=TOL)


def test_grading_summeval_against_peers():
    path = shared_data("grading", "summeval", "summeval_human_ratings_long.csv")
    df = pd.read_csv(path)
    df["item"] = df["doc_id"] + "|" + df["model_id"] + "|" + df["dimension"]
    df["rater"] = df["rater_type"] + df["rater_index"].astype(str)
    t = AnnotationTable.from_frame(df, item="item", rater="rater", label="score", scale="interval")
    Xv = t.dense_values()
    for level in ("nominal", "ordinal", "interval", "ratio"):
        ours = A.krippendorff_alpha(t, level=level, n_resamples=0).estimate
        ref = krippendorff.alpha(Xv.T, level_of_measurement=level, value_domain=sorted(np.unique(Xv[~np.isnan(Xv)])))
        assert ours == pytest.approx(ref, abs=TOL), level
    vals = list(map(float, t.scale.categories))
    r = A.fleiss_kappa(t, n_resamples=0)
    ref = _irr(Xv, vals, "fleiss")
    assert r.estimate == pytest.approx(ref["coefficient_value"], abs=TOL)
    assert r.analytic_se == pytest.approx(ref["se"], abs=TOL)
    r = A.krippendorff_alpha(t, level="interval", n_resamples=0)
    ref = _irr(Xv, vals, "krippendorff", "quadratic")
    assert r.estimate == pytest.approx(ref["coefficient_value"], abs=TOL)
    assert r.analytic_se == pytest.approx(ref["se"], abs=TOL)


def test_grading_hanna_against_peers():
    path = shared_data("grading", "hanna", "hanna_human_and_llm_ratings_long.csv")
    df = pd.read_csv(path)
    df = df[(df["rater_type"] == "human") | (df["llm_prompt_variant"] == 1)]
    df = df[df["criterion"] == "Coherence"]
    t = AnnotationTable.from_frame(df, item="story_id", rater="rater", label="score", scale="interval",
                                   abstain=[-1])
    Xv = t.dense_values()
    for level in ("interval", "ordinal"):  # LLM means can be negative (-1 = failed parse averaged in): no ratio
        ours = A.krippendorff_alpha(t, level=level, n_resamples=0).estimate
        ref = krippendorff.alpha(Xv.T, level_of_measurement=level, value_domain=sorted(np.unique(Xv[~np.isnan(Xv)])))
        assert ours == pytest.approx(ref, abs=TOL), level
    vals = list(map(float, t.scale.categories))
    r = A.krippendorff_alpha(t, level="interval", n_resamples=0)
    ref = _irr(Xv, vals, "krippendorff", "quadratic")
    assert r.estimate == pytest.approx(ref["coefficient_value"], abs=TOL)
    assert r.analytic_se == pytest.approx(ref["se"], abs=TOL)
