"""The one validator of saved :class:`PairwiseBayesModel` states (private).

A state file given to ``--resume`` is untrusted input: it is checked completely before any of
it is used. Keys (no unknown, none missing), types, ranges (``n_particles`` at most 1,000,000,
counts non-negative integers), array shapes (each consistent with the humans, judges and
particles the state names), values (Dirichlet counts positive and finite, log-weights finite),
and the random generator's name, looked up only in an allow-list: a name from a file is never
used to fetch an arbitrary attribute of ``numpy.random``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..exceptions import SchemaError

__all__ = ["validate_state", "BIT_GENERATORS", "MAX_PARTICLES"]

#: random generators a state may name (numpy's own; nothing else is looked up)
BIT_GENERATORS = {"PCG64": np.random.PCG64, "PCG64DXSM": np.random.PCG64DXSM, "Philox": np.random.Philox,
                  "SFC64": np.random.SFC64, "MT19937": np.random.MT19937}
MAX_PARTICLES = 1_000_000
_PARAMS = {"n_particles": int, "ess_threshold": float, "jitter": float, "update": str, "laplace": bool,
           "lambda_diag": float, "lambda_off": float, "batch_size": int, "learn_bias": bool,
           "learn_confusion": bool, "judge_ties": bool, "particles": str, "store_items": bool, "tol": float}
#: parameters added later: optional (older states lack them)
_OPTIONAL_PARAMS = {"pair_prior": str, "integrate_verdict": bool, "n_refine": int, "judge_reliability": bool,
                    "batch_move": bool, "quadrature": str, "confusion_prior": str}
_META = {"format", "params", "humans", "judges", "n_items_seen", "n_resamples", "chunk_len", "judge_counts", "rng"}
ARRAYS = ("beta", "delta", "logw", "alpha", "ess", "pairs", "out")


def _bad(src: str, what: str) -> SchemaError:
    return SchemaError(f"not a valid saved PairwiseBayesModel state: {what}. Resume from a file written by "
                       "--save-state (or start again without --resume).", source=src)


def _count(value: Any, name: str, src: str, *, maximum: float = 1e15) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        raise _bad(src, f"'{name}' must be an integer between 0 and {maximum:g}, got {str(value)[:40]}")
    return value


def _names(value: Any, name: str, src: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or len(set(value)) != len(value):
        raise _bad(src, f"'{name}' must be a list of distinct names")
    return value


def validate_state(meta: Any, arrays: dict[str, np.ndarray], src: str) -> np.random.Generator:
    """Check a loaded state completely; return the restored random generator. Raises :class:`SchemaError`."""
    if not isinstance(meta, dict):
        raise _bad(src, "the metadata is not an object")
    keys = set(meta) - {"hyper", "confusion_prior"}  # both absent from older states
    if "confusion_prior" in meta:
        c = meta["confusion_prior"]
        if not isinstance(c, list) or len(c) != 9 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in c):
            raise _bad(src, "'confusion_prior' must be a list of 9 positive finite numbers")
    if "hyper" in meta:
        h = meta["hyper"]
        if not isinstance(h, list) or len(h) != 8 or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in h):
            raise _bad(src, "'hyper' must be a list of 8 finite numbers")
    if keys != _META:
        extra, missing = sorted(keys - _META), sorted(_META - keys)
        raise _bad(src, "unknown key(s) " + str(extra)[:80] if extra else f"missing key(s) {missing}")
    params = meta["params"]
    if not isinstance(params, dict) or not set(_PARAMS) <= set(params) <= set(_PARAMS) | set(_OPTIONAL_PARAMS):
        raise _bad(src, f"'params' must hold exactly {sorted(_PARAMS)} (and optionally {sorted(_OPTIONAL_PARAMS)})")
    for k, typ in {**_PARAMS, **_OPTIONAL_PARAMS}.items():
        if k not in params:
            continue
        v = params[k]
        ok = isinstance(v, bool) if typ is bool else (
            isinstance(v, typ) and not isinstance(v, bool) or (typ is float and isinstance(v, int) and not isinstance(v, bool)))
        if not ok or (isinstance(v, float) and not math.isfinite(v)):
            raise _bad(src, f"parameter '{k}' must be a finite {typ.__name__}, got {str(v)[:40]}")
    m_particles = _count(params["n_particles"], "n_particles", src, maximum=MAX_PARTICLES)
    if m_particles < 1:
        raise _bad(src, "'n_particles' must be at least 1")
    humans = _names(meta["humans"], "humans", src)
    judges = _names(meta["judges"], "judges", src)
    for k in ("n_items_seen", "n_resamples", "chunk_len"):
        _count(meta[k], k, src)
    counts = meta["judge_counts"]
    if not isinstance(counts, list) or len(counts) != len(judges):
        raise _bad(src, "'judge_counts' must hold one count per judge")
    for c in counts:
        _count(c, "judge_counts", src)
    m = m_particles if params["learn_bias"] else 1
    per_judge = params["particles"] == "per_judge"
    expect = {"beta": (m, len(judges)), "delta": (m, len(judges)), "alpha": (len(humans), 3, 3),
              "logw": (m, len(judges)) if per_judge else (m,)}
    if "slope" in arrays:  # the judges' reliabilities (absent from older states)
        expect["slope"] = (m, len(judges))
    for k, shape in expect.items():
        a = arrays[k]
        if a.dtype.kind != "f" or a.shape != shape:
            raise _bad(src, f"array '{k}' has shape {a.shape} ({a.dtype}), expected {shape} floats")
        if not np.isfinite(a).all():
            raise _bad(src, f"array '{k}' holds NaN or infinite values")
    if (arrays["alpha"] <= 0).any():
        raise _bad(src, "the humans' Dirichlet counts ('alpha') must be positive")
    ess, pairs, out = arrays["ess"], arrays["pairs"], arrays["out"]
    if ess.dtype.kind not in "fi" or (ess.size and (ess.ndim != 2 or ess.shape[1] != 2)):
        raise _bad(src, "array 'ess' must have two columns")
    if pairs.ndim != 1 or pairs.dtype.kind not in "US":
        raise _bad(src, "array 'pairs' must be a list of pair ids")
    if len(pairs) and (out.ndim != 2 or out.shape[0] != len(pairs) or out.dtype.kind != "f"):
        raise _bad(src, "array 'out' must hold one row per stored pair")
    rng = meta["rng"]
    if not isinstance(rng, dict) or not isinstance(rng.get("bit_generator"), str):
        raise _bad(src, "'rng' must name its bit generator")
    cls = BIT_GENERATORS.get(rng["bit_generator"])
    if cls is None:
        raise _bad(src, f"unknown random generator {rng['bit_generator'][:40]!r}; expected one of {sorted(BIT_GENERATORS)}")
    bg = cls()
    try:
        bg.state = rng
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise _bad(src, f"the random generator's state is malformed ({str(exc)[:80]})") from None
    return np.random.Generator(bg)
