"""Contract tests: bad parameters raise the documented errors; undefined statistics follow on_undefined."""

from __future__ import annotations

import numpy as np
import pytest

import voirdire.agreement as A
from voirdire.data import AnnotationTable
from voirdire.exceptions import DegenerateDataWarning, InvalidParameterError, UndefinedStatisticError

from ._helpers import table_from_wide


@pytest.fixture
def t():
    return table_from_wide([["y", "y", "n"], ["n", "n", "n"], ["y", "y", "y"], ["n", "y", "n"]])


def test_public_names_import():
    for name in A.__all__:
        assert hasattr(A, name)
    assert set(A.COEFFICIENTS) <= set(A.__all__)


@pytest.mark.parametrize("func", [A.krippendorff_alpha, A.fleiss_kappa, A.gwet_ac1, A.observed_agreement,
                                  A.bennett_s, A.conger_kappa, A.gwet_ac2])
def test_confidence_level_message(t, func):
    with pytest.raises(InvalidParameterError,
                       match=rf"The 'confidence_level' parameter of {func.__name__} must be a float in \(0, 1\). "
                             r"Got 95 instead. Did you mean 0.95\?"):
        func(t, confidence_level=95)


@pytest.mark.parametrize("kw, match", [
    ({"n_resamples": -1}, "'n_resamples' parameter of fleiss_kappa must be an integer >= 0"),
    ({"n_resamples": 5}, "must be 0 or at least 20"),
    ({"n_resamples": 2.5}, "'n_resamples'"),
    ({"on_undefined": "ignore"}, r"'on_undefined' parameter of fleiss_kappa must be one of \['warn', 'raise', 'nan'\]"),
    ({"abstain_policy": "drop"}, r"'abstain_policy' parameter of fleiss_kappa must be one of"),
    ({"rng": "seed"}, "'rng' parameter of fleiss_kappa must be an int"),
    ({"raters": ["r0", "nobody"]}, "Rater 'nobody' is not in"),
    ({"raters": ["r0", "r0"]}, "repeats a rater"),
    ({"weights": "cubic"}, r"'weights' parameter of fleiss_kappa must be one of"),
    ({"weights": np.eye(3)}, r"must be a \(2, 2\) array"),
])
def test_bad_parameters(t, kw, match):
    with pytest.raises(InvalidParameterError, match=match):
        A.fleiss_kappa(t, **kw)


def test_bad_level_and_weights_on_nominal_strings(t):
    with pytest.raises(InvalidParameterError, match="'level' parameter of krippendorff_alpha must be one of"):
        A.krippendorff_alpha(t, level="metric")
    with pytest.raises(InvalidParameterError, match="level='interval' needs numeric labels"):
        A.krippendorff_alpha(t, level="interval")
    with pytest.raises(InvalidParameterError, match="level='ordinal' needs ordered categories"):
        A.krippendorff_alpha(t, level="ordinal")
    with pytest.raises(InvalidParameterError, match="'quadratic' weights need ordered categories"):
        A.gwet_ac2(t)


def test_two_rater_coefficients_refuse_three_raters(t):
    with pytest.raises(InvalidParameterError, match="cohen_kappa compares exactly two raters; the selection has 3"):
        A.cohen_kappa(t)
    assert np.isfinite(A.cohen_kappa(t, raters=["r0", "r1"], n_resamples=0).estimate)


def test_not_a_table():
    with pytest.raises(InvalidParameterError, match="'table' parameter of krippendorff_alpha must be an AnnotationTable"):
        A.krippendorff_alpha(np.zeros((3, 3)))


def test_agreement_bad_coefficient(t):
    with pytest.raises(InvalidParameterError, match="'coefficients' parameter of agreement must hold names"):
        A.agreement(t, coefficients=["kappa"])


def test_ratio_needs_non_negative_values():
    t = table_from_wide([[-1, 2], [3, 3]], scale="interval")
    with pytest.raises(InvalidParameterError, match="level='ratio' needs non-negative values"):
        A.krippendorff_alpha(t, level="ratio")


# ------------------------------------------------------------------ undefined statistics
@pytest.fixture
def one_category():
    return table_from_wide([["y", "y"], ["y", "y"], ["y", "y"]])


@pytest.mark.parametrize("func", [A.krippendorff_alpha, A.fleiss_kappa, A.cohen_kappa, A.scott_pi, A.conger_kappa])
def test_one_category_warns_and_returns_nan(one_category, func):
    with pytest.warns(DegenerateDataWarning, match="undefined"):
        r = func(one_category, n_resamples=50, rng=0)
    assert np.isnan(r.estimate) and np.isnan(r.ci.low) and np.isnan(r.se)
    with pytest.raises(UndefinedStatisticError, match="undefined"):
        func(one_category, on_undefined="raise")
    r = func(one_category, on_undefined="nan")  # silent
    assert np.isnan(r.estimate)


def test_ac1_one_category_scale_is_undefined(one_category):
    # one declared category: AC1's chance term divides by q - 1 = 0
    with pytest.warns(DegenerateDataWarning, match="fewer than two categories"):
        assert np.isnan(A.gwet_ac1(one_category, n_resamples=0).estimate)


def test_ac1_is_defined_with_one_used_category_of_two():
    # AC1 with categories (n, y), only y used: pa = 1, pi = (0, 1), pe = 0 -> AC1 = 1 (not a stand-in value)
    t = table_from_wide([["y", "y"], ["y", "y"]], categories=["n", "y"])
    assert A.gwet_ac1(t, n_resamples=0).estimate == 1.0


def test_no_item_with_two_labels():
    t = AnnotationTable.from_arrays([1, 2, 3], ["a", "b", "a"], ["x", "y", "x"])
    with pytest.warns(DegenerateDataWarning, match="no item has two or more labels"):
        r = A.krippendorff_alpha(t, n_resamples=0)
    assert np.isnan(r.estimate) and r.n_items == 0
    with pytest.warns(DegenerateDataWarning, match="no item has two or more labels"):
        assert np.isnan(A.fleiss_kappa(t, n_resamples=0).estimate)
    with pytest.warns(DegenerateDataWarning, match="share no item"):
        assert np.isnan(A.cohen_kappa(t, n_resamples=0).estimate)


def test_interval_alpha_constant_values():
    t = table_from_wide([[3.0, 3.0], [3.0, 3.0]], scale="interval")
    with pytest.warns(DegenerateDataWarning, match="expected disagreement is 0"):
        assert np.isnan(A.krippendorff_alpha(t, n_resamples=0).estimate)


def test_results_are_json_safe(t):
    import json

    r = A.krippendorff_alpha(t, n_resamples=30, rng=1)
    json.dumps(r.to_dict())
    assert list(r.to_frame()["coefficient"]) == ["krippendorff_alpha"]
    tab = A.agreement(t, n_resamples=30, rng=1)
    json.dumps(tab.to_dict())
    assert len(tab.to_frame()) == len(tab)
    with pytest.raises(InvalidParameterError, match="No coefficient 'cohen_kappa'"):
        tab["cohen_kappa"]
