"""Leave-one-human-out evaluation and the scoring rules."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, log_loss

from voirdire.data import PairwiseTable
from voirdire.exceptions import InvalidParameterError
from voirdire.pairwise import (
    LOHOResult,
    choose_forecaster,
    MajorityVote,
    PairwiseBayesModel,
    leave_one_human_out,
    score_predictions,
    simulate_pairwise,
)


def test_scores_against_sklearn():
    rng = np.random.default_rng(0)
    p = rng.dirichlet([1, 1, 1], 200)
    y = rng.integers(0, 3, 200)
    s = score_predictions(p, y)
    assert s["nll"] == pytest.approx(log_loss(y, p, labels=[0, 1, 2]))
    # multiclass Brier = sum over classes of one-vs-rest squared errors
    brier = sum(brier_score_loss(y == k, p[:, k]) for k in range(3))
    assert s["brier"] == pytest.approx(brier)
    assert s["accuracy"] == pytest.approx((p.argmax(1) == y).mean())


def test_ece_hand_checked():
    # two predictions of confidence 0.9 (one right), two of 0.6 (both right):
    # |0.5 - 0.9| * 2/4 + |1.0 - 0.6| * 2/4 = 0.4
    p = np.array([[0.9, 0.05, 0.05], [0.9, 0.05, 0.05], [0.2, 0.6, 0.2], [0.2, 0.6, 0.2]])
    y = np.array([0, 2, 1, 1])
    assert score_predictions(p, y)["ece"] == pytest.approx(0.4)
    assert np.isnan(score_predictions(np.zeros((0, 3)), np.zeros(0, int))["accuracy"])


@pytest.mark.parametrize(("proba", "y", "needle"), [
    (np.full((2, 3), 1 / 3), np.array([0, 3]), r"labels 0 \(A\), 1 \(tie\) and 2 \(B\)\. Got \[3\]"),  # was IndexError
    (np.full((2, 3), 1 / 3), np.array([-1, 0]), r"Got \[-1\]"),  # was a silent wrap-around to B
    (np.full((2, 3), 1 / 3), np.array([0.5, 1.0]), r"Got \[0\.5\]"),
    (np.full((2, 3), 1 / 3), np.array(["A", "B"]), "'y' parameter"),
    (np.full((2, 3), 1 / 3), np.array([0, 1, 2]), "one label per row"),
    (np.full((2, 2), 0.5), np.array([0, 1]), r"\(n, 3\) array"),
])
def test_score_predictions_bad_input(proba, y, needle):
    with pytest.raises(InvalidParameterError, match=needle):
        score_predictions(proba, y)


def test_loho_hand_checked_majority_vote():
    # two humans + one judge on two pairs; holding out "a" leaves b and the judge
    t = PairwiseTable.from_arrays(pair=[1, 1, 1, 2, 2, 2], rater=["a", "b", "g", "a", "b", "g"],
                                  verdict=["A", "A", "B", "T", "B", "B"], order=[None, None, "AB"] * 2,
                                  judges=["g"])
    res = leave_one_human_out(t, methods={"mv": lambda: MajorityVote(smoothing=1.0)})
    # hold out a: pair 1 votes (A, B) -> (2, 1, 2)/5, a said A: p = 0.4; pair 2 (B, B) -> (1, 1, 3)/5, a said T: 0.2
    # hold out b: pair 1 (A, B) -> p(A) = 0.4; pair 2 (T, B) -> (1, 2, 2)/5, b said B: 0.4
    row = res.table.iloc[0]
    assert row["n_labels"] == 4
    assert row["nll"] == pytest.approx(-np.mean(np.log([0.4, 0.2, 0.4, 0.4])))
    assert isinstance(res, LOHOResult) and res.n_folds == 2 and res.n_labels_unscored == 0
    assert set(res.per_human["human"]) == {"a", "b"}


def test_loho_groups_folds_and_unscored():
    t, _ = simulate_pairwise(80, confusions=np.repeat(np.eye(3)[None] * 0.7 + 0.1, 6, 0), rng=1)
    groups = {f"human_{k}": ("expert" if k <= 2 else "crowd") for k in range(1, 7)}
    calls = []
    res = leave_one_human_out(t, methods={"mv": lambda: MajorityVote(smoothing=0.5), "mv1": lambda: MajorityVote()},
                              groups=groups, max_folds=3, rng=0, progress=lambda d, n: calls.append((d, n)))
    assert res.n_folds == 3
    assert calls == [(k, 6) for k in range(7)]  # before the first fit, then after each of 3 folds x 2 methods
    assert res.table["group"].tolist() == ["all", "crowd", "expert"] * 2
    n = res.table[res.table["method"] == "mv"].set_index("group")["n_labels"]
    assert n["all"] == n["crowd"] + n["expert"] == 6 * 80
    # a pair labelled by one human only cannot be predicted once that human is held out
    lone = PairwiseTable.from_arrays(pair=[1, 2, 2], rater=["a", "a", "b"], verdict=["A", "B", "B"])
    r2 = leave_one_human_out(lone, methods={"mv": lambda: MajorityVote()})
    assert r2.n_labels_unscored == 1 and r2.table["n_labels"].iloc[0] == 2


@pytest.mark.slow
def test_loho_default_methods_and_best():
    t, _ = simulate_pairwise(150, rng=2)
    res = leave_one_human_out(t, n_particles=60, rng=0)
    assert list(res.methods) == ["BayesJudge", "majority vote", "Bradley-Terry-Davidson", "Dawid-Skene",
                                 "MACE", "GLAD"]
    assert res.best("nll") in res.methods and res.target == "human"
    assert res.to_frame().shape[0] == 6
    lat = leave_one_human_out(t, methods={"b": lambda: PairwiseBayesModel(n_particles=30, rng=0)},
                              target="latent")
    assert lat.target == "latent"
    with pytest.raises(InvalidParameterError, match="No group 'crowd'"):
        res.best("nll", group="crowd")


@pytest.mark.slow
def test_group_aware_forecast_uses_the_groups_confusion():
    """Two experts who tie a lot and three crowd workers who never tie: a held-out expert is
    forecast through the other expert's confusion matrix, so ties get much more mass."""
    conf = np.array([[[0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.5, 0.5]]] * 2
                    + [[[0.9, 0.0, 0.1], [0.45, 0.1, 0.45], [0.1, 0.0, 0.9]]] * 3)
    t, _ = simulate_pairwise(300, confusions=conf, rng=3)
    groups = {"human_1": "expert", "human_2": "expert", "human_3": "crowd", "human_4": "crowd",
              "human_5": "crowd"}
    methods = {"bayes": lambda: PairwiseBayesModel(n_particles=50, rng=0)}
    g = leave_one_human_out(t, methods=methods, groups=groups).table.set_index("group")
    n = leave_one_human_out(t, methods=methods).per_human.set_index("human")
    pg = leave_one_human_out(t, methods=methods, groups=groups).per_human.set_index("human")
    # experts: the group-aware forecast is much better than the all-humans one
    assert pg.loc["human_1", "nll"] < n.loc["human_1", "nll"] - 0.1
    assert g.loc["expert", "n_labels"] == 600


