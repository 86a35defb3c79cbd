"""Active, cost-aware allocation (plan_active) and its draw."""

from __future__ import annotations

import math

import numpy as np
import pytest

from voirdire.estimation import draw_human_sample, dr_mean, plan_active
from voirdire.exceptions import InvalidParameterError


def _world(seed=0, n=1000):
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 1, n)
    noise = np.where(z > 0.5, 1.5, 0.2)  # the humans are unpredictable where z is high
    X = np.column_stack([z + rng.normal(0, 0.3, n), z + rng.normal(0, 0.3, n)])
    y = 3 + z + noise * rng.normal(0, 1, n)
    return X, y, z


def test_budget_is_spent_and_probabilities_follow_uncertainty_over_sqrt_cost():
    X, _, _ = _world()
    cost = np.where(np.arange(X.shape[0]) % 2 == 0, 1.0, 4.0)
    d = plan_active(X, budget=120, costs=cost, uncertainty="disagreement", floor=0.3)
    assert d.expected_cost == pytest.approx(120)
    q = 0.7 * d.table["uncertainty"] / d.table["uncertainty"].mean() + 0.3
    ratio = d.inclusion_prob / (q / np.sqrt(cost))
    assert np.ptp(ratio[d.inclusion_prob < 1]) < 1e-9  # pi = k q / sqrt(c) wherever not capped
    assert d.inclusion_prob.min() > 0


def test_floor_one_is_the_uniform_design():
    X, _, _ = _world()
    d = plan_active(X, budget=100, floor=1.0, uncertainty="disagreement")
    assert np.allclose(d.inclusion_prob, 0.1)
    assert d.variance_ratio == pytest.approx(1.0)


def test_capping_at_one():
    X, _, _ = _world(n=50)
    d = plan_active(X, budget=40, uncertainty="disagreement", floor=0.0)
    assert d.inclusion_prob.max() == 1.0 and d.expected_new_labels == pytest.approx(40)
    everything = plan_active(X, budget=100, uncertainty="disagreement")
    assert np.all(everything.inclusion_prob == 1.0) and "pays for every" in everything.note


def test_residual_model_from_a_pilot_finds_the_noisy_items():
    X, y, z = _world(1, n=2000)
    rng = np.random.default_rng(1)
    pilot = np.where(rng.random(y.size) < 0.05, y, np.nan)
    d = plan_active(X, budget=200, human_scores=pilot, pilot_prob=0.05, rng=0)
    assert d.uncertainty_source == "residual" and d.n_pilot == int(np.isfinite(pilot).sum())
    todo = ~np.isfinite(pilot)
    assert np.allclose(d.inclusion_prob, 0.05 + 0.95 * np.where(todo, d.draw_prob, d.inclusion_prob * 0 + (d.inclusion_prob - 0.05) / 0.95))
    assert np.all(d.draw_prob[~todo] == 0) and d.expected_new_labels == pytest.approx(200)
    hi, lo = d.draw_prob[todo & (z > 1)].mean(), d.draw_prob[todo & (z < 0)].mean()
    assert hi > 2 * lo
    assert d.variance_ratio < 0.9


def test_draw_records_probabilities_and_pilot():
    X, y, _ = _world(2, n=300)
    pilot = np.where(np.arange(300) < 30, y, np.nan)
    with pytest.raises(InvalidParameterError, match="needs 'pilot_prob'"):
        plan_active(X, budget=30, human_scores=pilot)
    d = plan_active(X, budget=30, human_scores=pilot, pilot_prob=0.1, rng=0)
    s = draw_human_sample(np.arange(300), d, rng=3)
    a = s.assignments
    assert list(a.columns) == ["item", "inclusion_prob", "selected", "uncertainty", "cost", "pilot"]
    assert a["selected"][:30].all() and np.allclose(a["inclusion_prob"], d.inclusion_prob)
    with pytest.raises(InvalidParameterError, match="has 300 items, not 10"):
        draw_human_sample(np.arange(10), d)


