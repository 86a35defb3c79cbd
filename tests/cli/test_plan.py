"""`voirdire plan` and `voirdire overlap` through typer's CliRunner."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.design import plan_certification, plan_ranking
from voirdire.simulate import simulate_annotations, subsample

runner = CliRunner()


@pytest.fixture(scope="module")
def pilot_csv(tmp_path_factory):
    full = simulate_annotations(n_items=300, n_humans=3, judge_accuracies=[0.9, 0.75], rng=0).table
    sparse = subsample(full, "random", 0.2, rng=1)
    df = sparse.to_frame()[["item", "rater", "label"]]
    p = tmp_path_factory.mktemp("plan") / "labels.csv"
    df.to_csv(p, index=False)
    return p, sparse


def test_overlap_table(pilot_csv) -> None:
    p, _ = pilot_csv
    r = runner.invoke(app, ["overlap", str(p), "--judge", "judge_1", "--judge", "judge_2"])
    assert r.exit_code == 0, r.output
    assert "Coverage" in r.output and "primary (labelled every item): human_1" in r.output
    assert "do not share a panel" in r.output and "Leave-one-out" in r.output


def test_overlap_json(pilot_csv) -> None:
    p, table = pilot_csv
    r = runner.invoke(app, ["overlap", str(p), "-j", "judge_1", "-j", "judge_2", "--format", "json",
                            "--min-eligible", "100"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["primary"] == "human_1" and d["n_items"] == 300
    lab = dict(zip(d["raters"], d["n_labelled"]))
    assert [lab[h] for h in ("human_1", "human_2", "human_3", "judge_1")] == [300, 60, 60, 300]
    pairs = pd.DataFrame(d["pairs"])
    sel = pairs.apply(lambda x: {x.rater_a, x.rater_b} == {"human_2", "human_3"}, axis=1)
    row = pairs[sel].iloc[0]
    assert row.expected == pytest.approx(60 * 60 / 300)
    assert d["warnings"] and "fewer than 100 eligible items" in d["warnings"][0]


def test_plan_json_matches_library(pilot_csv) -> None:
    p, table = pilot_csv
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "-j", "judge_2", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    lib = plan_certification(table, judge="judge_1")
    assert d["certification"]["judge_1"]["m_star"] == lib.m_star
    assert d["ranking"]["m_star"] == plan_ranking(table).m_star
    assert d["simulation"] is None


def test_plan_with_kappa(pilot_csv) -> None:
    p, table = pilot_csv
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "-j", "judge_2", "--score", "kappa", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)["certification"]["judge_1"]
    lib = plan_certification(table, judge="judge_1", score="kappa")
    # same d_k; sigma0 is a bootstrap figure (the file's row order changes the draws)
    assert d["score"] == "kappa" and d["mu_d"] == pytest.approx(lib.mu_d)
    assert 0.7 < d["m_star"] / lib.m_star < 1.4


def test_plan_table_with_simulation(pilot_csv) -> None:
    p, _ = pilot_csv
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "--budget", "20,60", "--repetitions", "10"])
    assert r.exit_code == 0, r.output
    assert "Certify judge_1 (leave-one-out, fixed sample): m*_cert" in r.output and "Simulated decision" in r.output
    # judge_1 (the only judge named: judge_2 counts as a human) is inconclusive because of the humans'
    # agreement: more labels of it will not help, and the anytime-valid rule's accept is shown beside
    flat = " ".join(r.output.split())
    assert "judge_1: INCONCLUSIVE - more labels of this judge will not settle it" in flat
    assert "beside it, the running anytime-valid leave-one-out rule already says accept" in flat
    assert "Smallest budget with FR" in r.output


def test_plan_from_moments_and_infeasible() -> None:
    r = runner.invoke(app, ["plan", "--mu-d", "0.02", "--sigma0", "0.3", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["certification"]["(given moments)"]["m_star"] == 71
    r = runner.invoke(app, ["plan", "--mu-d", "-0.2", "--sigma0", "0.3"])
    assert r.exit_code == 1 and "not positive" in r.output
    r = runner.invoke(app, ["plan", "--sigma0", "0.4", "--delta-min", "0.05", "--n-judges", "3", "--format", "json"])
    assert json.loads(r.stdout)["ranking"]["m_star"] == 492
    r = runner.invoke(app, ["plan"])
    assert r.exit_code == 1 and "Give a pilot FILE" in r.output


def test_plan_errors(pilot_csv, tmp_path) -> None:
    p, _ = pilot_csv
    r = runner.invoke(app, ["plan", str(p), "-j", "nobody"])
    assert r.exit_code == 1 and "error:" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "--budget", "ten"])
    assert r.exit_code == 1 and "whole numbers" in r.output
    r = runner.invoke(app, ["overlap", str(tmp_path / "missing.csv")])
    assert r.exit_code == 1 and "file not found" in r.output
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "--significance-level", "5"])
    assert r.exit_code == 1 and "Did you mean 0.05" in r.output


def test_plan_reports_infeasible_judge(tmp_path) -> None:
    full = simulate_annotations(n_items=200, n_humans=3, judge_accuracies=[0.3, 0.95], rng=1).table
    p = tmp_path / "l.csv"
    full.to_frame()[["item", "rater", "label"]].to_csv(p, index=False)
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "-j", "judge_2", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert "judge_1" in d["infeasible"] and "judge_2" in d["certification"]
    assert np.isfinite(d["certification"]["judge_2"]["m_star"])


def test_plan_one_answer_per_judge_settled_gets_no_top_up() -> None:
    from tests.conftest import shared_data
    from voirdire.design import plan_judges
    from voirdire.data import read_annotations

    lesion = shared_data("alttest", "lesion")
    r = runner.invoke(app, ["plan", str(lesion), "--judge", "gpt-4o", "--judge", "gemini_pro"])
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "One answer per judge" in out
    # the verdict is validate's (same seed and defaults); the anytime-valid rule is shown beside it, labelled
    from voirdire.workflows import validate_judges

    val = validate_judges(read_annotations(lesion), ["gpt-4o", "gemini_pro"], seed=0)
    for e in val.judges:
        assert f"{e.judge}: {e.verdict.decision.upper()} - {e.advice.sentence}" in " ".join(out.split())
    assert "beside it, the running anytime-valid leave-one-out rule" in out
    assert "no more labels are needed" in out   # settled: no top-up
    assert "--n-per-rater N " not in out and "Next:" in out
    lib = plan_judges(read_annotations(lesion), ["gpt-4o", "gemini_pro"])
    js = json.loads(runner.invoke(app, ["plan", str(lesion), "-j", "gpt-4o", "-j", "gemini_pro", "-f", "json"]).stdout)
    assert [p["status"] for p in js["answers"]["plans"]] == [p.status for p in lib.plans]
    assert [v["verdict"]["decision"] for v in js["verdicts"]] == [e.verdict.decision for e in val.judges]
    # no Next: command for a settled or rejected judge
    if all(e.advice.command() is None for e in val.judges):
        assert "voirdire assign" not in out
