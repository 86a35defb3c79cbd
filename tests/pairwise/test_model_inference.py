"""The model's integrated latent verdict, empirical-Bayes pair prior, refine sweeps and seeding."""

from __future__ import annotations

import numpy as np
import pytest

from voirdire.pairwise import PairwiseBayesModel, simulate_pairwise
from voirdire.pairwise._kernel import human_mixture, judge_expectations, local_map, mix_humans
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


@pytest.mark.parametrize("case", [1, 2, 3])
def test_adaptive_quadrature_against_dense_quadrature(case):
    """quadrature="adaptive": the 25 nodes weighted by the true judges-only density. The verdict
    posterior and the humans' evidence move to the dense grid's values (closer than the Laplace
    approximation on the same pair; the judges' own marginal is corrected by ``corr``)."""
    rng = np.random.default_rng(case)
    prior = (0.3 * case, 1.0 / (0.5 + 0.5 * case), -0.2, 1.3)
    K = 2
    shift = rng.normal(0, 0.5, K)
    y = rng.integers(0, 3, (K, 1 + case))
    n = np.array([float(y.shape[1])] * K)
    d = np.array([float((r == 0).sum() - (r == 2).sum()) for r in y])
    nt = np.array([float((r == 1).sum()) for r in y])
    logL = np.log(np.array([[0.7, 0.2, 0.1]])) * 2
    sh = shift[None, :]
    th, ta, f, logdet, *_ = local_map(np.zeros((1, 1)), np.zeros((1, 1)), sh, n[None], d[None], nt[None], None,
                                      tol=1e-10, prior=prior)
    want, want_mix = _brute(shift, n, d, nt, logL[0], prior)
    lap = mix_humans(*judge_expectations(th, ta, sh, n[None], d[None], nt[None], prior=prior)[:2], logL)
    Epi, Emom, corr = judge_expectations(th, ta, sh, n[None], d[None], nt[None], prior=prior, fmap=f)
    ada = mix_humans(Epi, Emom, logL)
    assert abs(corr[0, 0]) < 0.2
    np.testing.assert_allclose(ada[0][0, 0], want, atol=5e-3)
    assert abs(ada[1][0, 0] - want_mix) <= abs(lap[1][0, 0] - want_mix) + 1e-3
    assert np.abs(ada[0][0, 0] - want).max() <= np.abs(lap[0][0, 0] - want).max() + 1e-3


def test_bias_intervals_marked_optimistic_by_the_stated_rule(tmp_path):
    """Marked under the default judge model only where posterior() cannot compute the batch summary (a state
    loaded without its earlier pairs, store_items=False: tests/pairwise/test_model_summary.py); not under the
    paper's judge; not after a batch move under adaptive quadrature; not when the stream moves on with every
    pair kept."""
    table, _ = simulate_pairwise(60, biases=[0.5, 0.0], rng=2)
    assert not PairwiseBayesModel(n_particles=20, n_refine=0, rng=0).fit(table).posterior().bias_interval_optimistic.any()
    paper = PairwiseBayesModel(n_particles=20, n_refine=0, judge_reliability=False, judge_ties=False, rng=0)
    assert not paper.fit(table).posterior().bias_interval_optimistic.any()
    cal = PairwiseBayesModel(n_particles=20, n_refine=1, batch_move=True, quadrature="adaptive", rng=0).fit(table)
    post = cal.posterior()
    assert not post.bias_interval_optimistic.any() and cal._summary is None     # the moved particles are read
    assert not post.to_frame("judges")["bias_interval_optimistic"].any()
    cal.save(tmp_path / "s.npz")
    assert PairwiseBayesModel.load(tmp_path / "s.npz").posterior().bias_interval_optimistic.all()
    cal.partial_fit(simulate_pairwise(10, biases=[0.5, 0.0], rng=3)[0])
    assert not cal.posterior().bias_interval_optimistic.any() and cal._summary is not None


def test_class_prior_matching_inverts_the_prior():
    for v_t, v_a in ((0.05, 0.05), (1.0, 1.0), (2.0, 0.5)):
        for r in (np.array([0.25, 0.55, 0.2]), np.array([1 / 3, 1 / 3, 1 / 3]), np.array([0.6, 0.05, 0.35])):
            m_t, m_a = _match_class_prior(r, v_t, v_a)
            np.testing.assert_allclose(_class_prior(m_t, v_t, m_a, v_a), r, atol=1e-6)


@pytest.mark.slow
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


@pytest.mark.statistical
def test_empirical_prior_under_the_default_judge_model():
    """The same stream under the default judge model (reliability + tie offset per judge).

    Measured: the latent class shares come out (0.526, 0.320, 0.154) against the realised (0.587,
    0.270, 0.143), max error 0.061, where the paper's judge model is within 0.023. The difference is
    genuine, not noise: the judge's tie offset and the pairs' tau mean share the tie rate (the judge's
    ties are tau + delta; the humans' ties also pass through their confusion matrices), so with three
    humans the latent tie share is weakly identified and drifts up. What the empirical prior's theta
    mean carries, the split between A and B, is learned as well as under the paper's judge."""
    table, truth = simulate_pairwise(1500, biases=[0.0], theta_mean=1.0, rng=3)
    eb = PairwiseBayesModel(n_particles=30, rng=0).fit(table)
    assert eb.pair_prior_["theta_mean"] > 0.5
    z = np.bincount(truth.verdict, minlength=3) / len(truth.verdict)
    p = eb.predict_proba(table).mean(0)
    assert abs(p[0] / (p[0] + p[2]) - z[0] / (z[0] + z[2])) < 0.04
    assert np.abs(p - z).max() < 0.08            # ties: the shared tie rate above (0.061 measured)


