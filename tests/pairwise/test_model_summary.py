"""The on-demand bias summary of PairwiseBayesModel.posterior (the judges' batch posterior)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from voirdire.pairwise import PairwiseBayesModel, simulate_pairwise
from voirdire.pairwise._model import _concat_tables


def _logsm(u0, u1, u2):
    mx = np.maximum(np.maximum(u0, u1), u2)
    lz = mx + np.log(np.exp(u0 - mx) + np.exp(u1 - mx) + np.exp(u2 - mx))
    return np.stack([u0 - lz, u1 - lz, u2 - lz])


def _brute_log_posterior(table, confusion, prior, x):
    """log p(beta, delta, logit a | table) + const of one judge, by a dense 2-D grid over each pair's
    (theta, tau) (the model's 5 x 5 adaptive Gauss-Hermite rule is not used): prior N(m, 1/p) per
    coordinate, the judge's labels ``softmax(a theta + s beta, a tau + delta, -(a theta + s beta))``
    (s = +1 shown AB, -1 BA), the humans through the latent verdict, ``sum_k pi_k(theta, tau) prod_h
    C_h[k, y_h]``; plus the log prior N(0, 1), N(0, 1), uniform a on [0, 1] (with the logit's Jacobian)."""
    beta, delta, xa = x
    a = 1.0 / (1.0 + np.exp(-xa))
    m_t, p_t, m_a, p_a = prior
    T, A = np.meshgrid(m_t + np.linspace(-7, 7, 101) / np.sqrt(p_t), m_a + np.linspace(-7, 7, 101) / np.sqrt(p_a),
                       indexing="ij")
    logprior = -0.5 * p_t * (T - m_t) ** 2 - 0.5 * p_a * (A - m_a) ** 2
    logprior -= np.log(np.exp(logprior).sum())
    lpi = _logsm(T, A, -T)                                       # (3, G, G)
    ab, ba = _logsm(a * T + beta, a * A + delta, -(a * T + beta)), _logsm(a * T - beta, a * A + delta, -(a * T - beta))
    pair, judge = table.label_pair, table.roles[table.rater_idx] == "judge"
    hpos = np.array([list(table.humans).index(str(r)) if k == "human" else -1 for r, k in zip(table.raters, table.roles)])
    logL = np.zeros((table.n_pairs, 3))
    g = np.repeat(logprior[None], table.n_pairs, 0)
    for p, r, y, o, j in zip(pair, table.rater_idx, table.verdicts, table.orders, judge):
        if j:
            g[p] += (ab if o == 0 else ba)[int(y)]
        else:
            logL[p] += np.log(confusion[hpos[r], :, int(y)])
    mix = np.log(np.einsum("kxy,pk->pxy", np.exp(lpi), np.exp(logL)))
    g = g + mix
    top = g.max((1, 2))
    total = (top + np.log(np.exp(g - top[:, None, None]).sum((1, 2)))).sum()
    return total - 0.5 * beta ** 2 - 0.5 * delta ** 2 + np.log(a * (1 - a))


def test_summary_is_the_mode_and_curvature_of_the_batch_posterior():
    """posterior()'s beta (mean, sd) under the default judge model equals the mode and the inverse-Hessian sd
    of the judge's batch log posterior, computed here by brute force (a 141 x 141 grid per pair, scipy's
    BFGS, a central-difference Hessian at step 1e-3), at the humans' confusions and pair prior of the
    summary's refine sweeps."""
    table, _ = simulate_pairwise(40, biases=[0.6], reliabilities=[0.7], tie_offsets=[-0.5], rng=3)
    model = PairwiseBayesModel(n_particles=30, rng=0).fit(table)
    post = model.posterior()
    assert not post.bias_interval_optimistic.any()
    cal = model._summary_model(_concat_tables(model._seen))
    conf, prior = cal.confusion_, cal._pair_prior

    def f(x):
        return -_brute_log_posterior(table, conf, prior, x)

    res = minimize(f, np.zeros(3), method="BFGS")
    x0, h = res.x, 1e-3
    H = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            ei, ej = np.eye(3)[i] * h, np.eye(3)[j] * h
            H[i, j] = (f(x0 + ei + ej) - f(x0 + ei - ej) - f(x0 - ei + ej) + f(x0 - ei - ej)) / (4 * h * h)
    sd = np.sqrt(np.linalg.inv(H)[0, 0])
    # seen: mode 0.549 against 0.553 (0.02 sd), sd 0.164 against 0.165 (0.6%)
    assert post.bias_mean[0] == pytest.approx(x0[0], abs=0.1 * sd)
    assert post.bias_sd[0] == pytest.approx(sd, rel=0.05)
    assert post.bias_high[0] - post.bias_low[0] == pytest.approx(2 * 1.959964 * post.bias_sd[0], rel=1e-6)



def test_summary_derivatives_are_those_of_the_batch_posterior():
    """The summary's Newton steps read the batch log posterior's gradient and Hessian from one pass
    (``_batch_derivatives``, the quadrature's nodes held in place): its value is ``_batch_logpost``'s at the
    same point and its derivatives are central differences of ``_batch_logpost`` (step 1e-4), cross-judge
    entries included; the nodes move with the point only through the quadrature's error (seen: 1.4e-4 of the
    largest Hessian entry, 0.01-0.03 on gradient entries of 6-29)."""
    table, _ = simulate_pairwise(150, biases=[0.6, -0.2], reliabilities=[0.7, 1.0], tie_offsets=[-0.5, 0.0], rng=3)
    model = PairwiseBayesModel(n_particles=20, n_refine=1, rng=0).fit(table)
    cal = model._summary_model(table)
    coords = cal._judge_coords()
    wm = cal._wmat()
    means = tuple((wm * v).sum(0, keepdims=True) for v in (cal._beta, cal._delta, cal._slope))
    X = cal._to_free(coords)
    x0 = np.array([(wm[:, j] * X[:, c]).sum() for c, (j, _) in enumerate(coords)]) + 0.05
    f, grad, hess = cal._batch_derivatives(table, coords, x0, means)
    D, h = len(coords), 1e-4
    E = np.eye(D) * h
    pts = [x0] + [x0 + s * E[i] for i in range(D) for s in (1, -1)]
    pts += [x0 + s1 * E[i] + s2 * E[k] for i in range(D) for k in range(i + 1, D) for s1 in (1, -1) for s2 in (1, -1)]
    F = cal._batch_logpost(table, coords, np.array(pts), means)[0]
    assert f == pytest.approx(F[0], rel=1e-12)
    g_fd = (F[1:1 + 2 * D:2] - F[2:2 + 2 * D:2]) / (2 * h)
    H_fd = np.diag((F[1:1 + 2 * D:2] - 2 * F[0] + F[2:2 + 2 * D:2]) / h ** 2)
    o = 1 + 2 * D
    for i in range(D):
        for k in range(i + 1, D):
            H_fd[i, k] = H_fd[k, i] = (F[o] - F[o + 1] - F[o + 2] + F[o + 3]) / (4 * h * h)
            o += 4
    np.testing.assert_allclose(grad, g_fd, rtol=0, atol=0.05)
    np.testing.assert_allclose(hess, H_fd, rtol=0, atol=2e-3 * np.abs(H_fd).max())
    assert np.abs(hess[:3, 3:]).max() > 0.1          # the judges are coupled through the pairs

def test_summary_is_computed_once_and_leaves_the_model_as_it_was():
    """posterior() reads the batch summary without drawing a random number or changing the state: a stream
    continued after it is the stream continued without it; the summary is cached until new pairs arrive."""
    table, _ = simulate_pairwise(128, biases=[0.5, -0.2], reliabilities=[0.7, 1.0], tie_offsets=[-0.5, 0.0], rng=4)
    more, _ = simulate_pairwise(64, biases=[0.5, -0.2], reliabilities=[0.7, 1.0], tie_offsets=[-0.5, 0.0], rng=5)
    kw = dict(n_particles=30, n_refine=1, rng=0)
    a, b = PairwiseBayesModel(**kw).fit(table), PairwiseBayesModel(**kw).fit(table)
    pa = a.posterior()
    assert a._summary is not None and a.posterior(credible_level=0.9).bias_mean is not pa.bias_mean
    np.testing.assert_array_equal(a.posterior(credible_level=0.9).bias_mean, pa.bias_mean)
    assert a.posterior(credible_level=0.9).bias_high[0] < pa.bias_high[0]
    a.partial_fit(more)
    b.partial_fit(more)
    assert a._summary is None
    np.testing.assert_array_equal(a.particles_[0], b.particles_[0])
    np.testing.assert_array_equal(a.posterior().bias_mean, b.posterior().bias_mean)
    assert not np.array_equal(a.posterior().bias_mean, pa.bias_mean)


def test_summary_over_a_stream_in_batches_equals_one_table():
    """The stored batches are joined (``_concat_tables``): a stream split at a multiple of ``batch_size`` has the
    state of the uninterrupted run, and so the same summary."""
    table, _ = simulate_pairwise(128, biases=[0.6, 0.0], reliabilities=[0.5, 1.0], tie_offsets=[-1.0, 0.0], rng=6)
    kw = dict(n_particles=30, n_refine=0, batch_size=32, rng=1)
    whole = PairwiseBayesModel(**kw).fit(table)
    parts = PairwiseBayesModel(**kw)
    for t in table.iter_batches(64):
        parts.partial_fit(t)
    np.testing.assert_array_equal(parts.particles_[0], whole.particles_[0])
    pw, pp = whole.posterior(), parts.posterior()
    np.testing.assert_allclose(pp.bias_mean, pw.bias_mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(pp.bias_sd, pw.bias_sd, rtol=0, atol=1e-12)
    assert not pp.bias_interval_optimistic.any()


def test_without_every_pair_the_particles_are_read_and_marked(tmp_path):
    """store_items=False keeps no pair, a loaded state has lost its earlier pairs: the filter's intervals then, marked
    optimistic; the paper's judge model reads its particles unmarked."""
    table, _ = simulate_pairwise(60, biases=[0.5, 0.0], rng=2)
    flat = PairwiseBayesModel(n_particles=20, n_refine=0, store_items=False, rng=0).fit(table)
    post = flat.posterior()
    assert post.bias_interval_optimistic.all()
    np.testing.assert_array_equal(post.bias_mean, flat.bias_mean_)
    m = PairwiseBayesModel(n_particles=20, n_refine=0, rng=0).fit(table)
    assert not m.posterior().bias_interval_optimistic.any()
    m.save(tmp_path / "s.npz")
    loaded = PairwiseBayesModel.load(tmp_path / "s.npz")
    assert loaded.posterior().bias_interval_optimistic.all()
    assert loaded.partial_fit(simulate_pairwise(10, biases=[0.5, 0.0], rng=3)[0]).posterior().bias_interval_optimistic.all()
    paper = PairwiseBayesModel(n_particles=20, n_refine=0, judge_reliability=False, judge_ties=False, rng=0).fit(table)
    pp = paper.posterior()
    assert not pp.bias_interval_optimistic.any() and paper._summary is None
    np.testing.assert_array_equal(pp.bias_mean, paper.bias_mean_)


@pytest.mark.statistical
def test_default_bias_intervals_cover_planted_biases():
    """95% intervals of beta under the default model cover the truth: 60 streams x 2 judges of 300 pairs drawn from
    the default judge model (beta 0.8 / -0.3, reliabilities 0.5 / 1, tie offsets -1 / 0; seeds 7000 + s, not the
    bench's 2000 + s), 100 particles.

    120 intervals: at the nominal rate 0.95 fewer than 109 covering has probability 0.017; the particle filter's
    own intervals (85% on the bench's streams) would reach 109 with probability 0.042."""
    hits = []
    for s in range(60):
        table, truth = simulate_pairwise(300, biases=[0.8, -0.3], reliabilities=[0.5, 1.0], tie_offsets=[-1.0, 0.0],
                                         rng=7000 + s)
        post = PairwiseBayesModel(n_particles=100, rng=s).fit(table).posterior()
        hits.extend(((post.bias_low <= truth.biases) & (truth.biases <= post.bias_high)).tolist())
    assert sum(hits) >= 109, sum(hits)
