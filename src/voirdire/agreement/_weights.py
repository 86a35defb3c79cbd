"""Agreement weights and distance matrices on the categories of a prepared table.

The matrices themselves come from :mod:`voirdire._stats.distances`; this module places the
abstention category and checks the options against the table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._stats.distances import WEIGHT_NAMES, agreement_weights, delta
from ..exceptions import InvalidParameterError
from ._prepare import Prepared

MAX_CATEGORIES = 2000  # q x q matrices above this are refused (use the interval path instead)


def _positions(prep: Prepared) -> np.ndarray:
    return prep.cat_values if prep.numeric else np.arange(1, prep.n_sub + 1, dtype=float)


def weight_matrix(weights: Any, prep: Prepared, func: str) -> tuple[np.ndarray, str]:
    """The q x q agreement-weight matrix for ``weights`` (a name, None, or an array), and its name.

    Under the ``disagree`` policy the abstention row and column are 0 (no credit, even between two
    abstentions); under ``category`` weights other than identity are refused (an abstention has
    no position on the scale).
    """
    if weights is None:
        weights = "identity"
    if isinstance(weights, str):
        if weights not in WEIGHT_NAMES:
            raise InvalidParameterError(
                f"The 'weights' parameter of {func} must be one of {list(WEIGHT_NAMES)} or a square array. "
                f"Got {weights!r} instead.")
        name = weights
        L = prep.n_sub
        if L > MAX_CATEGORIES:
            raise InvalidParameterError(
                f"{func}: {L} distinct categories are too many for a weight matrix (limit {MAX_CATEGORIES}). "
                f"For continuous scores use krippendorff_alpha(level='interval'), which needs no matrix.")
        if name != "identity" and not prep.numeric and prep.scale_level == "nominal":
            raise InvalidParameterError(
                f"{func}: {name!r} weights need ordered categories, but the scale is nominal with "
                f"non-numeric labels. Declare the order (scale='ordinal', categories=[...]) or use weights=None.")
        if name != "identity" and prep.policy == "category" and prep.abst_code is not None:
            raise InvalidParameterError(
                f"{func}: {name!r} weights cannot place the abstention category on the scale. Use "
                f"abstain_policy='exclude' or 'disagree', or weights=None.")
        W = agreement_weights(name, _positions(prep)) if L else np.zeros((0, 0))
    else:
        W = np.asarray(weights, dtype=float)
        name = "custom"
        L = prep.n_sub
        if W.ndim != 2 or W.shape not in ((L, L), (prep.q, prep.q)):
            raise InvalidParameterError(
                f"The 'weights' parameter of {func} must be a ({L}, {L}) array (one row per category). "
                f"Got shape {W.shape} instead.")
        if W.shape == (prep.q, prep.q) and prep.q != L:
            return W, name
    if prep.abst_code is not None:
        full = np.zeros((prep.q, prep.q))
        full[:L, :L] = W
        if prep.policy == "category":
            full[L, L] = 1.0
        return full, name
    return W, name


def distance_matrix(level: str, prep: Prepared) -> np.ndarray:
    """Krippendorff's squared distances (scaled to max 1) for nominal and ratio metrics.

    Under ``disagree`` the abstention class is at the maximal distance (1) from every label,
    itself included; under ``category`` it is one more nominal category.
    """
    L = prep.n_sub
    if level == "nominal":
        D = delta("nominal", None, n_categories=L)
    elif level == "ratio":
        D = delta("ratio", prep.cat_values)
        m = D.max() if D.size else 0.0
        if m > 0:
            D = D / m
    else:  # pragma: no cover - interval/ordinal use the moment path
        raise ValueError(level)
    if prep.abst_code is not None:
        full = np.ones((prep.q, prep.q))
        full[:L, :L] = D
        if prep.policy == "category":
            full[L, :L] = full[:L, L] = 1.0
            full[L, L] = 0.0
        return full
    return D