@pytest.mark.slow
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


def test_finite_difference_stencil_is_exact_on_a_quadratic():
    from voirdire.pairwise._model import _fd_derivatives, _fd_offsets

    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 3))
    H = -(A @ A.T + np.eye(3))
    g = rng.normal(size=3)
    h = np.array([0.1, 0.3, 0.05])
    x = _fd_offsets(3) * h
    f = 2.0 + x @ g + 0.5 * np.einsum("ni,ij,nj->n", x, H, x)
    grad, hess = _fd_derivatives(f, h)
    np.testing.assert_allclose(grad, g, atol=1e-10)
    np.testing.assert_allclose(hess, H, atol=1e-8)


def test_batch_move_is_reproducible_saved_and_never_in_a_stream(tmp_path):
    table, _ = simulate_pairwise(80, biases=[0.5, -0.2], rng=4)
    kw = dict(n_particles=30, batch_move=True, n_refine=1, rng=0)
    a = PairwiseBayesModel(**kw).fit(table)
    b = PairwiseBayesModel(**kw).fit(table)
    np.testing.assert_array_equal(a.particles_[0], b.particles_[0])
    assert a.move_ess_ is not None and 1.0 <= a.move_ess_ <= 30.0
    assert a.ess_history_[-1, 1] == a.move_ess_
    off = PairwiseBayesModel(n_particles=30, n_refine=1, rng=0).fit(table)
    assert off.move_ess_ is None and not np.array_equal(off.particles_[0], a.particles_[0])
    # the option travels with the state; partial_fit (a stream) never moves
    a.save(tmp_path / "s.npz")
    c = PairwiseBayesModel.load(tmp_path / "s.npz")
    assert c.batch_move and c.move_ess_ is None
    c.partial_fit(table.select(pairs=slice(0, 10)))
    assert c.move_ess_ is None


@pytest.mark.statistical
def test_batch_move_samples_the_batch_posterior():
    """The moved particles against the judges' batch posterior integrated on a dense grid.

    The paper's judge model (one parameter per judge, two judges): the grid evaluates the same
    log posterior the move targets, at 41 x 41 points, with none of the move's machinery (Newton
    steps, Laplace proposal, importance weights); the moved particles' mean and sd must match it."""
    table, truth = simulate_pairwise(300, biases=[0.8, -0.3], rng=1003)
    m = PairwiseBayesModel(n_particles=100, batch_move=True, judge_reliability=False, judge_ties=False,
                           rng=3).fit(table)
    coords = m._judge_coords()
    assert coords == [(0, 0), (1, 0)]
    mean, sd = m.bias_mean_, m.bias_sd_
    g1 = np.linspace(mean[0] - 5 * sd[0], mean[0] + 5 * sd[0], 41)
    g2 = np.linspace(mean[1] - 5 * sd[1], mean[1] + 5 * sd[1], 41)
    B1, B2 = np.meshgrid(g1, g2, indexing="ij")
    X = np.column_stack([B1.ravel(), B2.ravel()])
    J = len(m.judges_)
    means = (m.bias_mean_[None], np.zeros((1, J)), np.ones((1, J)))
    lp = m._batch_logpost(table, coords, X, means)[0]
    w = np.exp(lp - lp.max())
    w /= w.sum()
    gm = w @ X
    gsd = np.sqrt(w @ (X - gm) ** 2)
    assert np.all(np.abs(mean - gm) < 0.2 * gsd), (mean, gm, gsd)
    assert np.all((sd / gsd > 0.8) & (sd / gsd < 1.25)), (sd, gsd)


def test_pooled_confusion_prior_empirical_bayes(tmp_path):
    """Row k of the prior is kappa_k p_k: p_k the pooled row (counts + the fixed prior), kappa_k by the
    Dirichlet-multinomial marginal likelihood. Humans who agree exactly with the pool: the largest
    strength of the grid (nothing to learn per human); humans who contradict each other (one says
    only A, one only B on true A): a weak prior (each keeps their own row)."""
    from voirdire.pairwise._model import _KAPPA_GRID, _pooled_prior

    base = np.full((3, 3), 1e-9)
    same = np.tile(np.array([[8.0, 1.0, 1.0], [1.0, 8.0, 1.0], [1.0, 1.0, 8.0]]), (4, 1, 1))
    pr = _pooled_prior(same, base)
    np.testing.assert_allclose(pr / pr.sum(1, keepdims=True), same[0] / 10, atol=1e-8)
    np.testing.assert_allclose(pr.sum(1), _KAPPA_GRID[-1])
    split = same.copy()
    split[:2, 0] = [20.0, 0.0, 0.0]
    split[2:, 0] = [0.0, 0.0, 20.0]
    pr2 = _pooled_prior(split, base)
    assert pr2[0].sum() < 2.0 and pr2[1].sum() == pytest.approx(_KAPPA_GRID[-1])
    np.testing.assert_allclose(pr2[0] / pr2[0].sum(), [0.5, 0.0, 0.5], atol=1e-8)
    # the model keeps the prior in use (saved and loaded with the state)
    table, _ = simulate_pairwise(80, rng=1)
    m = PairwiseBayesModel(n_particles=20, n_refine=1, rng=0).fit(table)
    fixed = np.full((3, 3), 0.05) + 0.95 * np.eye(3)
    assert not np.allclose(m.confusion_prior_, fixed)
    m.save(tmp_path / "s.npz")
    np.testing.assert_array_equal(PairwiseBayesModel.load(tmp_path / "s.npz").confusion_prior_, m.confusion_prior_)
    assert np.allclose(PairwiseBayesModel(n_particles=20, n_refine=0, rng=0).fit(table).confusion_prior_, fixed)
