"""Sequential (anytime-valid) validation: exactness at one look, validity under monitoring, bad input."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from voirdire.data import AnnotationTable, read_annotations
from voirdire.datasets import load_hanna
from voirdire.exceptions import InvalidParameterError
from voirdire.validation import (alt_test, leave_one_out, sequential_operating_characteristics,
                                 validate_sequential)
from voirdire.validation._betting import confidence_sequence, e_bh, log_wealth

LESION = Path(__file__).resolve().parents[3] / "shared" / "data" / "alttest" / "lesion"
if not LESION.exists():
    LESION = Path("/work/shared/data/alttest/lesion")


def test_e_bh_hand_case() -> None:
    # K = 4, q = 0.1: thresholds K/(q k) = 40, 20, 13.3, 10. Sorted e: 50, 25, 12, 1 -> k* = 2.
    rej = e_bh(np.array([12.0, 50.0, 1.0, 25.0]), 0.1)
    assert rej.tolist() == [False, True, False, True]
    assert not e_bh(np.array([39.0, 1.0, 1.0, 1.0]), 0.1).any()


def test_wealth_is_product_of_bets() -> None:
    # First bet is 0 (no data yet: mean 0), so the first factor is 1; wealth is positive throughout.
    x = np.array([-1.0, -1.0, 0.0, -1.0, 1.0, -1.0])
    up, down = log_wealth(x, 1.0, 0.2)
    assert up.shape == down.shape == (1, 6)
    assert up[0, 0] == 0.0 and down[0, 0] == 0.0
    assert np.all(np.isfinite(up)) and np.all(np.isfinite(down))
    # the data say E[x] < 0.2: the down bettor gains, the up bettor abstains (its Kelly bet is clipped at 0)
    assert down[0, -1] > 0 and up[0, -1] == 0.0


def test_confidence_sequence_contains_mean_and_shrinks() -> None:
    rng = np.random.default_rng(3)
    x = rng.choice([-1.0, 0.0, 1.0], p=[0.2, 0.5, 0.3], size=3000)   # mean 0.1
    at = np.array([0, 10, 100, 1000, 3000])
    lo, hi = confidence_sequence(x, np.ones_like(x), at, significance_level=0.05)
    assert lo[0] == -1 and hi[0] == 1
    assert np.all(np.diff(lo) >= 0) and np.all(np.diff(hi) <= 0)
    assert lo[-1] < 0.1 < hi[-1] and hi[-1] - lo[-1] < 0.15


def _hanna() -> AnnotationTable:
    return load_hanna(criterion="Coherence")


def test_one_look_equals_alt_test_and_leave_one_out() -> None:
    t = _hanna()
    j = t.judges[0]
    r = validate_sequential(t, j, rounds=np.zeros(t.n_labels), method="alt-test")
    a = alt_test(t, j)
    np.testing.assert_array_equal(r.n_items[-1], a.n_items)
    np.testing.assert_allclose(r.estimate[-1], a.mean_d, rtol=0, atol=1e-12)
    r2 = validate_sequential(t, j, rounds=np.zeros(t.n_labels), method="loo")
    lo = leave_one_out(t, j, n_resamples=0, min_items=1)
    np.testing.assert_array_equal(r2.n_items[-1], lo.n_items)
    np.testing.assert_allclose(r2.estimate[-1], lo.d, rtol=0, atol=1e-12)


@pytest.mark.skipif(not LESION.exists(), reason="shared/data not available")
def test_loo_equals_leave_one_out_on_lesion() -> None:
    t = read_annotations(LESION)
    r = validate_sequential(t, "gpt-4o", rounds=np.zeros(t.n_labels), method="loo")
    lo = leave_one_out(t, "gpt-4o", n_resamples=0)
    np.testing.assert_allclose(r.estimate[-1], lo.d, atol=1e-12)
    assert np.all(r.ci_low[-1] <= lo.d) and np.all(lo.d <= r.ci_high[-1])


def test_rounds_frame_and_later_judge() -> None:
    t = _hanna()
    f = t.to_frame()
    j = t.judges[1]
    item_no = f["item"].astype("category").cat.codes.to_numpy()
    rnd = item_no // 300
    rnd = np.where(f["rater"] == j, np.maximum(rnd, 2), rnd)           # the judge's labels arrive from round 2 on
    frame = pd.DataFrame({"item": f["item"], "rater": f["rater"], "round": rnd})
    r = validate_sequential(t, j, rounds=frame.sample(frac=1.0, random_state=0))   # order of rows is irrelevant
    assert r.looks[:3] == ("0", "1", "2")
    assert r.decisions[0] == "continue" and "at least two" in r.reasons[0]
    assert r.n_items[0].sum() == 0 and r.n_items[-1].sum() > 0
    assert np.all(np.diff(r.n_items, axis=0) >= 0)
    r_again = validate_sequential(t, j, rounds=frame)
    np.testing.assert_array_equal(r.e_win, r_again.e_win)            # same seed, same streams
    assert r.to_frame().shape[0] == len(r.looks) * len(r.humans)
    assert list(r.looks_frame().columns)[:3] == ["judge", "look", "n_compared"]


def test_decisions_are_sticky_and_forecast_given() -> None:
    t = _hanna()
    f = t.to_frame()
    rounds = f["item"].astype("category").cat.codes.to_numpy() // 50
    r = validate_sequential(t, t.judges[0], rounds=rounds, method="loo")
    if r.decided_at is not None:
        i = r.looks.index(r.decided_at)
        assert all(d == r.decision for d in r.decisions[i:])
        assert r.items_at_decision == int(r.n_items[i].sum())
    open_looks = [i for i, d in enumerate(r.decisions) if d == "continue" and r.n_compared[i] >= 2]
    assert open_looks and all(r.more_items[i] >= 0 for i in open_looks)
    # stopping at the decision gives the same run up to it, and nothing after
    short = validate_sequential(t, t.judges[0], rounds=rounds, method="loo", stop_when_decided=True)
    assert short.decision == r.decision and short.decided_at == r.decided_at
    n = len(short.looks)
    assert short.looks == r.looks[:n] and (r.decided_at is None or short.looks[-1] == r.decided_at)
    np.testing.assert_array_equal(short.e_win, r.e_win[:n])
    assert short.decisions == r.decisions[:n]


def test_without_confidence_sequences_the_same_decisions() -> None:
    # confidence_sequences=False (the planner's call) skips only the intervals: every decision, e-value and
    # forecast is the full run's, the intervals are nan (not a stand-in [-1, 1])
    t = _hanna()
    rounds = t.to_frame()["item"].astype("category").cat.codes.to_numpy() // 100
    for method in ("loo", "alt-test"):
        full = validate_sequential(t, t.judges[0], rounds=rounds, method=method)
        lean = validate_sequential(t, t.judges[0], rounds=rounds, method=method, confidence_sequences=False)
        for name in ("n_items", "estimate", "e_win", "e_loss", "status", "more_items"):
            np.testing.assert_array_equal(getattr(lean, name), getattr(full, name))
        assert (lean.decisions, lean.reasons, lean.decision) == (full.decisions, full.reasons, full.decision)
        assert np.isnan(lean.ci_low).all() and np.isnan(lean.ci_high).all()
        assert np.isfinite(full.ci_low).all() and (full.ci_low < full.ci_high).any()


def test_timestamps_as_rounds() -> None:
    t = _hanna()
    f = t.to_frame()
    day = f["item"].astype("category").cat.codes.to_numpy() // 400
    stamps = pd.to_datetime("2026-01-01") + pd.to_timedelta(day, unit="D")
    r = validate_sequential(t, t.judges[0], rounds=stamps.astype(str).to_list())
    assert len(r.looks) == day.max() + 1 and r.looks[0].startswith("2026-01-01")


def test_bad_rounds() -> None:
    t = _hanna()
    j = t.judges[0]
    with pytest.raises(InvalidParameterError, match="one round per label"):
        validate_sequential(t, j, rounds=[0, 1])
    with pytest.raises(InvalidParameterError, match="columns item, rater and round"):
        validate_sequential(t, j, rounds=pd.DataFrame({"item": [1]}))
    f = t.to_frame()
    frame = pd.DataFrame({"item": f["item"], "rater": f["rater"], "round": 0}).iloc[1:]
    with pytest.raises(InvalidParameterError, match="no round for the label"):
        validate_sequential(t, j, rounds=frame)
    bad = ["x"] * t.n_labels
    with pytest.raises(InvalidParameterError, match="neither a number nor a timestamp"):
        validate_sequential(t, j, rounds=bad)
    with pytest.raises(InvalidParameterError, match="method"):
        validate_sequential(t, j, rounds=np.zeros(t.n_labels), method="bayes")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="not in"):
        validate_sequential(t, "nobody", rounds=np.zeros(t.n_labels))


@pytest.mark.statistical
def test_type_one_error_under_continuous_monitoring() -> None:
    # A judge exactly on the margin (E[d] = epsilon for every human), a look every 10 items up to 1,500.
    # The sequential rule's probability of ever accepting stays below q (+ 2 MC SE); a fixed-sample
    # t-test looked at after every batch does not (per-human level: one human decides with K = 2).
    r = sequential_operating_characteristics(mean_d=0.2, n_humans=2, n_streams=400, max_items=1500, rng=7)
    assert r.p_accept <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 400)
    assert r.p_accept_fixed > 0.05 and r.p_accept_fixed > r.p_accept


@pytest.mark.statistical
def test_clear_judges_are_decided() -> None:
    good = sequential_operating_characteristics(mean_d=-0.1, n_humans=3, n_streams=100, max_items=1500, rng=2)
    bad = sequential_operating_characteristics(mean_d=0.5, n_humans=3, n_streams=100, max_items=1500, rng=3)
    assert good.p_accept >= 0.95 and good.p_reject == 0.0
    assert bad.p_reject >= 0.95 and bad.p_accept == 0.0
    assert good.median_stop < 300 and bad.median_stop < 300
