"""``fit_pairwise``'s held-out choice (issue 30): which forecaster ``voirdire pairwise`` shows by default.

Small simulated tables (80 pairs, 3 humans, 2 judges in both orders, 30 particles; each fit well under a
CPU-second). Seeds picked so that one table's choice keeps the model and another's picks a baseline.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from voirdire._results import to_jsonable
from voirdire.exceptions import InvalidParameterError
from voirdire.pairwise import BradleyTerryDavidson, choose_forecaster, simulate_pairwise
from voirdire.report.console.pairwise import pairwise_json, render_pairwise
from voirdire.workflows import fit_pairwise


def _table(rng):
    return simulate_pairwise(80, biases=[1.0, 0.0], rng=rng)[0]


@pytest.fixture(scope="module")
def baseline_chosen():
    return fit_pairwise(_table(2), n_particles=30, seed=0, top=4)


@pytest.fixture(scope="module")
def model_chosen():
    return fit_pairwise(_table(0), n_particles=30, seed=0, top=4)


def _text(fit):
    out = io.StringIO()
    con = Console(file=out, width=200, color_system=None)
    render_pairwise(con, con, fit, file="v.csv")
    return out.getvalue()


def test_a_chosen_baseline_s_forecasts_are_the_ones_shown(baseline_chosen):
    fit, t = baseline_chosen, _table(2)
    ch = fit.choice
    # this table's BayesJudge at 30 particles forecasts the held-out humans worse than per-pair BTD
    assert ch.chosen == ch.best_baseline == "Bradley-Terry-Davidson" and ch.nll_difference > 0
    assert fit.forecaster == "Bradley-Terry-Davidson"
    want = BradleyTerryDavidson().fit(t).predict_proba()        # BTD is deterministic: the same fit on the file
    f = fit.forecasts
    assert f["pair"].tolist() == list(t.pairs) and set(f["forecaster"]) == {"Bradley-Terry-Davidson"}
    np.testing.assert_allclose(f[["p_A", "p_T", "p_B"]].to_numpy(), want, atol=1e-12)
    np.testing.assert_allclose(f["entropy"], -(want * np.log(want)).sum(1), atol=1e-12)
    # the most uncertain pairs are the chosen forecaster's, highest entropy first
    top = f.sort_values("entropy", ascending=False, kind="stable").head(4)
    assert fit.uncertain["pair"].tolist() == top["pair"].tolist()
    # ... and so are the JSON's pairs, labelled; the model's posterior stays in the judges and humans
    d = json.loads(json.dumps(to_jsonable(pairwise_json(fit, "v.csv"))))
    assert d["forecaster"] == "Bradley-Terry-Davidson"
    assert [p["p_A"] for p in d["pairs"]] == pytest.approx(want[:, 0].tolist(), abs=1e-12)
    assert d["judges"] == json.loads(json.dumps(to_jsonable(fit.posterior.to_frame("judges").to_dict("records"))))
    text = " ".join(_text(fit).split())
    assert "held-out choice: Bradley-Terry-Davidson (leave-one-human-out, 3 folds of humans" in text
    assert "Most uncertain pairs by Bradley-Terry-Davidson's forecasts" in text
    # the choice line comes before the posteriors
    assert text.index("held-out choice:") < text.index("position bias") < text.index("Most uncertain")


def test_when_the_model_is_chosen_only_the_choice_lines_are_new(model_chosen):
    fit = model_chosen
    off = fit_pairwise(_table(0), n_particles=30, seed=0, top=4, choose=False)
    assert fit.choice.chosen == "BayesJudge" and fit.forecaster == "BayesJudge" and off.choice is None
    # the choice has its own seed stream: the model's fit is the same with and without it
    pd.testing.assert_frame_equal(fit.forecasts, off.forecasts)
    pd.testing.assert_frame_equal(fit.forecasts, fit.posterior.to_frame("items"))
    pd.testing.assert_frame_equal(fit.uncertain, fit.posterior.most_uncertain(4))
    on_text, off_text = _text(fit), _text(off)
    assert "held-out choice: BayesJudge" in on_text and "held-out choice" not in off_text
    head, rest = on_text.split("held-out choice:", 1)
    assert head + rest[rest.index("Judges' position bias"):] == off_text
    a, b = pairwise_json(fit, "v.csv"), pairwise_json(off, "v.csv")
    assert a.pop("choice")["made"] and not b.pop("choice")["made"]
    assert json.dumps(to_jsonable(a), sort_keys=True) == json.dumps(to_jsonable(b), sort_keys=True)


def test_choice_json_states_method_rule_folds_difference_and_interval(model_chosen):
    fit = model_chosen
    c = pairwise_json(fit, "v.csv")["choice"]
    assert c["made"] and c["method"] == "BayesJudge" == c["chosen"] and c["rule"] == "lowest"
    assert c["rule_text"] == "the method with the lowest held-out NLL (the model on a tie)"
    assert c["folds"] == 3                       # 3 humans, fewer than the 5 folds: one human a fold
    # the difference is choose_forecaster's on the choice's own held-out scores
    again = choose_forecaster(fit.choice_evaluation, rng=_bootstrap_stream(0))
    assert c["difference"] == again.nll_difference and c["interval"] == [again.nll_low, again.nll_high]
    assert c["interval"][0] <= c["difference"] <= c["interval"][1] and c["metric"] == "nll"
    assert c["accuracy_interval"][0] <= c["accuracy_difference"] <= c["accuracy_interval"][1]
    # the model against the goal's baselines (no systems named here: no systems' BTD; MACE, GLAD: --evaluate)
    assert set(fit.choice_evaluation.methods) == {"BayesJudge", "majority vote", "Dawid-Skene",
                                                  "Bradley-Terry-Davidson"}
    two = fit_pairwise(_table(0), n_particles=30, seed=0, top=0, choice_folds=2)
    assert two.choice_evaluation.n_folds == 2 and pairwise_json(two, "v.csv")["choice"]["folds"] == 2


def _bootstrap_stream(seed):
    from voirdire.workflows._seeds import stream

    return stream(seed, "pairwise", "choice", "bootstrap")


def test_too_few_humans_no_choice_and_the_model_shown(tmp_path):
    t = _table(0)
    one = t.select(label_mask=~np.isin(t.raters[t.rater_idx], ["human_2", "human_3"]))
    fit = fit_pairwise(one, n_particles=20, seed=0, top=2)
    assert fit.choice is None and fit.forecaster == "BayesJudge" and "the file has 1 human;" in fit.choice_note
    assert "held-out choice: not made: the file has 1 human" in " ".join(_text(fit).split())
    c = pairwise_json(fit, "v.csv")["choice"]
    assert not c["made"] and c["method"] == "BayesJudge" and c["not_made"] == fit.choice_note
    # humans only, each pair labelled by one of them: nothing to forecast a held-out verdict from
    h = t.select(label_mask=t.roles[t.rater_idx] == "human")
    keep = np.zeros(len(h.rater_idx), bool)
    for p in range(len(h.pairs)):
        keep[np.flatnonzero(h.label_pair == p)[p % 3]] = True
    lone = h.select(label_mask=keep)
    fit = fit_pairwise(lone, n_particles=20, seed=0, top=0)
    assert fit.choice is None and "every pair was labelled once" in fit.choice_note
    # a resumed stream: not made, the model's forecasts
    state = tmp_path / "s.npz"
    fit_pairwise(t, n_particles=20, seed=0, choose=False).model.save(state)
    fit = fit_pairwise(t, resume=state, top=0)
    assert fit.choice is None and "resumed stream" in fit.choice_note and fit.forecaster == "BayesJudge"


def test_choice_folds_must_be_at_least_two():
    with pytest.raises(InvalidParameterError, match="--choice-folds must be an integer >= 2"):
        fit_pairwise(_table(0), n_particles=10, choice_folds=1)
