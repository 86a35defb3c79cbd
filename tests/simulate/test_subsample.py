"""subsample(): exact per-secondary budgets, untouched primary and judges, the design's strata,
on synthetic data and on the fully crossed real sets (SummEval 6,400 x 3, Lesion 500 x 6)."""

from __future__ import annotations

import numpy as np
import pytest

from voirdire.data import read_annotations
from voirdire.design import DESIGNS
from voirdire.design._core import proportional_quota
from voirdire.exceptions import InfeasiblePlanError, InvalidParameterError
from voirdire.simulate import simulate_annotations, subsample

from ..conftest import shared_data


@pytest.fixture(scope="module")
def full():
    return simulate_annotations(n_items=400, n_humans=4, n_categories=3, judge_accuracies=[0.7, 0.9],
                                prevalence=[0.6, 0.3, 0.1], rng=0).table


@pytest.mark.parametrize("design", DESIGNS)
def test_exact_budget_and_untouched_columns(full, design: str) -> None:
    sp = subsample(full, design, 0.1, rng=3)
    dense_full, dense = full.dense(), sp.dense()
    n_lab = (dense >= 0).sum(axis=0)
    assert n_lab.tolist() == [400, 40, 40, 40, 400, 400]
    kept = dense >= 0
    assert np.array_equal(dense[kept], dense_full[kept])        # labels are the full matrix's
    assert sp.fingerprint() != full.fingerprint()
    assert sp.n_items == full.n_items and tuple(sp.raters) == tuple(full.raters)


def test_strat_follows_primary_strata(full) -> None:
    sp = subsample(full, "strat", 0.1, rng=1).dense()
    prim = full.dense()[:, 0]
    quota = proportional_quota(np.bincount(prim, minlength=3), 40)
    for s in (1, 2, 3):
        got = np.bincount(prim[sp[:, s] >= 0], minlength=3)
        assert got.tolist() == quota.tolist()


def test_reproducible_and_errors(full) -> None:
    a = subsample(full, "seq-coverage", 0.25, rng=7)
    b = subsample(full, "seq-coverage", 0.25, rng=7)
    assert a.fingerprint() == b.fingerprint()
    with pytest.raises(InvalidParameterError, match="Did you mean 0.25"):
        subsample(full, "random", 25)
    with pytest.raises(InvalidParameterError, match="'design' parameter of subsample"):
        subsample(full, "nope", 0.1)
    with pytest.raises(InvalidParameterError, match="must be a human"):
        subsample(full, "random", 0.1, primary="judge_1")
    keep = ~((full.rater_idx == 1) & (full.label_item >= 100))
    with pytest.raises(InfeasiblePlanError, match="fewer than m = 200"):
        subsample(full.select(label_mask=keep), "random", 0.5)


def test_primary_choice(full) -> None:
    sp = subsample(full, "random", 0.1, primary="human_3", rng=0)
    assert ((sp.dense() >= 0).sum(axis=0)).tolist() == [40, 40, 400, 40, 400, 400]


def test_summeval_and_lesion_subsample() -> None:
    summ = read_annotations(shared_data("alttest", "summeval"))
    sp = subsample(summ, "strat", 0.05, rng=0)
    n = (sp.dense() >= 0).sum(axis=0)
    assert n[:3].tolist() == [6400, 320, 320] and (n[3:] == 6400).all()
    les = read_annotations(shared_data("alttest", "lesion"))
    d = les.dense()
    prim = int(np.argmax((d[:, les.human_idx] >= 0).sum(axis=0)))
    sp = subsample(les, "seq-refined", 0.25, rng=0)
    n = (sp.dense() >= 0).sum(axis=0)
    assert n[prim] == (d[:, prim] >= 0).sum()
    assert sorted(n[les.human_idx].tolist())[:5] == [125] * 5


@pytest.mark.parametrize("design", DESIGNS)
def test_full_coverage_returns_the_full_table(full, design: str) -> None:
    assert subsample(full, design, 1.0, rng=0).fingerprint() == full.fingerprint()