@pytest.mark.statistical
def test_bayes_beats_majority_vote_on_synthetic_loho():
    """Noisy humans and a biased judge: the model's forecast of a held-out human beats vote shares."""
    t, _ = simulate_pairwise(400, biases=[1.0, 0.0], rng=5)
    methods = {"bayes": lambda: PairwiseBayesModel(n_particles=100, rng=0),
               "mv": lambda: MajorityVote(smoothing=0.5)}
    res = leave_one_human_out(t, methods=methods).table.set_index("method")
    assert res.loc["bayes", "nll"] < res.loc["mv", "nll"]
    assert res.loc["bayes", "accuracy"] >= res.loc["mv", "accuracy"]


def test_bad_arguments():
    t, _ = simulate_pairwise(10, rng=0)
    with pytest.raises(InvalidParameterError, match="'table' parameter of leave_one_human_out"):
        leave_one_human_out(t.to_frame())
    with pytest.raises(InvalidParameterError, match="not humans of the table"):
        leave_one_human_out(t, groups={"judge_1": "x"})
    with pytest.raises(InvalidParameterError, match="'target' parameter"):
        leave_one_human_out(t, target="both")
    judges_only = t.select(raters=["judge_1"])
    with pytest.raises(InvalidParameterError, match="at least one human"):
        leave_one_human_out(judges_only)


