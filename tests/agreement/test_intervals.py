"""Interval methods of the agreement coefficients (issue 13): each method against an independent
computation (scipy's BCa, statsmodels' Wilson, naive jackknife and bootstrap-t loops), the
``method=`` option and its ``auto`` rule, fallbacks on bad input, the small-sample warning, and
(marker ``statistical``) coverage of the ``auto`` interval at 20-30 units."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats as st

import voirdire.agreement as A
from voirdire._stats import intervals as iv
from voirdire.agreement import _core
from voirdire.agreement._coefficients import _make_spec
from voirdire.agreement._prepare import prepare
from voirdire.exceptions import DegenerateDataWarning, InvalidParameterError, SmallSampleWarning

from ._helpers import table_from_wide


def _five(n, R=3, seed=0, miss=0.0, clusters=None):
    """Five ordered classes; each rater reports the class w.p. 0.7, else the class +- a rounded N(0,1) step."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(5, size=n, p=[0.1, 0.2, 0.4, 0.2, 0.1])
    step = np.rint(rng.normal(0, 1, (n, R))).astype(int)
    X = np.where(rng.random((n, R)) < 0.7, truth[:, None], np.clip(truth[:, None] + step, 0, 4)).astype(float)
    X[rng.random((n, R)) < miss] = np.nan
    X[:, 0] = np.where(np.isnan(X[:, 0]), truth, X[:, 0])
    return table_from_wide(X, scale="interval", categories=[0, 1, 2, 3, 4], clusters=clusters)


# ------------------------------------------------------------------ interval builders vs peers
def test_bca_matches_scipy():
    # scipy.stats.bootstrap(method="BCa") on a mean: same replicates, jackknife acceleration, z0.
    x = np.random.default_rng(3).exponential(size=25)
    res = st.bootstrap((x,), np.mean, method="BCa", n_resamples=4000, rng=np.random.default_rng(1))
    jack = (x.sum() - x) / (x.size - 1)
    ours = iv.bca(float(x.mean()), res.bootstrap_distribution, jack, 0.95)
    assert ours.method == "bca"
    assert ours.low == pytest.approx(res.confidence_interval.low, rel=1e-9)
    assert ours.high == pytest.approx(res.confidence_interval.high, rel=1e-9)


def test_percentile_matches_scipy():
    x = np.random.default_rng(4).normal(size=30)
    res = st.bootstrap((x,), np.mean, method="percentile", n_resamples=3000, rng=np.random.default_rng(2))
    ours = iv.percentile(res.bootstrap_distribution, 0.95)
    assert (ours.low, ours.high) == pytest.approx((res.confidence_interval.low, res.confidence_interval.high))


def test_wilson_matches_statsmodels():
    sm = pytest.importorskip("statsmodels.stats.proportion")
    for k, n in [(17, 20), (20, 20), (3, 30), (45, 100)]:
        lo, hi = sm.proportion_confint(k, n, alpha=0.05, method="wilson")
        ours = iv.wilson(k / n, n, 0.95)
        assert (ours.low, ours.high) == pytest.approx((lo, hi), abs=1e-12)


def test_jackknife_se_of_a_mean_is_the_classical_se():
    x = np.random.default_rng(5).normal(size=40)
    jack = (x.sum() - x) / (x.size - 1)
    assert iv.jackknife_se(jack) == pytest.approx(x.std(ddof=1) / math.sqrt(x.size))


def test_studentized_of_a_mean_is_the_textbook_bootstrap_t():
    # Bootstrap-t for a mean on the identity scale, written out: t* = (m* - m) / (s*/sqrt(n)).
    rng = np.random.default_rng(6)
    x = rng.exponential(size=30)
    n = x.size
    idx = rng.integers(0, n, (2000, n))
    xb = x[idx]
    mb = xb.mean(axis=1)
    sb = xb.std(axis=1, ddof=1) / math.sqrt(n)
    t = np.sort((mb - x.mean()) / sb)
    se = x.std(ddof=1) / math.sqrt(n)
    lo_t, hi_t = np.quantile(t, [0.025, 0.975])
    ours = iv.studentized(float(x.mean()), mb, sb, se, 0.95, iv.Scale(-math.inf, math.inf))
    assert (ours.low, ours.high) == pytest.approx((x.mean() - hi_t * se, x.mean() - lo_t * se))


# ------------------------------------------------------------------ jackknife from the sufficient statistics
@pytest.mark.parametrize("name, level", [("krippendorff_alpha", "nominal"), ("krippendorff_alpha", "ordinal"),
                                         ("krippendorff_alpha", "interval"), ("fleiss_kappa", None),
                                         ("gwet_ac1", None), ("observed_agreement", None), ("conger_kappa", None)])
def test_leave_one_out_equals_naive_recomputation(name, level):
    t = _five(15, R=3, seed=1, miss=0.2)
    prep = prepare(t, raters=None, policy="exclude", func="t")
    s = _make_spec(name, prep, level=level)
    unit, n_units, _ = _core._units(prep, s.unit_mask())
    S = _core._aggregate(s.stats(), unit, n_units)
    jack = _core.jackknife_values(s, S, unit, n_units, True)
    fn = getattr(A, name)
    kw = {"level": level} if level else {}
    items = np.flatnonzero(unit >= 0)
    frame = t.to_frame()
    ids = list(t.items)
    for j in range(n_units):
        drop = ids[items[unit[items] == j][0]]
        sub = frame[frame["item"] != drop]
        t2 = type(t).from_frame(sub, scale="interval", categories=[0, 1, 2, 3, 4])
        assert jack[j] == pytest.approx(fn(t2, n_resamples=0, **kw).estimate, abs=1e-10), j


@pytest.mark.parametrize("name, level", [("krippendorff_alpha", "ordinal"), ("fleiss_kappa", None),
                                         ("krippendorff_alpha", "interval")])
