"""Tables with many items for the large-n (normal law) paths of the validation analyses."""

from __future__ import annotations

import numpy as np

from voirdire.data import AnnotationTable


def judge_table(n_items: int, seed: int, *, n_humans: int = 5, density: float = 0.6,
                scale: str | None = None) -> AnnotationTable:
    """``n_humans`` humans labelling each item with probability ``density`` and a judge on every item;
    labels 1-5, each a noisy copy (+-1) of the item's truth."""
    rng = np.random.default_rng(seed)
    keep = np.concatenate([rng.random((n_items, n_humans)) < density, np.ones((n_items, 1), dtype=bool)], axis=1)
    ii, rr = np.nonzero(keep)
    truth = rng.integers(1, 6, n_items)
    lab = np.clip(truth[ii] + rng.integers(-1, 2, ii.size), 1, 5)
    names = np.array([f"h{k}" for k in range(n_humans)] + ["judge"])
    return AnnotationTable.from_arrays(ii, names[rr], lab, judges=["judge"], scale=scale)
