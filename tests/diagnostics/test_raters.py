"""Per-rater diagnostics: hand cases, exactness against recomputation from scratch, bad input, planted raters."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pytest

from voirdire.agreement import fleiss_kappa, gwet_ac1, gwet_ac2, krippendorff_alpha, observed_agreement
from voirdire.data import AnnotationTable
from voirdire.diagnostics import RaterDiagnosticsResult, rater_diagnostics
from voirdire.diagnostics._raters import _setup
from voirdire.exceptions import InvalidParameterError
from voirdire.validation import loo_core

from ._sim import simulate_raters

_DIRECT = {"krippendorff_alpha": krippendorff_alpha, "fleiss_kappa": fleiss_kappa, "gwet_ac1": gwet_ac1,
           "gwet_ac2": gwet_ac2, "observed_agreement": observed_agreement}


def _sparse_table(rng: np.random.Generator, n: int = 60, K: int = 5, q: int = 4, miss: float = 0.4,
                  clusters: bool = False, scale: str = "nominal") -> AnnotationTable:
    z = rng.integers(0, q, n)
    lab = np.where(rng.random((n, K)) < 0.7, z[:, None], rng.integers(0, q, (n, K))) + 1
    obs = rng.random((n, K)) >= miss
    ii, kk = np.nonzero(obs)
    kw = {"scale": scale, "categories": list(range(1, q + 1))} if scale != "nominal" else {}
    t = AnnotationTable.from_arrays([f"i{i}" for i in ii], [f"r{k}" for k in kk], lab[ii, kk], **kw)
    if clusters:
        import dataclasses
        t = dataclasses.replace(t, clusters=np.arange(t.n_items) // 3)
    return t


def test_hand_case():
    # items: 1 (a=x b=x c=x), 2 (a=x b=x c=y), 3 (a=y b=y c=x), 4 (a=x b=y)
    # S(a): pairs 1:(x,x)(x,x) 2:(x,x)(x,y) 3:(y,y)(y,x) 4:(x,y) -> 4 agree of 7
    # S(b): 1: 2 of 2, 2: 1 of 2, 3: 1 of 2, 4: (y,x) 0 of 1 -> 4/7; S(c): 1: 2 of 2, 2-3: 0 of 4 -> 2/6
    t = AnnotationTable.from_arrays([1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4], list("abcabcabcab"),
                                    list("xxxxxyyyxxy"))
    d = rater_diagnostics(t, n_resamples=0, competence=False, min_items=1)
    assert isinstance(d, RaterDiagnosticsResult)
    assert d.raters == ("a", "b", "c")
    np.testing.assert_allclose(d.s, [4 / 7, 4 / 7, 1 / 3], atol=1e-15)
    assert d.n_labels.tolist() == [4, 4, 3]
    assert d.n_items.tolist() == [4, 4, 3]
    assert d.n_pairs.tolist() == [7, 7, 6]
    assert d.n_partners.tolist() == [2, 2, 2]
    # gap of c: 1/3 - median(4/7, 4/7)
    assert d.gap[2] == pytest.approx(1 / 3 - 4 / 7, abs=1e-15)
    assert not d.flagged.any() and "n_resamples=0" in d.note


@pytest.mark.parametrize("score,scale", [("agreement", "nominal"), ("alpha", "nominal"), ("kappa", "nominal"),
                                         ("ac1", "nominal"), ("alpha", "interval"), ("alpha", "ordinal")])
def test_s_equals_validation_kernel(score, scale):
    t = _sparse_table(np.random.default_rng(3), scale=scale)
    d = rater_diagnostics(t, score=score, n_resamples=0, competence=False)
    # the validation kernel's S(k; P_k), with any column standing in as the (unused) judge
    codes = t.dense()
    cv = np.asarray(t.scale.categories, dtype=float) if scale != "nominal" else None
    ref = loo_core(codes, np.arange(t.n_raters), np.array([0]), n_categories=t.n_categories, score=score,
                   level=scale if score == "alpha" else "nominal", category_values=cv)
    order = [list(t.raters).index(r) for r in d.raters]
    np.testing.assert_allclose(d.s, ref.s_human[order], rtol=0, atol=1e-12)
    assert d.n_pairs.tolist() == ref.n_pairs[order].tolist()


@pytest.mark.parametrize("coef,scale", [("krippendorff_alpha", "nominal"), ("krippendorff_alpha", "interval"),
                                        ("krippendorff_alpha", "ordinal"), ("krippendorff_alpha", "ratio"),
                                        ("fleiss_kappa", "nominal"), ("gwet_ac1", "nominal"),
                                        ("gwet_ac2", "ordinal"), ("observed_agreement", "nominal")])
def test_pool_without_equals_recomputation(coef, scale):
    t = _sparse_table(np.random.default_rng(5), scale=scale)
    d = rater_diagnostics(t, coefficient=coef, n_resamples=0, competence=False)
    f = _DIRECT[coef]
    full = f(t, n_resamples=0).estimate
    assert d.pool_estimate == pytest.approx(full, abs=1e-12)
    for k, r in enumerate(d.raters):
        others = [x for x in d.raters if x != r]
        direct = f(t, raters=others, n_resamples=0).estimate
        assert d.pool_without[k] == pytest.approx(direct, abs=1e-12), r
        assert d.delta[k] == pytest.approx(direct - full, abs=1e-12)


@pytest.mark.parametrize("coef", ["krippendorff_alpha", "gwet_ac1"])
def test_bootstrap_replicate_equals_table_with_repeated_items(coef):
    # a resample with item multiplicities w is the table with item i repeated w_i times: every per-rater
    # number of the replicate must equal the point value on that table (1e-12)
    rng = np.random.default_rng(11)
    t = _sparse_table(rng, n=40, K=4)
    st = _setup(t, list(t.humans), "alpha", coef, None)
    n = t.n_items
    w = np.bincount(rng.integers(0, n, n), minlength=n).astype(float)
    rep = st.spec.from_weights(w[None, :], st.spec.stats())[0]
    df = t.to_frame()
    pos = {it: i for i, it in enumerate(t.items)}
    rows = []
    for it, g in df.groupby("item", sort=False):
        for c in range(int(w[pos[it]])):
            rows.append(g.assign(item=f"{it}#{c}"))
    import pandas as pd
    big = AnnotationTable.from_frame(pd.concat(rows), item="item", rater="rater", label="label")
    d = rater_diagnostics(big, raters=list(st.prep.raters), score="alpha", coefficient=coef, n_resamples=0,
                          competence=False)
    np.testing.assert_allclose(rep[1:1 + st.K], d.s, rtol=0, atol=1e-12)
    assert rep[0] == pytest.approx(d.pool_estimate, abs=1e-12)
    np.testing.assert_allclose(rep[1 + st.K:], d.pool_without, rtol=0, atol=1e-12)


def test_clusters_are_the_resampling_unit():
    t = _sparse_table(np.random.default_rng(2), n=90, clusters=True)
    d = rater_diagnostics(t, n_resamples=200, competence=False, rng=0)
    assert d.resampling_unit == "cluster" and d.n_units <= 30
    assert np.all(d.s_low <= d.s) and np.all(d.s <= d.s_high)


def test_reproducible_and_frame():
    t = _sparse_table(np.random.default_rng(4))
    a = rater_diagnostics(t, n_resamples=300, rng=7)
    b = rater_diagnostics(t, n_resamples=300, rng=7)
    np.testing.assert_array_equal(a.s_low, b.s_low)
    np.testing.assert_array_equal(a.delta_high, b.delta_high)
    np.testing.assert_array_equal(a.mace_competence, b.mace_competence)
    fr = a.to_frame()
    assert list(fr["rater"]) == list(a.raters) and {"s", "delta", "ds_accuracy", "flagged", "reason"} <= set(fr)
    assert a.to_dict()["rule"].startswith("A rater is flagged")


def test_cebab_stars_w40(alttest_dir):
    from voirdire.data import read_annotations
    t = read_annotations(alttest_dir("cebab_stars"))
    d = rater_diagnostics(t, rng=0, competence=False)
    k = d.raters.index("w40")
    assert d.s[k] == pytest.approx(0.178, abs=5e-4)
    others = np.delete(d.s, k)
    assert others.min() > 0.45 and others.max() < 0.6
    assert d.flagged_raters == ("w40",)
    assert "below the median of the other raters" in d.reason[k]
    assert d.delta[k] > 0.09  # alpha rises from 0.357 to 0.469 without w40


# ----------------------------------------------------------------------------- bad input
def test_rater_without_overlap_is_reported():
    t = _sparse_table(np.random.default_rng(1), miss=0.2)
    df = t.to_frame()
    import pandas as pd
    extra = pd.DataFrame({"item": ["lonely1", "lonely2"], "rater": ["solo", "solo"], "label": [1, 2]})
    t2 = AnnotationTable.from_frame(pd.concat([df[["item", "rater", "label"]], extra]))
    d = rater_diagnostics(t2, n_resamples=100, rng=0)
    k = d.raters.index("solo")
    assert d.n_items[k] == 0 and np.isnan(d.s[k]) and not d.flagged[k] and not d.evaluated[k]
    assert "shares no item" in d.reason[k]


def test_pool_of_two():
    t = AnnotationTable.from_arrays(np.repeat(np.arange(30), 2), ["a", "b"] * 30,
                                    np.random.default_rng(0).integers(0, 3, 60))
    d = rater_diagnostics(t, n_resamples=100, rng=0)
    assert not d.flagged.any()
    assert np.isnan(d.pool_without).all() and "undefined without" in d.note
    assert all(r is not None and "two raters" in r for r in d.reason)


@pytest.mark.parametrize("labels", ["varied", "one"])
def test_all_raters_identical(labels):
    n = 20
    lab = np.arange(n) % 3 if labels == "varied" else np.zeros(n, dtype=int)
    t = AnnotationTable.from_arrays(np.repeat(np.arange(n), 4), list("abcd") * n, np.repeat(lab, 4))
    d = rater_diagnostics(t, n_resamples=100, rng=0)
    assert not d.flagged.any()
    np.testing.assert_allclose(d.s, 1.0)
    if labels == "one":
        assert np.isnan(d.pool_estimate) and "undefined" in d.note
        d2 = rater_diagnostics(t, score="alpha", n_resamples=100, rng=0)
        assert not d2.evaluated.any() and all("undefined" in r for r in d2.reason)
    else:
        assert d.pool_estimate == pytest.approx(1.0)


@pytest.mark.parametrize("kw,match", [
    ({"score": "rmse"}, "'score' parameter"), ({"coefficient": "cohen_kappa"}, "'coefficient' parameter"),
    ({"margin": 5}, "'margin' parameter"), ({"n_resamples": 5}, "'n_resamples'"),
    ({"raters": ["a", "zz"]}, "zz"), ({"raters": ["a"]}, "at least two raters"),
    ({"significance_level": 1.5}, "significance_level"), ({"min_items": 0}, "min_items"),
])
def test_bad_parameters(kw, match):
    t = AnnotationTable.from_arrays([1, 1, 2, 2], ["a", "b", "a", "b"], [1, 1, 2, 1])
    with pytest.raises(InvalidParameterError, match=match):
        rater_diagnostics(t, **kw)


def test_not_a_table():
    with pytest.raises(InvalidParameterError, match="AnnotationTable"):
        rater_diagnostics("file.csv")  # type: ignore[arg-type]


def test_competence_ranks_the_spammer_last():
    t, planted = simulate_raters(np.random.default_rng(8), n_items=400, n_good=6, missing=0.3, kind="spammer")
    d = rater_diagnostics(t, n_resamples=0, rng=0)
    k = d.raters.index(planted)
    assert d.ds_accuracy[k] == np.nanmin(d.ds_accuracy) and d.ds_accuracy[k] < 0.4
    assert d.mace_competence[k] == np.nanmin(d.mace_competence)


# ----------------------------------------------------------------------------- planted raters
def _flag_rates(kind: str, reps: int, designs, seed: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    planted_hits = 0
    good_rate = []
    any_good = 0
    for r in range(reps):
        n, k, miss = designs[r % len(designs)]
        t, planted = simulate_raters(rng, n_items=n, n_good=k, missing=miss, kind=kind)
        d = rater_diagnostics(t, n_resamples=500, competence=False, rng=r)
        pk = d.raters.index(planted)
        planted_hits += bool(d.flagged[pk])
        good = np.delete(d.flagged, pk)
        good_rate.append(good.mean())
        any_good += bool(good.any())
    return planted_hits / reps, float(np.mean(good_rate)), any_good / reps


@pytest.mark.statistical
def test_planted_spammer_flagged_good_annotators_not():
    # 200 tables: 200-500 items, 5-8 good annotators (accuracy 0.75 on 5 categories), 30-60% missing
    designs = [(200, 5, 0.6), (300, 6, 0.45), (400, 7, 0.3), (500, 8, 0.6), (250, 8, 0.5)]
    hit, good, any_good = _flag_rates("spammer", 200, designs, seed=19)
    assert hit >= 0.95
    # nominal family-wise rate 0.05 (Holm); binomial slack for 200 tables
    assert good <= 0.05 and any_good <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 200)


@pytest.mark.statistical
def test_planted_biased_annotator_flagged():
    # one category on 40% of the items; 500 items, 8 good annotators, 30% missing
    hit, good, _ = _flag_rates("biased", 200, [(500, 8, 0.3)], seed=23)
    assert hit >= 0.80
    assert good <= 0.05


def test_results_are_strict_json():
    import json

    from voirdire.diagnostics import item_diagnostics
    t = _sparse_table(np.random.default_rng(9))
    for res in (rater_diagnostics(t, n_resamples=50, rng=0), item_diagnostics(t)):
        json.loads(json.dumps(res.to_dict(), allow_nan=False))


def test_invariant_to_rater_order_and_relabelling():
    t = _sparse_table(np.random.default_rng(12))
    d = rater_diagnostics(t, n_resamples=0, competence=False)
    rev = list(reversed(d.raters))
    d2 = rater_diagnostics(t, raters=rev, n_resamples=0, competence=False)
    for r in d.raters:
        a, b = d.raters.index(r), d2.raters.index(r)
        assert d.s[a] == pytest.approx(d2.s[b], abs=1e-12)
        assert d.pool_without[a] == pytest.approx(d2.pool_without[b], abs=1e-12)
    # nominal labels renamed: every number unchanged
    df = t.to_frame()
    df["label"] = df["label"].map(lambda v: f"cat_{5 - int(v)}")
    t3 = AnnotationTable.from_frame(df[["item", "rater", "label"]])
    d3 = rater_diagnostics(t3, n_resamples=0, competence=False)
    np.testing.assert_allclose(d3.s, d.s, atol=1e-12)
    np.testing.assert_allclose(d3.delta, d.delta, atol=1e-12)


def test_many_items_use_the_index_free_bootstrap_on_the_factored_statistics():
    # from 20,000 units the joint bootstrap draws index-free weights and multiplies them with the
    # statistics factored into repeated pieces: every replicate equals the spec evaluated on the
    # same weights times the unfactored statistics
    from voirdire._stats._poisson import weight_key, weighted_sums
    from voirdire.agreement import engine

    rng = np.random.default_rng(3)
    t = _sparse_table(rng, n=20_500, K=6, q=3, miss=0.5)
    st = _setup(t, list(t.humans), "agreement", "krippendorff_alpha", None)
    X = st.spec.stats()
    n_units = X.shape[0]
    unit = np.arange(n_units)
    boots = engine.bootstrap([st.spec], [X], unit, n_units, 40, np.random.default_rng(9))[0]
    sums = weighted_sums(X.toarray(), weight_key(np.random.default_rng(9)), 40)
    np.testing.assert_allclose(boots, st.spec.estimate(sums)[0], rtol=0, atol=1e-12)
    d = rater_diagnostics(t, n_resamples=200, competence=False, rng=0)
    assert np.all(d.s_low <= d.s) and np.all(d.s <= d.s_high) and not d.flagged.any()


def test_ordinal_alpha_without_each_rater_has_intervals_from_the_joint_bootstrap():
    # issue 19: ordinal alpha's pool-without-k had no interval. Now each is its own coefficient in the
    # joint bootstrap: a replicate (item multiplicities w) equals ordinal alpha recomputed on the table
    # without k with item i repeated w_i times, and every rater gets an interval around its value.
    import pandas as pd

    from voirdire.agreement import engine

    rng = np.random.default_rng(21)
    t = _sparse_table(rng, n=50, K=4, scale="ordinal")
    d = rater_diagnostics(t, n_resamples=300, competence=False, rng=0)
    assert d.coefficient_level == "ordinal"
    assert np.all(np.isfinite(d.pool_without_low)) and np.all(np.isfinite(d.delta_low))
    assert np.all(d.pool_without_low <= d.pool_without_high) and np.all(d.delta_low <= d.delta_high)
    assert d.pool.low <= d.pool_estimate <= d.pool.high
    k = 1
    others = [r for r in d.raters if r != d.raters[k]]
    sk = engine.make_spec("krippendorff_alpha", engine.prepare(t, raters=others, policy="exclude", func="t"),
                          level="ordinal")
    w = np.bincount(rng.integers(0, t.n_items, t.n_items), minlength=t.n_items).astype(float)
    rep = sk.from_weights(w[None, :], sk.stats())[0]
    df = t.to_frame()
    df = df[df["rater"].isin(others)]
    pos = {it: i for i, it in enumerate(t.items)}
    rows = [g.assign(item=f"{it}#{c}") for it, g in df.groupby("item", sort=False) for c in range(int(w[pos[it]]))]
    big = AnnotationTable.from_frame(pd.concat(rows), item="item", rater="rater", label="label", scale="ordinal",
                                     categories=list(t.scale.categories))
    assert rep == pytest.approx(krippendorff_alpha(big, n_resamples=0).estimate, abs=1e-12)


@pytest.mark.parametrize("coef,score,scale", [("krippendorff_alpha", "agreement", "nominal"),
                                              ("gwet_ac2", "alpha", "interval"), ("fleiss_kappa", "kappa", "nominal"),
                                              ("bennett_s", "ac1", "nominal"), ("krippendorff_alpha", "alpha", "ordinal")])
def test_factored_rows_equal_the_rows_built_directly(coef, score, scale):
    # the joint rows are built as M @ G from one representative item per distinct piece (a rater's piece
    # depends only on the item's category counts and the rater's label); they must equal the rows built
    # over every item, and the diagnostics must not change when the factoring is switched off
    from voirdire.diagnostics import _raters as R

    t = _sparse_table(np.random.default_rng(31), n=400, K=6, q=3, miss=0.3, scale=scale)
    st = _setup(t, list(t.humans), score, coef, None)
    prep = st.prep
    args = (prep, st.rpos, st.K, st.L, score, st.s_level, prep.cat_values.astype(float), coef, st.lvl, st.additive)
    X, _, _, s_pool, fac = R._joint_rows(*args)
    Xd, _, _, s_pool_d = R._blocks(*args)
    assert fac is not None and s_pool == s_pool_d
    assert X is None  # formed from the factors only when asked (the normal law at large n never forms it)
    M, G = fac
    assert M.shape[1] < M.nnz / 2  # the pieces repeat
    np.testing.assert_allclose((M @ G).toarray(), Xd.toarray(), rtol=0, atol=1e-12)
    spec = R._RaterSpec(prep, st.pool_spec, None, s_pool, st.K, st.layout, st.S, {}, fac)
    np.testing.assert_allclose(spec.totals(), np.asarray(Xd.sum(axis=0)).ravel(), rtol=1e-13, atol=1e-12)
    np.testing.assert_array_equal(spec.stats().toarray(), (M @ G).toarray())
    d = rater_diagnostics(t, score=score, coefficient=coef, n_resamples=100, competence=False, rng=4)
    old = R._PATTERN_CELLS
    try:
        R._PATTERN_CELLS = 0  # no factoring: the rows built directly
        e = rater_diagnostics(t, score=score, coefficient=coef, n_resamples=100, competence=False, rng=4)
    finally:
        R._PATTERN_CELLS = old
    for f in ("s", "s_low", "s_high", "pool_without", "pool_without_low", "delta_low", "delta_high", "p_value"):
        np.testing.assert_allclose(getattr(d, f), getattr(e, f), rtol=0, atol=1e-12, err_msg=f)


def test_leave_one_out_medians_equal_nanmedian():
    from voirdire.diagnostics._raters import _loo_medians

    rng = np.random.default_rng(5)
    for E in (2, 3, 4, 7, 12):
        for ties in (False, True):
            X = rng.integers(0, 4, (200, E)) / 3.0 if ties else rng.random((200, E))
            X[rng.random(X.shape) < 0.03] = np.nan
            X[7] = np.nan
            got = _loo_medians(X)
            with np.errstate(all="ignore"), pytest.warns(RuntimeWarning) if E >= 2 else nullcontext():
                want = np.column_stack([np.nanmedian(np.delete(X, j, axis=1), axis=1) for j in range(E)])
            np.testing.assert_array_equal(got, want)


@pytest.mark.statistical
def test_normal_law_and_bootstrap_agree_at_25000_items(monkeypatch):
    # the joint normal law of S(k; pool), the pool and the pool without each rater (delta method; the
    # threshold lowered to 10,000 units for the test) against the 2,000-resample bootstrap: interval
    # ends within a few Monte-Carlo SEs, the same flags, one spammer flagged both ways
    import voirdire.diagnostics._raters as R

    from ._sim import simulate_raters

    t, planted = simulate_raters(np.random.default_rng(2), n_items=25_000, n_good=4, missing=0.4, kind="spammer")
    out = {}
    for thr in (10_000, 10**12):
        monkeypatch.setattr(R, "NORMAL_MIN_UNITS", thr)
        out[thr] = rater_diagnostics(t, n_resamples=2000, rng=5, competence=False)
    a, b = out[10_000], out[10**12]
    assert a.interval_method == R.NORMAL_METHOD and a.pool.method == R.NORMAL_METHOD
    assert b.interval_method == "percentile bootstrap"
    assert a.flagged_raters == b.flagged_raters == (planted,)
    mc = np.sqrt(0.025 * 0.975 / 2000) / 0.0584 / 3.92            # SE of a 2.5% quantile, in widths
    for lo, hi in (("s_low", "s_high"), ("pool_without_low", "pool_without_high"), ("delta_low", "delta_high")):
        w = getattr(b, hi) - getattr(b, lo)
        assert np.all(np.abs(getattr(a, lo) - getattr(b, lo)) < 4 * mc * w), lo
        assert np.all(np.abs(getattr(a, hi) - getattr(b, hi)) < 4 * mc * w), hi
    w = b.pool.high - b.pool.low
    assert abs(a.pool.low - b.pool.low) < 4 * mc * w and abs(a.pool.high - b.pool.high) < 4 * mc * w


@pytest.mark.parametrize("space", [7, 5000, 10**9])
def test_codes_by_counting_are_numpys_unique(space):
    from voirdire.diagnostics._raters import _codes

    key = np.random.default_rng(space % 97).integers(0, space, 20_000)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    got = _codes(key, space)
    assert np.array_equal(got[0], first) and np.array_equal(got[1], inv.ravel())
