"""Synthetic grouped tables with known truth (private): the planted slice failure and groups on the margin.

Both give a long frame (``item, rater, label, role`` and the group column) of binary labels: a true
label per item (fair coin), three humans each right with probability ``p_human``, and one judge.

* :func:`slice_failure_frame`: the judge is as good as the humans (``p_judge = p_human``) on every
  slice but the last, where it is right with probability ``p_bad`` (the planted failure; the last
  slice is one item in ``n_slices``).
* :func:`margin_frame`: every group has the judge exactly on the alt-test's margin: with humans right
  with probability 0.9 and the judge with 0.65, each human's advantage over the judge,
  ``E[W^h - W^f]``, is exactly 0.2 (enumerated over the 2^4 right/wrong patterns of the held-out
  human, the two other humans and the judge: :func:`advantage_gap`).

Used by ``tests/workflows/test_groups_statistical.py`` and ``bench/bench_slices.py``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

__all__ = ["slice_failure_frame", "margin_frame", "advantage_gap", "margin_judge", "MARGIN_P_HUMAN", "MARGIN_P_JUDGE"]

#: humans' and judge's accuracies that put the judge exactly on the alt-test's default margin 0.2
MARGIN_P_HUMAN, MARGIN_P_JUDGE = 0.9, 0.65


def advantage_gap(p_human: float, p_judge: float, n_humans: int = 3) -> float:
    """``E[W^h - W^f]`` for one held-out human among ``n_humans``, binary labels, independent errors
    (enumerated over the right/wrong patterns of the held-out human, the others and the judge)."""
    tot = 0.0
    for pattern in itertools.product((0, 1), repeat=n_humans + 1):  # 1 = right
        hk, j, others = pattern[0], pattern[1], pattern[2:]
        pr = (p_human if hk else 1 - p_human) * (p_judge if j else 1 - p_judge)
        for r in others:
            pr *= p_human if r else 1 - p_human
        hc = sum(hk == r for r in others)
        jc = sum(j == r for r in others)
        tot += pr * ((hc > jc) - (jc > hc))
    return tot


def margin_judge(p_human: float = MARGIN_P_HUMAN, n_humans: int = 3, epsilon: float = 0.2) -> float:
    """The judge's accuracy that puts it exactly on the margin ``epsilon`` (``advantage_gap = epsilon``)."""
    from scipy.optimize import brentq

    return float(brentq(lambda p: advantage_gap(p_human, p, n_humans) - epsilon, 0.5, p_human, xtol=1e-12))


def _frame(truth: np.ndarray, p_rater: dict[str, np.ndarray], group: np.ndarray, column: str,
           rng: np.random.Generator, item_prefix: str = "") -> pd.DataFrame:
    n = truth.size
    items = np.array([f"{item_prefix}{i}" for i in range(n)], dtype=object)
    parts = []
    for name, p in p_rater.items():
        lab = np.where(rng.random(n) < p, truth, 1 - truth)
        parts.append(pd.DataFrame({"item": items, "rater": name, "label": lab.astype(str),
                                   "role": "judge" if name == "judge" else "human", column: group}))
    return pd.concat(parts, ignore_index=True)


def slice_failure_frame(n_items: int, rng: np.random.Generator, *, fail: bool = True, p_human: float = 0.9,
                        p_bad: float = 0.55, n_slices: int = 5, column: str = "slice") -> pd.DataFrame:
    """A table whose judge equals the humans except on the last slice (``fail``), where it is right with ``p_bad``."""
    truth = rng.integers(0, 2, n_items)
    names = np.array([chr(ord("A") + k) for k in range(n_slices)], dtype=object)
    group = names[np.arange(n_items) % n_slices]
    pj = np.where((group == names[-1]) & fail, p_bad, p_human)
    return _frame(truth, {"h1": np.full(n_items, p_human), "h2": np.full(n_items, p_human),
                          "h3": np.full(n_items, p_human), "judge": pj}, group, column, rng)


def margin_frame(n_items: int, n_groups: int, rng: np.random.Generator, *, column: str = "criterion",
                 n_humans: int = 3) -> pd.DataFrame:
    """``n_groups`` groups (criteria) of ``n_items`` items each, the judge exactly on the margin in every one;
    the groups share item ids (a rubric: every item rated on every criterion)."""
    pj = MARGIN_P_JUDGE if n_humans == 3 else margin_judge(MARGIN_P_HUMAN, n_humans)
    frames = []
    for g in range(n_groups):
        truth = rng.integers(0, 2, n_items)
        p = {**{f"h{k + 1}": MARGIN_P_HUMAN for k in range(n_humans)}, "judge": pj}
        frames.append(_frame(truth, {k: np.full(n_items, v) for k, v in p.items()},
                             np.full(n_items, f"c{g}", dtype=object), column, rng))
    return pd.concat(frames, ignore_index=True)
