"""Abstention policies exclude / category / disagree, each with coverage (values worked out by hand)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import voirdire.agreement as A
from voirdire.exceptions import InvalidParameterError

from ._helpers import table_from_wide

# two raters, "?" = cannot assess
ROWS = [["y", "?"], ["y", "y"], ["n", "?"], ["?", "?"], ["n", "n"]]


@pytest.fixture
def t():
    return table_from_wide(ROWS, abstain=["?"])


def test_coverage_is_reported(t):
    r = A.cohen_kappa(t, n_resamples=0)
    ab = r.abstention
    assert (ab.policy, ab.n_labels, ab.n_abstentions) == ("exclude", 10, 4)
    assert ab.label_coverage == pytest.approx(0.6)  # 6 of 10 labels
    assert ab.item_coverage == pytest.approx(0.4)   # items 2 and 5 of 5 have no abstention


def test_exclude(t):
    # only items 2 (y,y) and 5 (n,n) remain: perfect agreement with both categories used
    r = A.cohen_kappa(t, n_resamples=0)
    assert r.estimate == pytest.approx(1.0) and r.n_items == 2
    assert A.krippendorff_alpha(t, n_resamples=0).estimate == pytest.approx(1.0)


def test_category(t):
    # 3 classes {n, y, ?}; a = (y, y, n, ?, n), b = (?, y, ?, ?, n): po = 3/5;
    # pe = (2/5)(1/5) + (2/5)(1/5) + (1/5)(3/5) = 7/25; kappa = (15 - 7)/(25 - 7) = 4/9
    r = A.cohen_kappa(t, n_resamples=0, abstain_policy="category")
    assert r.estimate == pytest.approx(4 / 9, abs=1e-12) and r.n_items == 5
    # nominal alpha: D_o = (2 + 2)/10; pooled (y 3, n 3, ? 4): D_e = (100 - 34)/90 -> alpha = 5/11
    a = A.krippendorff_alpha(t, n_resamples=0, abstain_policy="category")
    assert a.estimate == pytest.approx(5 / 11, abs=1e-12) and a.level == "nominal"


def test_disagree(t):
    # abstention earns no credit, not even with another abstention: po = 2/5;
    # pe = a_y b_y + a_n b_n = 2/25 + 2/25 = 4/25; kappa = (10 - 4)/(25 - 4) = 2/7
    r = A.cohen_kappa(t, n_resamples=0, abstain_policy="disagree")
    assert r.estimate == pytest.approx(2 / 7, abs=1e-12)
    # alpha: D_o = (2 + 2 + 2)/10 = 0.6; D_e = (100 - 18 - 4)/90 = 78/90 -> alpha = 1 - 54/78 = 4/13
    a = A.krippendorff_alpha(t, n_resamples=0, abstain_policy="disagree")
    assert a.estimate == pytest.approx(4 / 13, abs=1e-12)
    assert A.observed_agreement(t, n_resamples=0, abstain_policy="disagree").estimate == pytest.approx(0.4)


def test_interval_disagree_hand():
    # items (1, ?), (3, 3), (1, 3), (?, ?); range 1..3 so an abstention is at distance 2^2 = 4 from all.
    # D_o = (8 + 0 + 8 + 8)/8 = 3; D_e = (12*4 + 30*4 + 6*4)/(8*7) = 192/56 -> alpha = 1 - 3*56/192 = 0.125
    t = table_from_wide([[1, -1], [3, 3], [1, 3], [-1, -1]], scale="interval", abstain=[-1])
    r = A.krippendorff_alpha(t, n_resamples=0, abstain_policy="disagree")
    assert r.estimate == pytest.approx(0.125, abs=1e-12)
    # exclude: items 2 and 3 only -> values 3,3,1,3: D_o = 8/4 = 2; D_e = 2*4*SS/(4*3) with SS = 3 -> 2;
    # alpha = 0
    assert A.krippendorff_alpha(t, n_resamples=0).estimate == pytest.approx(0.0, abs=1e-12)


def test_category_policy_refuses_a_metric_scale():
    t = table_from_wide([[1, -1], [3, 3], [1, 3]], scale="interval", abstain=[-1])
    with pytest.raises(InvalidParameterError, match="abstain_policy='category' makes abstention a nominal category"):
        A.krippendorff_alpha(t, level="interval", abstain_policy="category")
    with pytest.raises(InvalidParameterError, match="cannot place the abstention category on the scale"):
        A.gwet_ac2(t, abstain_policy="category")
    # default level becomes nominal under the category policy
    assert A.krippendorff_alpha(t, abstain_policy="category", n_resamples=0).level == "nominal"


def test_policies_with_bootstrap_run(t):
    for pol in ("exclude", "category", "disagree"):
        tab = A.agreement(t, abstain_policy=pol, n_resamples=100, rng=3, on_undefined="nan")
        assert {r.abstention.policy for r in tab} == {pol}


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(4, 30), st.integers(2, 5))
def test_category_policy_equals_abstention_as_a_plain_label(seed, n, R):
    # Under "category", every coefficient must equal the same coefficient on a table where
    # "?" is an ordinary nominal category.
    rng = np.random.default_rng(seed)
    X = rng.choice(np.array(["y", "n", "?"], dtype=object), size=(n, R), p=[0.45, 0.4, 0.15])
    X[rng.random((n, R)) < 0.3] = None
    X[:, :2] = np.where(X[:, :2] == None, "y", X[:, :2])  # noqa: E711 - two labels per item
    with_abst = table_from_wide(X, abstain=["?"], categories=["n", "y"])
    plain = table_from_wide(X, categories=["n", "y", "?"])
    for name in ("fleiss_kappa", "krippendorff_alpha", "gwet_ac1", "bennett_s", "observed_agreement",
                 "conger_kappa"):
        a = getattr(A, name)(with_abst, abstain_policy="category", n_resamples=0, on_undefined="nan")
        b = getattr(A, name)(plain, n_resamples=0, on_undefined="nan")
        assert (np.isnan(a.estimate) and np.isnan(b.estimate)) or a.estimate == pytest.approx(b.estimate, abs=1e-12)
        if a.analytic_se is not None and b.analytic_se is not None and np.isfinite(b.analytic_se):
            assert a.analytic_se == pytest.approx(b.analytic_se, abs=1e-12)
