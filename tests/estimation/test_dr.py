"""Deterministic tests of the doubly-robust, classical and table estimators (hand-checked values)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import voirdire.estimation as est
from voirdire.data import AnnotationTable
from voirdire.estimation import EstimateResult, classical_mean, dr_mean, dr_mean_table, item_scores, ppi_mean
from voirdire.estimation._models import cross_fit_predict, fold_ids
from voirdire.exceptions import (
    DegenerateDataWarning,
    InvalidParameterError,
    SmallSampleWarning,
    UndefinedStatisticError,
)

# The tiny hand-checked cases have fewer than 10 labels: the small-sample warning is expected.
small = pytest.mark.filterwarnings("ignore::voirdire.exceptions.SmallSampleWarning")

X4 = np.array([1.0, 2.0, 3.0, 4.0])
Y4 = np.array([2.0, np.nan, 3.0, np.nan])


def test_public_names_import():
    for name in est.__all__:
        assert getattr(est, name) is not None


@small
def test_identity_hand_checked():
    # phi = x + delta/pi (y - x) = [1 + 2*1, 2, 3 + 2*0, 4] = [3, 2, 3, 4]  -> theta = 3
    # var_total = sum (phi - 3)^2 / N^2 = (0 + 1 + 0 + 1) / 16 = 0.125
    # var_residual = sum_lab (1 - pi)/pi^2 e^2 / N^2 = 2 * 1 / 16 = 0.125  -> var_human = 0
    res = dr_mean(X4, Y4, 0.5, model="identity", interval="normal")
    assert isinstance(res, EstimateResult)
    assert res.estimate == pytest.approx(3.0)
    assert res.var_residual == pytest.approx(0.125)
    assert res.var_human == pytest.approx(0.0, abs=1e-15)
    assert res.se == pytest.approx(math.sqrt(0.125))
    assert (res.n_labeled, res.n_total, res.model, res.method) == (2, 4, "identity", "dr")
    z = 1.959963984540054
    assert res.ci.low == pytest.approx(3 - z * math.sqrt(0.125))
    assert res.ci.high == pytest.approx(3 + z * math.sqrt(0.125))
    fin = dr_mean(X4, Y4, 0.5, target="finite", model="identity")
    assert fin.se == pytest.approx(math.sqrt(0.125)) and fin.target == "finite"


@small
def test_cluster_and_strata_forms_hand_checked():
    # dev = phi - theta = [0, -1, 0, 1]
    # clusters {0,1},{2,3}: cluster sums [-1, 1]; G/(G-1) = 2 -> 2 * 2 / 16 = 0.25
    res = dr_mean(X4, Y4, 0.5, clusters=[0, 0, 1, 1], model="identity")
    assert res.se == pytest.approx(math.sqrt(0.25))
    assert res.var_residual == pytest.approx(0.125)  # delta varies within a cluster: item-level design
    assert res.n_clusters == 2
    # strata {0,1},{2,3}: stratum means of dev -0.5, 0.5 -> within SS 0.5 + 0.5 = 1 -> 1/16
    res = dr_mean(X4, Y4, 0.5, strata=["a", "a", "b", "b"], model="identity")
    assert res.se ** 2 == pytest.approx(1 / 16)
    assert res.n_strata == 2


@small
def test_whole_cluster_sampling_hand_checked():
    # cluster 0 = items 0,1 sampled whole; phi = [1 + 2*1, 2 + 2*1, 3, 4], theta = 3.5
    # cluster residual sums e_g = [2, 0]; var_residual = (0.5 / 0.25) * 4 / 16 = 0.5
    y = np.array([2.0, 3.0, np.nan, np.nan])
    res = dr_mean(X4, y, 0.5, clusters=[0, 0, 1, 1], model="identity")
    assert res.estimate == pytest.approx(3.5)
    assert res.var_residual == pytest.approx(0.5)


@small
def test_classical_hand_checked_and_hajek():
    y = np.array([4.0, np.nan, 3.0, 5.0, np.nan, 4.0, np.nan, np.nan, 2.0, 4.0, 3.0, 5.0, 4.0, 3.0])
    res = classical_mean(y, interval="normal")
    lab = y[~np.isnan(y)]
    assert res.estimate == pytest.approx(lab.mean())
    assert res.se == pytest.approx(lab.std() / math.sqrt(lab.size))  # pi = n/N: std/sqrt(n), ddof 0
    # the default below 100 labels: the jackknife design term, (1 - f) s^2 / n with s^2 of ddof 1
    # (the textbook without-replacement variance of a mean); the human term stays linearised
    f = lab.size / y.size
    fin = classical_mean(y, target="finite")
    assert fin.se == pytest.approx(math.sqrt((1 - f) * lab.var(ddof=1) / lab.size), rel=1e-12)
    sup = classical_mean(y)
    assert sup.se**2 == pytest.approx(res.var_human + (1 - f) * lab.var(ddof=1) / lab.size, rel=1e-12)
    assert sup.var_human == pytest.approx(res.var_human, rel=1e-12)
    # Hajek with unequal probabilities: sum(y/pi)/sum(1/pi)
    pi = np.where(np.arange(14) % 2 == 0, 0.8, 0.4)
    res = classical_mean(y, pi)
    ok = ~np.isnan(y)
    assert res.estimate == pytest.approx(np.sum(y[ok] / pi[ok]) / np.sum(1 / pi[ok]))
    # finite target: Hajek linearisation with the design term only
    # var = sum (1 - pi)/pi^2 ((N/N_hat)(y - theta))^2 / N^2
    nh = np.sum(1 / pi[ok])
    v = np.sum((1 - pi[ok]) / pi[ok] ** 2 * ((14 / nh) * (y[ok] - res.estimate)) ** 2) / 14**2
    assert classical_mean(y, pi, target="finite", interval="t").se == pytest.approx(math.sqrt(v))
    # its jackknife (the default below 100 labels): Hajek means without each labelled item
    w, yo, po = 1 / pi[ok], y[ok], pi[ok]
    th = (np.sum(w * yo) - w * yo) / (nh - w)
    vj = (yo.size - 1) / yo.size * np.sum((1 - po) * (th - th.mean()) ** 2)
    assert classical_mean(y, pi, target="finite").se == pytest.approx(math.sqrt(vj), rel=1e-12)


def test_everything_labelled_gives_plain_mean_and_sd():
    rng = np.random.default_rng(3)
    x = rng.normal(size=50)
    y = x + rng.normal(size=50)
    res = dr_mean(x, y, 1.0, model="linear")
    assert res.estimate == pytest.approx(y.mean())
    assert res.var_residual == 0.0
    assert res.se == pytest.approx(y.std() / math.sqrt(50))
    assert dr_mean(x, y, 1.0, target="finite", model="identity").se == 0.0


def test_linear_without_cross_fit_matches_weighted_least_squares():
    rng = np.random.default_rng(4)
    n = 300
    x = rng.normal(3, 1, n)
    y = 1 + 0.7 * x + rng.normal(0, 0.5, n)
    pi = np.where(x > 3, 0.6, 0.2)
    lab = rng.random(n) < pi
    yy = np.where(lab, y, np.nan)
    res = dr_mean(x, yy, pi, model="linear", cross_fit=1)
    # np.polyfit minimises sum (w_i r_i)^2, so pass sqrt of the 1/pi weights
    b, a = np.polyfit(x[lab], y[lab], 1, w=np.sqrt(1 / pi[lab]))
    m = a + b * x
    expected = np.mean(m + np.where(lab, (y - m) / pi, 0.0))
    assert res.estimate == pytest.approx(expected, rel=1e-10)
    assert res.cross_fit == 1


def test_isotonic_without_cross_fit_matches_sklearn():
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(5)
    n = 400
    x = np.round(rng.normal(3, 1, n), 1)  # ties on purpose
    y = np.tanh(x - 3) + rng.normal(0, 0.3, n)
    pi = np.where(x > 3, 0.5, 0.25)
    lab = rng.random(n) < pi
    yy = np.where(lab, y, np.nan)
    iso = IsotonicRegression(out_of_bounds="clip").fit(x[lab], y[lab], sample_weight=1 / pi[lab])
    m_sk = iso.predict(x)
    m = cross_fit_predict(x, yy, pi, lab, model="isotonic", n_folds=1, rng=np.random.default_rng(0),
                          clusters=None, func="t")
    np.testing.assert_allclose(m, m_sk, rtol=1e-9, atol=1e-12)
    res = dr_mean(x, yy, pi, model="isotonic", cross_fit=1)
    assert res.estimate == pytest.approx(np.mean(m_sk + np.where(lab, (y - m_sk) / pi, 0.0)), rel=1e-10)


def test_cross_fit_predictions_are_out_of_fold():
    rng = np.random.default_rng(6)
    n = 200
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    lab = rng.random(n) < 0.5
    yy = np.where(lab, y, np.nan)
    pi = np.full(n, 0.5)
    folds = fold_ids(n, 5, np.random.default_rng(11))
    for model in ("linear", "isotonic"):
        m1 = cross_fit_predict(x, yy, pi, lab, model=model, n_folds=5, rng=np.random.default_rng(11),
                               clusters=None, func="t")
        i = int(np.flatnonzero(lab)[0])
        y2 = yy.copy()
        y2[i] += 100.0
        m2 = cross_fit_predict(x, y2, pi, lab, model=model, n_folds=5, rng=np.random.default_rng(11),
                               clusters=None, func="t")
        same = folds == folds[i]
        np.testing.assert_allclose(m1[same], m2[same], rtol=1e-12, atol=1e-12)  # own fold untouched
        assert np.max(np.abs(m1[~same] - m2[~same])) > 1e-3                    # other folds use item i


def test_folds_keep_clusters_together():
    cl = np.repeat(np.arange(30), 4)
    f = fold_ids(cl.size, 5, np.random.default_rng(0), cl)
    for g in range(30):
        assert np.unique(f[cl == g]).size == 1


def test_invariances():
    rng = np.random.default_rng(7)
    n = 500
    x = rng.normal(3, 1, n)
    y = np.where(rng.random(n) < 0.3, x + rng.normal(0, 1, n), np.nan)
    base = dr_mean(x, y, 0.3, model="identity")
    perm = rng.permutation(n)
    assert dr_mean(x[perm], y[perm], 0.3, model="identity").estimate == pytest.approx(base.estimate)
    shifted = dr_mean(x + 10, y + 10, 0.3, model="identity")
    assert shifted.estimate == pytest.approx(base.estimate + 10)
    assert shifted.se == pytest.approx(base.se)
    # a calibrated model does not care about the judge's scale
    lin = dr_mean(x, y, 0.3, model="linear", rng=1)
    lin2 = dr_mean(2 * x - 5, y, 0.3, model="linear", rng=1)
    assert lin2.estimate == pytest.approx(lin.estimate)
    assert lin2.se == pytest.approx(lin.se)


def test_to_dict_and_frame():
    rng = np.random.default_rng(8)
    x = rng.normal(size=100)
    y = np.where(np.arange(100) < 40, x, np.nan)
    res = dr_mean(x, y, 0.4, model="identity")
    d = res.to_dict()
    assert d["ci"]["confidence_level"] == 0.95 and d["n_labeled"] == 40
    f = res.to_frame()
    assert {"estimate", "se", "ci_low", "ci_high", "var_human", "var_residual"} <= set(f.columns)
    import json

    json.dumps(d)


# ------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("pi, match", [
    (0.0, r"must be in \(0, 1\]"), (1.5, r"must be in \(0, 1\]"), (20, "percentage"),
    ([0.5, 0.5, 0.5], "one value per item"), ("half", "must be a number"),
])
def test_bad_inclusion_prob(pi, match):
    with pytest.raises(InvalidParameterError, match=match):
        dr_mean(X4, Y4, pi, model="identity")


def test_zero_probability_on_labelled_item_is_named():
    with pytest.raises(InvalidParameterError, match="human-scored item 0"):
        dr_mean(X4, Y4, [0.0, 0.5, 0.5, 0.5], model="identity")


@pytest.mark.parametrize("kwargs, match", [
    ({"model": "cubic"}, "'model' parameter of dr_mean must be one of"),
    ({"cross_fit": 0}, "'cross_fit' parameter of dr_mean must be 'auto', 'loo' or an integer >= 1"),
    ({"confidence_level": 95}, "Did you mean 0.95"),
    ({"target": "population"}, "'target' parameter"),
    ({"rng": "seed"}, "'rng' parameter"),
    ({"clusters": [0, 1, 1, 0], "strata": [0, 0, 1, 1]}, "nested in the 'strata'"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        dr_mean(X4, Y4, 0.5, **kwargs)


def test_bad_scores():
    with pytest.raises(InvalidParameterError, match="same length"):
        dr_mean(X4[:3], Y4, 0.5, model="identity")
    with pytest.raises(InvalidParameterError, match="not numbers"):
        dr_mean(["a", "b", "c", "d"], Y4, 0.5, model="identity")
    with pytest.raises(InvalidParameterError, match="finite score for every item"):
        dr_mean([1.0, np.nan, 3.0, 4.0], Y4, 0.5, model="identity")
    with pytest.raises(InvalidParameterError, match="training fold"):
        dr_mean(X4, Y4, 0.5, model="linear", cross_fit=5)


def test_no_labelled_item_follows_policy():
    y = np.full(4, np.nan)
    with pytest.warns(DegenerateDataWarning, match="no item has a human score"):
        res = dr_mean(X4, y, 0.5, model="identity")
    assert math.isnan(res.estimate) and res.n_labeled == 0
    with pytest.raises(UndefinedStatisticError):
        dr_mean(X4, y, 0.5, on_undefined="raise", model="identity")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(classical_mean(y, on_undefined="nan").estimate)
        assert math.isnan(ppi_mean(X4, y, on_undefined="nan").se)


def test_small_sample_warning():
    with pytest.warns(SmallSampleWarning, match="Only 2 labelled"):
        dr_mean(X4, Y4, 0.5, model="identity")


# ------------------------------------------------------------------------------- tables
def _table():
    # items a..f; humans h1, h2; judge J scores every item
    rows = []
    hum = {"a": (4, 5), "b": (2, None), "c": (None, None), "d": (3, 3), "e": (None, None), "f": (1, 2)}
    judge = {"a": 4.5, "b": 2.0, "c": 3.0, "d": 3.5, "e": 4.0, "f": 1.0}
    for it, (h1, h2) in hum.items():
        if h1 is not None:
            rows.append((it, "h1", h1))
        if h2 is not None:
            rows.append((it, "h2", h2))
        rows.append((it, "J", judge[it]))
    df = pd.DataFrame(rows, columns=["item", "rater", "label"])
    return AnnotationTable.from_frame(df, judges=["J"], scale="interval")


def test_item_scores_mean_of_humans():
    t = _table()
    x, y, cnt = item_scores(t, "J")
    order = [str(i) for i in t.items]
    got = dict(zip(order, y))
    assert got["a"] == 4.5 and got["b"] == 2.0 and got["d"] == 3.0 and got["f"] == 1.5
    assert math.isnan(got["c"]) and math.isnan(got["e"])
    assert dict(zip(order, cnt))["a"] == 2


@small
def test_dr_mean_table_equals_dr_mean_on_item_means():
    t = _table()
    x, y, _ = item_scores(t, "J")
    pi = {"a": 0.8, "b": 0.8, "c": 0.5, "d": 0.8, "e": 0.5, "f": 0.8}
    res = dr_mean_table(t, "J", inclusion_prob=pi, model="identity")
    ref = dr_mean(x, y, [pi[str(i)] for i in t.items], model="identity")
    assert res.estimate == pytest.approx(ref.estimate)
    assert res.se == pytest.approx(ref.se)
    # items nobody scored ("c", "e") may be left out of the mapping; a scored one may not
    part = dr_mean_table(t, "J", inclusion_prob={k: v for k, v in pi.items() if k not in ("c", "e")}, model="identity")
    assert part.estimate == pytest.approx(ref.estimate)
    with pytest.raises(InvalidParameterError, match=r"no probability for 1 human-scored item\(s\), e.g. \['a'\]"):
        dr_mean_table(t, "J", inclusion_prob={k: v for k, v in pi.items() if k != "a"}, model="identity")
    ser = pd.Series(pi)
    assert dr_mean_table(t, "J", inclusion_prob=ser, model="identity").estimate == pytest.approx(ref.estimate)
    with pytest.raises(InvalidParameterError, match="not in"):
        dr_mean_table(t, "nobody", inclusion_prob=0.5, model="identity")


@small
def test_dr_mean_table_missing_judge_scores():
    df = pd.DataFrame({"item": ["a", "a", "b", "c", "c"], "rater": ["h", "J", "h", "h", "J"],
                       "label": [3, 3, 4, 5, 4]})
    t = AnnotationTable.from_frame(df, judges=["J"], scale="interval")
    with pytest.raises(InvalidParameterError, match="no score for 1 of 3"):
        dr_mean_table(t, "J", inclusion_prob=1.0, model="identity")
    res = dr_mean_table(t, "J", inclusion_prob=1.0, drop_unscored=True, model="identity")
    assert res.n_total == 2 and res.estimate == pytest.approx(4.0)


def test_dr_mean_table_rejects_non_numeric_scale():
    df = pd.DataFrame({"item": [1, 1], "rater": ["h", "J"], "label": ["good", "bad"]})
    t = AnnotationTable.from_frame(df, judges=["J"])
    with pytest.raises(InvalidParameterError, match="not numbers"):
        dr_mean_table(t, "J", inclusion_prob=1.0, model="identity")


def test_dr_mean_table_on_hanna_uses_clusters():
    from voirdire.datasets import load_hanna

    t = load_hanna()
    x, y, _ = item_scores(t, "ChatGPT")
    keep = np.isfinite(x)
    res = dr_mean_table(t, "ChatGPT", inclusion_prob=1.0, drop_unscored=True, rng=0, model="identity")
    # everything labelled: the estimate is the plain mean of the per-item human means
    assert res.estimate == pytest.approx(np.nanmean(y[keep]))
    assert res.n_clusters == 1056
    flat = dr_mean(x[keep], y[keep], 1.0, model="identity")
    assert res.se > flat.se  # six criteria of one story are correlated


# ------------------------------------------------------------------------------- properties
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(12, 80), p_low=st.floats(0.05, 1.0))
def test_decomposition_and_permutation_properties(seed, n, p_low):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y_all = x + rng.normal(size=n)
    pi = np.where(rng.random(n) < 0.5, p_low, 1.0)
    lab = rng.random(n) < pi
    lab[:10] = True  # at least 10 labels: no small-sample warning
    y = np.where(lab, y_all, np.nan)
    res = dr_mean(x, y, pi, model="identity")
    phi = x + np.where(lab, (y_all - x) / pi, 0.0)
    assert res.estimate == pytest.approx(phi.mean(), rel=1e-10, abs=1e-12)
    # var_human + var_residual is exactly the sample analogue of V
    assert res.var_human + res.var_residual == pytest.approx(np.sum((phi - phi.mean()) ** 2) / n**2,
                                                             rel=1e-9, abs=1e-15)
    resid = np.sum(np.where(lab, (1 - pi) / pi**2 * (y_all - x) ** 2, 0.0)) / n**2
    assert res.var_residual == pytest.approx(resid, rel=1e-9, abs=1e-15)
    perm = rng.permutation(n)
    other = dr_mean(x[perm], y[perm], pi[perm], model="identity")
    assert other.estimate == pytest.approx(res.estimate, rel=1e-12, abs=1e-12)
    assert other.se == pytest.approx(res.se, rel=1e-9)
    # one cluster per item is the unclustered form up to the G/(G-1) factor
    cl = dr_mean(x, y, pi, clusters=np.arange(n), model="identity")
    assert cl.se**2 == pytest.approx(res.se**2 * n / (n - 1), rel=1e-9)
