"""Sample-size solving, allocation and sample drawing: algebra, peers, errors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from voirdire.estimation import (
    AllocationResult,
    HumanSample,
    SampleSizeResult,
    dr_mean,
    draw_human_sample,
    plan_allocation,
    required_sample_size,
)
from voirdire.exceptions import DegenerateDataWarning, InfeasiblePlanError, InvalidParameterError


def _nstar(r2, big_n, n):
    return 1.0 / (r2 / big_n + (1 - r2) / n)


# ------------------------------------------------------------------------------------ sample size
def test_solve_each_quantity_round_trip():
    r2 = 0.6
    a = required_sample_size(n_star=300, n_total=2000, r2=r2)
    assert isinstance(a, SampleSizeResult) and a.solved_for == "n_labeled"
    # exact n = (1 - r2) / (1/n* - r2/N) = 0.4 / (1/300 - 0.6/2000) = 131.868...
    assert a.n_labeled == math.ceil(0.4 / (1 / 300 - 0.6 / 2000))
    assert _nstar(r2, 2000, a.n_labeled) >= 300 > _nstar(r2, 2000, a.n_labeled - 1)
    b = required_sample_size(n_star=300, n_labeled=a.n_labeled, r2=r2)
    assert b.solved_for == "n_total"
    assert _nstar(r2, b.n_total, a.n_labeled) >= 300 - 1e-9 and b.n_total <= 2000
    c = required_sample_size(n_total=2000, n_labeled=a.n_labeled, r2=r2)
    assert c.solved_for == "n_star" and c.n_star == pytest.approx(_nstar(r2, 2000, a.n_labeled))
    d = required_sample_size(n_star=300, inclusion_prob=0.1, r2=r2)
    # N = n* (1 + (1/pi - 1)(1 - r2)) = 300 * (1 + 9 * 0.4) = 1380
    assert d.n_total == 1380 and d.n_labeled == 138
    e = required_sample_size(n_total=1380, inclusion_prob=0.1, r2=r2)
    assert e.n_star == pytest.approx(300)
    f = required_sample_size(n_labeled=138, inclusion_prob=0.1, r2=r2)
    assert f.n_total == 1380 and f.n_star == pytest.approx(300)


def test_r2_zero_means_humans_only():
    res = required_sample_size(n_star=250, n_total=1000, r2=0.0)
    assert res.n_labeled == 250
    with pytest.raises(InfeasiblePlanError, match="effective sample size"):
        required_sample_size(n_star=250, n_labeled=200, r2=0.0)


def test_halfwidth_and_power_targets():
    z = 1.959963984540054
    res = required_sample_size(target_halfwidth=0.1, sd=0.9, r2=0.5, n_total=5000)
    assert res.n_star == pytest.approx((z * 0.9 / 0.1) ** 2)
    assert res.predicted_se * z <= 0.1 + 1e-12  # the rounded design meets the half-width
    res = required_sample_size(effect_size=0.25, sd=1.0, power=0.9, significance_level=0.05, r2=0.4,
                               n_total=4000)
    zb = 1.2815515655446004
    assert res.n_star == pytest.approx(((z + zb) / 0.25) ** 2)
    one = required_sample_size(effect_size=0.25, sd=1.0, power=0.9, r2=0.4, n_total=4000, alternative="greater")
    assert one.n_star < res.n_star


def test_power_matches_statsmodels():
    from statsmodels.stats.power import NormalIndPower

    # ratio=0: the one-sample z-test. statsmodels also counts the far tail, which moves n by < 0.01%.
    n_sm = NormalIndPower().solve_power(effect_size=0.3, alpha=0.05, power=0.8, ratio=0)
    res = required_sample_size(effect_size=0.3, sd=1.0, power=0.8, r2=0.5, n_total=10_000)
    assert res.n_star == pytest.approx(n_sm, rel=1e-3)


def test_pilot_forms():
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    y = 0.8 * x + rng.normal(0, 0.6, 400)
    r2_true = np.corrcoef(x, y)[0, 1] ** 2
    a = required_sample_size(pilot=(x, y), n_star=200, n_total=3000)
    assert a.r2 == pytest.approx(r2_true, abs=0.02)
    assert a.sd == pytest.approx(np.std(y))
    est = dr_mean(x, np.where(np.arange(400) < 200, y, np.nan), 0.5, model="linear", rng=0)
    b = required_sample_size(pilot=est, n_star=200, n_total=3000)
    assert b.r2 == est.r2
    with pytest.raises(InfeasiblePlanError, match="worse than a constant"):
        required_sample_size(pilot=(x + 5, y), model="identity", n_star=200, n_total=3000)


def test_humans_alone_enough():
    res = required_sample_size(n_star=100, n_labeled=150, r2=0.5)
    assert res.solved_for == "none" and "humans alone" in res.note


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_star=100, r2=0.5), "exactly two"),
    (dict(n_star=100, n_total=1000, n_labeled=50, r2=0.5), "exactly two"),
    (dict(n_star=100, n_total=1000), "exactly one of 'r2'"),
    (dict(n_star=100, n_total=1000, r2=1.0), r"\[0, 1\)"),
    (dict(n_star=-5, n_total=1000, r2=0.5), "'n_star' parameter .* positive"),
    (dict(target_halfwidth=0.1, n_total=1000, r2=0.5), "needs 'sd'"),
    (dict(target_halfwidth=0.1, n_star=5, sd=1, n_total=1000, r2=0.5), "at most one"),
    (dict(n_total=100, n_labeled=200, r2=0.5), "cannot exceed"),
    (dict(n_star=100, n_total=1000, inclusion_prob=1.5, r2=0.5), "inclusion_prob"),
    (dict(effect_size=0.2, sd=1, power=80, n_total=1000, r2=0.5), "Did you mean 0.8"),
])
def test_bad_sample_size_parameters(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        required_sample_size(**kwargs)


def test_infeasible_too_few_llm_items():
    with pytest.raises(InfeasiblePlanError, match="Score at least 400"):
        required_sample_size(n_star=400, n_total=300, r2=0.9)


# ------------------------------------------------------------------------------------ allocation
def _objective(pi, n_h, s_h):
    return float(np.sum(n_h * (1 / pi - 1) * s_h**2))


def test_allocation_hand_checked():
    # k = 200 / (800*0.3 + 200*1.2) = 0.41667 -> pi = (0.125, 0.5); cost 100 + 100 = 200
    res = plan_allocation({"easy": {"n_items": 800, "residual_sd": 0.3},
                           "hard": {"n_items": 200, "residual_sd": 1.2}}, budget=200)
    assert isinstance(res, AllocationResult)
    assert res.strata["inclusion_prob"].tolist() == pytest.approx([0.125, 0.5])
    assert res.spent == pytest.approx(200)
    # residual terms: proportional pi = 0.2 -> 800*4*0.09 + 200*4*1.44 = 1440; optimal 504 + 288 = 792
    assert res.variance * 1000**2 == pytest.approx(792)
    assert res.variance_proportional * 1000**2 == pytest.approx(1440)
    assert res.to_frame().shape[0] == 2


def test_allocation_caps_at_one_and_spends_budget():
    strata = pd.DataFrame({"stratum": ["a", "b", "c"], "n_items": [1000, 100, 50],
                           "residual_sd": [0.2, 2.0, 3.0]})
    res = plan_allocation(strata, budget=250)
    pi = res.strata["inclusion_prob"].to_numpy()
    assert pi[2] == 1.0 and pi[1] == 1.0  # capped
    assert res.spent == pytest.approx(250)
    assert res.n_iter >= 2
    assert np.all((pi > 0) & (pi <= 1))


def test_allocation_is_optimal_against_scipy():
    from scipy.optimize import minimize

    rng = np.random.default_rng(3)
    n_h = rng.integers(50, 500, 6).astype(float)
    s_h = rng.uniform(0.1, 2.0, 6)
    c_h = rng.uniform(0.5, 3.0, 6)
    budget = 0.3 * float(np.sum(n_h * c_h))
    res = plan_allocation(pd.DataFrame({"n_items": n_h, "residual_sd": s_h, "cost": c_h}), budget=budget)
    ours = res.strata["inclusion_prob"].to_numpy()
    cons = [{"type": "eq", "fun": lambda p: float(np.sum(n_h * p * c_h)) - budget}]
    sp = minimize(_objective, x0=np.full(6, 0.3), args=(n_h, s_h), bounds=[(1e-4, 1.0)] * 6,
                  constraints=cons, method="SLSQP", options={"ftol": 1e-12, "maxiter": 500})
    assert sp.success
    assert _objective(ours, n_h, s_h) <= sp.fun * (1 + 1e-6)
    np.testing.assert_allclose(ours, sp.x, atol=1e-3)


def test_allocation_costs_floor_and_edges():
    s = {"a": {"n_items": 100, "residual_sd": 1.0}, "b": {"n_items": 100, "residual_sd": 1.0}}
    res = plan_allocation(s, budget=50, costs={"a": 1.0, "b": 4.0})
    pa, pb = res.strata["inclusion_prob"]
    assert pa / pb == pytest.approx(2.0)  # pi ~ 1/sqrt(c)
    assert res.spent == pytest.approx(50)
    full = plan_allocation(s, budget=10_000)
    assert full.strata["inclusion_prob"].tolist() == [1.0, 1.0] and full.spent == 200
    z = {"a": {"n_items": 100, "residual_sd": 0.0}, "b": {"n_items": 100, "residual_sd": 1.0}}
    with pytest.warns(DegenerateDataWarning, match="inclusion probability 0"):
        plan_allocation(z, budget=20)
    fl = plan_allocation(z, budget=20, min_inclusion_prob=0.05)
    assert fl.strata["inclusion_prob"].tolist() == pytest.approx([0.05, 0.15])
    with pytest.raises(InfeasiblePlanError, match="cannot pay"):
        plan_allocation(z, budget=5, min_inclusion_prob=0.05)
    with pytest.raises(InvalidParameterError, match="needs a column 'residual_sd'"):
        plan_allocation(pd.DataFrame({"n_items": [1]}), budget=1)
    with pytest.raises(InvalidParameterError, match="'budget' parameter"):
        plan_allocation(s, budget=0)
    with_sd = plan_allocation({"a": {"n_items": 100, "residual_sd": 1.0, "sd": 2.0}}, budget=50)
    assert with_sd.includes_human_variance
    assert with_sd.variance == pytest.approx((100 * 4 + 100 * 1 * 1) / 100**2)


# ------------------------------------------------------------------------------------ drawing
def test_draw_reproducible_and_poisson():
    a = draw_human_sample(1000, 0.2, rng=42)
    b = draw_human_sample(1000, 0.2, rng=42)
    assert isinstance(a, HumanSample)
    pd.testing.assert_frame_equal(a.assignments, b.assignments)
    assert abs(a.n_selected - 200) < 4 * math.sqrt(1000 * 0.2 * 0.8)
    assert list(a.selected_items) == a.assignments.loc[a.assignments["selected"], "item"].tolist()
    ids = np.array([f"doc{i}" for i in range(6)])
    c = draw_human_sample(ids, [1, 1, 1, 0.5, 0.5, 0.5], rng=0)
    assert c.assignments["selected"].iloc[:3].all()


def test_draw_from_allocation_and_errors():
    alloc = plan_allocation({"easy": {"n_items": 800, "residual_sd": 0.3},
                             "hard": {"n_items": 200, "residual_sd": 1.2}}, budget=200)
    strata = np.array(["easy"] * 800 + ["hard"] * 200)
    s = draw_human_sample(1000, alloc, rng=1, strata=strata)
    assert s.assignments.loc[s.assignments["stratum"] == "hard", "inclusion_prob"].eq(0.5).all()
    assert s.expected_n == pytest.approx(200)
    with pytest.raises(InvalidParameterError, match="needs 'strata'"):
        draw_human_sample(1000, alloc, rng=1)
    with pytest.raises(InvalidParameterError, match=r"\(0, 1\]"):
        draw_human_sample(3, [0.5, 0.0, 0.5])
    with pytest.raises(InvalidParameterError, match="no value for item"):
        draw_human_sample(["a", "b"], {"a": 0.5})
