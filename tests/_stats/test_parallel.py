"""The two-thread helpers (voirdire/_stats/parallel.py) and the per-item arithmetic that uses them:
the same values, bit for bit, on one thread and on two."""

from __future__ import annotations

import numpy as np
import pytest

from voirdire._stats import parallel
from voirdire.agreement import krippendorff_alpha
from voirdire.agreement._prepare import _label_item
from voirdire.data import AnnotationTable


@pytest.fixture
def split_everything(monkeypatch):
    """Every array, however small, split between two threads."""
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(parallel, "two_cores", lambda: True)


def test_by_halves_covers_every_element_once(split_everything):
    seen = np.zeros(11, dtype=int)

    def fn(k: slice) -> None:
        seen[k] += 1

    parallel.by_halves(fn, 11)
    assert seen.tolist() == [1] * 11
    assert parallel.both(lambda: 1, lambda: 2, 5) == (1, 2)


def test_label_item_on_two_threads(monkeypatch):
    indptr = np.array([0, 0, 3, 3, 4, 9, 9], dtype=np.int64)
    want = np.repeat(np.arange(6), np.diff(indptr))
    assert np.array_equal(_label_item(indptr), want)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(parallel, "two_cores", lambda: True)
    assert np.array_equal(_label_item(indptr), want)
    assert _label_item(np.zeros(1, dtype=np.int64)).shape == (0,)


@pytest.mark.parametrize("abstain", [False, True])
def test_interval_alpha_same_bits_on_two_threads(monkeypatch, abstain):
    rng = np.random.default_rng(3)
    n = 3000
    items = np.repeat(np.arange(n), 3)
    labels = rng.normal(size=3 * n).round(2).astype(object)
    kw = {}
    if abstain:
        labels[rng.random(3 * n) < 0.1] = "n/a"
        kw = {"abstain": ["n/a"]}
    t = AnnotationTable.from_arrays(items, np.tile(["a", "b", "c"], n), labels, scale="interval", **kw)
    pol = {"abstain_policy": "disagree"} if abstain else {}
    one = krippendorff_alpha(t, level="interval", n_resamples=0, **pol)
    monkeypatch.setattr(parallel, "MIN_ELEMENTS", 1)
    monkeypatch.setattr(parallel, "two_cores", lambda: True)
    two = krippendorff_alpha(t, level="interval", n_resamples=0, **pol)
    assert (one.estimate, one.analytic_se, one.ci.low, one.ci.high) == (two.estimate, two.analytic_se, two.ci.low,
                                                                       two.ci.high)
