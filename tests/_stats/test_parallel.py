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


def test_in_threads_keeps_the_order_the_context_and_the_first_error_in_order():
    import contextvars
    import threading
    import time

    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    var.set("caller's")
    started: list[int] = []

    def call(i: int, sleep: float = 0.0):
        def f():
            started.append(i)
            time.sleep(sleep)
            return (i, var.get(), threading.get_ident())
        return f

    out = parallel.in_threads([call(0, 0.05), call(1), call(2)], workers=2)
    assert [o[:2] for o in out] == [(0, "caller's"), (1, "caller's"), (2, "caller's")]
    assert len({o[2] for o in out}) == 2  # two threads ran them
    assert parallel.in_threads([call(0), call(1)], workers=1)[1][2] == threading.get_ident()  # one: here

    def boom(msg: str, sleep: float):
        def f():
            time.sleep(sleep)
            raise ValueError(msg)
        return f

    # the second call fails first in time, the first call's error is the one raised (as a loop would)
    with pytest.raises(ValueError, match="first"):
        parallel.in_threads([boom("first", 0.1), boom("second", 0.0), call(9)], workers=2)
