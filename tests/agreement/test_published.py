"""Published worked examples (source noted) and hand-checkable cases (value worked out in a comment)."""

from __future__ import annotations

import numpy as np
import pytest

from voirdire.agreement import (
    bennett_s,
    cohen_kappa,
    conger_kappa,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    krippendorff_alpha,
    observed_agreement,
    scott_pi,
)
from voirdire.data import AnnotationTable

from ._helpers import FLEISS_WIKIPEDIA, KRIPPENDORFF_2011, counts_to_wide, table_from_wide


@pytest.fixture(scope="module")
def kripp():
    return table_from_wide(KRIPPENDORFF_2011, scale="interval")


# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", Annenberg School for
# Communication, Departmental Papers 43, section C (4 observers x 12 units, missing data):
# nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849),
                                              ("ratio", 0.797)])
def test_krippendorff_2011_example(kripp, level, published):
    res = krippendorff_alpha(kripp, level=level, n_resamples=0)
    assert res.estimate == pytest.approx(published, abs=5e-4)
    assert res.n_items == 11  # unit 12 has a single value: not pairable
    # sum n_i (n_i - 1) / 2: unit 1 (3 values), units 2-9 (4 values each), unit 10 (3), unit 11 (2)
    assert res.n_pairs == 3 + 8 * 6 + 3 + 1


def test_krippendorff_2011_coincidences(kripp):
    # n = 40 pairable values. Off-diagonal coincidences (ordered mismatching pairs / (n_i - 1)):
    # unit 2 (2,2,3,2): 6/3 = 2; unit 6 (1,2,3,4): 12/3 = 4; unit 8 (1,1,2,1): 6/3 = 2 -> 8.
    # Nominal D_o = 8/40 = 0.2; D_e = (40^2 - sum n_c^2)/(40*39) with n_c = (9, 13, 10, 5, 3):
    # (1600 - 384)/1560 = 0.779487...; alpha = 1 - 0.2/0.779487 = 0.743421.
    res = krippendorff_alpha(kripp, level="nominal", n_resamples=0)
    assert res.observed == pytest.approx(0.2, abs=1e-12)
    assert res.expected == pytest.approx(1216 / 1560, abs=1e-12)
    assert res.estimate == pytest.approx(1 - 0.2 / (1216 / 1560), abs=1e-12)


# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., the 4-raters x 12-units example (the same
# data; shipped by irrCAC as ``raw_4raters`` with these values in its documentation):
# AC1 0.77544 (SE 0.14295, pa 0.81818, pe 0.19032); Fleiss 0.76117 (SE 0.15302); AC2 with bipolar
# weights 0.90037 (SE 0.10582).
def test_gwet_2014_example(kripp):
    ac1 = gwet_ac1(kripp, n_resamples=0)
    assert ac1.estimate == pytest.approx(0.77544, abs=5e-6)
    assert ac1.analytic_se == pytest.approx(0.14295, abs=5e-6)
    assert ac1.observed == pytest.approx(0.81818, abs=5e-6)
    assert ac1.expected == pytest.approx(0.19032, abs=5e-6)
    fk = fleiss_kappa(kripp, n_resamples=0)
    assert fk.estimate == pytest.approx(0.76117, abs=5e-6)
    assert fk.analytic_se == pytest.approx(0.15302, abs=5e-6)
    ac2 = gwet_ac2(kripp, weights="bipolar", n_resamples=0)
    assert ac2.estimate == pytest.approx(0.90037, abs=5e-6)
    assert ac2.analytic_se == pytest.approx(0.10582, abs=5e-6)


# Wikipedia, "Fleiss' kappa", worked example (10 subjects, 14 raters, 5 categories):
# P-bar = 0.378, P-bar_e = 0.213, kappa = 0.210.
def test_fleiss_wikipedia_example():
    t = table_from_wide(counts_to_wide(FLEISS_WIKIPEDIA))
    res = fleiss_kappa(t, n_resamples=0)
    assert res.estimate == pytest.approx(0.210, abs=5e-4)
    assert res.observed == pytest.approx(0.378, abs=5e-4)
    assert res.expected == pytest.approx(0.213, abs=5e-4)


