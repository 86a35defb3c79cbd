"""Turning raw numbers into strings (private). The only place in voirdire where numbers are rounded."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fmt_num", "fmt_int", "fmt_p", "fmt_pct", "fmt_ci", "is_missing", "DASH", "choice_sentence"]

#: What a missing or undefined number is shown as.
DASH = "\u2014"


def is_missing(x: Any) -> bool:
    """Whether ``x`` is ``None`` or a non-finite float (JSON turns nan into ``None``)."""
    if x is None:
        return True
    try:
        return not math.isfinite(float(x))
    except (TypeError, ValueError):
        return True


def fmt_num(x: Any, digits: int = 3) -> str:
    """A float with ``digits`` decimals; a dash for ``None``/nan.

    Examples
    --------
    >>> fmt_num(0.41236), fmt_num(None), fmt_num(-0.00001)
    ('0.412', '—', '0.000')
    """
    if is_missing(x):
        return DASH
    s = f"{float(x):.{digits}f}"
    if s.startswith("-") and float(s) == 0.0:
        s = s[1:]
    return s


def fmt_int(x: Any) -> str:
    """An integer with thousands separators.

    Examples
    --------
    >>> fmt_int(6336)
    '6,336'
    """
    if is_missing(x):
        return DASH
    return f"{int(x):,}"


def fmt_p(p: Any) -> str:
    """A p-value as it is read: ``p < 0.001`` below 0.001, else three decimals.

    Examples
    --------
    >>> fmt_p(0.0004), fmt_p(0.0312), fmt_p(1.0)
    ('p < 0.001', 'p = 0.031', 'p = 1.000')
    """
    if is_missing(p):
        return DASH
    p = float(p)
    if p < 0.001:
        return "p < 0.001"
    return f"p = {p:.3f}"


def fmt_pct(x: Any, digits: int = 1) -> str:
    """A share as a percentage.

    Examples
    --------
    >>> fmt_pct(0.9234)
    '92.3%'
    """
    if is_missing(x):
        return DASH
    return f"{100 * float(x):.{digits}f}%"


def fmt_ci(low: Any, high: Any, digits: int = 3) -> str:
    """An interval ``[low, high]``; open bounds are shown as infinities.

    Examples
    --------
    >>> fmt_ci(0.1, 0.25), fmt_ci(None, None)
    ('[0.100, 0.250]', '—')
    """
    if is_missing(low) and is_missing(high):
        return DASH
    lo = "\u2212\u221e" if is_missing(low) else fmt_num(low, digits)
    hi = "\u221e" if is_missing(high) else fmt_num(high, digits)
    return f"[{lo}, {hi}]"


def choice_sentence(choice: dict[str, Any]) -> str:
    """The held-out choice of the pairwise forecaster in words, as the terminal prints it after ``held-out
    choice:`` (``voirdire pairwise``) and the report's Pairwise section shows it; empty when the choice was
    switched off (``--no-choice``). ``choice``: :meth:`voirdire.workflows.PairwiseFit.choice_dict`.

    Examples
    --------
    >>> choice_sentence({"made": False, "method": "BayesJudge", "not_made": "the file has 1 human"})
    "not made: the file has 1 human. The forecasts shown are BayesJudge's."
    """
    if not choice.get("made"):
        why = choice.get("not_made")
        return f"not made: {why}. The forecasts shown are {choice['method']}'s." if why else ""
    lo, hi = choice["accuracy_interval"]
    return (f"{choice['chosen']} (leave-one-human-out, {choice['folds']} folds of humans; rule: "
            f"{choice['rule_text'] or choice['rule']}). {choice['reason']} Accuracy {choice['model']} minus "
            f"{choice['best_baseline']}: {choice['accuracy_difference']:+.4f} [{lo:+.4f}, {hi:+.4f}] "
            f"({100 * choice['confidence_level']:g}%).")
