"""`voirdire estimate` with several judges, its hints, and `plan-estimate --design active`."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.estimation import compare_estimators, dr_mean

runner = CliRunner()


def _write(tmp_path, *, sep="-", n=240, frac=0.3, seed=0, noise_judge=False):
    rng = np.random.default_rng(seed)
    z = rng.normal(3, 0.8, n)
    a = np.round(rng.normal(0, 1, n) if noise_judge else z + rng.normal(0, 0.5, n), 2)
    b = np.round(rng.normal(0, 1, n) if noise_judge else z + rng.normal(0, 0.5, n), 2)
    truth = z + rng.normal(0, 0.4, n)
    sel = rng.random(n) < frac
    rows = []
    ids = [f"d{i // 4}{sep}s{i % 4}" for i in range(n)]
    for i in range(n):
        rows.append({"item": ids[i], "rater": "A", "label": a[i]})
        rows.append({"item": ids[i], "rater": "B", "label": b[i]})
        if sel[i]:
            rows.append({"item": ids[i], "rater": "h1", "label": round(float(truth[i]), 1)})
    p = tmp_path / "scores.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    y = np.where(sel, np.round(truth, 1), np.nan)
    return p, np.column_stack([a, b]), y


def test_two_judges_json_matches_the_workflow_and_library(tmp_path):
    p, X, y = _write(tmp_path)
    res = runner.invoke(app, ["estimate", str(p), "-j", "A", "-j", "B", "-p", "0.3", "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    ref = dr_mean(X, y, 0.3, rng=0)
    got = out["estimates"]["doubly_robust"]
    assert got["estimate"] == pytest.approx(ref.estimate, rel=1e-12) and got["n_judges"] == 2
    assert out["model"] == "calibrated" and out["judges"] == ["A", "B"]
    assert "ppi" not in out["estimates"]  # PPI++ takes one judge
    comp = compare_estimators(X, y, 0.3, judges=["A", "B"], rng=0)
    assert comp.dr.to_dict() == got


def test_cluster_sep_hint(tmp_path):
    # both judges named: with -j A alone, judge B scored every item as a 'human' (issue 29 item 1)
    p, _, _ = _write(tmp_path, sep="__")
    res = runner.invoke(app, ["estimate", str(p), "-j", "A", "-j", "B", "-p", "0.3"])
    assert res.exit_code == 0, res.output
    assert "--cluster-sep __" in " ".join(res.stdout.split())
    res = runner.invoke(app, ["estimate", str(p), "-j", "A", "-j", "B", "-p", "0.3", "--cluster-sep", "__",
                              "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert not [h for h in out["hints"] if h["code"] == "cluster_ids"]
    assert out["estimates"]["doubly_robust"]["n_clusters"] == 60


def test_useless_judge_hint_gives_the_human_only_interval(tmp_path):
    # 400 items x 0.3: ~120 labels, where the variance is the linearised one and power tuning's
    # lam = 0 makes the default never wider than human-only by construction. Below 100 labelled units
    # the design variance is corrected by the jackknife that refits the model and lam (docs/estimation.md,
    # small samples): there the default can come out slightly wider than human-only (SE 0.1157 vs 0.1155
    # on 240 items, this seed, with the plain jackknife), so the by-construction bound is asserted where
    # it holds.
    p, _, _ = _write(tmp_path, n=400, noise_judge=True, seed=3)
    res = runner.invoke(app, ["estimate", str(p), "-j", "A", "-j", "B", "-p", "0.3", "-f", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    codes = [h["code"] for h in out["hints"]]
    dr = out["estimates"]["doubly_robust"]
    if dr["r2"] < 0:
        assert "judges_not_helping" in codes
        msg = next(h["message"] for h in out["hints"] if h["code"] == "judges_not_helping")
        assert "not helping" in msg and "human-only estimate is" in msg
    # never wider than human-only: lam = 0 is the human-only estimate with its standard error
    assert dr["se"] <= out["estimates"]["human_only"]["se"] * (1 + 1e-12)


def test_judge_missing_items_is_refused_with_the_judge_named(tmp_path):
    p, _, _ = _write(tmp_path)
    df = pd.read_csv(p)
    df = df[~((df["rater"] == "B") & (df["item"] == "d0-s1"))]
    df.to_csv(p, index=False)
    res = runner.invoke(app, ["estimate", str(p), "-j", "A", "-j", "B", "-p", "0.3"])
    assert res.exit_code == 1
    assert "judge 'B' has no score for 1 of 240" in " ".join(res.stderr.split())


def test_plan_estimate_active_writes_assignments(tmp_path):
    p, X, y = _write(tmp_path, frac=0.1)
    df = pd.read_csv(p)
    df["cost"] = np.where(df["item"].str.endswith("s0"), 2.0, 1.0)
    df.to_csv(p, index=False)
    out = tmp_path / "next.csv"
    res = runner.invoke(app, ["plan-estimate", "--design", "active", "--pilot", str(p), "-j", "A", "-j", "B",
                              "--budget", "40", "--cost-column", "cost", "--pilot-prob", "0.1", "--out", str(out),
                              "--seed", "2", "-f", "json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)["sample"]
    a = pd.read_csv(out)
    assert list(a.columns) == ["item", "inclusion_prob", "selected", "uncertainty", "cost", "pilot"]
    assert a.loc[a["pilot"], "selected"].all() and got["n_pilot"] == int(np.isfinite(y).sum())
    assert got["expected_cost"] == pytest.approx(40)
    assert (a["inclusion_prob"] > 0.1 - 1e-12).all() and (a["inclusion_prob"] <= 1).all()
    again = runner.invoke(app, ["plan-estimate", "--design", "active", "--pilot", str(p), "-j", "A", "-j", "B",
                                "--budget", "40", "--cost-column", "cost", "--pilot-prob", "0.1", "--out",
                                str(tmp_path / "again.csv"), "--seed", "2", "-f", "json"])
    assert pd.read_csv(tmp_path / "again.csv").equals(a)  # same seed, same sample


@pytest.mark.parametrize("extra, needle", [
    ([], "--budget"),
    (["--budget", "40"], "--pilot-prob"),
    (["--budget", "40", "--pilot-prob", "0.1", "--cost-column", "bad"], "positive cost"),
])
def test_plan_estimate_active_bad_input(tmp_path, extra, needle):
    p, _, _ = _write(tmp_path, frac=0.1)
    df = pd.read_csv(p)
    df["bad"] = 0.0
    df.to_csv(p, index=False)
    res = runner.invoke(app, ["plan-estimate", "--design", "active", "--pilot", str(p), "-j", "A", "-j", "B",
                              "--out", str(tmp_path / "o.csv"), *extra])
    assert res.exit_code == 1, res.output
    assert needle in " ".join(res.stderr.split())


def test_plan_estimate_active_refuses_to_overwrite_its_input(tmp_path):
    p, _, _ = _write(tmp_path, frac=0.1)
    before = p.read_text()
    res = runner.invoke(app, ["plan-estimate", "--design", "active", "--pilot", str(p), "-j", "A", "-j", "B",
                              "--budget", "40", "--pilot-prob", "0.1", "--out", str(p)])
    assert res.exit_code == 1 and p.read_text() == before
