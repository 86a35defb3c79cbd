"""The shared input guards: the 'Did you mean ...?' hint for a value given as a percentage or with a
misplaced decimal point."""

from __future__ import annotations

import pytest

from voirdire._checks import check_probability, fraction_hint
from voirdire.exceptions import InvalidParameterError


@pytest.mark.parametrize(("value", "kw", "hint"), [
    (95, {}, " Did you mean 0.95?"),        # a percentage
    (5, {}, " Did you mean 0.05?"),         # a whole number reads as a percentage, not 0.5
    (80.0, {}, " Did you mean 0.8?"),
    (97.5, {}, " Did you mean 0.975?"),     # a non-whole percentage
    (1.5, {}, " Did you mean 0.15?"),       # regression: was 0.015; a misplaced decimal point
    (2.5, {}, " Did you mean 0.25?"),
    (100, {}, ""),                          # 1.0 is outside (0, 1)
    (100, {"open_high": False}, " Did you mean 1?"),
    (1, {}, ""),
    (150, {}, ""),
    (-0.1, {}, ""),
    (float("nan"), {}, ""),
    (True, {}, ""),
    ("95", {}, ""),
])
def test_fraction_hint(value, kw, hint):
    assert fraction_hint(value, **kw) == hint


def test_check_probability_hint():
    with pytest.raises(InvalidParameterError, match=r"Got 1\.5 instead\. Did you mean 0\.15\?$"):
        check_probability(1.5, "power", "f")
    with pytest.raises(InvalidParameterError, match=r"Got 95 instead\. Did you mean 0\.95\?$"):
        check_probability(95, "confidence_level", "f")
    with pytest.raises(InvalidParameterError, match=r"Got 100 instead\.$"):
        check_probability(100, "confidence_level", "f")


def test_epsilon_hint():
    from voirdire.validation._common import check_epsilon

    with pytest.raises(InvalidParameterError, match=r"\[0, 1\)\. Got 1\.5 instead\. Did you mean 0\.15\?$"):
        check_epsilon(1.5, "leave_one_out")
    with pytest.raises(InvalidParameterError, match=r"Did you mean 0\.05\?$"):
        check_epsilon(5, "leave_one_out")
    with pytest.raises(InvalidParameterError, match=r"Got 1\.0 instead\.$"):
        check_epsilon(1.0, "leave_one_out")
    assert check_epsilon(0, "leave_one_out") == 0.0