def test_replicate_se_equals_naive_jackknife_of_the_resample(name, level):
    # One bootstrap resample written out as a table (drawn items repeated), then its jackknife by
    # deleting each draw in turn: the same SE as the sufficient-statistics shortcut.
    t = _five(12, R=3, seed=2)
    prep = prepare(t, raters=None, policy="exclude", func="t")
    s = _make_spec(name, prep, level=level)
    unit, n_units, _ = _core._units(prep, s.unit_mask())
    S = _core._aggregate(s.stats(), unit, n_units)
    draw = np.random.default_rng(9).integers(0, n_units, n_units)
    W = np.bincount(draw, minlength=n_units)[None, :].astype(float)
    se = _core._replicate_se(s, W, S)[0]
    X = t.dense_values()
    kw = {"level": level} if level else {}
    loo = []
    for d in range(n_units):
        rows = np.delete(draw, d)
        t2 = table_from_wide(X[rows], scale="interval", categories=[0, 1, 2, 3, 4])
        loo.append(getattr(A, name)(t2, n_resamples=0, **kw).estimate)
    assert se == pytest.approx(iv.jackknife_se(np.array(loo)), rel=1e-9)


# ------------------------------------------------------------------ the method= option
@pytest.mark.parametrize("method, label", [("percentile", "percentile bootstrap"), ("bca", "BCa bootstrap"),
                                           ("studentized", "bootstrap-t"), ("jackknife", "jackknife"),
                                           ("wald", "Wald")])
def test_each_method_reports_its_name(method, label):
    t = _five(40, seed=3)
    r = A.krippendorff_alpha(t, level="interval", n_resamples=400, rng=0, method=method)
    assert label in r.ci.method and label in r.method
    assert r.ci.low < r.estimate < r.ci.high
    assert r.to_dict()["ci"]["method"] == r.ci.method


def test_auto_rule_by_units_and_coefficient():
    small, large = _five(50, seed=4), _five(260, seed=4)
    r = A.agreement(small, coefficients=["krippendorff_alpha", "fleiss_kappa"], level="ordinal", n_resamples=200,
                    rng=0)
    assert all("bootstrap-t" in x.ci.method for x in r)
    assert "method='auto' chose studentized" in r["fleiss_kappa"].method
    r = A.agreement(large, coefficients=["krippendorff_alpha", "fleiss_kappa"], level="ordinal", n_resamples=200,
                    rng=0)
    assert all(x.ci.method == "BCa bootstrap" for x in r)
    # ordinal alpha on few categories is a function of per-item sums like the others: the same rule
    mid = _five(150, seed=4)
    r = A.agreement(mid, coefficients=["krippendorff_alpha", "fleiss_kappa"], level="ordinal", n_resamples=200,
                    rng=0)
    assert all("bootstrap-t" in x.ci.method for x in r)
    # on many categories its per-resample jackknife re-ranks per deletion, O(n^2): bootstrap-t only up to 100
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 20, 150)
    X = np.clip(truth[:, None] + rng.integers(-2, 3, (150, 3)), 0, 19).astype(float)
    many = table_from_wide(X, scale="ordinal", categories=list(range(20)))
    r = A.krippendorff_alpha(many, level="ordinal", n_resamples=200, rng=0)
    assert r.ci.method == "BCa bootstrap"
    # without resamples: the analytic Wald interval, as before
    assert "Wald" in A.fleiss_kappa(small, n_resamples=0).ci.method


