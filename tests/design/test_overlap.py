"""Overlap diagnostics: hand-checked counts, expected vs observed overlap, panel detection, warnings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from voirdire.data import AnnotationTable
from voirdire.design import overlap
from voirdire.exceptions import InvalidParameterError, SmallSampleWarning
from voirdire.simulate import simulate_annotations, subsample


def _small() -> AnnotationTable:
    # primary p labels items 1-4, s1 labels 1-2, s2 labels 2-3, judge j labels 1-4 (item 4: abstains)
    rows = [(1, "p", "a"), (2, "p", "b"), (3, "p", "a"), (4, "p", "b"),
            (1, "s1", "a"), (2, "s1", "a"),
            (2, "s2", "b"), (3, "s2", "a"),
            (1, "j", "a"), (2, "j", "b"), (3, "j", "b"), (4, "j", "?")]
    df = pd.DataFrame(rows, columns=["item", "rater", "label"])
    return AnnotationTable.from_frame(df, judges=["j"], abstain=["?"])


def test_hand_checked_counts() -> None:
    with pytest.warns(SmallSampleWarning, match="fewer than 30 eligible items"):
        res = overlap(_small())
    assert res.primary == "p"
    assert res.secondaries == ("s1", "s2")
    assert res.n_labelled.tolist() == [4, 2, 2, 3]          # the judge's abstention is not a label
    assert res.n_abstentions.tolist() == [0, 0, 0, 1]
    obs = pd.DataFrame(res.observed, index=res.raters, columns=res.raters)
    assert obs.loc["p", "s1"] == 2 and obs.loc["s1", "s2"] == 1 and obs.loc["s2", "j"] == 2
    exp = pd.DataFrame(res.expected, index=res.raters, columns=res.raters)
    assert exp.loc["p", "s1"] == pytest.approx(4 * 2 / 4)     # rho * n with the primary
    assert exp.loc["s1", "s2"] == pytest.approx(2 * 2 / 4)    # rho^2 * n between secondaries
    # eligible items (labelled by k, by j, by >= 1 other human):
    # p: items 1, 2, 3 (item 4 has no judge label)  pairs 1 + 2 + 1 = 4
    # s1: items 1, 2 -> pairs 1 + 2 = 3;  s2: items 2, 3 -> pairs 2 + 1 = 3
    assert res.eligible[:, 0].tolist() == [3, 2, 2]
    assert res.n_pairs[:, 0].tolist() == [4, 3, 3]
    assert res.shared_panel is False                         # s1, s2 share 1 of 2 items
    assert res.panel_share == pytest.approx(0.5)
    assert res.global_overlap_rate == pytest.approx(np.mean([2, 2, 1]) / 4)
    fr = res.eligible_frame()
    assert fr.below_min.all() and list(fr.columns) == ["human", "judge", "eligible_items", "n_pairs", "below_min"]
    assert len(res.to_frame()) == 6 and "ratio" in res.to_frame()
    assert res.to_dict()["primary"] == "p" and "eligible_mask" not in res.to_dict()
    assert res.eligible_items("p", "j").tolist() == ["1", "2", "3"]
    assert res.eligible_items("s2", "j").tolist() == ["2", "3"]
    with pytest.raises(InvalidParameterError, match="not a human"):
        res.eligible_items("j", "j")


def test_min_eligible_zero_does_not_warn() -> None:
    res = overlap(_small(), min_eligible=0)
    assert res.below_min == ()


def test_bad_parameters() -> None:
    t = _small()
    with pytest.raises(InvalidParameterError, match="is not in"):
        overlap(t, judges=["nobody"], min_eligible=0)
    with pytest.raises(InvalidParameterError, match="must be a human"):
        overlap(t, primary="j", min_eligible=0)
    with pytest.raises(InvalidParameterError, match="not a judge"):
        overlap(t, judges=["s1"], min_eligible=0)
    with pytest.raises(InvalidParameterError, match="min_eligible"):
        overlap(t, min_eligible=-1)
    with pytest.raises(InvalidParameterError, match="AnnotationTable"):
        overlap(pd.DataFrame())  # type: ignore[arg-type]


def test_panel_is_detected_and_random_is_not() -> None:
    full = simulate_annotations(n_items=300, n_humans=4, judge_accuracies=[0.8], rng=2).table
    panel = overlap(subsample(full, "panel", 0.2, rng=1), min_eligible=0)
    rand = overlap(subsample(full, "random", 0.2, rng=1), min_eligible=0)
    assert panel.shared_panel is True and panel.panel_share == 1.0
    assert rand.shared_panel is False and rand.panel_share < 0.5


@pytest.mark.statistical
def test_expected_overlap_matches_observed_in_simulation() -> None:
    # Under the random design each secondary draws m = 50 of n = 500 items: the overlap with the
    # primary is exactly m and between two secondaries hypergeometric with mean m^2/n = 5 and
    # variance m (m/n)(1 - m/n)(n - m)/(n - 1) ~ 4.06. Over 300 draws x 3 pairs the mean of the
    # ratio observed/expected is within 4 standard errors (sd 2.01 / 5 / sqrt(900) ~ 0.013) of 1.
    full = simulate_annotations(n_items=500, n_humans=4, judge_accuracies=[0.8], rng=0).table
    gen = np.random.default_rng(11)
    ratios, prim = [], []
    for _ in range(300):
        res = overlap(subsample(full, "random", 0.1, rng=gen), min_eligible=0)
        fr = res.to_frame()
        sec = fr[(fr.rater_a != "human_1") & (fr.role_a == "human") & (fr.role_b == "human")]
        ratios.extend(sec.ratio.tolist())
        p = fr[(fr.rater_a == "human_1") & (fr.role_b == "human")]
        prim.extend(p.ratio.tolist())
    assert np.allclose(prim, 1.0)
    se = np.sqrt(4.06) / 5 / np.sqrt(len(ratios))
    assert abs(np.mean(ratios) - 1.0) < 4 * se


def test_rater_order_does_not_matter() -> None:
    t = subsample(simulate_annotations(n_items=80, n_humans=4, judge_accuracies=[0.8, 0.7], rng=3).table,
                  "random", 0.3, rng=2)
    a = overlap(t, min_eligible=0)
    order = list(reversed(t.raters.tolist()))
    b = overlap(t.select(raters=order), min_eligible=0)
    ia = [a.raters.index(r) for r in order]
    np.testing.assert_array_equal(a.observed[np.ix_(ia, ia)], b.observed)
    ha = [a.humans.index(h) for h in b.humans]
    ja = [a.judges.index(j) for j in b.judges]
    np.testing.assert_array_equal(a.eligible[np.ix_(ha, ja)], b.eligible)
    assert a.primary == b.primary


@pytest.mark.statistical
def test_strat_overlap_matches_its_own_expectation() -> None:
    # With stratum quotas q_h of N_h items, two independent stratified draws share
    # sum_h q_h^2 / N_h items in expectation (= m^2 / n when quotas are exactly proportional).
    from voirdire.design._core import proportional_quota

    full = simulate_annotations(n_items=500, n_humans=3, n_categories=3, judge_accuracies=[0.8],
                                prevalence=[0.6, 0.3, 0.1], rng=1).table
    prim = full.dense()[:, 0]
    sizes = np.bincount(prim, minlength=3)
    q = proportional_quota(sizes, 50)
    expected = float(np.sum(q**2 / sizes))
    gen = np.random.default_rng(5)
    obs = [overlap(subsample(full, "strat", 0.1, rng=gen), min_eligible=0).observed[1, 2] for _ in range(300)]
    se = np.std(obs, ddof=1) / np.sqrt(len(obs))
    assert abs(np.mean(obs) - expected) < 4 * se
    assert expected == pytest.approx(50**2 / 500, rel=0.05)
