"""PairwiseBayesModel: the Newton kernel, streaming exactness, save/load, recovery of known parameters."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from voirdire.data import PairwiseTable
from voirdire.exceptions import ConvergenceWarning, InvalidParameterError, SchemaError
from voirdire.pairwise import DEFAULT_CONFUSIONS, PairwiseBayesModel, PairwisePosterior, entropy, simulate_pairwise
from voirdire.pairwise._kernel import human_mixture, judge_expectations, local_map, mix_humans, objective, warm_start


def _problem(seed, B=7, M=5, K=4):
    rng = np.random.default_rng(seed)
    shift = rng.normal(0, 0.7, (M, K))
    n = rng.integers(0, 3, (B, K)).astype(float)
    nA = np.minimum(rng.integers(0, 3, (B, K)), n)
    nT = np.minimum(rng.integers(0, 2, (B, K)), n - nA)
    d = nA - (n - nA - nT)
    logL = np.log(rng.dirichlet([1, 1, 1], B)) * rng.integers(0, 3, (B, 1))
    return shift, n, d, nT.astype(float), logL


def _direct(theta, tau, shift_m, n, d, nt, logL, tshift_m=None, slope_m=None):
    """The objective written out label by label (independent of the kernel's algebra); the judge's
    logits are (a theta + c, a tau + e, -(a theta + c)) with reliability a = ``slope_m`` (default 1,
    the paper's judge), position shift c = ``shift_m`` and tie shift e = ``tshift_m`` (default 0)."""
    slope_m = np.ones(len(n)) if slope_m is None else slope_m
    tshift_m = np.zeros(len(n)) if tshift_m is None else tshift_m
    u = np.array([theta, tau, -theta])
    logpi = u - np.logaddexp.reduce(u)
    f = -0.5 * (theta ** 2 + tau ** 2) + np.logaddexp.reduce(logpi + logL)
    for k in range(len(n)):
        a = slope_m[k] * theta + shift_m[k]
        v = np.array([a, slope_m[k] * tau + tshift_m[k], -a])
        lp = v - np.logaddexp.reduce(v)
        nA = (n[k] + d[k] - nt[k]) / 2
        nB = n[k] - nt[k] - nA
        f += nA * lp[0] + nt[k] * lp[1] + nB * lp[2]
    return f


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_objective_matches_direct_formula_and_derivatives(seed):
    shift, n, d, nt, logL = _problem(seed)
    rng = np.random.default_rng(seed + 10)
    th = rng.normal(0, 1, (7, 5))
    ta = rng.normal(0, 1, (7, 5))
    f, g_t, g_a, h_tt, h_ta, h_aa, *_ = objective(th, ta, shift, n, d, nt, logL)
    for b, m in [(0, 0), (3, 4), (6, 2)]:
        fd = _direct(th[b, m], ta[b, m], shift[m], n[b], d[b], nt[b], logL[b])
        assert f[b, m] == pytest.approx(fd, abs=1e-10)
        eps = 1e-6
        ft = (_direct(th[b, m] + eps, ta[b, m], shift[m], n[b], d[b], nt[b], logL[b]) - fd) / eps
        fa = (_direct(th[b, m], ta[b, m] + eps, shift[m], n[b], d[b], nt[b], logL[b]) - fd) / eps
        assert g_t[b, m] == pytest.approx(ft, abs=1e-4) and g_a[b, m] == pytest.approx(fa, abs=1e-4)
    # Hessian by differencing the analytic gradient
    e = 1e-6
    _, gt2, ga2, *_ = objective(th + e, ta, shift, n, d, nt, logL)
    np.testing.assert_allclose((gt2 - g_t) / e, h_tt, atol=1e-4)
    np.testing.assert_allclose((ga2 - g_a) / e, h_ta, atol=1e-4)
    _, gt3, ga3, *_ = objective(th, ta + e, shift, n, d, nt, logL)
    np.testing.assert_allclose((ga3 - g_a) / e, h_aa, atol=1e-4)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_objective_with_reliability_matches_direct_formula(seed):
    shift, n, d, nt, logL = _problem(seed)
    rng = np.random.default_rng(seed + 20)
    slope = rng.uniform(-0.5, 2.5, shift.shape)
    tsh = rng.normal(0, 1, shift.shape)
    th = rng.normal(0, 1, (7, 5))
    ta = rng.normal(0, 1, (7, 5))
    # reliability 1 everywhere is the paper's judge exactly
    base = objective(th, ta, shift, n, d, nt, logL, tshift=tsh)
    ones = objective(th, ta, shift, n, d, nt, logL, tshift=tsh, slope=np.ones_like(shift))
    for x, y in zip(base[:9], ones[:9]):
        np.testing.assert_allclose(x, y, atol=1e-10)
    f, g_t, g_a, h_tt, h_ta, h_aa, *_ = objective(th, ta, shift, n, d, nt, logL, tshift=tsh, slope=slope)
    for b, m in [(0, 0), (3, 4), (6, 2)]:
        fd = _direct(th[b, m], ta[b, m], shift[m], n[b], d[b], nt[b], logL[b], tsh[m], slope[m])
        assert f[b, m] == pytest.approx(fd, abs=1e-10)
    e = 1e-6
    _, gt2, ga2, *_ = objective(th + e, ta, shift, n, d, nt, logL, tshift=tsh, slope=slope)
    ff = objective(th + e, ta, shift, n, d, nt, logL, tshift=tsh, slope=slope)[0]
    np.testing.assert_allclose((ff - f) / e, g_t, atol=1e-4)
    np.testing.assert_allclose((gt2 - g_t) / e, h_tt, atol=1e-4)
    np.testing.assert_allclose((ga2 - g_a) / e, h_ta, atol=1e-4)
    f3, gt3, ga3, *_ = objective(th, ta + e, shift, n, d, nt, logL, tshift=tsh, slope=slope)
    np.testing.assert_allclose((f3 - f) / e, g_a, atol=1e-4)
    np.testing.assert_allclose((ga3 - g_a) / e, h_aa, atol=1e-4)
    # the Newton solver reaches the same optimum as BFGS on the direct formula
    w = np.full(5, 0.2)
    th0, ta0 = warm_start(shift, w, n, d, nt, logL, tshift=tsh, slope=slope)
    thm, tam, fm, *_rest, conv = local_map(th0, ta0, shift, n, d, nt, logL, tol=1e-9, tshift=tsh, slope=slope)
    assert conv
    for b in range(7):
        r = minimize(lambda x: -_direct(x[0], x[1], shift[1], n[b], d[b], nt[b], logL[b], tsh[1], slope[1]),
                     [0.0, 0.0], method="BFGS", options={"gtol": 1e-10})
        assert thm[b, 1] == pytest.approx(r.x[0], abs=1e-5) and tam[b, 1] == pytest.approx(r.x[1], abs=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_local_map_equals_scipy(seed):
    shift, n, d, nt, logL = _problem(seed)
    w = np.full(5, 0.2)
    th0, ta0 = warm_start(shift, w, n, d, nt, logL)
    th, ta, f, logdet, q, it, conv = local_map(th0, ta0, shift, n, d, nt, logL, tol=1e-9)
    assert conv and it < 30
    for b in range(7):
        for m in (0, 4):
            r = minimize(lambda x: -_direct(x[0], x[1], shift[m], n[b], d[b], nt[b], logL[b]), [0.0, 0.0],
                         method="BFGS", options={"gtol": 1e-10})
            assert th[b, m] == pytest.approx(r.x[0], abs=1e-5)
            assert ta[b, m] == pytest.approx(r.x[1], abs=1e-5)
            assert f[b, m] == pytest.approx(-r.fun, abs=1e-9)
    np.testing.assert_allclose(q.sum(-1), 1.0)


def test_local_map_survives_extreme_evidence():
    # 200 unanimous A votes from one channel with a huge shift: damped steps must not overflow
    n = np.array([[200.0]])
    d = np.array([[200.0]])
    nt = np.array([[0.0]])
    th, ta, f, logdet, q, it, conv = local_map(np.zeros((1, 2)), np.zeros((1, 2)), np.array([[-30.0], [30.0]]),
                                               n, d, nt, np.zeros((1, 3)))
    assert conv and np.isfinite(f).all() and np.isfinite(logdet).all()


def test_shapes_and_posterior_contract():
    table, truth = simulate_pairwise(120, rng=0)
    m = PairwiseBayesModel(n_particles=50, rng=0).fit(table)
    post = m.posterior()
    assert isinstance(post, PairwisePosterior)
    assert post.verdict_proba.shape == (120, 3) and post.n_items_seen == 120 == m.n_items_seen_
    np.testing.assert_allclose(post.verdict_proba.sum(1), 1.0)
    np.testing.assert_allclose(post.entropy, entropy(post.verdict_proba))
    assert (post.entropy <= np.log(3) + 1e-12).all()
    assert post.confusion.shape == (3, 3, 3) and np.allclose(post.confusion.sum(-1), 1.0)
    assert (post.bias_low <= post.bias_mean).all() and (post.bias_mean <= post.bias_high).all()
    assert post.ess_history.shape[1] == 2 and post.ess_history[-1, 0] == 120
    assert set(post.to_frame().columns) == {"pair", "p_A", "p_T", "p_B", "entropy", "theta", "tau"}
    assert len(post.to_frame("judges")) == 2 and len(post.to_frame("humans")) == 27
    assert post.most_uncertain(5)["entropy"].is_monotonic_decreasing
    assert post.most_uncertain(0).empty
    with pytest.raises(InvalidParameterError, match="'k' parameter"):
        post.most_uncertain(-1)  # was DataFrame.head(-1): every pair but one
    d = post.to_dict()
    assert d["judges"] == ["judge_1", "judge_2"] and len(d["verdict_proba"]) == 120
    # dirichlet counts: prior + one unit of mass per human label (soft update); the prior is the
    # empirical-Bayes pooled one after the refine sweeps, the fixed one with confusion_prior="fixed"
    np.testing.assert_allclose(post.dirichlet_counts.sum((1, 2)), m.confusion_prior_.sum() + 120)
    fixed = PairwiseBayesModel(n_particles=20, confusion_prior="fixed", rng=0).fit(table)
    np.testing.assert_allclose(fixed.dirichlet_counts_.sum((1, 2)), 3 * (1.0 + 2 * 0.05) + 120)
    with pytest.raises(InvalidParameterError, match="'kind' parameter"):
        post.to_frame("pairs")


def test_hard_update_adds_whole_counts():
    table, _ = simulate_pairwise(60, rng=2)
    m = PairwiseBayesModel(n_particles=30, update="hard", rng=0).fit(table)
    extra = m.dirichlet_counts_ - m.confusion_prior_
    np.testing.assert_allclose(extra, np.round(extra))
    assert extra.sum() == 180


def test_streaming_resume_is_exact(tmp_path):
    table, _ = simulate_pairwise(320, rng=3)
    kw = dict(n_particles=60, batch_size=32, n_refine=0, rng=7)
    full = PairwiseBayesModel(**kw).fit(table)
    a = PairwiseBayesModel(**kw)
    a.partial_fit(table.select(pairs=slice(0, 160)))
    a.save(tmp_path / "state.npz")
    b = PairwiseBayesModel.load(tmp_path / "state.npz")
    a.partial_fit(table.select(pairs=slice(160, 320)))
    b.partial_fit(table.select(pairs=slice(160, 320)))
    for m in (a, b):
        np.testing.assert_array_equal(m.posterior().verdict_proba, full.posterior().verdict_proba)
        np.testing.assert_array_equal(m.particles_[0], full.particles_[0])
        np.testing.assert_array_equal(m.dirichlet_counts_, full.dirichlet_counts_)
        assert m.n_resamples_ == full.n_resamples_ and m.n_items_seen_ == 320
    np.testing.assert_array_equal(b.ess_history_, full.ess_history_)
    assert list(b.posterior().pairs) == list(full.posterior().pairs)


def test_load_rejects_foreign_files(tmp_path):
    p = tmp_path / "x.npz"
    np.savez(p, meta=np.array('{"format": "other"}'))
    with pytest.raises(SchemaError, match="unknown state format"):
        PairwiseBayesModel.load(p)
    (tmp_path / "y.npz").write_text("nope")
    with pytest.raises(SchemaError, match="not a saved PairwiseBayesModel"):
        PairwiseBayesModel.load(tmp_path / "y.npz")


@pytest.mark.slow
def test_batching_is_close_to_one_pair_at_a_time():
    table, _ = simulate_pairwise(300, rng=4)
    one = PairwiseBayesModel(n_particles=100, batch_size=1, rng=0).fit(table)
    many = PairwiseBayesModel(n_particles=100, batch_size=64, rng=0).fit(table)
    # frozen confusion matrices within a pass (and the jitter at its end) are the only approximations:
    # close, not equal. Seeds 0-3: biases 0.017-0.125 apart (the cut filter before issue 30: 0.017-0.072;
    # the posterior sd is about 0.1 at 300 pairs), confusions 0.009-0.016, verdicts agree 96-98%
    assert np.abs(one.bias_mean_ - many.bias_mean_).max() < 0.15
    assert np.abs(one.confusion_ - many.confusion_).max() < 0.05
    agree = (one.predict_proba().argmax(1) == many.predict_proba().argmax(1)).mean()
    assert agree > 0.95


def test_read_only_passes_do_not_change_state():
    table, _ = simulate_pairwise(100, rng=5)
    m = PairwiseBayesModel(n_particles=40, rng=0).fit(table)
    before = (m.particles_[0].copy(), m.dirichlet_counts_.copy(), m.n_items_seen_)
    p = m.predict_proba(table)
    s = m.score_samples(table)
    h = m.predict_human_proba(table)
    assert p.shape == h.shape == (100, 3) and s.shape == (100,) and (s < 0).all()
    np.testing.assert_allclose(h, p @ m.mean_confusion())
    np.testing.assert_array_equal(before[0], m.particles_[0])
    np.testing.assert_array_equal(before[1], m.dirichlet_counts_)
    assert before[2] == m.n_items_seen_


def test_laplace_score_is_a_normalised_predictive():
    # one judge label, no human, no bias: p(y) = E_prior[pi_y]; summed over y it must be ~1
    m = PairwiseBayesModel(n_particles=1, learn_bias=False, rng=0)
    m.partial_fit(PairwiseTable.from_arrays(pair=["x"], rater=["g"], verdict=["A"], order=["AB"], judges=["g"]))
    total = 0.0
    for v in "ATB":
        t = PairwiseTable.from_arrays(pair=["y"], rater=["g"], verdict=[v], order=["AB"], judges=["g"])
        total += float(np.exp(m.score(t)))
    assert total == pytest.approx(1.0, abs=0.03)


def test_mapping_batches_and_new_raters_mid_stream():
    m = PairwiseBayesModel(n_particles=20, rng=0)
    m.partial_fit({"pair": [1, 1], "rater": ["h", "g"], "verdict": ["A", "A"], "order": [None, "AB"],
                   "judges": ["g"]})
    m.partial_fit({"pair": [2, 2], "rater": ["h2", "g2"], "verdict": ["B", "T"], "order": [None, "BA"],
                   "judges": ["g2"]})
    assert m.humans_ == ["h", "h2"] and m.judges_ == ["g", "g2"] and m.particles_[0].shape == (20, 2)
    with pytest.raises(SchemaError, match="was a judge earlier"):
        m.partial_fit({"pair": [3], "rater": ["g"], "verdict": ["A"]})


@pytest.mark.parametrize("kwargs, match", [
    ({"n_particles": 0}, "'n_particles' parameter of PairwiseBayesModel must be an integer >= 1"),
    ({"ess_threshold": 1.5}, "'ess_threshold' parameter"),
    ({"jitter": -1.0}, "'jitter' parameter of PairwiseBayesModel must be a finite float >= 0"),
    ({"update": "mean"}, r"'update' parameter of PairwiseBayesModel must be one of \['hard', 'soft'\]"),
    ({"lambda_off": 0.0}, "'lambda_off' parameter"),
    ({"rng": "seed"}, "'rng' parameter"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        PairwiseBayesModel(**kwargs)


def test_many_judges_warn():
    table, _ = simulate_pairwise(20, biases=np.zeros(17), rng=0)
    with pytest.warns(ConvergenceWarning, match="17 judges share one system of 20 particles"):
        PairwiseBayesModel(n_particles=20, rng=0).fit(table)


def test_bad_batch():
    with pytest.raises(InvalidParameterError, match="PairwiseTable or a mapping"):
        PairwiseBayesModel().partial_fit([1, 2, 3])


# ------------------------------------------------------------------ statistical recovery
#: the paper's judge model (no reliability, no tie offset): the streams below are drawn from it
PAPER = dict(judge_reliability=False, judge_ties=False)
FIVE = np.stack([DEFAULT_CONFUSIONS[0], DEFAULT_CONFUSIONS[0], DEFAULT_CONFUSIONS[1], DEFAULT_CONFUSIONS[1],
                 DEFAULT_CONFUSIONS[2]])


@pytest.mark.statistical
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_recovery_of_biases_and_confusions(seed):
    """2,000 pairs, 5 humans (2 expert, 2 average, 1 novice), 2 judges in both orders."""
    table, truth = simulate_pairwise(2000, confusions=FIVE, biases=[0.8, -0.3], rng=seed)
    post = PairwiseBayesModel(rng=seed, **PAPER).fit(table).posterior()
    assert np.abs(post.bias_mean - truth.biases).max() < 0.1
    frob = np.linalg.norm(post.confusion - truth.confusions, axis=(1, 2))
    assert frob.max() < 0.1, frob
    # the interval is honest about the judge's bias
    assert ((post.bias_low <= truth.biases + 0.05) & (truth.biases - 0.05 <= post.bias_high)).all()


@pytest.mark.statistical
def test_single_order_cannot_identify_bias():
    # response A is systematically better (theta has mean 0.5): one order cannot tell that from a bias
    table, truth = simulate_pairwise(1000, biases=[0.8], theta_mean=0.5, rng=21)
    ab_only = table.select(label_mask=table.orders != 1)
    swap = PairwiseBayesModel(n_particles=150, rng=0, **PAPER).fit(table).posterior()
    one = PairwiseBayesModel(n_particles=150, rng=0, **PAPER).fit(ab_only).posterior()
    assert abs(swap.bias_mean[0] - 0.8) < 0.15
    # without the swap the bias is confounded with the pairs' quality: badly off (seeds 0-3: one order
    # 0.21-0.29 off, the swap 0.015-0.026, posterior sd about 0.05; the filter that cut each step at a
    # resampling, before issue 30, gave 0.35-0.40)
    assert abs(one.bias_mean[0] - 0.8) > 0.15


@pytest.mark.statistical
def test_single_order_bias_under_the_default_model():
    """The same stream under the default model (empirical-Bayes pair prior, judge reliability and
    tie offset). Its one-order estimate is less far off (0.965 for 0.8, where the paper's judge
    gives 1.19) for a reason that is not the swap: the humans label the same pairs without a
    position bias, and the empirical-Bayes prior learns from them that A is better on average
    (theta mean 0.29 from the AB-only stream, 0.44 with the swap, truth 0.5), so part of the
    judge's lean to A is explained by quality (with the fixed N(0, I) prior, ``pair_prior="standard"``,
    the default judge gives 1.26: the pairs' (theta, tau) are fitted to the prior and the judges, the
    humans enter only through the latent verdict and the learned prior). What is left of the confounding shows as a wider
    interval and a reliability no longer pinned down (a_j and beta_j trade off: with one order the
    data fix mainly a_j * mean(theta) + beta_j). Without the humans nothing but the prior pins
    mean(theta), and the interval widens again. The identification through the humans rests on
    the humans having no position bias of their own (docs/pairwise.md, Limitations)."""
    table, truth = simulate_pairwise(1000, biases=[0.8], theta_mean=0.5, rng=21)
    ab_only = table.select(label_mask=table.orders != 1)
    judges_only = ab_only.select(raters=list(ab_only.judges))
    fits = [PairwiseBayesModel(n_particles=150, rng=0).fit(t).posterior() for t in (table, ab_only, judges_only)]
    err = [abs(p.bias_mean[0] - 0.8) for p in fits]
    width = [p.bias_high[0] - p.bias_low[0] for p in fits]
    rel_width = [p.reliability_high[0] - p.reliability_low[0] for p in fits]
    # measured (seed 0): errors 0.049 / 0.175 / 0.200, widths 0.18 / 0.19 / 0.41, reliability widths 0.22 / 0.43 /
    # 0.69; seeds 0-3: width[1] / width[0] 1.06-1.45 (the filter that cut each step at a resampling: 1.01-2.08)
    assert err[0] < 0.1
    assert err[0] < err[1] < err[2]
    # one order: still confounded, pulled towards A (the swap's interval is ~0.05 per sd, so > 2 sd off)
    assert fits[1].bias_mean[0] - 0.8 > 0.1
    # and the posterior says it knows less: wider bias and reliability intervals, wider still without humans
    assert width[0] < width[1] < width[2]
    assert rel_width[0] < rel_width[1] < rel_width[2]


@pytest.mark.statistical
def test_profile_likelihood_attenuates_bias():
    table, truth = simulate_pairwise(2000, confusions=FIVE, biases=[0.8, -0.3], rng=31)
    prof = PairwiseBayesModel(laplace=False, rng=0, **PAPER).fit(table).bias_mean_
    lap = PairwiseBayesModel(laplace=True, rng=0, **PAPER).fit(table).bias_mean_
    assert abs(lap[0] - 0.8) < abs(prof[0] - 0.8)
    assert prof[0] < 0.8


@pytest.mark.statistical
def test_judge_tie_offsets_are_recovered():
    """Extension: a judge that rarely says tie (delta = -1.5) and one that often does (+0.5)."""
    table, truth = simulate_pairwise(2000, confusions=FIVE, biases=[0.8, -0.3], tie_offsets=[-1.5, 0.5], rng=41)
    # the stream is drawn from the paper's N(0, I) pair prior, which the model is given here: with the
    # empirical-Bayes prior (the default) the learned tau mean and the offsets share the tie rate
    # (offset -1.29 for -1.5 on this seed, docs/pairwise.md)
    plain = PairwiseBayesModel(pair_prior="standard", rng=0, **PAPER).fit(table).posterior()
    ties = PairwiseBayesModel(judge_ties=True, judge_reliability=False, pair_prior="standard",
                              rng=0).fit(table).posterior()
    assert np.abs(ties.tie_offset_mean - truth.tie_offsets).max() < 0.2
    assert np.abs(ties.bias_mean - truth.biases).max() < 0.1
    # the paper's model, misspecified here, is further off on the biases
    assert np.abs(plain.bias_mean - truth.biases).max() > np.abs(ties.bias_mean - truth.biases).max()
    np.testing.assert_array_equal(plain.tie_offset_mean, [0.0, 0.0])


def test_judge_ties_resume_is_exact(tmp_path):
    table, _ = simulate_pairwise(128, rng=6)
    kw = dict(n_particles=40, batch_size=32, judge_ties=True, n_refine=0, rng=3)
    full = PairwiseBayesModel(**kw).fit(table)
    a = PairwiseBayesModel(**kw).partial_fit(table.select(pairs=slice(0, 64)))
    a.save(tmp_path / "s.npz")
    b = PairwiseBayesModel.load(tmp_path / "s.npz").partial_fit(table.select(pairs=slice(64, 128)))
    np.testing.assert_array_equal(b.posterior().tie_offset_mean, full.posterior().tie_offset_mean)
    np.testing.assert_array_equal(b.predict_proba(), full.predict_proba())


@pytest.mark.parametrize("particles", ["joint", "per_judge"])
def test_judge_reliability_resume_is_exact(tmp_path, particles):
    table, _ = simulate_pairwise(128, reliabilities=[0.5, 1.0], rng=6)
    kw = dict(n_particles=40, batch_size=32, judge_ties=True, judge_reliability=True, n_refine=0,
              particles=particles, rng=3)
    full = PairwiseBayesModel(**kw).fit(table)
    a = PairwiseBayesModel(**kw).partial_fit(table.select(pairs=slice(0, 64)))
    a.save(tmp_path / "s.npz")
    b = PairwiseBayesModel.load(tmp_path / "s.npz").partial_fit(table.select(pairs=slice(64, 128)))
    assert b.judge_reliability
    np.testing.assert_array_equal(b.posterior().reliability_mean, full.posterior().reliability_mean)
    np.testing.assert_array_equal(b.predict_proba(), full.predict_proba())
    r = full.posterior()
    assert ((0.0 <= r.reliability_low) & (r.reliability_low <= r.reliability_mean)
            & (r.reliability_mean <= r.reliability_high) & (r.reliability_high <= 1.0)).all()


@pytest.mark.statistical
def test_bias_interval_coverage():
    """95% credible intervals of beta cover the truth: 30 streams x 2 judges (300 pairs, 100 particles).

    60 intervals at a true rate of 0.95: fewer than 51 covering has probability ~0.003."""
    hits = []
    for s in range(30):
        table, truth = simulate_pairwise(300, biases=[0.8, -0.3], rng=1000 + s)
        post = PairwiseBayesModel(n_particles=100, rng=s, **PAPER).fit(table).posterior()
        hits.extend(((post.bias_low <= truth.biases) & (truth.biases <= post.bias_high)).tolist())
    assert sum(hits) >= 51, sum(hits)


def _sparse_judges(n_judges, n_pairs, seed):
    """Many judges, each labelling a block of 40% of the stream that starts at a random point."""
    gen = np.random.default_rng(seed)
    b = gen.normal(0, 0.7, n_judges)
    t, _ = simulate_pairwise(n_pairs, biases=b, rng=seed)
    start = gen.integers(0, int(n_pairs * 0.6), n_judges)
    lp, r = t.label_pair, t.rater_idx
    jidx = np.maximum(r - 3, 0)
    keep = (t.roles[r] == "human") | ((lp >= start[jidx]) & (lp < start[jidx] + int(n_pairs * 0.4)))
    return t.select(label_mask=keep), b


@pytest.mark.statistical
@pytest.mark.filterwarnings("ignore:PairwiseBayesModel. 24 judges:voirdire.exceptions.ConvergenceWarning")
def test_per_judge_particles_with_many_judges():
    table, b = _sparse_judges(24, 600, 24)
    res = {}
    for mode in ("joint", "per_judge"):
        post = PairwiseBayesModel(n_particles=100, particles=mode, rng=0, **PAPER).fit(table).posterior()
        truth = b[[int(j.split("_")[1]) - 1 for j in post.judges]]
        res[mode] = (np.abs(post.bias_mean - truth).max(),
                     ((post.bias_low <= truth) & (truth <= post.bias_high)).mean())
    assert res["per_judge"][0] < 0.2 and res["per_judge"][1] >= 0.9
    assert res["joint"][0] > 2 * res["per_judge"][0]  # the joint filter degenerates here


@pytest.mark.slow
def test_per_judge_agrees_with_joint_for_two_judges(tmp_path):
    table, truth = simulate_pairwise(400, biases=[0.8, -0.3], rng=9)
    joint = PairwiseBayesModel(n_particles=100, rng=0).fit(table)
    per = PairwiseBayesModel(n_particles=100, particles="per_judge", rng=0).fit(table)
    assert np.abs(joint.bias_mean_ - per.bias_mean_).max() < 0.1
    assert (joint.predict_proba(table).argmax(1) == per.predict_proba(table).argmax(1)).mean() > 0.95
    assert per.particles_[1].shape == (100, 2) and np.allclose(per.particles_[1].sum(0), 1.0)
    # exact resume in per-judge mode too
    kw = dict(n_particles=50, batch_size=50, particles="per_judge", n_refine=0, rng=4)
    full = PairwiseBayesModel(**kw).fit(table)
    a = PairwiseBayesModel(**kw).partial_fit(table.select(pairs=slice(0, 200)))
    a.save(tmp_path / "s.npz")
    b = PairwiseBayesModel.load(tmp_path / "s.npz").partial_fit(table.select(pairs=slice(200, 400)))
    np.testing.assert_array_equal(b.predict_proba(), full.predict_proba())
    np.testing.assert_array_equal(b.bias_mean_, full.bias_mean_)
    s1, s2 = full.score_samples(table), b.score_samples(table)
    np.testing.assert_array_equal(s1, s2)


@pytest.mark.statistical
def test_judge_reliability_recovers_an_uninformative_judge():
    """A judge whose verdicts say nothing about the pair (a = 0) gets a reliability whose interval
    reaches 0; a paper's judge (a = 1) stays near 1."""
    table, truth = simulate_pairwise(1200, biases=[0.4, 0.6], reliabilities=[1.0, 0.0], rng=5)
    assert truth.reliabilities.tolist() == [1.0, 0.0]
    m = PairwiseBayesModel(n_particles=100, judge_reliability=True, judge_ties=True, n_refine=0, rng=0).fit(table)
    post = m.posterior()
    rel = post.to_frame("judges").set_index("judge")
    # judge 1's reliability (truth 1, the edge of the uniform prior's support): seeds 0-5 gave posterior means
    # 0.54-0.89 and lower ends 0.46-0.74 (100 particles; the filter that cut each step at a resampling: 0.53-0.77
    # and 0.45-0.67): well away from judge 2's
    assert rel.loc["judge_1", "reliability_mean"] > 0.5 and rel.loc["judge_1", "reliability_low"] > 0.4
    assert rel.loc["judge_2", "reliability_mean"] < 0.2 and rel.loc["judge_2", "reliability_low"] < 0.05
    # its position bias is still identified by the swap
    assert abs(post.bias_mean[1] - 0.6) < 0.2
    # the paper's judge model: every judge has reliability 1
    plain = PairwiseBayesModel(n_particles=20, n_refine=0, rng=0, **PAPER).fit(table).posterior()
    assert np.all(plain.reliability_mean == 1.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_judge_expectations_then_humans_equal_human_mixture(seed):
    """The judges-only half (once per distinct judge row) mixed with any humans' evidence gives
    human_mixture's per-pair results; logL=None gives the zeros' MAP (no human term)."""
    shift, n, d, nt, logL = _problem(seed)
    rng = np.random.default_rng(seed)
    tsh, slope = rng.normal(0, 0.5, shift.shape), rng.uniform(0, 1, shift.shape)
    prior = (0.3, 0.7, -0.4, 1.6)
    w = np.full(shift.shape[0], 1 / shift.shape[0])
    th0, ta0 = warm_start(shift, w, n, d, nt, None, tshift=tsh, prior=prior, slope=slope)
    th, ta, f, ld, q, _, conv = local_map(th0, ta0, shift, n, d, nt, None, tol=1e-10, tshift=tsh, prior=prior,
                                         slope=slope)
    z = local_map(th0, ta0, shift, n, d, nt, np.zeros_like(logL), tol=1e-10, tshift=tsh, prior=prior, slope=slope)
    assert conv and q is None
    np.testing.assert_allclose(th, z[0], atol=1e-9)
    np.testing.assert_allclose(f, z[2], atol=1e-9)
    ref = human_mixture(th, ta, shift, n, d, nt, logL, tshift=tsh, prior=prior, slope=slope)
    Epi, Emom, corr = judge_expectations(th, ta, shift, n, d, nt, tshift=tsh, prior=prior, slope=slope)
    assert not corr.any()
    for a, b in zip(mix_humans(Epi, Emom, logL), ref):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("particles", ["joint", "per_judge"])
def test_distinct_row_path_equals_the_per_pair_reference(particles):
    """The fast path (each distinct judge-label row solved once; read-only passes reduced over the
    particles per row) against the per-pair reference (``_reference``): same stream, same state."""
    table, _ = simulate_pairwise(60, biases=[0.8, -0.3], reliabilities=[0.6, 1.0], rng=3)
    fits = []
    for ref in (True, False):
        # Newton to 1e-9: each path's iterations end when all the problems it solves together have
        # converged, so at the default tol (1e-4) the two differ by up to ~1e-7
        m = PairwiseBayesModel(n_particles=20, particles=particles, n_refine=1, batch_size=16, tol=1e-9, rng=0)
        m._reference = ref
        m.fit(table)
        fits.append((m.bias_mean_, m.reliability_mean_, m.confusion_, m.predict_proba(), m.predict_proba(table),
                     m.score_samples(table), np.array(list(m.pair_prior_.values()))))
    for a, b in zip(*fits):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


@pytest.mark.filterwarnings("ignore::voirdire.exceptions.ConvergenceWarning")
def test_batch_move_on_the_distinct_row_path_equals_the_reference():
    """The batch move's log posterior (every pair's marginal likelihood per evaluation point) summed
    over distinct judge rows equals the per-pair reference's."""
    table, _ = simulate_pairwise(60, biases=[0.8, -0.3], reliabilities=[0.5, 1.0], rng=3)
    fits = []
    for ref in (True, False):
        m = PairwiseBayesModel(n_particles=20, batch_move=True, n_refine=1, batch_size=16, tol=1e-9, rng=0)
        m._reference = ref
        m.fit(table)
        fits.append((m.bias_mean_, m.reliability_mean_, np.array([m.move_ess_])))
    for a, b in zip(*fits):
        np.testing.assert_allclose(a, b, rtol=1e-8)


def test_judges_map_equals_local_map_without_humans():
    """The specialised judges-only Newton (judges_map) against local_map with logL=None (the
    reference): objective, MAP, log det and Hessian, with and without reliabilities and tie offsets."""
    from voirdire.pairwise._kernel import _JudgesObjective, judges_map

    rng = np.random.default_rng(5)
    for ties, rel in ((False, False), (True, False), (False, True), (True, True)):
        shift, n, d, nt, _ = _problem(int(rng.integers(100)))
        M, K = shift.shape
        tsh = rng.normal(0, 0.7, shift.shape) if ties else None
        slope = rng.uniform(0, 1, shift.shape) if rel else None
        prior = (0.2, 0.8, -0.3, 1.4)
        th, ta = rng.normal(0, 1, (len(n), M)), rng.normal(0, 1, (len(n), M))
        ref = objective(th, ta, shift, n, d, nt, None, tshift=tsh, prior=prior, slope=slope)
        got = _JudgesObjective(shift, n, d, nt, tshift=tsh, prior=prior, slope=slope, shape=th.shape)(th, ta)
        for a, b in zip(got, ref[:6]):
            np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-11)
        z = np.zeros_like(th)
        hess: list = []
        r1 = local_map(z, z, shift, n, d, nt, None, tol=1e-9, tshift=tsh, prior=prior, slope=slope, hessian=hess)
        r2 = judges_map(z, z, shift, n, d, nt, tol=1e-9, tshift=tsh, prior=prior, slope=slope)
        assert r1[6] and r2[6] and r1[5] == r2[5]
        for a, b in zip(r1[:4] + tuple(hess[0]), r2[:4] + tuple(r2[4])):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kw", [{}, PAPER])
def test_deferred_jitter_is_the_cut_filter_one_pair_at_a_time(kw):
    """With one pair a step the stream's resampled copies have no later pair to carry, so the
    deferred jitter (the default) is the filter that cuts the step at the resampling and recomputes
    (``_deferred_jitter=False``) draw for draw (with longer steps only the jitter's timing differs:
    the statistical recovery and coverage tests run on the default)."""
    table, _ = simulate_pairwise(80, biases=[0.8, -0.3], rng=4)
    fits = []
    for deferred in (True, False):
        m = PairwiseBayesModel(n_particles=40, batch_size=1, n_refine=0, rng=1, **kw)
        m._deferred_jitter = deferred
        m.fit(table)
        assert m.n_resamples_ > 3
        fits.append((m.particles_[0], m.particles_[1], m.predict_proba(), m.ess_history_, m.dirichlet_counts_,
                     np.array([m.n_resamples_])))
    for a, b in zip(*fits):
        np.testing.assert_array_equal(a, b)
