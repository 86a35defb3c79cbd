"""Contract: the public names import, are documented, and results do not depend on row order."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import voirdire.validation as v
from voirdire.data import AnnotationTable


def test_public_names() -> None:
    expected = {"AltTestResult", "alt_test", "check_test_options", "LeaveOneOutResult", "LooArrays", "leave_one_out",
                "loo_core", "RankingResult", "rank_judges", "rank_error", "top1_error", "SequentialResult",
                "validate_sequential", "SequentialOCResult", "sequential_operating_characteristics",
                "multiplicity_rejections", "rejected_flags", "pair_scores", "check_memory", "SliceAdvantage",
                "slice_advantage"}
    assert set(v.__all__) == expected
    for name in v.__all__:
        obj = getattr(v, name)
        assert obj.__doc__, name
        if inspect.isfunction(obj) and name != "loo_core":
            params = inspect.signature(obj).parameters
            assert "alpha" not in params
            # data first and positional, options keyword-only
            kinds = [p.kind for p in params.values()]
            assert inspect.Parameter.KEYWORD_ONLY in kinds or len(kinds) <= 2, name


@pytest.mark.parametrize("cls", [v.AltTestResult, v.LeaveOneOutResult, v.RankingResult, v.LooArrays])
def test_results_are_frozen_slotted(cls) -> None:
    assert cls.__dataclass_params__.frozen and hasattr(cls, "__slots__")


def test_row_order_does_not_matter() -> None:
    rng = np.random.default_rng(3)
    n = 60
    truth = rng.integers(0, 3, n)
    rows = []
    for h, acc in [("a", .8), ("b", .8), ("c", .7), ("J", .75)]:
        lab = np.where(rng.random(n) < acc, truth, rng.integers(0, 3, n))
        keep = rng.random(n) < (1.0 if h in ("a", "J") else 0.7)
        rows += [(i, h, int(x)) for i, (x, k) in enumerate(zip(lab, keep)) if k]
    perm = rng.permutation(len(rows))
    tabs = []
    for order in (np.arange(len(rows)), perm):
        items, raters, labels = zip(*[rows[i] for i in order])
        tabs.append(AnnotationTable.from_arrays(items, raters, labels, judges=["J"]))
    a, b = (v.alt_test(t, "J", min_items_per_human=20) for t in tabs)
    assert dict(zip(a.humans, a.p_value)) == pytest.approx(dict(zip(b.humans, b.p_value)))
    la, lb = (v.leave_one_out(t, "J", n_resamples=0) for t in tabs)
    assert dict(zip(la.humans, la.d)) == pytest.approx(dict(zip(lb.humans, lb.d)))
