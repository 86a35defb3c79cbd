"""Agreement weights and distance matrices on the categories of a prepared table."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import InvalidParameterError
from ._prepare import Prepared

WEIGHT_NAMES = ("identity", "linear", "quadratic", "ordinal", "radical", "ratio", "circular", "bipolar")
MAX_CATEGORIES = 2000  # q x q matrices above this are refused (use the interval path instead)


def _positions(prep: Prepared) -> np.ndarray:
    return prep.cat_values if prep.numeric else np.arange(1, prep.n_sub + 1, dtype=float)


def substantive_weights(name: str, x: np.ndarray) -> np.ndarray:
    """Gwet's weight matrices (agreement weights in [0, 1], 1 on the diagonal) on values ``x``."""
    q = x.size
    if name == "identity" or q < 2:
        return np.eye(q)
    d = x[:, None] - x[None, :]
    lo, hi = float(x.min()), float(x.max())
    rng_ = hi - lo
    if name == "linear":
        return 1.0 - np.abs(d) / rng_
    if name == "quadratic":
        return 1.0 - (d / rng_) ** 2
    if name == "radical":
        return 1.0 - np.sqrt(np.abs(d)) / np.sqrt(rng_)
    if name == "ratio":
        s = x[:, None] + x[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(s == 0, 0.0, (d / np.where(s == 0, 1, s)) ** 2)
        m = ((hi - lo) / (hi + lo)) ** 2 if hi + lo != 0 else 1.0
        return 1.0 - r / m
    if name == "ordinal":
        k = np.arange(q)
        nkl = np.abs(k[:, None] - k[None, :]) + 1
        w = nkl * (nkl - 1) / 2.0
        return 1.0 - w / w.max()
    if name == "circular":
        u = hi - lo + 1
        w = np.sin(np.pi * d / u) ** 2
        return 1.0 - w / w.max()
    if name == "bipolar":
        s = x[:, None] + x[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            w = d ** 2 / ((s - 2 * lo) * (2 * hi - s))
        w[np.eye(q, dtype=bool)] = 0.0
        w = np.nan_to_num(w, nan=0.0, posinf=0.0)
        return 1.0 - w / w.max()
    raise InvalidParameterError(f"unknown weights {name!r}")  # pragma: no cover - checked earlier


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
        W = substantive_weights(name, _positions(prep)) if L else np.zeros((0, 0))
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
        D = 1.0 - np.eye(L)
    elif level == "ratio":
        x = prep.cat_values
        s = x[:, None] + x[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            D = np.where(s == 0, 0.0, ((x[:, None] - x[None, :]) / np.where(s == 0, 1, s)) ** 2)
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
