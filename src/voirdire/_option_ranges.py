"""Ranges of the numeric options, declared once for every command (private; beside the registry of option specs,
:mod:`voirdire._option_specs`).

:func:`check_ranges` runs (from :func:`voirdire.cli._app.handle_errors`) on the parsed
arguments of every command before any work: an option named in :data:`RANGES` must lie in its
range, and every float option must be finite (``nan`` and ``inf`` are refused). The library
checks its parameters again; this keeps absurd values (``--seed -1``, ``--resamples 1e20``)
from reaching numpy as a crash or a 100 GiB allocation.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["RANGES", "check_ranges"]

#: parameter name -> (smallest, largest) allowed value, both inclusive. ``None`` as the smallest value
#: leaves the lower bound to the library function, whose message names its own parameter.
RANGES: dict[str, tuple[float | None, float]] = {
    "seed": (0, 2**63 - 1),            # numpy seeds are non-negative; -1 crashed numpy
    "resamples": (None, 1_000_000),
    "n_resamples": (None, 1_000_000),
    "particles": (None, 1_000_000),
    "n_items": (None, 10_000_000),
    "repetitions": (None, 1_000_000),
    "n_jobs": (None, 1024),
    "n_per_rater": (None, 10_000_000),
    "top": (None, 1_000_000),
    "max_humans": (None, 10_000),
    "cross_fit": (None, 1000),
    "n_clusters": (None, 10_000_000),
    "n_judges": (None, 100_000),
    "min_items": (None, 10_000_000),
    "min_eligible": (None, 10_000_000),
    "min_items_per_human": (None, 10_000_000),
    "min_humans_per_item": (None, 100_000),
    "max_wait": (0, 31_536_000),       # watch --max-wait: seconds, at most a year; -1 was accepted
}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def check_ranges(params: dict[str, Any]) -> str | None:
    """The error message for the first out-of-range option in ``params``, or ``None``."""
    for name, value in params.items():
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            return f"{_flag(name)} must be a finite number. Got {value}."
        if isinstance(value, list):
            bad = [v for v in value if isinstance(v, float) and not math.isfinite(v)]
            if bad:
                return f"{_flag(name)} must be a finite number. Got {bad[0]}."
        if name in RANGES and isinstance(value, (int, float)):
            lo, hi = RANGES[name]
            if lo is not None and value < lo:
                return f"{_flag(name)} must be between {lo:,} and {hi:,}. Got {value:,}."
            if value > hi:
                return f"{_flag(name)} must be at most {hi:,}. Got {value:,}."
    return None
