"""Properties every coefficient must have (hypothesis): permutation and relabelling invariance,
perfect agreement gives 1, string labels equal integer labels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import voirdire.agreement as A
from voirdire.data import AnnotationTable

MULTI = ["observed_agreement", "fleiss_kappa", "conger_kappa", "krippendorff_alpha", "gwet_ac1", "gwet_ac2",
         "bennett_s"]
TWO = ["cohen_kappa", "scott_pi"]
ALL = MULTI + TWO


def _call(name, t, **kw):
    return getattr(A, name)(t, n_resamples=0, on_undefined="nan", **kw).estimate


def _arrays(seed, n, R, q, miss, two):
    R = 2 if two else R
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, q, n)
    X = np.where(rng.random((n, R)) < 0.7, truth[:, None], rng.integers(0, q, (n, R)))
    obs = rng.random((n, R)) >= miss
    obs[:, :2] = True  # every item has two labels, every rater some
    ii, rr = np.nonzero(obs)
    return ii, rr, X[ii, rr]


def _table(ii, rr, labels, *, scale="ordinal", cats=None):
    return AnnotationTable.from_arrays([f"i{i}" for i in ii], [f"r{r}" for r in rr], labels, scale=scale,
                                       categories=cats)


params = st.tuples(st.integers(0, 2**31), st.integers(3, 25), st.integers(2, 5), st.integers(2, 4),
                   st.sampled_from([0.0, 0.4]))


@settings(max_examples=25, deadline=None)
@given(params, st.sampled_from(ALL))
def test_item_and_rater_permutation_invariance(p, name):
    seed, n, R, q, miss = p
    ii, rr, lab = _arrays(seed, n, R, q, miss, name in TWO)
    cats = list(range(q))
    base = _call(name, _table(ii, rr, lab, cats=cats))
    assume(np.isfinite(base))
    rng = np.random.default_rng(seed + 1)
    order = rng.permutation(ii.size)  # row order (and so item and rater first-seen order) shuffled
    item_perm = rng.permutation(int(ii.max()) + 1)
    rater_perm = rng.permutation(int(rr.max()) + 1)
    t2 = _table(item_perm[ii][order], rater_perm[rr][order], lab[order], cats=cats)
    kw = {}
    if name in TWO:  # keep the same two raters, in either order: symmetric coefficients
        kw = {"raters": [f"r{rater_perm[1]}", f"r{rater_perm[0]}"]}
    assert _call(name, t2, **kw) == pytest.approx(base, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(params, st.sampled_from(["observed_agreement", "fleiss_kappa", "conger_kappa", "krippendorff_alpha",
                                "gwet_ac1", "bennett_s", "cohen_kappa", "scott_pi"]))
def test_relabelling_invariance_nominal(p, name):
    seed, n, R, q, miss = p
    ii, rr, lab = _arrays(seed, n, R, q, miss, name in TWO)
    names = np.array([f"c{k}" for k in range(q)], dtype=object)
    perm = np.random.default_rng(seed).permutation(q)
    t1 = _table(ii, rr, names[lab], scale="nominal", cats=list(names))
    t2 = _table(ii, rr, names[perm[lab]], scale="nominal", cats=list(names))
    a, b = _call(name, t1), _call(name, t2)
    assume(np.isfinite(a))
    assert b == pytest.approx(a, abs=1e-12)


@settings(max_examples=20, deadline=None)
@given(params, st.sampled_from(ALL))
def test_perfect_agreement_gives_one(p, name):
    seed, n, R, q, miss = p
    ii, rr, _ = _arrays(seed, n, R, q, miss, name in TWO)
    truth = np.arange(int(ii.max()) + 1) % q  # every category used, raters agree on each item
    t = _table(ii, rr, truth[ii], cats=list(range(q)))
    assert _call(name, t) == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=20, deadline=None)
@given(params, st.sampled_from(["observed_agreement", "fleiss_kappa", "conger_kappa", "krippendorff_alpha",
                                "gwet_ac1", "bennett_s", "cohen_kappa", "scott_pi"]))
def test_string_labels_equal_integer_labels(p, name):
    seed, n, R, q, miss = p
    ii, rr, lab = _arrays(seed, n, R, q, miss, name in TWO)
    words = np.array(["alpha", "bravo", "charlie", "delta", "echo"], dtype=object)
    t_int = _table(ii, rr, lab, scale="nominal", cats=list(range(q)))
    t_str = _table(ii, rr, words[lab], scale="nominal", cats=list(words[:q]))
    a, b = _call(name, t_int), _call(name, t_str)
    assert (np.isnan(a) and np.isnan(b)) or b == pytest.approx(a, abs=1e-12)


@settings(max_examples=15, deadline=None)
@given(params)
def test_interval_alpha_is_affine_invariant(p):
    seed, n, R, q, miss = p
    ii, rr, lab = _arrays(seed, n, R, q, miss, False)
    a = _call("krippendorff_alpha", _table(ii, rr, lab.astype(float), scale="interval"))
    b = _call("krippendorff_alpha", _table(ii, rr, 1e6 + 3.5 * lab.astype(float), scale="interval"))
    assume(np.isfinite(a))
    assert b == pytest.approx(a, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 12), st.integers(2, 4), st.integers(1, 3),
       st.sampled_from(["exclude", "category", "disagree"]), st.sampled_from(["nominal", "ordinal", "interval"]))
def test_every_coefficient_survives_small_messy_tables(seed, n, R, q, policy, scale):
    # Small, sparse tables with abstentions, single categories and lonely items: every coefficient
    # returns a result (nan with a DegenerateDataWarning when undefined), never an unexpected error
    # or a stray numpy warning (pytest turns warnings into errors).
    import warnings

    from voirdire.exceptions import DegenerateDataWarning

    rng = np.random.default_rng(seed)
    labels = rng.integers(0, q + 1, (n, R)).astype(object)  # value q = "cannot assess"
    labels[labels == q] = -1
    labels[rng.random((n, R)) < 0.4] = None
    labels[0, :2] = [0, 0]
    ii, rr = np.nonzero(labels != None)  # noqa: E711
    assume(np.unique(rr).size >= 2)
    t = AnnotationTable.from_arrays(ii, [f"r{r}" for r in rr], labels[ii, rr], scale=scale, abstain=[-1],
                                    categories=list(range(q)))
    names = [c for c in A.COEFFICIENTS if c not in TWO] + (TWO if t.n_raters == 2 else [])
    for name in names:
        kw = {}
        if name == "gwet_ac2" and (scale == "nominal" or policy == "category"):
            kw["weights"] = "identity"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            r = getattr(A, name)(t, n_resamples=25, rng=1, abstain_policy=policy, **kw)
        assert r.abstention.policy == policy
        # (no range check: chance-corrected coefficients can fall below -1 on tiny sparse tables)
        assert np.isnan(r.estimate) or r.estimate <= 1.0 + 1e-9
        assert np.isnan(r.ci.low) or r.ci.low <= r.ci.high
