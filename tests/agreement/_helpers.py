"""Helpers shared by the agreement tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from voirdire.data import AnnotationTable


def table_from_wide(X: Any, *, scale: str = "nominal", categories: Any = None, abstain: Any = (),
                    raters: Any = None, judges: Any = (), clusters: Any = None) -> AnnotationTable:
    """Build a table from an (items x raters) array; ``nan`` / ``None`` means missing."""
    X = np.asarray(X, dtype=object)
    n, R = X.shape
    names = list(raters) if raters is not None else [f"r{k}" for k in range(R)]
    rows = []
    for i in range(n):
        for k in range(R):
            v = X[i, k]
            if v is None or (isinstance(v, float) and np.isnan(v)):
                continue
            row = {"item": f"i{i}", "rater": names[k], "label": v}
            if clusters is not None:
                row["cluster"] = f"c{clusters[i]}"
            rows.append(row)
    df = pd.DataFrame(rows)
    return AnnotationTable.from_frame(df, scale=scale, categories=categories, abstain=abstain, judges=judges,
                                      cluster="cluster" if clusters is not None else None)


def wide_values(t: AnnotationTable) -> np.ndarray:
    """(items x raters) float values with nan for missing or abstained."""
    return t.dense_values()


# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers x 12 units.
# The same data are Gwet's (2014) 4-raters example shipped by irrCAC as ``raw_4raters``.
KRIPPENDORFF_2011 = np.array([
    [1, 1, np.nan, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [np.nan, 5, 5, 5],
    [np.nan, np.nan, 1, 1],
    [np.nan, np.nan, 3, np.nan],
])

# Wikipedia "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories (counts).
FLEISS_WIKIPEDIA = np.array([
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
])


def counts_to_wide(counts: np.ndarray) -> np.ndarray:
    """Expand a subjects x categories count table into subjects x raters labels (1-based)."""
    n, q = counts.shape
    R = int(counts.sum(axis=1).max())
    X = np.full((n, R), np.nan)
    for i in range(n):
        labs = np.repeat(np.arange(1, q + 1), counts[i])
        X[i, : labs.size] = labs
    return X