@pytest.mark.parametrize("policy", ["exclude", "disagree"])
def test_ordinal_alpha_from_sums_equals_the_reranking_form(policy):
    # _AlphaOrdinalSums (few categories) against _AlphaOrdinal (re-ranks every resample and deletion)
    rng = np.random.default_rng(11)
    for n, R, L in [(7, 2, 3), (40, 4, 5), (25, 5, 7)]:
        X = rng.integers(0, L, (n, R)).astype(object)
        X[rng.random((n, R)) < 0.25] = None
        X[rng.random((n, R)) < 0.08] = "x"
        t = table_from_wide(X, scale="ordinal", categories=list(range(L)), abstain=["x"])
        prep = prepare(t, raters=None, policy=policy, func="t")
        a, b = _core._AlphaOrdinal(prep, "t"), _core._AlphaOrdinalSums(prep, "t")
        np.testing.assert_allclose(b.estimate(b.totals().reshape(1, -1)), a.estimate(a.totals().reshape(1, -1)),
                                   rtol=1e-10)
        W = rng.multinomial(prep.n_items, np.full(prep.n_items, 1 / prep.n_items), size=30).astype(float)
        np.testing.assert_allclose(b.from_weights(W, b.stats()), a.from_weights(W, a.stats()), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(b.loo_from_weights(W, b.stats()), a.loo_from_weights(W, a.stats()),
                                   rtol=1e-10, atol=1e-12)


def test_observed_agreement_uses_wilson_and_the_logit_scale():
    t = _five(30, seed=5)
    r = A.observed_agreement(t, n_resamples=300, rng=0)
    assert r.ci.method.startswith("Wilson") and 0 <= r.ci.low < r.estimate < r.ci.high <= 1
    s = A.observed_agreement(t, n_resamples=300, rng=0, method="studentized")
    assert "logit" in s.ci.method and 0 <= s.ci.low < s.ci.high <= 1
    with pytest.raises(InvalidParameterError, match="'wilson'.*only observed_agreement"):
        A.fleiss_kappa(t, method="wilson")


def test_method_parameter_is_checked():
    t = _five(20, seed=6)
    with pytest.raises(InvalidParameterError, match=r"'method' parameter of krippendorff_alpha must be one of"):
        A.krippendorff_alpha(t, method="basic")
    with pytest.raises(InvalidParameterError, match="n_resamples=0"):
        A.fleiss_kappa(t, method="bca", n_resamples=0)


def test_jackknife_needs_no_resamples():
    t = _five(30, seed=7)
    r = A.gwet_ac1(t, n_resamples=0, method="jackknife")
    assert "jackknife" in r.ci.method and r.ci.low < r.estimate < r.ci.high


# ------------------------------------------------------------------ bad input
def test_bca_without_acceleration_falls_back_with_a_warning():
    # All jackknife values equal: the acceleration is 0/0. The builder falls back to the percentile
    # interval and says so.
    boots = np.random.default_rng(0).normal(size=500)
    r = iv.bca(0.0, boots, np.ones(10), 0.95)
    assert r.method == "percentile" and "acceleration is undefined" in r.note
    r = iv.build("bca", 0.0, boots=boots, jack=np.ones(10), boot_se=None, analytic_se=None, n_units=10,
                 level=0.95, scale=iv.Scale())
    assert r.method == "percentile" and "percentile" in r.note


def test_acceleration_is_defined_at_millions_of_units():
    # A real jackknife at n units spreads ~1/n: at 5 million units (deviations ~2e-7) the acceleration
    # is a number (the skewness of the values), not "undefined", which once made every large table's
    # BCa fall back with a warning. Values equal up to rounding stay undefined.
    rng = np.random.default_rng(3)
    n = 5_000_000
    jack = 0.7 + rng.exponential(size=n) / n
    d = jack.mean() - jack
    assert iv.acceleration(jack) == pytest.approx((d ** 3).sum() / (6 * (d @ d) ** 1.5), rel=1e-9)
    assert iv.acceleration(jack) < 0  # right-skewed values: d = mean - value is left-skewed
    assert math.isnan(iv.acceleration(0.7 + rng.normal(size=1000) * 1e-16))


def test_single_cluster_gives_nan_with_a_reason():
    X = [[1, 1, 2], [2, 2, 2], [3, 3, 1], [1, 2, 1]]
    t = table_from_wide(X, scale="ordinal", clusters=[0, 0, 0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)  # nan with its reason, not a warning
        r = A.krippendorff_alpha(t, n_resamples=100, rng=0)
    assert math.isfinite(r.estimate) and math.isnan(r.ci.low) and "one cluster only" in r.method


def test_identical_units_give_nan_not_a_zero_width_interval():
    # Every item has the labels "a" and "b": AC1 = (0 - 0.5) / (1 - 0.5) = -1 on every resample.
    t = table_from_wide([["a", "b"]] * 30)
    r = A.gwet_ac1(t, n_resamples=200, rng=0)
    assert r.estimate == pytest.approx(-1) and math.isnan(r.ci.low) and math.isnan(r.ci.high)
    assert "every resample gives -1" in r.method and r.ci.method == "none"
    # observed agreement 0 on 30 items: Wilson's interval on the 30 units, not a point
    p = A.observed_agreement(t, n_resamples=200, rng=0)
    assert p.ci.low == 0 and p.ci.high == pytest.approx(0.1135, abs=1e-3)


def test_fallback_warns_and_names_the_method_used(monkeypatch):
    # All-equal jackknife values leave BCa's acceleration undefined (0/0): the percentile interval
    # is used, and the warning and the result both say so.
    t = _five(40, seed=10)
    monkeypatch.setattr(_core, "jackknife_values", lambda s, st, *a: np.full(st.shape[0], 0.5))
    with pytest.warns(DegenerateDataWarning, match=r"BCa not defined \(the acceleration is undefined.*percentile"):
        r = A.fleiss_kappa(t, n_resamples=200, rng=0, method="bca")
    p = A.fleiss_kappa(t, n_resamples=200, rng=0, method="percentile")
    assert r.ci.method == "percentile bootstrap" and "percentile interval used" in r.method
    assert (r.ci.low, r.ci.high) == (p.ci.low, p.ci.high)


def test_small_sample_warning_says_how_many_units_would_do():
    t = _five(8, seed=8)
    with pytest.warns(SmallSampleWarning, match=r"only 8 items .* too few for any interval to be trusted.*about 20"):
        A.fleiss_kappa(t, n_resamples=100, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        A.fleiss_kappa(_five(25, seed=8), n_resamples=100, rng=0)


def test_auto_is_reproducible_and_shared_across_coefficients():
    t = _five(30, seed=9)
    a = A.agreement(t, coefficients=["fleiss_kappa", "gwet_ac1"], n_resamples=300, rng=5)
    b = A.fleiss_kappa(t, n_resamples=300, rng=5)
    assert (a["fleiss_kappa"].ci.low, a["fleiss_kappa"].ci.high) == (b.ci.low, b.ci.high)


# ------------------------------------------------------------------ coverage (statistical)
def _binary(n, R, prev, miss, seed):
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < prev
    noise = rng.random((n, R)) < prev
    X = np.where(rng.random((n, R)) < 0.7, truth[:, None], noise).astype(float)
    X[rng.random((n, R)) < miss] = np.nan
    X[:, 0] = np.where(np.isnan(X[:, 0]), truth, X[:, 0])
    return X


@pytest.mark.statistical
@pytest.mark.parametrize("cell", ["five-20", "rare-30"])
def test_auto_interval_covers_at_small_n(cell):
    # Two cells of bench/interval_coverage.py's grid (docs/agreement.md "Small samples"):
    # five ordered categories, 20 items, 6 raters, 50% missing; and binary labels with prevalence
    # 0.85, 30 items, 4 raters, 30% missing, where the percentile interval undercovers (about 0.85)
    # and the bootstrap-t does not. 250 tables, B = 300; tolerance 3 binomial SEs (+-0.041).
    if cell == "five-20":
        big = _five(60_000, R=6, seed=999, miss=0.5)
        make = lambda s: _five(20, R=6, seed=s, miss=0.5)  # noqa: E731
        names, level = ["krippendorff_alpha", "fleiss_kappa"], "interval"
    else:
        big = table_from_wide(_binary(60_000, 4, 0.85, 0.3, 999))
        make = lambda s: table_from_wide(_binary(30, 4, 0.85, 0.3, s))  # noqa: E731
        names, level = ["krippendorff_alpha", "gwet_ac1"], "nominal"
    truth = {r.coefficient: r.estimate for r in A.agreement(big, coefficients=names, level=level, n_resamples=0)}
    reps = 250
    hits = {nm: 0 for nm in names}
    pct = {nm: 0 for nm in names}
    for k in range(reps):
        t = make(50_000 + k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            auto = A.agreement(t, coefficients=names, level=level, n_resamples=300, rng=k)
            perc = A.agreement(t, coefficients=names, level=level, n_resamples=300, rng=k, method="percentile")
        for nm in names:
            hits[nm] += bool(auto[nm].ci.low <= truth[nm] <= auto[nm].ci.high)
            pct[nm] += bool(perc[nm].ci.low <= truth[nm] <= perc[nm].ci.high)
    tol = 3 * math.sqrt(0.95 * 0.05 / reps)
    for nm in names:
        print(f"{cell} {nm}: auto {hits[nm] / reps:.3f}, percentile {pct[nm] / reps:.3f}")
        assert abs(hits[nm] / reps - 0.95) <= tol, (nm, hits[nm] / reps)
    if cell == "rare-30":
        assert pct["krippendorff_alpha"] / reps < 0.91  # the undercoverage that auto repairs


def test_fallback_chain_ends_when_nothing_is_defined() -> None:
    # every method undefined (no replicates, no jackknife, no analytic SE): a nan interval with a reason,
    # not an endless jackknife -> percentile -> jackknife recursion
    from voirdire._stats import intervals as iv

    scale = iv.Scale()
    for m in ("bca", "studentized", "jackknife", "percentile", "wald"):
        r = iv.build(m, 0.4, boots=np.zeros(0), jack=np.zeros(0), boot_se=None, analytic_se=None, n_units=20,
                     level=0.95, scale=scale)
        assert np.isnan(r.low) and np.isnan(r.high) and r.note


# ------------------------------------------------------------------ two-rater binary kappa, perfect agreement
def _chi2_grid(counts, kappas):
    """Donner & Eliasziw's chi-square of each kappa0, written out independently of the library."""
    n11, n10, n00 = counts
    n = n11 + n10 + n00
    pi = (2 * n11 + n10) / (2 * n)
    s = pi * (1 - pi)
    P = np.stack([pi * pi + s * kappas, 2 * s * (1 - kappas), (1 - pi) ** 2 + s * kappas])
    O = np.array(counts, dtype=float)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(P > 0, (O - n * P) ** 2 / (n * P), np.where(O > 0, np.inf, 0.0))
    return terms.sum(axis=0)


@pytest.mark.parametrize("counts", [(10, 5, 5), (16, 3, 1), (15, 0, 5), (40, 10, 50), (1, 2, 17), (18, 2, 0),
                                    (60, 25, 15)])
def test_kappa_gof_is_the_chi_square_acceptance_set(counts):
    r = iv.kappa_gof(*counts, 0.95, reference="chi2")
    n11, n10, n00 = counts
    n = sum(counts)
    pi = (2 * n11 + n10) / (2 * n)
    k_hat = 1 - n10 / (2 * n * pi * (1 - pi))  # Scott's pi: the model fits the counts exactly there
    k_min = max(-pi / (1 - pi), -(1 - pi) / pi)
    grid = np.linspace(k_min, 1, 400_001)
    inside = grid[_chi2_grid(counts, grid) <= st.chi2.ppf(0.95, 1)]
    assert r.method == "gof" and r.low <= k_hat <= r.high
    assert r.low == pytest.approx(inside.min(), abs=1e-5) and r.high == pytest.approx(inside.max(), abs=1e-5)
    if n10 == 0:
        assert r.high == 1.0


def test_kappa_gof_equals_fleiss_two_rater_and_alpha_intervals():
    X = np.array([[1, 1]] * 14 + [[0, 0]] * 3 + [[0, 1]] * 2 + [[1, 0]])
    t = table_from_wide(X)
    want = iv.kappa_gof(3, 3, 14, 0.95)
    for name in ("fleiss_kappa", "krippendorff_alpha", "scott_pi"):
        r = getattr(A, name)(t, rng=0)
        assert r.ci.method == "Donner-Eliasziw goodness-of-fit" and "chose gof" in r.method
        assert (r.ci.low, r.ci.high) == pytest.approx((want.low, want.high), abs=1e-12)
    # no resamples needed; not Cohen's kappa (its raters keep their own marginals), not AC1
    assert A.fleiss_kappa(t, n_resamples=0).ci.method == "Donner-Eliasziw goodness-of-fit"
    assert "Donner" not in A.cohen_kappa(t, rng=0).ci.method and "Donner" not in A.gwet_ac1(t, rng=0).ci.method
    # three raters, clusters or five categories: not its setting, auto chooses the bootstrap-t
    three = table_from_wide(np.column_stack([X, X[:, 0]]))
    assert "chose studentized" in A.fleiss_kappa(three, n_resamples=200, rng=0).method
    clustered = table_from_wide(X, clusters=np.arange(20) // 2)
    assert "chose studentized" in A.fleiss_kappa(clustered, n_resamples=200, rng=0).method
    with pytest.warns(DegenerateDataWarning, match=r"method='gof' \(Donner-Eliasziw\) needs two raters.*bootstrap-t"):
        r = A.fleiss_kappa(_five(30, R=2, seed=1), n_resamples=200, rng=0, method="gof")
    assert "Donner" not in r.ci.method


def test_perfect_agreement_gives_a_one_sided_bound_not_nan():
    # 20 items, three raters, every item unanimous: kappa = alpha = AC1 = 1 and every resample too.
    # No unit disagrees: at most p_u = 1 - 0.025^(1/20) of units do (Clopper-Pearson), and then
    # kappa >= 1 - p_u / (1 - pe); alpha's D_e and AC1's chance term the same way.
    X = np.array([[1, 1, 1]] * 14 + [[0, 0, 0]] * 6)
    t = table_from_wide(X)
    p_u = 1 - 0.025 ** (1 / 20)
    pi = 14 / 20
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)  # an interval for this case, not a fallback
        k = A.fleiss_kappa(t, n_resamples=200, rng=0)
        a = A.krippendorff_alpha(t, n_resamples=200, rng=0)
        ac = A.gwet_ac1(t, n_resamples=200, rng=0)
    assert k.estimate == 1 and k.ci.high == 1 and "no unit shows any disagreement: a one-sided bound" in k.method
    assert k.ci.low == pytest.approx(1 - p_u / (1 - pi ** 2 - (1 - pi) ** 2), rel=1e-12)
    assert k.ci.method.startswith("Clopper-Pearson bound")
    nv = 60  # alpha's D_e over the 60 pairable values, without replacement
    de = 2 * 42 * 18 / (nv * (nv - 1))
    assert a.ci.low == pytest.approx(1 - p_u / de, rel=1e-12) and a.ci.high == 1
    assert ac.ci.low == pytest.approx(1 - p_u / (1 - 2 * pi * (1 - pi)), rel=1e-12) and ac.ci.high == 1
    # interval alpha has no such bound (its distances are not shares): nan with the reason, as before
    r = A.krippendorff_alpha(table_from_wide(X, scale="interval"), level="interval", n_resamples=200, rng=0)
    assert math.isnan(r.ci.low) and "every resample gives 1" in r.method


def test_cohen_kappa_without_disagreement_gives_the_one_sided_bound():
    # issue 29 item 3: two raters, 20 items, 14 pass / 6 fail, no disagreement. Cohen's kappa was
    # (nan, nan) "none" while Fleiss and alpha gave an interval. Now the same one-sided bound:
    # p_u = 1 - 0.025^(1/20) = 0.1684, pe = 0.7^2 + 0.3^2 = 0.58, kappa >= 1 - p_u / 0.42 = 0.599.
    X = np.array([[1, 1]] * 14 + [[0, 0]] * 6)
    t = table_from_wide(X)
    p_u = 1 - 0.025 ** (1 / 20)
    low = 1 - p_u / (1 - 0.7 ** 2 - 0.3 ** 2)
    assert low == pytest.approx(0.599, abs=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        for kw in ({}, {"n_resamples": 0}, {"method": "bca"}):
            k = A.cohen_kappa(t, rng=0, **kw)
            assert k.estimate == 1 and k.ci.high == 1 and k.ci.low == pytest.approx(low, rel=1e-12), kw
            assert k.ci.method.startswith("Clopper-Pearson bound")
        # weighted kappa on three categories (per-item disagreement 1 - w <= 1): the same rule
        X3 = np.array([[2, 2]] * 8 + [[1, 1]] * 6 + [[0, 0]] * 6)
        k3 = A.cohen_kappa(table_from_wide(X3), weights="linear", rng=0)
        assert k3.ci.high == 1 and k3.ci.low < 1 and k3.ci.method.startswith("Clopper-Pearson bound")
        f3 = A.fleiss_kappa(table_from_wide(X3), weights="linear", rng=0)
        assert k3.ci.low == pytest.approx(f3.ci.low, rel=1e-9)  # both raters' margins equal: pe the same
    # Conger's kappa on three unanimous raters (the test above's table): Fleiss' bound, margins equal
    X3r = np.array([[1, 1, 1]] * 14 + [[0, 0, 0]] * 6)
    c = A.conger_kappa(table_from_wide(X3r), rng=0)
    assert c.ci.low == pytest.approx(A.fleiss_kappa(table_from_wide(X3r), rng=0).ci.low, rel=1e-9)
    assert c.ci.method.startswith("Clopper-Pearson bound")
    # judge against a reference (binary_agreement): the same bound, not the bootstrap's [1, 1]
    from voirdire.data import AnnotationTable

    items = [f"i{k}" for k in range(20)]
    y = [1] * 14 + [0] * 6
    tj = AnnotationTable.from_arrays(items * 2, ["h"] * 20 + ["j"] * 20, y * 2, judges=["j"])
    b = A.binary_agreement(tj, "j", reference="h", rng=0)
    assert b.kappa == 1 and b.kappa_ci.low == pytest.approx(low, rel=1e-12) and b.kappa_ci.high == 1
    assert b.phi_ci.low == pytest.approx(low, rel=1e-12)


def test_gof_covers_two_raters_rare_category_at_20_items():
    # The cell no bootstrap interval could hold (binary, prevalence 0.85, two raters, 20 items:
    # about 10% of tables agree perfectly; percentile 0.74-0.84), enumerated exactly instead of
    # simulated: latent-class raters with accuracy 0.50, 0.51, ..., 0.90 (kappa = accuracy^2,
    # 0.25-0.81). A discrete interval's coverage jumps where the true kappa crosses a probable
    # table's limit (the exact reference: 0.944 at kappa 0.490, 0.927 at 0.4915, where the tables
    # (16, 4, 0) and (17, 0, 3) have limits), so one kappa can land on a dip;
    # over the sweep of 41 kappas the exact reference is above
    # 0.915 everywhere, 0.946 on average and within [0.935, 0.965] for more kappas than the
    # chi-square reference (0.66 against 0.51 of them; bench/interval_coverage.py --sweep 20).
    from scipy.special import gammaln

    n, prev = 20, 0.85
    tables = [(a, b, n - a - b) for a in range(n + 1) for b in range(n + 1 - a) if 2 * a + b and 2 * (n - a - b) + b]
    T = np.array(tables, dtype=float)
    lc = gammaln(n + 1) - gammaln(T + 1).sum(axis=1)
    share, covs = {}, {}
    for ref in ("exact", "chi2"):
        lim = np.array([[(r := iv.kappa_gof(*t, 0.95, reference=ref)).low, r.high] for t in tables])
        c = []
        for acc in np.linspace(0.5, 0.9, 41):
            hi1, lo1 = acc + (1 - acc) * prev, (1 - acc) * prev
            p11 = prev * hi1 ** 2 + (1 - prev) * lo1 ** 2
            p00 = prev * (1 - hi1) ** 2 + (1 - prev) * (1 - lo1) ** 2
            pr = np.exp(lc + T[:, 0] * np.log(p11) + T[:, 1] * np.log(1 - p11 - p00) + T[:, 2] * np.log(p00))
            c.append(pr[(lim[:, 0] <= acc * acc) & (acc * acc <= lim[:, 1])].sum())
        covs[ref] = np.array(c)
        share[ref] = np.mean((covs[ref] >= 0.935) & (covs[ref] <= 0.965))
    print({ref: (round(c.min(), 3), round(c.mean(), 3), round(share[ref], 2)) for ref, c in covs.items()})
    assert covs["exact"].min() > 0.915 and 0.94 <= covs["exact"].mean() <= 0.96
    assert share["exact"] > share["chi2"] and covs["exact"].min() > covs["chi2"].min()


def _brute_gof_pvalue(k0, counts):
    """The exact p-value of Donner-Eliasziw's chi-square at ``kappa0``, by enumeration in plain
    Python, independently of the library: every table of ``n`` items, its own ``pi`` and
    chi-square, weighted by its multinomial probability under the model with ``kappa0`` and the
    observed ``pi``. Where ``kappa0`` makes a table's fitted frequencies negative, its ``pi`` is
    moved to the nearest value where they are not (a cell of frequency 0 adds 0 without a count,
    ``inf`` with one)."""
    n = sum(counts)

    def chi2(t):
        a, b, c = t
        pi = (2 * a + b) / (2 * n)
        if k0 < 0:  # pi (pi + (1 - pi) k) >= 0 and (1 - pi)((1 - pi) + pi k) >= 0
            pi = min(max(pi, -k0 / (1 - k0)), 1 / (1 - k0))
        s = pi * (1 - pi)
        P = (max(pi * pi + s * k0, 0.0), 2 * s * (1 - k0), max((1 - pi) ** 2 + s * k0, 0.0))
        out = 0.0
        for o, p in zip(t, P):
            if p == 0:
                if o > 0:
                    return math.inf
                continue
            out += (o - n * p) ** 2 / (n * p)
        return out

    pi0 = (2 * counts[0] + counts[1]) / (2 * n)
    s0 = pi0 * (1 - pi0)
    P0 = (pi0 * pi0 + s0 * k0, 2 * s0 * (1 - k0), (1 - pi0) ** 2 + s0 * k0)
    x_obs = chi2(counts)
    total = 0.0
    for a in range(n + 1):
        for b in range(n + 1 - a):
            t = (a, b, n - a - b)
            if any(k > 0 and p <= 0 for k, p in zip(t, P0)):
                continue  # impossible under the model
            if chi2(t) >= x_obs * (1 - 1e-9) - 1e-12:
                total += math.exp(math.lgamma(n + 1) + sum(k * math.log(p) - math.lgamma(k + 1)
                                                           for k, p in zip(t, P0) if k > 0))
    return total


@pytest.mark.parametrize("counts", [(6, 3, 3), (9, 2, 1), (8, 0, 4), (1, 2, 9), (4, 5, 3), (0, 3, 11)])
def test_kappa_gof_exact_equals_brute_force_enumeration(counts):
    # Up to GOF_EXACT_MAX items the interval inverts the exact distribution of the chi-square
    # (pi at its estimate). Each p-value equals a plain enumeration; each limit follows the
    # documented rule, checked with the enumerated p-values: it lies in the first of
    # GOF_GRID[0] equal steps out from the estimate at whose end p <= 0.05, p > 0.05 at the limit
    # and p <= 0.05 one final grid step (|end - estimate| / 32,768) further out; the end of the
    # range when p never falls there (1 with no discordant item).
    n11, n10, n00 = counts
    n = sum(counts)
    pi = (2 * n11 + n10) / (2 * n)
    k_hat = 1 - n10 / (2 * n * pi * (1 - pi))
    k_min = max(-pi / (1 - pi), -(1 - pi) / pi)
    ks = np.linspace(k_min + 1e-6, 1 - 1e-6, 9)
    assert iv._gof_pvalues(ks, counts) == pytest.approx([_brute_gof_pvalue(k, counts) for k in ks], abs=1e-12)
    r = iv.kappa_gof(*counts, 0.95)
    assert r.method == "gof" and not r.note and r.low <= k_hat <= r.high

    def p(k):
        return float(n10 == 0) if k >= 1 else _brute_gof_pvalue(k, counts)

    steps = iv.GOF_GRID[0]
    for end, limit in ((1.0, r.high), (k_min, r.low)):
        grid = k_hat + (end - k_hat) * np.arange(1, steps + 1) / steps
        first = next((i for i, k in enumerate(grid) if p(k) <= 0.05), None)
        if first is None:
            assert limit == end
            continue
        inner = k_hat if first == 0 else grid[first - 1]
        assert min(inner, grid[first]) - 1e-12 <= limit <= max(inner, grid[first]) + 1e-12
        final = (end - k_hat) / 32768
        assert p(limit) > 0.05 >= p(limit + final)
    if n10 == 0:
        assert r.high == 1.0


@pytest.mark.parametrize("counts", [(10, 5, 5), (16, 3, 1), (40, 10, 50), (1, 2, 17), (60, 25, 15), (7, 6, 7)])
def test_kappa_gof_limits_are_the_roots_of_donner_eliasziw_cubic(counts):
    # Donner & Eliasziw (1992) give the limits in closed form as roots of a cubic: with the fitted
    # frequencies P_i(k) linear in k and sum(P_i) = 1, chi2(k) = sum(n_i^2 / (N P_i)) - N, so
    # chi2 = c is  sum_i n_i^2 prod_{j != i} P_j(k) - N (N + c) prod_j P_j(k) = 0.  Built here with
    # numpy's polynomial arithmetic, independently of the library's root search.
    n11, n10, n00 = counts
    N = sum(counts)
    pi = (2 * n11 + n10) / (2 * N)
    s = pi * (1 - pi)
    P = [np.polynomial.Polynomial([pi * pi, s]), np.polynomial.Polynomial([2 * s, -2 * s]),
         np.polynomial.Polynomial([(1 - pi) ** 2, s])]
    c = st.chi2.ppf(0.95, 1)
    cubic = -N * (N + c) * P[0] * P[1] * P[2]
    for i, ni in enumerate(counts):
        cubic += ni * ni * math.prod(P[j] for j in range(3) if j != i)
    k_min = max(-pi / (1 - pi), -(1 - pi) / pi)
    roots = sorted(float(z.real) for z in cubic.roots() if abs(z.imag) < 1e-9 and k_min <= z.real <= 1)
    r = iv.kappa_gof(*counts, 0.95, reference="chi2")
    k_hat = 1 - n10 / (2 * N * s)
    below = [z for z in roots if z < k_hat]
    above = [z for z in roots if z > k_hat]
    assert r.low == pytest.approx(max(below) if below else k_min, abs=1e-9)
    assert r.high == pytest.approx(min(above) if above else 1.0, abs=1e-9)


@pytest.mark.slow
def test_kappa_gof_exact_coverage_is_near_nominal_but_discrete():
    # Exact coverage (every table of n items enumerated, no simulation) for two latent-class raters
    # (accuracy a: the true class, else a draw at the prevalence), whose kappa is a^2. The goodness-
    # of-fit interval is a test inversion on a discrete table, so its coverage oscillates with n
    # around 0.95. With the paper's chi-square reference it is 0.932 at prevalence 0.5, 20 items
    # (the grid's simulated 0.924 was noise around this); the exact reference (the default up to
    # GOF_EXACT_MAX items) stays within 0.94-0.96 at these settings (docs/agreement.md "Small
    # samples": 0.932-0.966 over 45 settings at 20-50 items, chi-square 0.907-0.970).
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def limits(a, b, c, ref):
        if 2 * a + b == 0 or 2 * c + b == 0:
            return None  # one category only: kappa undefined, counted as a miss
        r = iv.kappa_gof(a, b, c, 0.95, reference=ref)
        return r.low, r.high

    covs = {}
    for prev, acc in ((0.5, 0.7), (0.85, 0.7), (0.7, 0.5)):
        hi1, lo1 = acc + (1 - acc) * prev, (1 - acc) * prev
        p11 = prev * hi1 ** 2 + (1 - prev) * lo1 ** 2
        p00 = prev * (1 - hi1) ** 2 + (1 - prev) * (1 - lo1) ** 2
        probs = [p11, 1 - p11 - p00, p00]
        for ref, ns in (("chi2", (20, 30, 50)), ("exact", (20, 30))):
            for n in ns:
                cov = 0.0
                for a in range(n + 1):
                    for b in range(n + 1 - a):
                        lim = limits(a, b, n - a - b, ref)
                        if lim is not None and lim[0] <= acc * acc <= lim[1]:
                            cov += math.exp(math.lgamma(n + 1) - math.lgamma(a + 1) - math.lgamma(b + 1)
                                            - math.lgamma(n - a - b + 1) + a * math.log(probs[0])
                                            + b * math.log(probs[1]) + (n - a - b) * math.log(probs[2]))
                covs[(ref, prev, acc, n)] = cov
    assert covs[("chi2", 0.5, 0.7, 20)] == pytest.approx(0.9324, abs=5e-4)
    assert all(0.93 <= c <= 0.97 for k, c in covs.items() if k[0] == "chi2"), covs
    assert all(0.94 <= c <= 0.96 for k, c in covs.items() if k[0] == "exact"), covs
    assert covs[("exact", 0.5, 0.7, 20)] > 0.95


def _clustered_binary(n, G, R, prev, seed):
    """``n`` items in ``G`` texts (at least one each) sharing the true class and an accuracy drawn
    from U(0.3, 1); each rater reports the class with that accuracy, else a draw at the prevalence."""
    rng = np.random.default_rng(seed)
    cl = np.repeat(np.arange(G), rng.multinomial(n - G, np.full(G, 1 / G)) + 1)
    acc = rng.uniform(0.3, 1.0, G)[cl][:, None]
    truth = (rng.random(G) < prev)[cl]
    X = np.where(rng.random((n, R)) < acc, truth[:, None], rng.random((n, R)) < prev).astype(float)
    return X, cl


@pytest.mark.statistical
def test_cluster_bootstrap_t_covers_rare_category_at_20_clusters():
    # bench/interval_coverage.py's clustered cell: 60 items in 20 texts, 3 raters, binary labels with
    # prevalence 0.85. The units are the 20 clusters; auto is the cluster bootstrap-t on Fisher's z.
    # The percentile interval covers about 0.75-0.78 here, the bootstrap-t 0.94-0.95 (docs/agreement.md
    # "Small samples"); a rule that swapped its lower end for the percentile one fell to 0.88. 250
    # tables, B = 300; tolerance 3 binomial SEs (+-0.041).
    big_X, big_cl = _clustered_binary(60_000, 20_000, 3, 0.85, 999)
    names = ["fleiss_kappa", "krippendorff_alpha"]
    truth = {r.coefficient: r.estimate
             for r in A.agreement(table_from_wide(big_X, clusters=big_cl), coefficients=names, n_resamples=0)}
    reps = 250
    hits = {nm: 0 for nm in names}
    pct = {nm: 0 for nm in names}
    for k in range(reps):
        X, cl = _clustered_binary(60, 20, 3, 0.85, 80_000 + k)
        t = table_from_wide(X, clusters=cl)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            auto = A.agreement(t, coefficients=names, n_resamples=300, rng=k)
            if k < 100:
                perc = A.agreement(t, coefficients=names, n_resamples=300, rng=k, method="percentile")
        for nm in names:
            assert auto[nm].n_units == 20 and "studentized" in auto[nm].method
            hits[nm] += bool(auto[nm].ci.low <= truth[nm] <= auto[nm].ci.high)
            if k < 100:
                pct[nm] += bool(perc[nm].ci.low <= truth[nm] <= perc[nm].ci.high)
    tol = 3 * math.sqrt(0.95 * 0.05 / reps)
    for nm in names:
        print(f"20 clusters, prevalence 0.85: {nm} auto {hits[nm] / reps:.3f}, percentile {pct[nm] / 100:.2f} (100 tables)")
        assert abs(hits[nm] / reps - 0.95) <= tol, (nm, hits[nm] / reps)
        assert pct[nm] / 100 < 0.88  # the under-coverage the cluster bootstrap-t repairs


def test_rare_binary_kappa_below_30_units_warns_with_the_number_that_would_do():
    # kappa and alpha on binary labels with a category under 15%: every resampling interval fell
    # short at 20 items (docs/agreement.md "Small samples"), so they warn below 30 units
    X = _binary(20, 4, 0.85, 0.3, 3)
    X[:2, :2] = [[0, 1], [0, 0]]  # a few minority labels whatever the draw
    t = table_from_wide(X)
    share = np.nanmean(X == 0)
    assert share < 0.15
    with pytest.warns(SmallSampleWarning, match=r"fleiss_kappa, krippendorff_alpha on 20 items of binary labels .*"
                                                 r"too few for any interval to be trusted.*about 30"):
        A.agreement(t, coefficients=["fleiss_kappa", "krippendorff_alpha", "gwet_ac1"], n_resamples=100, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        A.gwet_ac1(t, n_resamples=100, rng=0)  # AC1 and observed agreement held their level
        A.fleiss_kappa(table_from_wide(_binary(30, 4, 0.85, 0.3, 3)), n_resamples=100, rng=0)  # 30 units
        A.fleiss_kappa(table_from_wide(_binary(20, 4, 0.5, 0.3, 3)), n_resamples=100, rng=0)  # no rare category
        A.fleiss_kappa(table_from_wide(_binary(20, 2, 0.85, 0.0, 4)), n_resamples=0)  # two raters: Donner-Eliasziw


def test_zero_se_share_counts_the_replicates_whose_t_star_is_infinite():
    boots = np.array([0.5, 1.0, 1.0, 0.7, np.nan, 0.6])
    se = np.array([0.1, 0.0, 0.0, 0.0, 0.1, 0.2])
    # 0.7 with SE 0 differs from the estimate (0.7 is it here: t* = 0, not infinite); nan is skipped
    assert iv.zero_se_share(0.7, boots, se) == pytest.approx(2 / 5)
    assert iv.zero_se_share(0.5, boots, se) == pytest.approx(3 / 5)
    assert math.isnan(iv.zero_se_share(0.5, np.array([np.nan]), np.array([0.1])))


def test_ac1_auto_takes_bca_when_too_many_resamples_show_no_disagreement():
    # binary labels at prevalence 0.85, two raters, 20 items, 3 discordant: a resample draws no
    # discordant item with probability (17/20)^20 = 3.9%, above the 2.5% tail, where the bootstrap-t's
    # t* is infinite (jackknife SE 0); AC1's chance agreement is at most 1/2, so auto uses BCa and says why
    X = np.array([[1, 1]] * 15 + [[0, 0]] * 2 + [[1, 0]] * 3, dtype=float)
    t = table_from_wide(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        r = A.gwet_ac1(t, n_resamples=2000, rng=1)
    assert r.ci.method == "BCa bootstrap"
    assert "method='auto' chose bca" in r.method and "show no disagreement" in r.method
    assert r.ci == A.gwet_ac1(t, n_resamples=2000, rng=1, method="bca").ci
    assert r.ci.low > -0.2  # the bootstrap-t's lower end here is the map's end (-1)
    assert "method='auto' chose bca" in A.bennett_s(t, n_resamples=2000, rng=1).method  # chance 1/q too
    bt = A.gwet_ac1(t, n_resamples=2000, rng=1, method="studentized")
    assert bt.ci.low < -0.9
    # kappa on the same kind of table (4 raters, no Donner-Eliasziw) keeps its bootstrap-t: its chance
    # agreement nears 1 with a rare category, and an unbounded lower end is its honest answer
    X4 = np.hstack([X, X])
    k = A.fleiss_kappa(table_from_wide(X4), n_resamples=2000, rng=1)
    assert "studentized" in k.method
    # with enough disagreement (no resample without it) AC1 keeps the bootstrap-t
    Y = np.array([[1, 1]] * 10 + [[0, 0]] * 2 + [[1, 0]] * 8, dtype=float)
    assert "studentized" in A.gwet_ac1(table_from_wide(Y), n_resamples=2000, rng=1).method


@pytest.mark.statistical
def test_ac1_auto_covers_without_the_extra_width_at_prevalence_085():
    # bench/interval_coverage.py's cell: binary, prevalence 0.85, 4 raters, 30% missing, 20 items, where
    # AC1's bootstrap-t covered 0.973 at 2.9 times the percentile width (resamples with no disagreement
    # have an infinite t*); auto now takes BCa there. 200 tables, B = 300; tolerance 3 binomial SEs.
    truth = A.gwet_ac1(table_from_wide(_binary(60_000, 4, 0.85, 0.3, 999)), n_resamples=0).estimate
    reps = 200
    hits, w_auto, w_pct = 0, 0.0, 0.0
    for k in range(reps):
        t = table_from_wide(_binary(20, 4, 0.85, 0.3, 60_000 + k))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            auto = A.gwet_ac1(t, n_resamples=300, rng=k)
            perc = A.gwet_ac1(t, n_resamples=300, rng=k, method="percentile")
        hits += bool(auto.ci.low <= truth <= auto.ci.high)
        w_auto += auto.ci.high - auto.ci.low
        w_pct += perc.ci.high - perc.ci.low
    tol = 3 * math.sqrt(0.95 * 0.05 / reps)
    print(f"AC1, prevalence 0.85, 20 items: auto {hits / reps:.3f}, width {w_auto / w_pct:.2f} x percentile")
    assert abs(hits / reps - 0.95) <= tol
    assert w_auto / w_pct < 1.4