@pytest.mark.statistical
def test_active_design_is_unbiased_and_covers_with_a_pilot():
    # pilot (uniform 5%) then the active design; the DR estimate with pi = 1 on the pilot items
    # covers the finite-population mean at the nominal rate and is narrower than uniform sampling
    X, y_full, _ = _world(3, n=1500)
    truth = y_full.mean()
    reps = 300
    rng = np.random.default_rng(7)
    hits, w_act, w_uni, err = [], [], [], []
    for r in range(reps):
        pilot_lab = rng.random(y_full.size) < 0.05
        pilot = np.where(pilot_lab, y_full, np.nan)
        d = plan_active(X, budget=75, human_scores=pilot, pilot_prob=0.05, rng=r)
        sel = pilot_lab | (rng.random(y_full.size) < d.draw_prob)
        res = dr_mean(X, np.where(sel, y_full, np.nan), d.inclusion_prob, target="finite", rng=r)
        hits.append(res.ci.low <= truth <= res.ci.high)
        err.append(res.estimate - truth)
        w_act.append(res.ci.width)
        lab_u = rng.random(y_full.size) < 0.1
        w_uni.append(dr_mean(X, np.where(lab_u, y_full, np.nan), 0.1, target="finite", rng=r).ci.width)
    hits = np.asarray(hits)
    assert abs(hits.mean() - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / reps)
    assert abs(np.mean(err)) < 4 * np.std(err) / math.sqrt(reps)
    assert np.mean(w_act) < 0.95 * np.mean(w_uni)  # half the budget is the uniform pilot here


@pytest.mark.parametrize("kwargs, match", [
    ({"budget": 0}, "'budget' parameter of plan_active must be a positive number"),
    ({"budget": 10, "costs": 0.0}, "must be positive and finite for every item"),
    ({"budget": 10, "costs": -1.0}, "must be positive and finite"),
    ({"budget": 10, "floor": 1.5}, "'floor' parameter of plan_active must be 'auto' or a number"),
    ({"budget": 10, "floor": "high"}, "'floor' parameter"),
    ({"budget": 10, "uncertainty": "residual"}, "fits a residual model on the pilot"),
    ({"budget": 10, "uncertainty": "vibes"}, "'uncertainty' parameter"),
])
def test_bad_input(kwargs, match):
    X, _, _ = _world(n=100)
    with pytest.raises(InvalidParameterError, match=match):
        plan_active(X, **kwargs)


def test_disagreement_needs_several_judges_and_missing_scores_are_refused():
    X, _, _ = _world(n=100)
    with pytest.raises(InvalidParameterError, match="needs several judge columns"):
        plan_active(X[:, 0], budget=10, uncertainty="disagreement")
    X[3, 1] = np.nan
    with pytest.raises(InvalidParameterError, match="has no score"):
        plan_active(X, budget=10)


def test_variance_model_is_quasi_poisson_with_a_log_link():
    # one binary feature, no penalty: the fitted E[e^2 | F] are the two groups' weighted means of e^2
    from voirdire.estimation._active import _fit_variance

    rng = np.random.default_rng(4)
    g = rng.random(200) < 0.3
    e2 = rng.exponential(np.where(g, 4.0, 0.5))
    w = rng.uniform(1, 2, 200)
    F = np.column_stack([np.ones(200), g.astype(float)])
    v = np.exp(F @ _fit_variance(F, e2, w, penalty=0.0))
    for grp in (g, ~g):
        assert v[grp][0] == pytest.approx(np.sum(w[grp] * e2[grp]) / np.sum(w[grp]), rel=1e-8)
    # the penalty pulls the groups towards each other, never past
    vp = np.exp(F @ _fit_variance(F, e2, w, penalty=5.0))
    assert v[~g][0] < vp[~g][0] < vp[g][0] < v[g][0]


def test_auto_floor_keeps_the_uniform_design_when_the_residuals_are_not_predictable():
    # homoscedastic humans: no residual model has skill, so floor="auto" keeps (almost always) the
    # uniform design; where the noise depends on the judges' scores it mixes in Neyman's rule
    rng = np.random.default_rng(8)
    n = 1500
    floors_flat, floors_het = [], []
    for r in range(12):
        z = rng.normal(0, 1, n)
        X = np.column_stack([z + rng.normal(0, 0.3, n), z + rng.normal(0, 0.3, n)])
        lab = rng.random(n) < 0.05
        flat = 3 + z + rng.normal(0, 0.8, n)
        het = 3 + z + np.where(z > 0.5, 1.5, 0.2) * rng.normal(0, 1, n)
        for y, out in ((flat, floors_flat), (het, floors_het)):
            d = plan_active(X, budget=75, human_scores=np.where(lab, y, np.nan), pilot_prob=0.05, rng=r)
            out.append(d.floor)
    assert np.mean(np.asarray(floors_flat) == 1.0) >= 0.75, floors_flat
    assert np.mean(floors_het) < 0.5, floors_het
