"""Planning formulas against their closed forms, the pilot estimates against an independent
loop and against validation.loo_core, and the formula's false-reject claim in simulation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from voirdire.data import AnnotationTable
from voirdire.design import (false_reject_probability, plan_by_simulation, plan_certification,
                             plan_ranking)
from voirdire.design._simplan import fit_latent_class
from voirdire.exceptions import InfeasiblePlanError, InvalidParameterError
from voirdire.simulate import LatentClassModel, simulate_annotations, subsample
from voirdire.validation import loo_core


def test_certification_closed_form() -> None:
    # z_{0.975}^2 * 0.3^2 / (0.02 + 0.05)^2 = 3.841459 * 0.09 / 0.0049 = 70.56 -> 71
    r = plan_certification(mu_d=0.02, sigma0=0.3, epsilon=0.05, significance_level=0.05)
    assert r.m_star == 71
    assert r.z == pytest.approx(1.959964, abs=1e-6)
    assert r.margin == pytest.approx(0.07)
    assert r.source == "moments" and any("asymptotic" in a for a in r.assumptions)
    # at m*, one comparison's false-reject probability is at most a/2
    assert r.false_reject_at(r.m_star) <= 0.025
    assert r.false_reject_at(r.m_star - 1) > 0.025 * 0.99
    # z_{0.95}^2 for a = 0.10: 2.705543 * 0.25 / 0.0025 = 270.55 -> 271
    assert plan_certification(mu_d=0.0, sigma0=0.5, significance_level=0.10).m_star == 271
    assert r.to_frame().m_star.iloc[0] == 71


def test_certification_infeasible_and_bad_input() -> None:
    with pytest.raises(InfeasiblePlanError, match="not positive"):
        plan_certification(mu_d=-0.06, sigma0=0.3, epsilon=0.05)
    with pytest.raises(InfeasiblePlanError):
        plan_certification(mu_d=-0.05, sigma0=0.3, epsilon=0.05)   # margin exactly 0
    with pytest.raises(InvalidParameterError, match="significance_level.*Did you mean 0.05"):
        plan_certification(mu_d=0.0, sigma0=0.3, significance_level=5)
    with pytest.raises(InvalidParameterError, match="sigma0"):
        plan_certification(mu_d=0.0, sigma0=0.0)
    with pytest.raises(InvalidParameterError, match="needs a pilot"):
        plan_certification(mu_d=0.0)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        plan_certification(mu_d=0.0, sigma0=0.3, epsilon=-0.1)
    # regression: epsilon >= 1 was accepted (m*_cert = 1); the rule needs epsilon in [0, 1)
    with pytest.raises(InvalidParameterError, match=r"'epsilon' parameter of plan_certification.*\[0, 1\)"):
        plan_certification(mu_d=0.0, sigma0=0.3, epsilon=1.5)
    with pytest.raises(InvalidParameterError, match=r"Did you mean 0\.05\?"):
        plan_certification(mu_d=0.0, sigma0=0.3, epsilon=5)


def test_false_reject_probability_formula() -> None:
    # Phi(-(0 + 0.05) * sqrt(100) / 0.5) = Phi(-1)
    assert false_reject_probability(100, mu_d=0.0, sigma0=0.5) == pytest.approx(stats.norm.cdf(-1.0))


@pytest.mark.parametrize(("kw", "needle"), [
    ({"sigma0": -0.5}, "'sigma0' parameter of false_reject_probability must be a float > 0"),  # was nan
    ({"sigma0": 0.0}, "sigma0"),
    ({"sigma0": float("nan")}, "sigma0"),
    ({"mu_d": float("inf")}, "mu_d"),
    ({"epsilon": 1.5}, "epsilon"),
    ({"m": -4}, "'m' parameter"),
    ({"m": "many"}, "'m' parameter"),
])
def test_false_reject_probability_bad_input(kw, needle) -> None:
    args = {"m": 100, "mu_d": 0.0, "sigma0": 0.5} | kw
    m = args.pop("m")
    with pytest.raises(InvalidParameterError, match=needle):
        false_reject_probability(m, **args)


def test_ratio_score_one_category_pilot_is_a_clean_error() -> None:
    """Every label in one category: no variance, one error and no numpy RuntimeWarning (filterwarnings=error)."""
    rows = [(f"i{i}", r, "x") for i in range(30) for r in ("h1", "h2", "h3", "llm")]
    t = AnnotationTable.from_frame(pd.DataFrame(rows, columns=["item", "rater", "label"]), judges=["llm"])
    with pytest.raises(InvalidParameterError, match="non-zero variance"):
        plan_certification(t, score="kappa", n_resamples=20, rng=0)


def test_bootstrap_variance_matches_numpy() -> None:
    from voirdire.design._planning import _bootstrap_moments

    t = _pilot(seed=3)
    d, s, e, _ = _bootstrap_moments(t, "judge_1", score="kappa", n_resamples=40, rng=5)
    # the same resamples by hand, with numpy's ddof=1 variance
    gen = np.random.default_rng(5)
    hidx, jcol = t.human_idx, np.array([t.rater_index("judge_1")])
    codes = t.dense()
    boot = np.array([loo_core(codes[gen.integers(0, t.n_items, size=t.n_items)], hidx, jcol, n_categories=3,
                              score="kappa").d[0] for _ in range(40)])
    assert np.isfinite(boot).all()
    np.testing.assert_allclose(s, np.sqrt(np.var(boot, axis=0, ddof=1) * e), rtol=1e-10)


def _pilot(seed: int = 0, n: int = 120) -> AnnotationTable:
    return simulate_annotations(n_items=n, n_humans=3, n_categories=3, judge_accuracies=[0.8, 0.7], rng=seed).table


def test_pilot_estimates_match_an_independent_loop_and_loo_core() -> None:
    t = _pilot()
    # knock out some labels so pools have unequal sizes
    keep = np.ones(t.n_labels, bool)
    keep[np.arange(0, t.n_labels, 7)] = False
    t = t.select(label_mask=keep)
    r = plan_certification(t, judge="judge_1", epsilon=0.05)
    codes = t.dense()
    H = [0, 1, 2]
    g = codes[:, t.rater_index("judge_1")]
    for k in H:
        a_sum = b_sum = w_sum = 0.0
        D, W = [], []
        for i in range(t.n_items):
            if codes[i, k] < 0 or g[i] < 0:
                continue
            pool = [codes[i, r_] for r_ in H if r_ != k and codes[i, r_] >= 0]
            if not pool:
                continue
            a = sum(p == g[i] for p in pool)
            b = sum(p == codes[i, k] for p in pool)
            a_sum += a
            b_sum += b
            w_sum += len(pool)
            D.append((a - b) / len(pool))
            W.append(len(pool))
        d = (a_sum - b_sum) / w_sum
        D, W = np.array(D), np.array(W, float)
        s2 = np.mean(W**2 * (D - d) ** 2) / np.mean(W) ** 2
        assert r.mu_d_by_human[k] == pytest.approx(d)
        assert r.sigma0_by_human[k] == pytest.approx(math.sqrt(s2))
        assert r.eligible_by_human[k] == len(D)
    la = loo_core(codes, np.array(H), np.array([t.rater_index("judge_1")]), n_categories=3)
    np.testing.assert_allclose(r.mu_d_by_human, la.d[0])
    np.testing.assert_allclose(r.eligible_by_human, la.n_items_judge[0])
    assert r.mu_d == pytest.approx(np.mean(la.d[0]))
    assert r.m_star == math.ceil(r.z**2 * r.sigma0**2 / (r.mu_d + 0.05) ** 2)
    fr = r.to_frame()
    assert list(fr.human) == ["human_1", "human_2", "human_3"] and fr.false_reject_now.between(0, 1).all()


def test_pilot_needs_judge_name_when_several() -> None:
    with pytest.raises(InvalidParameterError, match="name one with judge="):
        plan_certification(_pilot())
    with pytest.raises(InvalidParameterError, match="not a judge"):
        plan_certification(_pilot(), judge="human_1")
    with pytest.raises(InvalidParameterError, match="not both"):
        plan_certification(_pilot(), judge="judge_1", mu_d=0.1, sigma0=0.2)


def test_clustered_pilot_inflates_sigma0() -> None:
    sim = simulate_annotations(n_items=600, n_humans=3, judge_accuracies=[0.8], n_clusters=30, cluster_sd=1.5, rng=4)
    clustered = plan_certification(sim.table, epsilon=0.05)
    import dataclasses
    flat = plan_certification(dataclasses.replace(sim.table, clusters=None), epsilon=0.05)
    assert flat.design_effect == 1.0
    assert clustered.design_effect != 1.0
    assert clustered.sigma0 == pytest.approx(flat.sigma0 * math.sqrt(clustered.design_effect), rel=0.05)


@pytest.mark.statistical
def test_m_cert_delivers_its_false_reject_rate() -> None:
    # A judge exactly as accurate as the humans (mu_d = 0). Plan a single comparison with
    # a = 0.10 (target false-reject 0.05) from a large pilot, then draw 400 fresh fully crossed
    # data sets with m* items and count how often d_k < -epsilon for the first held-out human.
    # Binomial tolerance: 0.05 +- 4 * sqrt(0.05 * 0.95 / 400) = +- 0.044.
    model = LatentClassModel(n_items=4000, n_categories=2, human_accuracy=(0.85,) * 3, judge_accuracies=(0.85,))
    gen = np.random.default_rng(5)
    pilot = simulate_annotations(n_items=4000, n_humans=3, judge_accuracies=[0.85], rng=gen).table
    plan = plan_certification(pilot, epsilon=0.05, significance_level=0.10)
    m = int(plan.m_star_by_human[0])
    assert 40 < m < 400
    small = LatentClassModel(n_items=m, n_categories=2, human_accuracy=(0.85,) * 3, judge_accuracies=(0.85,))
    rej = 0
    for _ in range(400):
        codes = small.draw_codes(gen)
        la = loo_core(codes, np.array([0, 1, 2]), np.array([3]), n_categories=2)
        rej += la.d[0, 0] < -0.05
    rate = rej / 400
    # the pilot's mu_d is an estimate (its error shifts the realised rate): allow for it
    target = false_reject_probability(m, mu_d=0.0, sigma0=plan.sigma0_by_human[0])
    assert abs(rate - target) < 4 * math.sqrt(target * (1 - target) / 400) + 0.01
    assert model.population_d()[0, 0] == pytest.approx(0.0)


def test_ranking_closed_form_and_errors() -> None:
    # 2 * z_{1 - 0.05/2}^2 * 0.16 / 0.05^2 = 491.7 -> 492 (J = 3, Bonferroni over 2 rivals)
    r = plan_ranking(sigma0=0.4, delta_min=0.05, n_judges=3)
    assert r.m_star == 492 and r.z == pytest.approx(stats.norm.ppf(1 - 0.025))
    # J = 6: z_{1 - 0.01}
    r6 = plan_ranking(sigma0=0.4, delta_min=0.05, n_judges=6)
    assert r6.m_star == math.ceil(2 * stats.norm.ppf(0.99) ** 2 * 0.16 / 0.0025)
    assert any("covariance" in a for a in r.assumptions)
    with pytest.raises(InfeasiblePlanError, match="tie"):
        plan_ranking(sigma0=0.4, delta_min=0.0, n_judges=3)
    with pytest.raises(InvalidParameterError, match="n_judges"):
        plan_ranking(sigma0=0.4, delta_min=0.05, n_judges=1)


def test_ranking_from_pilot() -> None:
    t = simulate_annotations(n_items=400, n_humans=3, judge_accuracies=[0.7, 0.9, 0.8], rng=1).table
    r = plan_ranking(t)
    assert r.judges[0] == "judge_2" and r.judges[-1] == "judge_1"
    # scores by hand: share of matching (judge, human) pairs
    codes = t.dense()
    s2 = np.mean(codes[:, [0, 1, 2]] == codes[:, [4]])
    assert r.scores[0] == pytest.approx(s2)
    assert r.delta_min == pytest.approx(r.scores[0] - r.scores[1])
    assert r.m_star == math.ceil(2 * r.z**2 * r.sigma0**2 / r.delta_min**2)
    # judges scored on the same items are positively correlated, so the paired target is smaller
    assert r.correlation > 0 and r.m_star_paired is not None and r.m_star_paired < r.m_star
    twin = simulate_annotations(n_items=50, n_humans=2, judge_accuracies=[1.0, 1.0], rng=1).table
    with pytest.raises(InfeasiblePlanError):
        plan_ranking(twin)
    assert list(r.to_frame().columns) == ["judge", "score", "sigma", "gap_to_best"]


def test_fit_latent_class_recovers_parameters() -> None:
    sim = simulate_annotations(n_items=6000, n_humans=4, n_categories=3, judge_accuracies=[0.6, 0.9],
                               prevalence=[0.5, 0.3, 0.2], rng=8)
    fit = fit_latent_class(sim.table)
    assert fit["human_accuracy"] == pytest.approx(0.85, abs=0.015)
    assert fit["judge_accuracies"]["judge_1"] == pytest.approx(0.6, abs=0.03)
    assert fit["judge_accuracies"]["judge_2"] == pytest.approx(0.9, abs=0.03)
    # labels, not the truth: prevalence of labels = P(z) a + (1 - P(z))(1 - a)/2
    exp = np.array([0.5, 0.3, 0.2]) * 0.85 + (1 - np.array([0.5, 0.3, 0.2])) * 0.075
    np.testing.assert_allclose(fit["prevalence"], exp, atol=0.015)


def test_plan_by_simulation_recommends_the_smallest_budget_meeting_targets() -> None:
    model = LatentClassModel(n_items=300, n_categories=2, human_accuracy=(0.85,) * 3, judge_accuracies=(0.9, 0.6))
    res = plan_by_simulation(model=model, budgets=[10, 60, 150, 300], n_repetitions=40, rng=2,
                             fr_target=0.2, fa_target=0.2)
    df = res.to_frame()
    assert list(df.budget) == [10, 60, 150, 300]
    assert res.judge_reference == {"judge_1": "pass", "judge_2": "reject"}
    assert df.false_reject.iloc[-1] <= df.false_reject.iloc[0]
    met = df[df.meets_targets]
    assert res.recommended == (int(met.budget.iloc[0]) if len(met) else None)
    assert res.recommended is not None
    assert set(df.columns) >= {"error_judge_1", "error_judge_2"}
    with pytest.raises(InvalidParameterError, match="exactly one"):
        plan_by_simulation(budgets=[10])
    with pytest.raises(InvalidParameterError, match="exceeds"):
        plan_by_simulation(model=model, budgets=[301], n_repetitions=2)
    with pytest.raises(InvalidParameterError, match="reject_d"):
        plan_by_simulation(model=model, budgets=[10], reject_d=0.1)


def test_plan_by_simulation_from_pilot() -> None:
    pilot = simulate_annotations(n_items=200, n_humans=3, judge_accuracies=[0.9], rng=3).table
    res = plan_by_simulation(pilot, budgets=[20, 100], n_repetitions=10, rng=1)
    assert res.source == "pilot" and res.n_humans == 3 and res.n_items == 200
    assert res.judge_accuracies["judge_1"] == pytest.approx(0.9, abs=0.08)
    assert isinstance(res.to_frame(), pd.DataFrame)
    assert res.to_dict()["recommended"] in (None, 20, 100)


@pytest.mark.statistical
def test_m_rank_is_conservative_for_the_top1_choice() -> None:
    # Three judges with accuracies 0.90, 0.85, 0.80 against three humans (L = 2). The exact per-item
    # moments of each judge's score against the pool come from a large draw; m*_rank (a = 0.10,
    # Bonferroni over 2 rivals, covariance ignored) should pick the best judge in at least
    # 1 - a of 300 fresh data sets of m* items (binomial slack 3 * sqrt(0.1 * 0.9 / 300) = 0.05).
    gen = np.random.default_rng(21)
    big = simulate_annotations(n_items=20000, n_humans=3, judge_accuracies=[0.9, 0.85, 0.8], rng=gen).table
    plan = plan_ranking(big, significance_level=0.10)
    m = plan.m_star
    assert 50 < m < 3000 and plan.judges[0] == "judge_1"
    def win_rate(n: int) -> float:
        small = LatentClassModel(n_items=n, n_categories=2, human_accuracy=(0.85,) * 3,
                                 judge_accuracies=(0.9, 0.85, 0.8))
        wins = 0
        for _ in range(300):
            codes = small.draw_codes(gen)
            score = (codes[:, 3:, None] == codes[:, None, :3]).mean(axis=(0, 2))
            wins += int(np.argmax(score) == 0)
        return wins / 300

    slack = 3 * math.sqrt(0.09 / 300)
    assert win_rate(m) >= 0.90 - slack                  # measured 0.977: conservative (factor 2)
    # the paired target accounts for the positive covariance and is smaller, and still enough
    assert plan.m_star_paired is not None and plan.m_star_paired < m
    assert win_rate(plan.m_star_paired) >= 0.90 - slack  # measured 0.927


def test_plan_by_simulation_moves_an_unreachable_reject_probe() -> None:
    # humans at accuracy 0.35 with L = 5: p_hh = 0.35^2 + 0.65^2 / 4 = 0.228; a judge that is never
    # right agrees with them 0.65 / 4 = 0.1625 of the time, so d >= -0.066 > -2 epsilon = -0.1.
    m = LatentClassModel(n_items=100, n_categories=5, human_accuracy=(0.35,) * 3, judge_accuracies=(0.5,))
    res = plan_by_simulation(model=m, budgets=[50], n_repetitions=3, rng=0)
    assert res.notes and "out of reach" in res.notes[0]
    assert res.reject_d == pytest.approx(0.5 * (0.1625 - 0.228125 - 0.05))
    with pytest.raises(InvalidParameterError, match="cannot reject anyone"):
        plan_by_simulation(model=m, budgets=[50], n_repetitions=3, epsilon=0.07)


def test_ratio_scores_plan_by_bootstrap() -> None:
    from voirdire.design._planning import _bootstrap_moments

    t = subsample(simulate_annotations(n_items=600, n_humans=3, n_categories=3, judge_accuracies=[0.85], rng=1).table,
                  "random", 0.3, rng=0)
    closed = plan_certification(t)
    # the bootstrap route, applied to observed agreement, agrees with the closed-form linearisation
    d, s, e, _ = _bootstrap_moments(t, "judge_1", score="agreement", n_resamples=300, rng=0)
    np.testing.assert_allclose(d, closed.mu_d_by_human)
    np.testing.assert_allclose(s, closed.sigma0_by_human, rtol=0.12)
    k = plan_certification(t, score="kappa", n_resamples=100)
    la = loo_core(t.dense(), t.human_idx, np.array([t.rater_index("judge_1")]), n_categories=3, score="kappa")
    np.testing.assert_allclose(k.mu_d_by_human, la.d[0])
    assert k.score == "kappa" and any("delta method" in a for a in k.assumptions)
    assert k.m_star == math.ceil(k.z**2 * k.sigma0**2 / (k.mu_d + 0.05) ** 2)
    with pytest.raises(InvalidParameterError, match="'score' parameter of plan_certification"):
        plan_certification(t, score="f1")
