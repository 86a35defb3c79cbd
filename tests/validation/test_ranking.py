"""rank_judges, rank_error and top1_error."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from scipy.stats import kendalltau

from voirdire.data import AnnotationTable, read_annotations
from voirdire.datasets import load_hanna
from voirdire.exceptions import InvalidParameterError, SmallSampleWarning
from voirdire.validation import RankingResult, alt_test, leave_one_out, rank_error, rank_judges, top1_error

from ..conftest import shared_data


@functools.lru_cache(maxsize=None)
def _wax() -> AnnotationTable:
    return read_annotations(shared_data("alttest", "wax"))


def test_rho_matches_alt_test_and_warns_when_top_two_overlap() -> None:
    t = _wax()
    with pytest.warns(SmallSampleWarning, match="cannot be told apart"):
        r = rank_judges(t, by="rho", n_resamples=300, rng=0)
    for j, name in enumerate(r.judges):
        assert r.statistic[j] == pytest.approx(alt_test(t, name, epsilon=0.1).rho, abs=1e-12)
    assert r.order[0] == "gemini_pro" and not r.separable
    assert r.p_best.sum() == pytest.approx(1.0)
    off = ~np.eye(len(r.judges), dtype=bool)
    assert np.allclose((r.p_order + r.p_order.T)[off], 1.0)
    assert isinstance(r, RankingResult) and json.dumps(r.to_dict())
    assert list(r.to_frame()["judge"]) == list(r.order)


def test_score_and_mean_d_match_direct_computation() -> None:
    t = load_hanna(criterion="Coherence")
    r = rank_judges(t, by="score", n_resamples=100, rng=0)
    # S(judge; all humans): matches of the judge with every human label, over all such pairs
    dense = t.dense()
    for j, name in enumerate(r.judges):
        g = dense[:, t.rater_index(name)]
        H = dense[:, t.human_idx]
        ok = (H >= 0) & (H < t.n_categories) & ((g >= 0) & (g < t.n_categories))[:, None]  # abstentions out
        assert r.statistic[j] == pytest.approx(np.sum((H == g[:, None]) & ok) / ok.sum())
    r2 = rank_judges(t, by="mean_d", n_resamples=100, rng=0)
    for j, name in enumerate(r2.judges):
        assert r2.statistic[j] == pytest.approx(np.mean(leave_one_out(t, name, n_resamples=0).d))
    r3 = rank_judges(t, by="omega", epsilon=0.05, n_resamples=100, rng=0)
    for j, name in enumerate(r3.judges):
        assert r3.statistic[j] == pytest.approx(leave_one_out(t, name, n_resamples=0).omega)


def test_clearly_better_judge_is_separable() -> None:
    rng = np.random.default_rng(0)
    n = 400
    truth = rng.integers(0, 3, n)
    rows = []
    for h, acc in [("h1", .85), ("h2", .85), ("h3", .85), ("good", .95), ("bad", .5), ("worse", .35)]:
        lab = np.where(rng.random(n) < acc, truth, rng.integers(0, 3, n))
        rows += [(i, h, int(v)) for i, v in enumerate(lab)]
    items, raters, labels = zip(*rows)
    t = AnnotationTable.from_arrays(items, raters, labels, judges=["good", "bad", "worse"])
    r = rank_judges(t, by="rho", n_resamples=300, rng=1)
    assert r.order == ("good", "bad", "worse")
    assert r.separable and r.p_best[r.judges.index("good")] > 0.99


def test_bad_input() -> None:
    t = _wax()
    with pytest.raises(InvalidParameterError, match="'by' parameter of rank_judges"):
        rank_judges(t, by="accuracy")
    with pytest.raises(InvalidParameterError, match="at least two judges"):
        rank_judges(t, ["gpt-4o"])
    with pytest.raises(InvalidParameterError, match="not in"):
        rank_judges(t, ["gpt-4o", "gpt-5"])
    with pytest.raises(InvalidParameterError, match="n_resamples"):
        rank_judges(t, n_resamples=0)


def test_rank_error_hand_and_kendall() -> None:
    # reference a > b > c; run swaps b and c: 1 of 3 pairs misordered
    assert rank_error([3, 1, 2], [3, 2, 1]) == pytest.approx(1 / 3)
    assert rank_error(["a", "c", "b"], ["a", "b", "c"]) == pytest.approx(1 / 3)
    assert rank_error([1, 2, 3], [3, 2, 1]) == 1.0
    # a tie in the run where the reference is strict counts as misordered; reference ties are left out
    assert rank_error([1, 1, 0], [2, 1, 0]) == pytest.approx(1 / 3)
    assert rank_error([0, 1, 2], [1, 1, 0]) == pytest.approx(1.0)
    # without ties the share of discordant pairs is (1 - tau) / 2 (Kendall)
    rng = np.random.default_rng(0)
    runs = rng.normal(size=(50, 6))
    ref = rng.normal(size=6)
    errs = rank_error(runs, ref)
    for e, run in zip(errs, runs):
        assert e == pytest.approx((1 - kendalltau(run, ref).statistic) / 2)


def test_top1_error() -> None:
    assert top1_error([0.2, 0.9, 0.1], [0.1, 0.8, 0.3]) == 0.0
    assert top1_error(["c", "b", "a"], ["b", "c", "a"]) == 1.0
    # runs: hit, miss, tie at the top with one of two right (half a hit)
    assert top1_error([[3, 1, 0], [0, 2, 1], [2, 2, 0]], [3, 2, 1]) == pytest.approx((0 + 1 + 0.5) / 3)
    with pytest.raises(InvalidParameterError, match="same judges"):
        top1_error(["a", "b"], ["a", "c"])
    with pytest.raises(InvalidParameterError, match=r"shape \(J,\)"):
        top1_error([[1, 2, 3]], [1, 2])
