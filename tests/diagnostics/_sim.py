"""Planted-rater tables for the diagnostics tests (known truth)."""

from __future__ import annotations

import numpy as np

from voirdire.data import AnnotationTable


def simulate_raters(rng: np.random.Generator, *, n_items: int, n_good: int, missing: float, kind: str,
                    accuracy: float = 0.75, q: int = 5) -> tuple[AnnotationTable, str]:
    """``n_good`` annotators right with probability ``accuracy`` (errors uniform over the other ``q - 1``
    categories) and one planted annotator: ``"spammer"`` (uniform labels), ``"biased"`` (category 0 on a
    random 40% of the items, otherwise like a good one) or ``"good"``. Each label is missing with
    probability ``missing``. Returns the table and the planted annotator's name."""
    z = rng.integers(0, q, n_items)
    K = n_good + 1
    wrong = (z[:, None] + rng.integers(1, q, (n_items, K))) % q
    labs = np.where(rng.random((n_items, K)) < accuracy, z[:, None], wrong)
    if kind == "spammer":
        labs[:, n_good] = rng.integers(0, q, n_items)
    elif kind == "biased":
        labs[rng.random(n_items) < 0.4, n_good] = 0
    elif kind != "good":
        raise ValueError(kind)
    obs = rng.random((n_items, K)) >= missing
    ii, kk = np.nonzero(obs)
    t = AnnotationTable.from_arrays(ii, [f"a{k}" for k in kk], labs[ii, kk], categories=list(range(q)))
    return t, f"a{n_good}"
