"""The binary family (METHODS section 1) against scikit-learn and scipy, and its identities."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import voirdire.agreement as A
from voirdire.data import AnnotationTable
from voirdire.exceptions import DegenerateDataWarning, InvalidParameterError

skm = pytest.importorskip("sklearn.metrics")


def _pair_table(y, yhat, labels=("fail", "pass"), **kw):
    n = len(y)
    lab = np.array(labels, dtype=object)
    return AnnotationTable.from_arrays(
        list(range(n)) * 2, ["human"] * n + ["judge"] * n, list(lab[np.asarray(y)]) + list(lab[np.asarray(yhat)]),
        judges=["judge"], categories=list(labels), **kw)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(8, 80), st.floats(0.05, 0.95), st.floats(0.5, 0.95))
def test_binary_family_matches_sklearn(seed, n, prev, acc):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < prev).astype(int)
    yhat = np.where(rng.random(n) < acc, y, 1 - y)
    assume(0 < y.sum() < n and 0 < yhat.sum() < n)
    r = A.binary_agreement(_pair_table(y, yhat), "judge", reference="human", n_resamples=0)
    assert r.mcc == pytest.approx(skm.matthews_corrcoef(y, yhat), abs=1e-12)
    assert r.phi == pytest.approx(skm.matthews_corrcoef(y, yhat), abs=1e-12)
    assert r.kappa == pytest.approx(skm.cohen_kappa_score(y, yhat), abs=1e-12)
    assert r.accuracy == pytest.approx(skm.accuracy_score(y, yhat))
    assert r.f1 == pytest.approx(skm.f1_score(y, yhat, zero_division=np.nan))
    assert r.precision == pytest.approx(skm.precision_score(y, yhat, zero_division=np.nan))
    assert r.recall == pytest.approx(skm.recall_score(y, yhat))
    # the five correlations coincide on non-degenerate binary data
    assert r.coincide
    for v in (r.pearson, r.spearman, r.kendall_tau_b):
        assert v == pytest.approx(r.phi, abs=1e-12)
    # kappa/phi = 2 sqrt(AB)/(A+B), A = (TP+FN)(FN+TN), B = (TP+FP)(FP+TN); = 1 iff pi == pi_hat
    A_ = (r.tp + r.fn) * (r.fn + r.tn)
    B_ = (r.tp + r.fp) * (r.fp + r.tn)
    if r.phi != 0:
        assert r.kappa_phi_ratio == pytest.approx(2 * math.sqrt(A_ * B_) / (A_ + B_), abs=1e-12)
    assert r.prevalence == pytest.approx(y.mean()) and r.judge_rate == pytest.approx(yhat.mean())
    # the 2x2 kappa equals the general cohen_kappa on the same two raters
    ck = A.cohen_kappa(_pair_table(y, yhat), n_resamples=0).estimate
    assert ck == pytest.approx(r.kappa, abs=1e-12)


def test_hand_example_and_note():
    # y = 1 1 0 0 0 0, yhat = 1 0 0 0 1 0: TP 1, FN 1, FP 1, TN 3; phi = (3 - 1)/sqrt(2*2*4*4) = 0.25
    # kappa = 2 (3 - 1) / (2*4 + 2*4) = 0.25; pi = pi_hat = 1/3 so kappa/phi = 1
    r = A.binary_agreement(_pair_table([1, 1, 0, 0, 0, 0], [1, 0, 0, 0, 1, 0]), "judge", reference="human",
                           n_resamples=0)
    assert (r.tp, r.fn, r.fp, r.tn) == (1, 1, 1, 3)
    assert r.phi == pytest.approx(0.25) and r.kappa == pytest.approx(0.25) and r.kappa_phi_ratio == pytest.approx(1)
    assert r.confusion_matrix.tolist() == [[3, 1], [1, 1]]  # rows reference (fail, pass), columns judge
    assert "one number" in r.note and r.positive == "pass"


def test_majority_reference_and_ties():
    # three humans + judge; item 3 is tied (h1 y, h2 n, h3 missing) and is left out
    items = [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4]
    raters = ["h1", "h2", "h3", "j", "h1", "h2", "h3", "j", "h1", "h2", "j", "h1", "h2", "h3", "j"]
    labels = ["y", "y", "n", "y", "n", "n", "n", "n", "y", "n", "y", "y", "y", "y", "y"]
    t = AnnotationTable.from_arrays(items, raters, labels, judges=["j"])
    r = A.binary_agreement(t, "j", n_resamples=0, positive="y")
    assert r.n_ties == 1 and r.n_items == 3
    assert (r.tp, r.fn, r.fp, r.tn) == (2, 0, 0, 1)


def test_disagree_policy_counts_judge_abstention_as_error():
    # reference y y n n; judge y ? n ? -> the two abstentions become FN (item 2) and FP (item 4)
    t = AnnotationTable.from_arrays([1, 2, 3, 4] * 2, ["h"] * 4 + ["j"] * 4, list("yynn") + ["y", "?", "n", "?"],
                                    judges=["j"], abstain=["?"], categories=["n", "y"])
    r = A.binary_agreement(t, "j", reference="h", abstain_policy="disagree", n_resamples=0)
    assert (r.tp, r.fn, r.fp, r.tn) == (1, 1, 1, 1)
    assert (r.n_judge_labels, r.n_judge_abstentions, r.judge_coverage) == (4, 2, 0.5)
    r = A.binary_agreement(t, "j", reference="h", abstain_policy="exclude", n_resamples=0)
    assert (r.tp, r.fn, r.fp, r.tn) == (1, 0, 0, 1) and r.abstention.label_coverage == pytest.approx(6 / 8)
    r = A.binary_agreement(t, "j", reference="h", abstain_policy="category", n_resamples=0)
    assert r.labels == ("n", "y", "<abstain>") and r.confusion_matrix.shape == (3, 3)
    assert not r.coincide and "3x3" in r.note


def test_bootstrap_interval_contains_estimate():
    rng = np.random.default_rng(0)
    y = (rng.random(200) < 0.3).astype(int)
    yhat = np.where(rng.random(200) < 0.85, y, 1 - y)
    r = A.binary_agreement(_pair_table(y, yhat), "judge", reference="human", n_resamples=300, rng=1)
    assert r.kappa_ci.low < r.kappa < r.kappa_ci.high
    assert r.phi_ci.low < r.phi < r.phi_ci.high
    r2 = A.binary_agreement(_pair_table(y, yhat), "judge", reference="human", n_resamples=300, rng=1)
    assert r2.kappa_ci == r.kappa_ci


def test_constant_judge_is_degenerate():
    t = _pair_table([1, 0, 1, 0], [1, 1, 1, 1])
    with pytest.warns(DegenerateDataWarning, match="phi is undefined"):
        r = A.binary_agreement(t, "judge", reference="human", n_resamples=0)
    assert math.isnan(r.phi) and not r.coincide and r.kappa == 0.0


def test_errors():
    t = AnnotationTable.from_arrays([1, 1, 2, 2], ["h", "j", "h", "j"], ["a", "b", "c", "a"], judges=["j"])
    with pytest.raises(InvalidParameterError, match="'positive' parameter of binary_agreement is required"):
        A.binary_agreement(t, "j")
    with pytest.raises(InvalidParameterError, match="must be one of the categories"):
        A.binary_agreement(t, "j", positive="z")
    with pytest.raises(InvalidParameterError, match="must differ from the judge"):
        A.binary_agreement(t, "j", reference="j", positive="a")
    with pytest.raises(InvalidParameterError, match="Rater 'x' is not in"):
        A.binary_agreement(t, "x", positive="a")
    r = A.binary_agreement(t, "j", positive="a", n_resamples=0)  # one-vs-rest
    assert r.n_items == 2