def _two(a, b, **kw):
    return table_from_wide(np.array([a, b], dtype=object).T, **kw)


def test_cohen_hand():
    # a: y y n n, b: y n n n -> table [[1,1],[0,2]] (rows a, columns b; y first):
    # po = 3/4; a marginals (1/2, 1/2), b marginals (1/4, 3/4); pe = 1/8 + 3/8 = 1/2; kappa = 1/2.
    t = _two(["y", "y", "n", "n"], ["y", "n", "n", "n"])
    r = cohen_kappa(t, n_resamples=0)
    assert r.estimate == pytest.approx(0.5, abs=1e-12)
    assert r.observed == pytest.approx(0.75) and r.expected == pytest.approx(0.5)
    # Scott: pooled marginals (3/8, 5/8): pe = 9/64 + 25/64 = 34/64; pi = (48/64 - 34/64)/(30/64) = 14/30.
    assert scott_pi(t, n_resamples=0).estimate == pytest.approx(14 / 30, abs=1e-12)
    # Bennett S with q = 2: (3/4 - 1/2) / (1/2) = 1/2.
    assert bennett_s(t, n_resamples=0).estimate == pytest.approx(0.5, abs=1e-12)
    # Conger with two raters on complete data is Cohen.
    assert conger_kappa(t, n_resamples=0).estimate == pytest.approx(0.5, abs=1e-12)
    # Observed agreement: 3 of 4 items.
    assert observed_agreement(t, n_resamples=0).estimate == pytest.approx(0.75, abs=1e-12)


def test_weighted_cohen_hand():
    # a: 1 2 3, b: 1 3 3 on categories 1..3. Linear weights w = 1 - |k-l|/2.
    # po = (1 + 0.5 + 1)/3 = 5/6; marginals a (1/3,1/3,1/3), b (1/3,0,2/3):
    # pe = sum_kl w_kl a_k b_l = 1/9 [ (1 + 0 + 0*2) ... ] computed: rows k, sum_l w_kl b_l:
    #   k=1: 1/3*1 + 0*0.5 + 2/3*0 = 1/3; k=2: 1/3*0.5 + 0 + 2/3*0.5 = 1/2; k=3: 0 + 0 + 2/3 = 2/3
    #   pe = (1/3)(1/3 + 1/2 + 2/3) = 1/2; kappa = (5/6 - 1/2)/(1/2) = 2/3.
    t = _two([1, 2, 3], [1, 3, 3], scale="ordinal")
    assert cohen_kappa(t, weights="linear", n_resamples=0).estimate == pytest.approx(2 / 3, abs=1e-12)


def test_fleiss_and_ac1_hand():
    # items (y,y,y), (y,n,n), (n,n,n): pa = (1 + 1/3 + 1)/3 = 7/9; pi_y = (1 + 1/3 + 0)/3 = 4/9.
    # Fleiss pe = (4/9)^2 + (5/9)^2 = 41/81 -> kappa = (63 - 41)/(81 - 41) = 0.55.
    # AC1 pe = 2 (4/9)(5/9) / (2 - 1) = 40/81 -> (63 - 40)/(81 - 40) = 23/41.
    t = table_from_wide([["y", "y", "y"], ["y", "n", "n"], ["n", "n", "n"]])
    assert fleiss_kappa(t, n_resamples=0).estimate == pytest.approx(0.55, abs=1e-12)
    assert gwet_ac1(t, n_resamples=0).estimate == pytest.approx(23 / 41, abs=1e-12)
    assert observed_agreement(t, n_resamples=0).estimate == pytest.approx(7 / 9, abs=1e-12)