def test_difference_paired_bootstrap_over_pairs():
    from voirdire.pairwise import DawidSkene
    t, _ = simulate_pairwise(400, rng=5)
    methods = {"vote": lambda: MajorityVote(smoothing=0.5), "DS": lambda: DawidSkene()}
    res = leave_one_human_out(t, methods=methods, rng=0)
    d = res.difference("DS", "vote", n_resamples=4000, rng=0).set_index("metric")
    tab = res.table.set_index("method")
    # the point estimates are the table's paired differences
    assert d.loc["accuracy", "estimate"] == pytest.approx(tab.loc["DS", "accuracy"] - tab.loc["vote", "accuracy"])
    assert d.loc["nll", "estimate"] == pytest.approx(tab.loc["DS", "nll"] - tab.loc["vote", "nll"])
    assert d.loc["nll", "n_pairs"] == 400 and d.loc["nll", "n_labels"] == 1200
    # the interval's half-width matches the pair-clustered standard error of the mean difference
    y = res.labels["y"].to_numpy()
    r = np.arange(len(y))
    dl = (np.log(np.clip(res.proba["vote"][r, y], 1e-12, 1)) - np.log(np.clip(res.proba["DS"][r, y], 1e-12, 1)))
    per_pair = np.bincount(np.unique(res.labels["pair"], return_inverse=True)[1], weights=dl - dl.mean())
    se = np.sqrt((per_pair ** 2).sum()) / len(dl)
    half = (d.loc["nll", "high"] - d.loc["nll", "low"]) / 2
    assert half == pytest.approx(1.96 * se, rel=0.1)
    # a label-level bootstrap would be narrower: three humans of a pair share its forecast
    iid = 1.96 * dl.std(ddof=1) / np.sqrt(len(dl))
    assert half > iid
    # with 'other' only the labels scored in both results are compared
    same = res.difference("DS", "DS", other=res, rng=0)
    assert (same[["estimate", "low", "high"]].to_numpy() == 0).all()
    with pytest.raises(InvalidParameterError, match="no forecasts of method 'nope'"):
        res.difference("nope", "vote")
    other = leave_one_human_out(simulate_pairwise(400, rng=6)[0], methods=methods, rng=0)
    with pytest.raises(InvalidParameterError, match="different held-out labels"):
        res.difference("DS", "vote", other=other)
    assert "labels" not in res.to_dict() and "table" in res.to_dict()


class _Constant:
    """A forecaster that says the same distribution for every pair (for the held-out choice)."""

    def __init__(self, p):
        self.p = np.asarray(p, dtype=float)

    def fit(self, table):
        self.n = table.n_pairs
        return self

    def predict_proba(self):
        return np.tile(self.p, (self.n, 1))


def test_choose_forecaster_rule():
    """20 pairs, 3 humans who all say A. A forecaster of (0.8, 0.1, 0.1) scores NLL -log 0.8 = 0.223
    a label, a uniform one log 3 = 1.099: the uniform model is reliably worse (every pair's
    difference is +0.875, so the bootstrap interval is that point) and its rival is chosen; the
    confident one is kept against the uniform one."""
    pairs = [f"p{k}" for k in range(20) for _ in range(3)]
    raters = [f"h{r}" for _ in range(20) for r in range(3)]
    table = PairwiseTable.from_arrays(pair=pairs, rater=raters, verdict=["A"] * 60)
    res = leave_one_human_out(table, methods={"uniform": lambda: _Constant([1 / 3] * 3),
                                              "confident": lambda: _Constant([0.8, 0.1, 0.1])}, rng=0)
    c = choose_forecaster(res, model="uniform")
    assert (c.chosen, c.best_baseline) == ("confident", "confident")
    assert c.nll_difference == pytest.approx(np.log(3) + np.log(0.8))
    assert c.nll_low == pytest.approx(c.nll_difference) and "worse" in c.reason
    assert c.accuracy_difference == 0.0   # both pick A (the uniform one by argmax of a tie: the first)
    kept = choose_forecaster(res, model="confident")
    assert kept.chosen == "confident" and kept.nll_high < 0 and "better than the best baseline" in kept.reason
    assert set(kept.to_dict()) >= {"chosen", "nll_low", "nll_high", "reason"}
    with pytest.raises(InvalidParameterError, match="no forecasts of method 'x'"):
        choose_forecaster(res, model="x")
    with pytest.raises(InvalidParameterError, match="must be a LOHOResult"):
        choose_forecaster("nope")  # type: ignore[arg-type]


