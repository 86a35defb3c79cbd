"""One seed, one set of numbers for ``simulate``, ``pairwise`` and ``plan``: the command's JSON is the
workflow's result (issue 28: the CLI parses, calls one workflow and renders)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from voirdire._results import to_jsonable
from voirdire.cli import app
from voirdire.pairwise import simulate_pairwise
from voirdire.workflows import fit_pairwise, plan_validation, simulate_designs

runner = CliRunner()
_TIMING = ("elapsed_s", "busy_s", "cpu_s")


def _untimed(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in _TIMING}


def test_simulate_json_is_the_workflow_result():
    args = dict(n_items=60, n_matrices=1, designs=["random"], coverages=[0.25], n_repetitions=2, seed=4)
    r = runner.invoke(app, ["simulate", "--n-items", "60", "--matrices", "1", "--design", "random", "--coverage",
                            "0.25", "--repetitions", "2", "--seed", "4", "-f", "json"])
    assert r.exit_code == 0, r.output
    cli = json.loads(r.stdout)
    api = json.loads(json.dumps(to_jsonable(simulate_designs(**args))))
    assert cli.pop("files") == []
    assert _untimed(cli) == _untimed(api)


def test_pairwise_json_is_the_workflow_result(tmp_path):
    table, _ = simulate_pairwise(60, biases=[0.8], rng=2)
    p = tmp_path / "v.csv"
    table.to_frame().drop(columns="role").to_csv(p, index=False)
    r = runner.invoke(app, ["pairwise", str(p), "-j", "judge_1", "--particles", "40", "--seed", "5", "-f", "json"])
    assert r.exit_code == 0, r.output
    cli = json.loads(r.stdout)
    from voirdire.data import read_pairwise

    fit = fit_pairwise(read_pairwise(p, judges=["judge_1"]), n_particles=40, seed=5)
    assert cli["judges"] == json.loads(json.dumps(to_jsonable(fit.posterior.to_frame("judges"))))
    assert cli["model"]["final_ess"] == fit.final_ess


def test_plan_json_next_is_the_workflow_result(tmp_path):
    # a judge just below the humans on 3,000 items, each human on 12% (as test_one_decision.py): open, and a
    # batch on the items on hand passes the simulation check
    import numpy as np

    from voirdire.data import read_annotations
    from voirdire.simulate import simulate_annotations

    df = simulate_annotations(n_items=3000, n_humans=3, judge_accuracies=[0.78], rng=0).table.to_frame()
    df = df[(df["rater"] == "judge_1") | (np.random.default_rng(0).random(len(df)) < 0.12)]
    p = tmp_path / "sparse.csv"
    df[["item", "rater", "label"]].to_csv(p, index=False)
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "--n-resamples", "200", "--seed", "2", "-f", "json"])
    assert r.exit_code == 0, r.output
    cli = json.loads(r.stdout)
    res = plan_validation(read_annotations(p, judges=["judge_1"]), ["judge_1"], n_resamples=200, seed=2)
    assert res.next is not None and res.next.check.enough
    assert cli["verdicts"][0]["advice"] == json.loads(json.dumps(to_jsonable(res.validation.judges[0].advice)))
    assert cli["next"] == json.loads(json.dumps(to_jsonable(res.next)))
