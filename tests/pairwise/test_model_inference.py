"""The model's integrated latent verdict, empirical-Bayes pair prior, refine sweeps and seeding."""

from __future__ import annotations

import numpy as np
import pytest

from voirdire.pairwise import PairwiseBayesModel, simulate_pairwise
from voirdire.pairwise._kernel import human_mixture, local_map
from voirdire.pairwise._model import _class_prior, _match_class_prior


def _softmax3(th, ta):
    u = np.stack([th, ta, -th], -1)
    e = np.exp(u - u.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _brute(shift, n, d, nt, logL, prior, grid=401):
    """p(z | judges, humans) and log p(humans | judges) by a dense grid over (theta, tau)."""
    m_t, p_t, m_a, p_a = prior
    x = np.linspace(-8, 8, grid)
    th, ta = np.meshgrid(x, x, indexing="ij")
    logp = -0.5 * (p_t * (th - m_t) ** 2 + p_a * (ta - m_a) ** 2)
    for k in range(len(shift)):
        pj = _softmax3(th + shift[k], ta)
        cnt = np.array([(n[k] + d[k] - nt[k]) / 2, nt[k], (n[k] - d[k] - nt[k]) / 2])
        logp = logp + (cnt * np.log(pj)).sum(-1)
    w = np.exp(logp - logp.max())
    w /= w.sum()
    pi = _softmax3(th, ta)
    num = (w[..., None] * pi * np.exp(logL)).sum((0, 1))
    return num / num.sum(), np.log(num.sum())


@pytest.mark.parametrize("case", range(4))
def test_human_mixture_against_dense_quadrature(case):
    rng = np.random.default_rng(case)
    prior = (0.3 * case, 1.0 / (0.5 + 0.5 * case), -0.2, 1.3)
    K = case % 3                                   # 0, 1 or 2 judge channels
    shift = rng.normal(0, 0.5, K)
    y = rng.integers(0, 3, (K, 1 + case))
    n = np.array([float(y.shape[1])] * K)
    d = np.array([float((r == 0).sum() - (r == 2).sum()) for r in y])
    nt = np.array([float((r == 1).sum()) for r in y])
    logL = np.log(np.array([[0.7, 0.2, 0.1]])) * 2
    sh = shift[None, :]
    th, ta, *_ = local_map(np.zeros((1, 1)), np.zeros((1, 1)), sh, n[None], d[None], nt[None], np.zeros((1, 3)),
                           tol=1e-10, prior=prior)
    rho, log_mix, mom = human_mixture(th, ta, sh, n[None], d[None], nt[None], logL, prior=prior)
    want, want_mix = _brute(shift, n, d, nt, logL[0], prior)
    # exact up to the 5-point rule when no judge (a normal posterior); a Laplace approximation otherwise
    tol = 2e-3 if K == 0 else 0.03
    np.testing.assert_allclose(rho[0, 0], want, atol=tol)
    assert abs(log_mix[0, 0] - want_mix) < (0.01 if K == 0 else 0.15)


def test_class_prior_matching_inverts_the_prior():
    for v_t, v_a in ((0.05, 0.05), (1.0, 1.0), (2.0, 0.5)):
        for r in (np.array([0.25, 0.55, 0.2]), np.array([1 / 3, 1 / 3, 1 / 3]), np.array([0.6, 0.05, 0.35])):
            m_t, m_a = _match_class_prior(r, v_t, v_a)
            np.testing.assert_allclose(_class_prior(m_t, v_t, m_a, v_a), r, atol=1e-6)


def test_empirical_prior_learns_the_class_frequencies():
    # pairs whose latent verdicts favour A: the empirical-Bayes prior learns the shift, the standard one cannot
    table, truth = simulate_pairwise(1500, biases=[0.0], theta_mean=1.0, rng=3)
    # the paper's judge model (the stream is drawn from it): the property tested is the pair prior's
    paper = dict(judge_reliability=False, judge_ties=False)
    eb = PairwiseBayesModel(n_particles=30, rng=0, **paper).fit(table)
    std = PairwiseBayesModel(n_particles=30, pair_prior="standard", rng=0, **paper).fit(table)
    assert eb.pair_prior_["theta_mean"] > 0.5 and std.pair_prior_["theta_mean"] == 0.0
    z = np.bincount(truth.verdict, minlength=3) / len(truth.verdict)
    assert np.abs(eb.predict_proba(table).mean(0) - z).max() < 0.04


def test_fit_restarts_the_seeded_stream_and_partial_fit_continues():
    table, _ = simulate_pairwise(200, rng=1)
    m = PairwiseBayesModel(n_particles=40, rng=0)
    a = m.fit(table).bias_mean_.copy()
    pa = m.predict_proba(table)
    b = m.fit(table).bias_mean_.copy()
    np.testing.assert_array_equal(a, b)                      # fit twice: identical
    np.testing.assert_array_equal(pa, m.predict_proba(table))
    np.testing.assert_array_equal(a, PairwiseBayesModel(n_particles=40, rng=0).fit(table).bias_mean_)
    # partial_fit continues the stream (and its random numbers) rather than restarting
    first, second = table.select(pairs=slice(0, 100)), table.select(pairs=slice(100, 200))
    s = PairwiseBayesModel(n_particles=40, n_refine=0, rng=0).partial_fit(first).partial_fit(second)
    assert s.n_items_seen_ == 200
    # a Generator is used as it stands: two fits continue it (scikit-learn's RandomState semantics)
    g = PairwiseBayesModel(n_particles=40, rng=np.random.default_rng(5))
    assert not np.array_equal(g.fit(table).bias_mean_, g.fit(table).bias_mean_)


def test_refine_and_options_validate():
    table, _ = simulate_pairwise(100, rng=2)
    m = PairwiseBayesModel(n_particles=20, n_refine=0, rng=0).fit(table)
    before = m.confusion_.copy()
    m.refine(table, 2)
    assert m.confusion_.shape == before.shape and not np.allclose(m.confusion_, before)
    from voirdire.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="pair_prior"):
        PairwiseBayesModel(pair_prior="flat")
    with pytest.raises(InvalidParameterError, match="n_refine"):
        PairwiseBayesModel(n_refine=-1)