def test_choose_forecaster_rules_differ_only_when_the_interval_covers_0():
    """Two pairs, 3 humans; on p0 all say A, on p1 all say B. 'a' forecasts (0.6, 0.2, 0.2) on every
    pair, 'b' (0.2, 0.2, 0.6). Per label NLL: 'a' -log 0.6 = 0.511 on p0, -log 0.2 = 1.609 on p1; 'b'
    the mirror; so with p0 three times as often as p1 'a' is better by the point estimate, but a
    bootstrap over 4 pairs (3 of p0, 1 of p1) can draw only p1s: its interval covers 0."""
    pairs = [f"p{k}" for k in range(4) for _ in range(3)]
    raters = [f"h{r}" for _ in range(4) for r in range(3)]
    table = PairwiseTable.from_arrays(pair=pairs, rater=raters, verdict=["A"] * 9 + ["B"] * 3)
    res = leave_one_human_out(table, methods={"a": lambda: _Constant([0.6, 0.2, 0.2]),
                                              "b": lambda: _Constant([0.2, 0.2, 0.6])}, rng=0)
    # (3 x 0.511 + 1.609) / 4 = 0.786 against (3 x 1.609 + 0.511) / 4 = 1.335
    kept = choose_forecaster(res, model="b", rule="not_worse")
    assert kept.nll_difference == pytest.approx((3 * np.log(3) - np.log(3)) / 4)
    assert kept.nll_low <= 0 < kept.nll_difference and kept.chosen == "b" and "not shown" in kept.reason
    low = choose_forecaster(res, model="b")                      # the default rule: the lowest NLL
    assert low.chosen == "a" and low.rule == "lowest" and "by the point estimate" in low.reason
    assert low.rule_text == "the method with the lowest held-out NLL (the model on a tie)"
    assert choose_forecaster(res, model="a").chosen == "a"
    with pytest.raises(InvalidParameterError, match="'rule' parameter"):
        choose_forecaster(res, model="b", rule="best")  # type: ignore[arg-type]


def test_held_out_choice_is_a_forecaster():
    from voirdire.pairwise import DawidSkene, HeldOutChoice
    t, _ = simulate_pairwise(150, rng=0)
    methods = {"vote": lambda: MajorityVote(smoothing=0.5), "DS": lambda: DawidSkene()}
    h = HeldOutChoice(methods, model="DS", rng=0).fit(t)
    # the choice on the whole table is choose_forecaster's on leave_one_human_out of that table
    direct = choose_forecaster(leave_one_human_out(t, methods=methods, max_folds=5, rng=0), model="DS")
    assert h.choice_.chosen == direct.chosen == "vote"
    np.testing.assert_allclose(h.predict_proba(), MajorityVote(smoothing=0.5).fit(t).predict_proba())
    # and it can be scored like any method (nested leave-one-human-out)
    res = leave_one_human_out(t, methods={"choice": lambda: HeldOutChoice(methods, model="DS", rng=0),
                                          **methods}, rng=0)
    # every held-out label is forecast by the method chosen inside its fold: vote's or DS's forecast
    p, y = res.proba, res.labels["y"].to_numpy()
    same = np.isclose(p["choice"], p["vote"]).all(1) | np.isclose(p["choice"], p["DS"]).all(1)
    assert same.all() and np.isclose(p["choice"], p["vote"]).all(1).any()
    assert res.table.set_index("method").loc["choice", "n_labels"] == len(y)
    with pytest.raises(InvalidParameterError, match="not fitted"):
        HeldOutChoice(methods).predict_proba()
    with pytest.raises(InvalidParameterError, match="'rule' parameter of HeldOutChoice"):
        HeldOutChoice(methods, rule="x")  # type: ignore[arg-type]


def test_default_methods_add_the_systems_baseline_for_named_systems():
    from voirdire.pairwise import default_methods, simulate_sparse_pairwise
    assert "systems Bradley-Terry-Davidson" not in default_methods(rng=0)
    assert "systems Bradley-Terry-Davidson" in default_methods(rng=0, systems=True)
    t = simulate_sparse_pairwise(60, n_humans=4, n_systems=3, rng=0)
    m = {"vote": lambda: MajorityVote(smoothing=0.5)}
    assert leave_one_human_out(t, methods=m, rng=0).methods == ("vote",)   # given methods are kept as given
