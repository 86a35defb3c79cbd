"""`voirdire pairwise` through typer's CliRunner: exit codes, tables, JSON, errors, save/resume."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.pairwise import simulate_pairwise

runner = CliRunner()


@pytest.fixture(scope="module")
def sim_csv(tmp_path_factory):
    table, _ = simulate_pairwise(150, biases=[1.0, 0.0], rng=0)
    f = table.to_frame()
    path = tmp_path_factory.mktemp("pw") / "verdicts.csv"
    f.drop(columns="role").to_csv(path, index=False)
    return path


def _run(*args):
    return runner.invoke(app, ["pairwise", *map(str, args)])


def test_table_output(sim_csv):
    r = _run(sim_csv, "--judge", "judge_1", "--judge", "judge_2", "--particles", "60", "--top", "3")
    assert r.exit_code == 0, r.output
    assert "150 pairs, 3 humans, 2 judges" in " ".join(r.output.split())   # a long tmp path may wrap the line
    assert "position bias" in r.output and "judge_1" in r.output and "AB+BA" in r.output
    assert "confusion matrices" in r.output and "human_3" in r.output
    assert "Most uncertain pairs" in r.output


def test_json_output_is_complete_and_reproducible(sim_csv):
    args = (sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "60", "--format", "json", "--seed", "3")
    r1, r2 = _run(*args), _run(*args)
    assert r1.exit_code == 0, r1.output
    d = json.loads(r1.stdout)
    assert d == json.loads(r2.stdout)
    assert [j["judge"] for j in d["judges"]] == ["judge_1", "judge_2"]
    assert d["judges"][0]["bias_mean"] > 0.5 > abs(d["judges"][1]["bias_mean"])
    assert len(d["humans"]) == 3 and np.allclose(np.sum(d["humans"][0]["confusion"], 1), 1.0)
    assert len(d["pairs"]) == 150 and d["evaluation"] is None and d["model"]["n_items_seen"] == 150


@pytest.mark.slow
def test_evaluate_with_groups(sim_csv):
    r = _run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "40", "--evaluate",
             "--group", "human_1=expert", "--group", "human_*=crowd", "--format", "json")
    assert r.exit_code == 0, r.output
    ev = json.loads(r.stdout)["evaluation"]
    groups = {row["group"] for row in ev["table"]}
    assert groups == {"all", "expert", "crowd"}
    assert {row["method"] for row in ev["table"]} == {"BayesJudge", "majority vote", "Bradley-Terry-Davidson",
                                                      "Dawid-Skene", "MACE", "GLAD"}
    assert ev["notes"]  # honest where-we-win / where-we-lose sentences
    # the held-out choice (choose_forecaster): the model against the best baseline by NLL
    ch = ev["choice"]
    assert ch["model"] == "BayesJudge" and ch["chosen"] in {"BayesJudge", ch["best_baseline"]}
    assert ch["nll_low"] <= ch["nll_difference"] <= ch["nll_high"]
    assert (ch["chosen"] == "BayesJudge") == (ch["nll_low"] <= 0)
    t = _run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "40", "--evaluate")
    assert t.exit_code == 0 and "Leave-one-human-out" in t.output and "BayesJudge" in t.output
    assert "held-out choice:" in t.output
    # the default judge model's bias intervals come from the judges' batch posterior: not marked optimistic
    assert "* optimistic" not in t.output


def test_csv_output(sim_csv):
    import io

    import pandas as pd

    r = _run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "30", "--format", "csv", "--no-choice")
    assert r.exit_code == 0, r.output
    df = pd.read_csv(io.StringIO(r.stdout))
    assert list(df.columns) == ["pair", "p_A", "p_T", "p_B", "entropy", "theta", "tau"] and len(df) == 150
    np.testing.assert_allclose(df[["p_A", "p_T", "p_B"]].sum(axis=1), 1.0, atol=1e-9)
    # by default the pairs are the held-out choice's forecaster's: the model's columns, or a baseline's named
    d = json.loads(_run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "30", "--format", "json").stdout)
    c = pd.read_csv(io.StringIO(_run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "30",
                                     "--format", "csv").stdout))
    if d["forecaster"] == "BayesJudge":
        pd.testing.assert_frame_equal(c, df)
    else:
        assert list(c.columns) == ["pair", "p_A", "p_T", "p_B", "entropy", "forecaster"]
        assert set(c["forecaster"]) == {d["forecaster"]} and len(c) == 150
    ev = _run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "20", "--evaluate", "--format", "csv")
    assert ev.exit_code == 0, ev.output
    t = pd.read_csv(io.StringIO(ev.stdout))
    assert {"method", "group", "n_labels", "accuracy", "nll", "brier", "ece"} <= set(t.columns)
    assert set(t["method"]) >= {"BayesJudge", "Dawid-Skene", "majority vote"} and (t["n_labels"] == 450).all()


def test_save_and_resume(sim_csv, tmp_path):
    state = tmp_path / "s.npz"
    r = _run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "30", "--save-state", state)
    assert r.exit_code == 0 and state.exists() and "resume with --resume" in " ".join(r.output.split())
    r2 = _run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--resume", state, "--format", "json")
    assert r2.exit_code == 0, r2.output
    d = json.loads(r2.stdout)
    assert d["model"]["n_items_seen"] == 300 and d["model"]["n_particles"] == 30
    # a resumed state holds no earlier pair: the particle filter's intervals, marked optimistic
    assert all(j["bias_interval_optimistic"] for j in d["judges"])


def test_judge_ties_option(sim_csv):
    r = _run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "30", "--judge-ties")
    assert r.exit_code == 0, r.output
    assert "tie offset" in r.output and "judge tie offsets" in r.output
    d = json.loads(_run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "30", "--judge-ties",
                        "--format", "json").stdout)
    assert d["model"]["judge_ties"] is True and "tie_offset_mean" in d["judges"][0]


def test_mode_option(sim_csv):
    d = json.loads(_run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "30", "--mode", "per-judge",
                        "--format", "json").stdout)
    assert d["model"]["particles"] == "per_judge"
    d = json.loads(_run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "30", "--format", "json").stdout)
    assert d["model"]["particles"] == "joint"  # auto: 2 judges


def test_role_column_and_presented(tmp_path):
    p = tmp_path / "v.csv"
    p.write_text("pair,rater,role,verdict,order\n1,h,human,A,\n1,g,judge,A,AB\n1,g,judge,A,BA\n2,h,human,B,\n"
                 "2,g,judge,B,AB\n2,g,judge,B,BA\n")
    r = _run(p, "--role", "role", "--presented", "--particles", "20", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["table"]["verdict_counts"] == {"A": 3, "T": 0, "B": 3}


@pytest.mark.parametrize("args, message", [
    (("--particles", "0"), "--particles must be an integer >= 1"),
    (("--update", "mean"), "--update must be one of ['soft', 'hard']"),
    (("--group", "nobody=x", "--evaluate"), "matches no human"),
    (("--mode", "both"), "--mode must be one of ['auto', 'joint', 'per-judge']"),
])
def test_bad_options(sim_csv, args, message):
    r = _run(sim_csv, "-j", "judge_1", *args)
    assert r.exit_code == 1 and message in r.output


def test_schema_errors_are_one_line(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("pair,rater,verdict,order\n1,h,A,\n1,g,maybe,AB\n")
    r = _run(p, "-j", "g")
    assert r.exit_code == 1
    assert "bad.csv, row 3, column 'verdict': unknown verdict 'maybe'" in " ".join(r.output.split())
    assert "Traceback" not in r.output
    r = _run(tmp_path / "missing.csv")
    assert r.exit_code == 1 and "file not found" in r.output


def test_honest_summary_sentences():
    import pandas as pd

    from voirdire.workflows import evaluation_notes
    from voirdire.pairwise import LOHOResult

    table = pd.DataFrame([
        {"method": "BayesJudge", "group": "all", "n_labels": 10, "accuracy": 0.6, "nll": 0.9, "brier": 0.5,
         "ece": 0.05},
        {"method": "majority vote", "group": "all", "n_labels": 10, "accuracy": 0.6, "nll": 1.0, "brier": 0.4,
         "ece": 0.10},
    ])
    res = LOHOResult(table=table, per_human=pd.DataFrame(), methods=("BayesJudge", "majority vote"), n_humans=2,
                     n_folds=2, n_labels_unscored=0, target="human")
    lines = evaluation_notes(res)
    assert lines == [
        "[all] accuracy: BayesJudge tied best with majority vote (0.600).",
        "[all] nll: BayesJudge best (0.900; next majority vote 1.000).",
        "[all] brier: majority vote beats BayesJudge (0.400 vs 0.500).",
        "[all] ece: BayesJudge best (0.050; next majority vote 0.100).",
    ]


def test_calibrated_intervals_are_not_marked(sim_csv):
    r = _run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "20", "--calibrated-intervals")
    assert r.exit_code == 0, r.output
    assert "* optimistic" not in r.output
    d = json.loads(_run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "20", "--calibrated-intervals",
                        "--format", "json").stdout)
    assert d["model"]["batch_move"] and d["model"]["quadrature"] == "adaptive"
    assert not any(j["bias_interval_optimistic"] for j in d["judges"])


def test_named_systems_give_the_system_prior(tmp_path):
    # a file with model_a/model_b: the model line names the system-strength prior, the JSON its fit
    from voirdire.pairwise import simulate_sparse_pairwise
    path = tmp_path / "sys.csv"
    simulate_sparse_pairwise(200, n_humans=8, n_systems=3, rng=0).to_frame().drop(columns="role").to_csv(
        path, index=False)
    r = _run(path, "-j", "llm", "--particles", "30", "--top", "0")
    assert r.exit_code == 0, r.output
    assert "system-strength prior (3 systems on 200 pairs" in " ".join(r.output.split())
    d = json.loads(_run(path, "-j", "llm", "--particles", "30", "--format", "json").stdout)
    assert d["model"]["system_prior"] == "auto" and d["model"]["system_strengths"]["systems"] == [
        "sys_0", "sys_1", "sys_2"]


def test_evaluate_states_the_held_out_rule(sim_csv):
    r = _run(sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "30", "--top", "0", "--evaluate")
    assert r.exit_code == 0, r.output
    assert "rule: the method with the lowest held-out NLL (the model on a tie)" in " ".join(r.output.split())


def test_the_held_out_choice_is_made_by_default(sim_csv, tmp_path):
    # the default run chooses the forecaster by held-out humans and says so before the posteriors
    args = (sim_csv, "-j", "judge_1", "-j", "judge_2", "--particles", "30", "--top", "3")
    t = _run(*args)
    assert t.exit_code == 0, t.output
    flat = " ".join(t.output.split())
    assert "held-out choice:" in flat and "3 folds of humans" in flat and "NLL" in flat and "Accuracy" in flat
    assert flat.index("held-out choice:") < flat.index("position bias")
    d = json.loads(_run(*args, "--format", "json").stdout)
    c = d["choice"]
    assert c["made"] and c["method"] == d["forecaster"] == c["chosen"] and c["rule"] == "lowest"
    assert c["folds"] == 3 and c["interval"][0] <= c["difference"] <= c["interval"][1] and len(d["pairs"]) == 150
    assert f"held-out choice: {c['method']} (leave-one-human-out" in flat
    assert (f"Most uncertain pairs by {c['method']}'s forecasts" in flat) == (c["method"] != "BayesJudge")
    assert json.loads(_run(*args, "--format", "json", "--choice-folds", "2").stdout)["choice"]["folds"] == 2
    off = json.loads(_run(*args, "--format", "json", "--no-choice").stdout)
    assert not off["choice"]["made"] and off["choice"]["off"] and off["forecaster"] == "BayesJudge"
    assert "held-out choice" not in _run(*args, "--no-choice").output
    bad = _run(*args, "--choice-folds", "1")
    assert bad.exit_code == 1 and "--choice-folds must be an integer >= 2" in bad.output
    # one human: the choice is not made, and the line says why
    import pandas as pd

    one = tmp_path / "one.csv"
    f = pd.read_csv(sim_csv)
    f[~f["rater"].isin(["human_2", "human_3"])].to_csv(one, index=False)
    r = _run(one, "-j", "judge_1", "-j", "judge_2", "--particles", "20", "--top", "0")
    assert r.exit_code == 0, r.output
    assert "held-out choice: not made: the file has 1 human" in " ".join(r.output.split())
