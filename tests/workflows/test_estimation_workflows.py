"""The estimation family's workflows on their own: :func:`voirdire.workflows.estimate_from_file` and
:func:`voirdire.workflows.plan_estimation` (the numbers the commands print: tests/workflows/test_same_numbers_estimation.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from voirdire.data import read_annotations
from voirdire.exceptions import InfeasiblePlanError, InvalidParameterError, SchemaError
from voirdire.workflows import EstimationPlan, FileEstimate, estimate_from_file, plan_estimation


def _file(tmp_path, n=40):
    # judge j on every item; human h on the even items, inclusion probability 0.5 on every row
    rows = [(f"i{i}", "j", float(i % 5)) for i in range(n)] + [(f"i{i}", "h", float(i % 5) + 0.5) for i in range(0, n, 2)]
    p = tmp_path / "s.csv"
    pd.DataFrame(rows, columns=["item", "rater", "label"]).assign(pi=0.5).to_csv(p, index=False)
    return p


def test_estimate_from_file_hand_checked(tmp_path):
    p = _file(tmp_path)
    t = read_annotations(p, judges=["j"], scale="interval")
    res = estimate_from_file(p, t, ["j"], "pi", model="identity")
    assert isinstance(res, FileEstimate) and res.grouped is None and res.n_items == 40
    # m(X) = X: mean of j (2.0) + (1/N) sum over human items of (h - j) / pi = 2 + 20 * 0.5 / 0.5 / 40 = 2.5
    dr = res.estimate.comparison.dr
    assert dr.estimate == pytest.approx(2.5, abs=1e-12)
    doc = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert doc["design"]["inclusion_prob"] == "pi" and doc["raters_counted_as_humans"] == ["h"]
    assert "not named by --judge" in res.roles_note and res.warnings == [res.roles_note]
    frame = res.to_frame()
    assert list(frame["estimator"]) == ["DR", "human-only", "PPI++"]
    assert frame.loc[0, "estimate"] == pytest.approx(2.5)
    # the same probability given as a number: the same estimate, the design named as given
    num = estimate_from_file(p, t, ["j"], "0.50", model="identity")
    assert num.estimate.comparison.dr.estimate == dr.estimate and num.to_dict()["design"]["inclusion_prob"] == "0.50"


def test_estimate_from_file_refuses_what_it_cannot_estimate(tmp_path):
    p = _file(tmp_path)
    t = read_annotations(p, judges=["j", "h"], scale="interval")
    with pytest.raises(SchemaError, match="no human rater"):
        estimate_from_file(p, t, ["j", "h"], "pi")
    t = read_annotations(p, judges=["j"], scale="interval")
    with pytest.raises(InvalidParameterError, match="Did you mean a fraction"):
        estimate_from_file(p, t, ["j"], "50")
    with pytest.raises(SchemaError, match="names column 'nope'"):
        estimate_from_file(p, t, ["j"], "nope")
    with pytest.raises(InvalidParameterError, match="seed"):
        estimate_from_file(p, t, ["j"], "pi", seed=-1)


def test_plan_estimation_sample_sizes_and_errors(tmp_path):
    plan = plan_estimation(r2=0.5, n_star=100, n_total=1000)
    assert isinstance(plan, EstimationPlan) and plan.kind == "sample_size" and plan.sample is None
    # 1/100 = 0.5/1000 + 0.5/n  ->  n = 0.5 / (0.01 - 0.0005) = 52.6 -> 53
    assert plan.sample_size.n_labeled == 53 and plan.sources == {"r2": "given", "sd": "given"}
    assert json.loads(json.dumps(plan.to_dict(), allow_nan=False))["pilot"] is None
    assert len(plan.to_frame()) == 1
    with pytest.raises(InvalidParameterError, match="--r2"):
        plan_estimation(n_star=100, n_total=1000)
    with pytest.raises(InvalidParameterError, match="--budget goes with --strata"):
        plan_estimation(r2=0.5, n_star=100, n_total=1000, budget=10)
    with pytest.raises(InvalidParameterError, match="--design active needs --pilot"):
        plan_estimation(design="active", budget=10)


def test_plan_estimation_draws_within_the_items_on_hand(tmp_path):
    items = tmp_path / "items.csv"
    pd.DataFrame({"item": [f"t{i}" for i in range(50)]}).to_csv(items, index=False)
    plan = plan_estimation(r2=0.5, n_star=40, draw=items, seed=1)
    assert plan.sample_size.n_total == 50 and plan.sample.n_items == 50 and plan.streams == {"draw": 1}
    again = plan_estimation(r2=0.5, n_star=40, draw=items, seed=1)
    assert np.array_equal(plan.sample.assignments["selected"], again.sample.assignments["selected"])
    with pytest.raises(InfeasiblePlanError, match="cannot be settled with the 50 items you have"):
        plan_estimation(r2=0.5, n_star=60, draw=items)
