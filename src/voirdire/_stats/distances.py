"""The one distance and weight-matrix module (private): Krippendorff's metrics, Gwet's weights.

Every coefficient that credits partial agreement reads its category-by-category matrix here:

:func:`delta`
    Krippendorff's squared difference functions ``delta^2(c, k)`` on category values: nominal
    ``1[c != k]``, ordinal from the category margins (:func:`ordinal_delta`), interval
    ``(c - k)^2``, ratio ``((c - k) / (c + k))^2`` (Krippendorff 2011, "Computing Krippendorff's
    alpha-reliability", section E). Unscaled: alpha is a ratio of two sums of ``delta`` and does
    not change when ``delta`` is multiplied by a constant.
:func:`ordinal_delta`
    ``delta_ab = (sum_{g=a..b} n_g - (n_a + n_b) / 2)^2`` for margins ``(..., L)``, batched over
    the leading axes (one matrix per resample, item or comparison).
:func:`agreement_weights`
    Gwet's agreement-weight matrices (1 on the diagonal, in [0, 1]; Gwet 2014, Handbook of
    Inter-Rater Reliability, 4th ed., ch. 3): identity, linear, quadratic, ordinal, radical,
    ratio, circular, bipolar, named in :data:`WEIGHT_NAMES`.

Callers add what is theirs: the agreement engine places abstentions and scales ratio distances
to a maximum of 1 (``agreement/_weights.py``); the validation kernel pads a "missing" row and
column (``validation/_kernel.py``); the simulation engine calls :func:`delta` directly.
"""

from __future__ import annotations

import numpy as np

from .. import _options

__all__ = ["LEVELS", "WEIGHT_NAMES", "agreement_weights", "delta", "ordinal_delta"]

LEVELS = _options.LEVELS  # the one registry of option values
WEIGHT_NAMES = ("identity", "linear", "quadratic", "ordinal", "radical", "ratio", "circular", "bipolar")


def ordinal_delta(marg: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal metric from category margins ``(..., L)`` -> ``(..., L, L)``.

    ``delta_ab = (sum_{g=a..b} n_g - (n_a + n_b) / 2)^2``.
    """
    marg = np.asarray(marg, dtype=float)
    cum = np.cumsum(marg, axis=-1)
    v = cum[..., None, :] - cum[..., :, None] - (marg[..., None, :] - marg[..., :, None]) / 2.0
    return v**2


def delta(level: str, values: np.ndarray | None, *, n_categories: int | None = None,
          margins: np.ndarray | None = None) -> np.ndarray:
    """Krippendorff's ``delta^2`` between ``L`` categories, an ``(L, L)`` matrix.

    ``values`` are the categories' numeric values (interval and ratio; None reads as nominal),
    ``margins`` the pairable-value counts per category (ordinal), ``n_categories`` the size when
    ``values`` is None.
    """
    if level == "ordinal":
        if margins is None:
            raise ValueError("the ordinal metric needs the category margins")
        return ordinal_delta(margins)
    if level == "nominal" or values is None:
        L = int(n_categories if n_categories is not None else (0 if values is None else np.asarray(values).size))
        return 1.0 - np.eye(L)
    v = np.asarray(values, dtype=float)
    diff = v[:, None] - v[None, :]
    if level == "interval":
        return diff**2
    if level != "ratio":
        raise ValueError(f"unknown level {level!r}")
    s = v[:, None] + v[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(s == 0, 0.0, diff / np.where(s == 0, 1.0, s))
    return r**2


def agreement_weights(name: str, x: np.ndarray) -> np.ndarray:
    """Gwet's weight matrices (agreement weights in [0, 1], 1 on the diagonal) on values ``x``."""
    x = np.asarray(x, dtype=float)
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
    raise ValueError(f"unknown weights {name!r}")
