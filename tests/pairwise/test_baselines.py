"""Baselines against crowd-kit on the same data, hand-checked cases, convergence contracts."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from voirdire.data import PairwiseTable
from voirdire.exceptions import ConvergenceWarning, InvalidParameterError
from voirdire.pairwise import (
    GLAD,
    MACE,
    BradleyTerryDavidson,
    DawidSkene,
    MajorityVote,
    crowd_arrays,
    simulate_pairwise,
)

from .._oracles import oracle

crowdkit = oracle("crowdkit.aggregation")


def _long(table):
    pair, w, y, _ = crowd_arrays(table)
    return pd.DataFrame({"task": pair, "worker": w, "label": y})


def _ck_proba(probas):
    return probas.sort_index().reindex(columns=[0, 1, 2]).fillna(0.0).to_numpy()


@pytest.fixture(scope="module")
def sim():
    return simulate_pairwise(300, rng=3)[0]


def test_crowd_arrays_split_judges_by_order():
    t = PairwiseTable.from_arrays(pair=[1, 1, 1], rater=["h", "g", "g"], verdict=["A", "A", "B"],
                                  order=[None, "AB", "BA"], judges=["g"])
    pair, w, y, names = crowd_arrays(t)
    assert names == ["h", "g@AB", "g@BA"] and w.tolist() == [0, 1, 2] and y.tolist() == [0, 0, 2]


def test_majority_vote_hand_checked_and_crowdkit(sim):
    t = PairwiseTable.from_arrays(pair=[1, 1, 1, 2], rater=["a", "b", "c", "a"], verdict=["A", "B", "B", "T"])
    np.testing.assert_allclose(MajorityVote().fit(t).predict_proba(), [[1 / 3, 0, 2 / 3], [0, 1, 0]])
    # smoothing 0.5: (1.5, 0.5, 2.5) / 4.5
    np.testing.assert_allclose(MajorityVote(smoothing=0.5).fit(t).predict_proba()[0], [1.5 / 4.5, 0.5 / 4.5, 2.5 / 4.5])
    ck = crowdkit.MajorityVote().fit_predict_proba(_long(sim))
    np.testing.assert_allclose(MajorityVote().fit(sim).predict_proba(), _ck_proba(ck), atol=1e-12)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # crowd-kit's pandas idioms
@pytest.mark.parametrize("n_iter", [1, 3, 10])
def test_dawid_skene_equals_crowdkit_iteration_by_iteration(sim, n_iter):
    ours = DawidSkene(n_iter=n_iter, tol=1e-300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours.fit(sim)
    ck = crowdkit.DawidSkene(n_iter=n_iter, tol=-np.inf).fit(_long(sim))
    np.testing.assert_allclose(ours.predict_proba(), _ck_proba(ck.probas_), atol=1e-10)
    np.testing.assert_allclose(ours.priors_, ck.priors_.sort_index().to_numpy(), atol=1e-10)


def test_dawid_skene_convergence_contract(sim):
    ds = DawidSkene().fit(sim)
    assert ds.converged_ and ds.n_iter_ == len(ds.history_) and ds.n_iter_ < 100
    assert np.all(np.diff(ds.history_) > -1e-9)  # EM never lowers the bound
    with pytest.warns(ConvergenceWarning, match="DawidSkene did not converge in 2 iterations"):
        DawidSkene(n_iter=2).fit(sim)
    # history is honoured: 2 iterations means 2 entries, not a stale alias
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ds2 = DawidSkene(n_iter=2).fit(sim)
    assert ds2.n_iter_ == 2 and len(ds2.history_) == 2 and not ds2.converged_


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_mace_against_crowdkit_em(sim):
    ours = MACE(rng=0, n_restarts=3).fit(sim)
    ck = crowdkit.MACE(method="em", n_iter=50, n_restarts=3, random_state=0).fit(_long(sim))
    cp = _ck_proba(ck.probas_)
    assert (ours.predict() == cp.argmax(1)).mean() >= 0.98
    assert np.abs(ours.predict_proba() - cp).max() < 0.05
    assert np.corrcoef(ours.spamming_, ck.spamming_[:, 0])[0, 1] > 0.99


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_glad_against_crowdkit(sim):
    ours = GLAD().fit(sim)
    ck = crowdkit.GLAD(n_iter=100).fit(_long(sim))
    cp = _ck_proba(ck.probas_)
    assert (ours.predict() == cp.argmax(1)).mean() >= 0.97
    assert np.corrcoef(ours.alphas_, ck.alphas_.sort_index().to_numpy())[0, 1] > 0.99
    assert ours.converged_ and len(ours.history_) == ours.n_iter_


def test_btd_per_pair_equals_scipy():
    t = PairwiseTable.from_arrays(pair=[1, 1, 1, 2, 2, 3], rater=list("abcabc"), verdict=list("AATBBT"))
    m = BradleyTerryDavidson().fit(t)
    assert m.converged_
    for k, (nA, nT, nB) in enumerate([(2, 1, 0), (0, 0, 2), (0, 1, 0)]):
        def nlp(x):
            u = np.array([x[0], x[1], -x[0]])
            lp = u - np.logaddexp.reduce(u)
            return -(-0.5 * x @ x + nA * lp[0] + nT * lp[1] + nB * lp[2])
        r = minimize(nlp, [0.0, 0.0], method="BFGS", options={"gtol": 1e-10})
        assert m.theta_[k] == pytest.approx(r.x[0], abs=1e-6) and m.tau_[k] == pytest.approx(r.x[1], abs=1e-6)
    # symmetry: swapping A and B flips theta, keeps tau
    assert m.theta_[1] < 0 and m.theta_[0] > 0


def test_btd_convergence_contract(sim):
    m = BradleyTerryDavidson().fit(sim)
    assert m.converged_ and len(m.history_) == m.n_iter_ and m.n_iter_ < 50
    assert np.all(np.diff(m.history_) > -1e-9)  # damped Newton never lowers the log posterior
    with pytest.warns(ConvergenceWarning, match="BradleyTerryDavidson did not converge in 2 iterations"):
        m2 = BradleyTerryDavidson(n_iter=2).fit(sim)
    assert m2.n_iter_ == 2 and len(m2.history_) == 2 and not m2.converged_


@pytest.mark.parametrize("cls", [DawidSkene, MACE, GLAD, BradleyTerryDavidson, MajorityVote])
def test_relabelling_invariance(cls, sim):
    """Swapping A and B everywhere (and the judges' orders) mirrors the posterior."""
    f = sim.to_frame()
    swap = {"A": "B", "B": "A", "T": "T"}
    f2 = f.assign(verdict=f["verdict"].map(swap))
    kw = {"rng": 0} if cls is MACE else {}
    p1 = cls(**kw).fit(PairwiseTable.from_frame(f, role="role")).predict_proba()
    p2 = cls(**kw).fit(PairwiseTable.from_frame(f2, role="role")).predict_proba()
    # MACE's random starts are not mirror images, so it agrees only up to its stopping tolerance
    np.testing.assert_allclose(p1, p2[:, ::-1], atol=1e-3 if cls is MACE else 1e-6)


def test_accuracy_on_synthetic_truth():
    t, truth = simulate_pairwise(600, rng=8)
    acc = {c.__name__: (c().fit(t).predict() == truth.verdict).mean()
           for c in (MajorityVote, BradleyTerryDavidson, DawidSkene, GLAD)}
    assert all(a > 0.55 for a in acc.values()), acc


def test_not_fitted_and_bad_parameters():
    with pytest.raises(InvalidParameterError, match="not fitted"):
        DawidSkene().predict_proba()
    with pytest.raises(InvalidParameterError, match="'smoothing' parameter of MajorityVote"):
        MajorityVote(smoothing=-1)
    with pytest.raises(InvalidParameterError, match="'tol' parameter of GLAD"):
        GLAD(tol=0)
    with pytest.raises(InvalidParameterError, match="'n_restarts' parameter of MACE"):
        MACE(n_restarts=0)
    with pytest.raises(InvalidParameterError, match="Expected a PairwiseTable"):
        DawidSkene().fit(pd.DataFrame())


def test_mace_posterior_equals_the_labels_by_classes_likelihood():
    # the E-step sums only log a and log(a + 1 - s) - log a per label (O(labels)); at the fitted
    # parameters its posterior must equal the one from the full (labels x classes) likelihood
    # P(y | z) = s_w xi_w[y] + (1 - s_w) 1[y = z], any number of classes
    from voirdire.pairwise import mace_arrays

    rng = np.random.default_rng(4)
    P, W, K = 300, 6, 5
    z = rng.integers(0, K, P)
    item = np.repeat(np.arange(P), W)
    w = np.tile(np.arange(W), P)
    y = np.where(rng.random(P * W) < 0.7, z[item], rng.integers(0, K, P * W))
    y[w == 5] = rng.integers(0, K, P)  # a spammer
    keep = rng.random(P * W) > 0.3
    item, w, y = item[keep], w[keep], y[keep]
    f = mace_arrays(item, w, y, n_items=P, n_workers=W, n_classes=K, rng=0)
    s, xi = f["spamming"], f["thetas"]
    lik = s[w, None] * xi[w, y][:, None] + (1 - s[w, None]) * (y[:, None] == np.arange(K))
    logp = np.zeros((P, K))
    np.add.at(logp, item, np.log(lik))
    post = np.exp(logp - logp.max(1, keepdims=True))
    post /= post.sum(1, keepdims=True)
    np.testing.assert_allclose(f["proba"], post, rtol=0, atol=1e-12)
    assert f["converged"] and np.argmax(s) == 5
