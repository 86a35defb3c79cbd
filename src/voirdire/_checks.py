"""Input guards shared by every public function (private)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np

from .exceptions import DegenerateDataWarning, InvalidParameterError, UndefinedStatisticError

OnUndefined = Literal["warn", "raise", "nan"]
ON_UNDEFINED = ("warn", "raise", "nan")


def fraction_hint(value: Any, *, low: float = 0.0, high: float = 1.0, open_low: bool = True,
                  open_high: bool = True) -> str:
    """``" Did you mean X?"`` for a value that looks like a misplaced fraction, else ``""``.

    A whole number in (1, 100] reads as a percentage (95 -> 0.95, 5 -> 0.05); a non-whole number
    in (1, 10) as a misplaced decimal point (1.5 -> 0.15); any other non-whole number in
    [10, 100] as a percentage (97.5 -> 0.975). The guess is offered only when it is itself a
    valid value (between ``low`` and ``high``, bounds open or closed as given).

    Examples
    --------
    >>> fraction_hint(95), fraction_hint(1.5), fraction_hint(100), fraction_hint(-0.1)
    (' Did you mean 0.95?', ' Did you mean 0.15?', '', '')
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return ""
    v = float(value)
    if not (np.isfinite(v) and 1 < v <= 100):
        return ""
    guess = v / 10 if (v < 10 and not v.is_integer()) else v / 100
    ok = (guess > low if open_low else guess >= low) and (guess < high if open_high else guess <= high)
    return f" Did you mean {guess:g}?" if ok else ""


def check_probability(value: Any, name: str, func: str, *, open_low: bool = True,
                      open_high: bool = True) -> float:
    """Return ``value`` as a float in (0, 1) (bounds open or closed), else raise."""
    lo, hi = ("(" if open_low else "["), (")" if open_high else "]")
    ok = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = (v > 0 if open_low else v >= 0) and (v < 1 if open_high else v <= 1)
    if not ok:
        hint = fraction_hint(value, open_low=open_low, open_high=open_high)
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be a float in {lo}0, 1{hi}. "
            f"Got {value!r} instead.{hint}"
        )
    return float(value)


def check_confidence_level(value: Any, func: str) -> float:
    return check_probability(value, "confidence_level", func)


def check_choice(value: Any, name: str, func: str, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if value not in choices:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be one of {list(choices)}. Got {value!r} instead."
        )
    return str(value)


def check_positive_int(value: Any, name: str, func: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be an integer >= {minimum}. Got {value!r} instead."
        )
    return int(value)


def check_on_undefined(value: Any, func: str) -> str:
    return check_choice(value, "on_undefined", func, ON_UNDEFINED)


def undefined(reason: str, on_undefined: str, *, stacklevel: int = 3) -> float:
    """Apply the ``on_undefined`` policy: warn and return nan, raise, or return nan silently."""
    if on_undefined == "raise":
        raise UndefinedStatisticError(reason)
    if on_undefined == "warn":
        warnings.warn(reason, DegenerateDataWarning, stacklevel=stacklevel)
    return float("nan")


def as_generator(rng: int | np.random.Generator | None) -> np.random.Generator:
    """Turn ``rng`` (int seed, Generator or None) into a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise InvalidParameterError(
        f"The 'rng' parameter must be an int, a numpy Generator or None. Got {type(rng).__name__}."
    )


def check_epsilon(epsilon: Any, func: str) -> float:
    """``epsilon`` as a float in [0, 1) (the tolerance of the validation tests and planners), else raise."""
    ok = isinstance(epsilon, (int, float, np.integer, np.floating)) and not isinstance(epsilon, bool)
    if ok and 0.0 <= float(epsilon) < 1.0:
        return float(epsilon)
    hint = fraction_hint(epsilon, open_low=False) if ok else ""
    raise InvalidParameterError(
        f"The 'epsilon' parameter of {func} must be a float in [0, 1). Got {epsilon!r} instead.{hint}")


def available_memory() -> int | None:
    """Bytes of physical memory available now (``None`` where the system does not say)."""
    import os

    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def check_fits(n_bytes: float, what: str, fix: str) -> None:
    """Raise before allocating ``n_bytes`` when they exceed the memory available.

    The message reads ``too large: <what> needs X GiB, more than the Y GiB of memory available;
    <fix>``: a clear error instead of a ``MemoryError`` half-way through.
    """
    avail = available_memory()
    if avail is not None and n_bytes > avail:
        raise InvalidParameterError(
            f"too large: {what} needs {n_bytes / 2**30:.1f} GiB, more than the {avail / 2**30:.1f} GiB of memory "
            f"available; {fix}")