def test_interval_alpha_hand():
    # items (1, 2), (3, 3), (2, 4): n = 6 values, sum = 15, mean 2.5, SS = 0.25*2 + 2.25 + 0.25*2 + 0.25 + 2.25... :
    # values 1,2,3,3,2,4: squared deviations from 2.5 = 2.25, .25, .25, .25, .25, 2.25 = 5.5
    # D_e = sum over ordered pairs (a != b) (x_a - x_b)^2 / (n (n-1)) = 2 n SS / (n (n-1)) = 2*6*5.5/30 = 2.2
    # D_o = sum_i sum_{ordered pairs in i} d^2 / (n_i - 1) / n = (2*1 + 0 + 2*4) / 6 = 10/6
    # alpha = 1 - (10/6) / 2.2 = 1 - 0.757575... = 0.242424...
    t = table_from_wide([[1, 2], [3, 3], [2, 4]], scale="interval")
    r = krippendorff_alpha(t, n_resamples=0)
    assert r.estimate == pytest.approx(1 - (10 / 6) / 2.2, abs=1e-12)
    assert r.observed == pytest.approx(10 / 6) and r.expected == pytest.approx(2.2)


def test_ac2_hand():
    # items (1,2), (2,2), (3,3) on 1..3, quadratic weights: w12 = w23 = 0.75, w13 = 0.
    # pa = (0.75 + 1 + 1)/3 = 11/12; pi = (1/6, 1/2, 1/3); T_w = 6; pe = 6/(3*2) * (5/36 + 1/4 + 2/9) = 22/36
    # AC2 = (11/12 - 22/36) / (1 - 22/36) = (33 - 22)/(36 - 22) = 11/14.
    t = table_from_wide([[1, 2], [2, 2], [3, 3]], scale="ordinal")
    assert gwet_ac2(t, n_resamples=0).estimate == pytest.approx(11 / 14, abs=1e-12)


def test_string_and_integer_labels_agree():
    a = table_from_wide([["a", "b"], ["b", "b"], ["c", "a"], ["a", "a"]])
    b = table_from_wide([[0, 1], [1, 1], [2, 0], [0, 0]])
    for f in (fleiss_kappa, gwet_ac1, krippendorff_alpha, cohen_kappa, bennett_s):
        assert f(a, n_resamples=0).estimate == pytest.approx(f(b, n_resamples=0, **(
            {"level": "nominal"} if f is krippendorff_alpha else {})).estimate, abs=1e-12)


def test_alpha_without_pairable_units_hand():
    # every item has one label except the last: alpha uses only the last item -> D_e from its two values.
    t = AnnotationTable.from_arrays([1, 2, 3, 3], ["a", "b", "a", "b"], ["x", "y", "x", "y"])
    r = krippendorff_alpha(t, n_resamples=0)
    # pairable values (x, y): D_o = 2/2 = 1, D_e = 2/(2*1) = 1 -> alpha = 0.
    assert r.estimate == pytest.approx(0.0, abs=1e-12)
    assert r.n_items == 1


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_scott_pi_analytic_se_matches_the_jackknife(weights):
    # Scott's pi has no peer with an SE here: check the delta-method SE against the jackknife.
    rng = np.random.default_rng(0)
    n = 150
    truth = rng.integers(0, 4, n)
    a = np.where(rng.random(n) < 0.7, truth, rng.integers(0, 4, n))
    b = np.where(rng.random(n) < 0.6, truth, rng.integers(0, 4, n))

    def table(idx):
        return AnnotationTable.from_arrays(list(idx) * 2, ["a"] * len(idx) + ["b"] * len(idx),
                                           list(a[idx]) + list(b[idx]), scale="ordinal", categories=[0, 1, 2, 3])

    r = scott_pi(table(np.arange(n)), weights=weights, n_resamples=0)
    loo = np.array([scott_pi(table(np.delete(np.arange(n), i)), weights=weights, n_resamples=0).estimate
                    for i in range(n)])
    jack = np.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2))
    assert r.analytic_se == pytest.approx(jack, rel=0.03)
