"""pairwise_matrix, and interval alpha on continuous scores (no value-by-value matrix)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import voirdire.agreement as A
from voirdire.data import AnnotationTable
from voirdire.exceptions import DegenerateDataWarning

from ._helpers import table_from_wide

from .._oracles import oracle

krippendorff = oracle("krippendorff")


def test_pairwise_matrix_equals_pairwise_calls():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (30, 4)).astype(float)
    X[rng.random(X.shape) < 0.3] = np.nan
    t = table_from_wide(X)
    m = A.pairwise_matrix(t, coefficient="cohen_kappa")
    assert m.estimate.shape == (4, 4) and np.isnan(np.diag(m.estimate)).all()
    for a in range(4):
        for b in range(a + 1, 4):
            ra, rb = m.raters[a], m.raters[b]
            ref = A.cohen_kappa(t, raters=[ra, rb], n_resamples=0).estimate
            assert m.estimate[a, b] == pytest.approx(ref, abs=1e-12) and m.estimate[b, a] == m.estimate[a, b]
            both = ~np.isnan(X[:, int(ra[1:])]) & ~np.isnan(X[:, int(rb[1:])])
            assert m.n_items[a, b] == both.sum()
    df = m.to_frame()
    assert len(df) == 6 and list(df.columns) == ["rater_a", "rater_b", "estimate", "n_items"]


def test_pairwise_matrix_warns_once_for_pairs_without_overlap():
    t = AnnotationTable.from_arrays([1, 1, 2, 2, 3, 3], ["a", "b", "a", "b", "c", "b"], ["x", "y", "y", "y", "x", "x"])
    # (a, c) share no item; (b, c) share one item with a single category
    with pytest.warns(DegenerateDataWarning, match="undefined for 2 of 3 rater pairs"):
        m = A.pairwise_matrix(t, coefficient="krippendorff_alpha")
    i, j = m.raters.index("a"), m.raters.index("c")
    assert np.isnan(m.estimate[i, j]) and m.n_items[i, j] == 0


def test_interval_alpha_on_many_distinct_floats_matches_brute_force():
    # 120 items x 3 raters of distinct floats: krippendorff builds N x V x V (V ~ 290) -- fine at this
    # size, and it is the independent reference.
    rng = np.random.default_rng(1)
    truth = rng.normal(size=120)
    X = truth[:, None] + rng.normal(scale=0.7, size=(120, 3))
    X[rng.random(X.shape) < 0.2] = np.nan
    ii, rr = np.nonzero(~np.isnan(X))
    t = AnnotationTable.from_arrays(ii, rr, X[ii, rr], scale="interval")
    ours = A.krippendorff_alpha(t, n_resamples=0).estimate
    ref = krippendorff.alpha(X.T, level_of_measurement="interval")
    assert ours == pytest.approx(ref, abs=1e-9)


def test_interval_alpha_scales_to_a_million_values_in_memory():
    # 200,000 items x 2 raters of distinct values: closed form for complete two-rater data:
    # alpha = 1 - (N - 1) sum_i (x_i - y_i)^2 / (N sum (v - vbar)^2), N = 2n values.
    rng = np.random.default_rng(2)
    n = 200_000
    x = rng.normal(size=n)
    y = x + rng.normal(scale=0.5, size=n)
    from voirdire.data import Scale

    v = np.column_stack([x, y]).ravel()
    uniq, codes = np.unique(v, return_inverse=True)
    t = AnnotationTable(items=np.arange(n).astype(str).astype(object), raters=np.array(["a", "b"], dtype=object),
                        roles=np.array(["human", "human"], dtype=object),
                        indptr=np.arange(0, 2 * n + 1, 2, dtype=np.int64), rater_idx=np.tile([0, 1], n).astype(np.int32),
                        codes=codes.astype(np.int32), values=v, scale=Scale(level="interval", categories=tuple(uniq.tolist())))
    r = A.krippendorff_alpha(t, n_resamples=0)
    N = 2 * n
    ref = 1 - (N - 1) * np.sum((x - y) ** 2) / (N * np.sum((v - v.mean()) ** 2))
    assert r.estimate == pytest.approx(ref, abs=1e-10)
    assert r.analytic_se is not None and 0 < r.analytic_se < 0.01


def test_agreement_table_frame_has_one_row_per_coefficient():
    df = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "rater": ["a", "b"] * 3, "label": [1, 2, 2, 2, 3, 3]})
    t = AnnotationTable.from_frame(df, scale="ordinal")
    tab = A.agreement(t, n_resamples=0, label="both")
    f = tab.to_frame()
    assert list(f["coefficient"]) == list(A.default_coefficients(t)) and (f["group"] == "both").all()
    assert "cohen_kappa" in A.default_coefficients(t)


@pytest.mark.parametrize("zeros, policy", [(False, "exclude"), (True, "exclude"), (False, "disagree")])
def test_ratio_alpha_without_a_value_matrix(monkeypatch, zeros, policy):
    # The quadrature path (used above 2,000 distinct values) against krippendorff and against the
    # exact matrix path on the same data: estimate, analytic SE and bootstrap interval.
    from voirdire.agreement import _coefficients

    rng = np.random.default_rng(3)
    n, R = 120, 4
    X = rng.lognormal(size=n)[:, None] * rng.lognormal(sigma=0.3, size=(n, R))
    if zeros:
        X[rng.random(X.shape) < 0.1] = 0.0
    X[rng.random(X.shape) < 0.3] = np.nan
    labels = X.astype(object)
    if policy == "disagree":
        labels[rng.random(X.shape) < 0.1] = -1.0
    ii, rr = np.nonzero(~pd.isna(labels))
    t = AnnotationTable.from_arrays(ii, rr, labels[ii, rr], scale="ratio", abstain=[-1.0] if policy == "disagree" else ())
    exact = A.krippendorff_alpha(t, level="ratio", n_resamples=200, rng=1, abstain_policy=policy)
    monkeypatch.setattr(_coefficients, "_RATIO_MATRIX_LIMIT", 0)
    quad = A.krippendorff_alpha(t, level="ratio", n_resamples=200, rng=1, abstain_policy=policy)
    assert quad.estimate == pytest.approx(exact.estimate, abs=1e-9)
    assert quad.analytic_se == pytest.approx(exact.analytic_se, abs=1e-9)
    assert quad.ci.low == pytest.approx(exact.ci.low, abs=1e-9) and quad.ci.high == pytest.approx(exact.ci.high, abs=1e-9)
    if policy == "exclude":
        assert quad.estimate == pytest.approx(krippendorff.alpha(X.T, level_of_measurement="ratio"), abs=1e-9)


def test_default_coefficients_for_continuous_scores():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    ii, rr = np.nonzero(~np.isnan(X))
    t = AnnotationTable.from_arrays(ii, rr, X[ii, rr], scale="interval")
    assert A.default_coefficients(t) == ("krippendorff_alpha",)
    tab = A.agreement(t, n_resamples=0)
    assert [r.coefficient for r in tab] == ["krippendorff_alpha"] and tab["krippendorff_alpha"].level == "interval"
