"""The human-scored count against what the inclusion probabilities allow (issue 29 item 1)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from voirdire.data import AnnotationTable
from voirdire.estimation import classical_mean, compare_estimators, dr_mean, dr_mean_table, labelled_count
from voirdire.exceptions import InvalidParameterError, SchemaError


def test_limit_by_hand():
    # 600 items at pi = 0.1: mean 60, V = 600 * 0.1 * 0.9 = 54, M = 1, L = log(1e9) = 20.72;
    # t = L/3 + sqrt((L/3)^2 + 2 L V) = 6.908 + sqrt(47.72 + 2238.0) = 54.72: limit 114.7
    c = labelled_count(np.ones(600, bool), np.full(600, 0.1))
    L = math.log(1e9)
    t = L / 3 + math.sqrt((L / 3) ** 2 + 2 * L * 54)
    assert c.expected == pytest.approx(60) and c.sd == pytest.approx(math.sqrt(54))
    assert c.limit == pytest.approx(60 + t) and c.limit == pytest.approx(114.72, abs=0.01)
    assert c.impossible and "600 of 600 items are human-scored" in c.sentence()
    lab = np.zeros(600, bool)
    lab[:114] = True
    assert not labelled_count(lab, np.full(600, 0.1)).impossible       # 114 <= limit
    lab[114] = True
    assert labelled_count(lab, np.full(600, 0.1)).impossible           # 115 > limit
    # every item labelled at pi = 1: expected = the count, never impossible
    assert not labelled_count(np.ones(50, bool), np.ones(50)).impossible
    # a probability unknown for an unlabelled item: the design's count is unknown, no verdict
    assert labelled_count(np.ones(3, bool), np.array([0.1, 0.1, np.nan])) is None


def test_clusters_bound_the_unit_variance():
    # 10 clusters of 6 items at pi = 0.5: mu_c = 3, Var bound mu_c (m_c - mu_c) = 9 (the exact variance of
    # a cluster drawn whole: 36 * 0.25 = 9), V = 90, M = 6
    codes = np.repeat(np.arange(10), 6)
    c = labelled_count(np.zeros(60, bool), np.full(60, 0.5), codes)
    L = math.log(1e9)
    assert c.sd == pytest.approx(math.sqrt(90))
    assert c.limit == pytest.approx(30 + 2 * L + math.sqrt(4 * L * L + 2 * L * 90))


def test_honest_poisson_designs_never_trip():
    # 4000 Poisson draws over designs from 20 to 2000 items, probabilities 0.01-1: no count is called impossible
    rng = np.random.default_rng(0)
    for _ in range(4000):
        n = int(rng.integers(20, 2000))
        pi = rng.uniform(0.01, 1.0, n) ** rng.uniform(0.5, 4)
        lab = rng.random(n) < pi
        assert not labelled_count(lab, pi).impossible


def _judges_as_humans(n=600, pi=0.1, seed=1):
    """The issue's file: judges j1, j2, j3 score every item, one human scores ~10% of them."""
    rng = np.random.default_rng(seed)
    z = rng.normal(3, 1, n)
    sel = rng.random(n) < pi
    rows = []
    for i in range(n):
        for j in ("j1", "j2", "j3"):
            rows.append((f"i{i}", j, "judge", round(float(z[i] + rng.normal(0, 0.5)), 2), pi))
        if sel[i]:
            rows.append((f"i{i}", "h1", "human", round(float(z[i] + rng.normal(0, 0.3)), 1), pi))
    return pd.DataFrame(rows, columns=["item", "rater", "role", "label", "pi"])


def test_api_refuses_judges_counted_as_humans():
    df = _judges_as_humans()
    t = AnnotationTable.from_frame(df, judges=["j1"], scale="interval")   # j2, j3 become humans
    with pytest.raises(SchemaError, match=r"600 of 600 items are human-scored.*expected 60.*'j2', 'j3'"):
        dr_mean_table(t, "j1", inclusion_prob=0.1, rng=0)
    ok = AnnotationTable.from_frame(df, judges=["j1"], role="role", scale="interval")
    res = dr_mean_table(ok, "j1", inclusion_prob=0.1, rng=0)
    assert res.n_labeled == int((df.rater == "h1").sum()) < 115
    # the workflow of `voirdire estimate` and the report: the same rule
    y = np.full(600, 3.0)
    with pytest.raises(InvalidParameterError, match="compare_estimators does not describe.*600 of 600"):
        compare_estimators(np.zeros(600), y, 0.1, rng=0)
    # the array estimators themselves take y as given (their documented design); they do not refuse it
    assert dr_mean(np.arange(600.0), y, 0.1, model="identity").n_labeled == 600
    assert classical_mean(y, 0.1).n_labeled == 600
