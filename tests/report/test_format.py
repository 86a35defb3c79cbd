"""Number formatting: the only rounding in voirdire."""

from __future__ import annotations

import math

import pytest

from voirdire.report import fmt_ci, fmt_int, fmt_num, fmt_p, fmt_pct


@pytest.mark.parametrize("x, digits, out", [
    (0.41236, 3, "0.412"), (0.4125, 2, "0.41"), (-0.0004, 3, "0.000"), (1, 3, "1.000"),
    (None, 3, "\u2014"), (math.nan, 3, "\u2014"), (math.inf, 3, "\u2014"), (-1.5, 1, "-1.5"),
])
def test_fmt_num(x, digits, out):
    assert fmt_num(x, digits) == out


def test_fmt_p_thresholds():
    # below 0.001 the exact value carries no information a reader can use
    assert fmt_p(0.000999) == "p < 0.001"
    assert fmt_p(0.001) == "p = 0.001"
    assert fmt_p(0.04999) == "p = 0.050"
    assert fmt_p(None) == "\u2014"


def test_fmt_int_pct_ci():
    assert fmt_int(1234567) == "1,234,567"
    assert fmt_pct(0.5) == "50.0%"
    assert fmt_ci(0.1, 0.2) == "[0.100, 0.200]"
    assert fmt_ci(None, 0.2) == "[\u2212\u221e, 0.200]"
    assert fmt_ci(0.1, math.inf) == "[0.100, \u221e]"
