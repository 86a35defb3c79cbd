"""A judge's leave-one-out acceptance, shown again without flagged annotators."""

from __future__ import annotations

import numpy as np
import pytest

from voirdire.data import AnnotationTable
from voirdire.diagnostics import WON_AGAINST_FLAGGED, loo_sensitivity, rater_diagnostics
from voirdire.exceptions import InvalidParameterError


def _judge_beats_only_spammers(seed: int = 0, n: int = 300):
    # 3 good humans (accuracy 0.85), 3 spammers, a judge at accuracy 0.55 on 4 categories, full overlap:
    # the judge loses to every good human and beats every spammer, omega = 3/6 -> accept at 0.5
    rng = np.random.default_rng(seed)
    q = 4
    z = rng.integers(0, q, n)

    def rater(acc):
        return np.where(rng.random(n) < acc, z, (z + rng.integers(1, q, n)) % q)

    cols = {"g1": rater(0.85), "g2": rater(0.85), "g3": rater(0.85), "s1": rng.integers(0, q, n),
            "s2": rng.integers(0, q, n), "s3": rng.integers(0, q, n), "judge": rater(0.55)}
    items = np.tile(np.arange(n), len(cols))
    names = np.repeat(list(cols), n)
    t = AnnotationTable.from_arrays(items, names, np.concatenate(list(cols.values())))
    return t.with_roles(judges=["judge"])


def test_acceptance_won_against_flagged_annotators():
    t = _judge_beats_only_spammers()
    d = rater_diagnostics(t, n_resamples=500, competence=False, rng=0)
    assert set(d.flagged_raters) == {"s1", "s2", "s3"}
    r = loo_sensitivity(t, "judge", diagnostics=d, n_resamples=200, rng=0)
    assert r.full.decision == "accept" and r.wins_against_excluded == 3
    assert r.decision_others == "reject" and r.omega_others < 0.5
    assert r.without is not None and r.without.decision == "reject"
    assert r.won_mainly_against_excluded and r.reasons == (WON_AGAINST_FLAGGED,)
    assert "won mainly against the excluded annotators" in r.sentence
    fr = r.to_frame()
    assert fr["variant"].tolist() == ["all humans", "wins against the others only", "excluded annotators removed"]
    assert fr["n_evaluated"].tolist() == [6, 3, 3]


def test_user_exclusion_and_nothing_flagged():
    t = _judge_beats_only_spammers()
    r = loo_sensitivity(t, "judge", exclude=["g1"], n_resamples=0, rng=0)
    assert r.excluded == ("g1",) and r.why == "excluded by the user" and not r.won_mainly_against_excluded
    r0 = loo_sensitivity(t, "judge", exclude=[], n_resamples=0)
    assert r0.excluded == () and r0.without is None and "nothing to set aside" in r0.sentence
    with pytest.raises(InvalidParameterError, match="not a human"):
        loo_sensitivity(t, "judge", exclude=["judge"])


def test_cebab_gpt4o_also_wins_without_w40(alttest_dir):
    from voirdire.data import read_annotations
    t = read_annotations(alttest_dir("cebab_stars"))
    r = loo_sensitivity(t, "gpt-4o", n_resamples=200, rng=0)
    assert r.excluded == ("w40",) and r.wins_against_excluded == 1
    assert r.without is not None and r.without.decision == "accept" and not r.won_mainly_against_excluded


def test_validate_judges_carries_the_reason_and_the_exclusion():
    from voirdire.workflows import validate_judges
    t = _judge_beats_only_spammers()
    res = validate_judges(t, ["judge"], method="loo", n_resamples=300, seed=0)
    assert set(res.annotators.flagged_raters) == {"s1", "s2", "s3"}
    j = res.judge("judge")
    assert j.leave_one_out.decision == "accept" and j.sensitivity.won_mainly_against_excluded
    assert WON_AGAINST_FLAGGED in j.verdict.codes
    loo_v = [v for v in j.verdicts if v.method == "leave_one_out"][0]
    assert WON_AGAINST_FLAGGED in loo_v.codes
    assert res.to_dict()["flagged_raters"] == list(res.annotators.flagged_raters)
    ex = validate_judges(t, ["judge"], method="loo", n_resamples=300, seed=0, exclude_raters=["s1", "s2", "s3"])
    assert ex.excluded_raters == ("s1", "s2", "s3") and ex.judge("judge").leave_one_out.decision == "reject"
    assert "Excluded by the user" in ex.notes[0]
    off = validate_judges(t, ["judge"], method="loo", n_resamples=100, seed=0, check_raters=False)
    assert off.annotators is None and off.judge("judge").sensitivity is None
    with pytest.raises(InvalidParameterError, match="not a human"):
        validate_judges(t, ["judge"], exclude_raters=["nobody"])
