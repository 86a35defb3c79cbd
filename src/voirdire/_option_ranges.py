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

from ._defaults import GATES
from ._options import GROUP_ERRORS

__all__ = ["RANGES", "MINIMA", "OPEN_UNIT", "CHOICES", "check_ranges"]

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


#: parameter name -> the least value of an integer option (checked before any work; the library checks again)
MINIMA: dict[str, int] = {"particles": 1, "choice_folds": 2, "top": 0, "max_humans": 0, "min_eligible": 0,
                          "n_per_rater": 1, "repetitions": 1, "matrices": 1}
#: the options that are a probability strictly between 0 and 1 (an error rate)
OPEN_UNIT: tuple[str, ...] = ("q", "fdr")
#: parameter name -> the values of a text option that is not a registry choice (those Typer checks itself)
CHOICES: dict[str, tuple[str, ...]] = {"update": ("soft", "hard"), "mode": ("auto", "joint", "per-judge"),
                                       "fail_on": tuple(GATES), "group_error": GROUP_ERRORS}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def check_ranges(params: dict[str, Any]) -> str | None:
    """The error message for the first out-of-range option in ``params``, or ``None``."""
    for name, value in params.items():
        if value is None or isinstance(value, bool):
            continue
        if name in CHOICES and value not in CHOICES[name]:
            return f"{_flag(name)} must be one of {list(CHOICES[name])}. Got {value!r}."
        if name in MINIMA and isinstance(value, int) and value < MINIMA[name]:
            return f"{_flag(name)} must be an integer >= {MINIMA[name]}. Got {value}."
        if name in OPEN_UNIT and isinstance(value, float) and not 0 < value < 1:
            return f"{_flag(name)} must be in (0, 1). Got {value:g}."
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
