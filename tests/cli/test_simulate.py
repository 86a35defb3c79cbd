"""`voirdire simulate --preset sparse-overlap` on a tiny grid."""

from __future__ import annotations

import json

import pandas as pd
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.simulate import run_experiment, sparse_overlap_settings

from ..conftest import shared_data

runner = CliRunner()


def test_simulate_writes_paper_shaped_tables(tmp_path) -> None:
    out = tmp_path / "sim"
    r = runner.invoke(app, ["simulate", "--preset", "sparse-overlap", "--repetitions", "2", "--n-items", "100",
                            "--coverage", "0.1", "--coverage", "0.5", "-o", str(out), "--seed", "4",
                            "--matrices", "2"])
    assert r.exit_code == 0, r.output
    assert "sparse validations" in r.output and "strong-pass" in r.output
    for f in ("tables.md", "table1_alpha.csv", "table2_ranking.csv", "table3_decisions.csv", "runs.csv",
              "tasks.csv", "cells.csv", "experiment.json"):
        assert (out / f).exists(), f
    t3 = pd.read_csv(out / "table3_decisions.csv")
    assert list(t3.columns) == ["group", "coverage", "design", "n_strong_pass", "n_boundary_pass", "n_reject",
                                "mean_fr", "mean_fa", "mean_wdr", "boundary_wdr", "n_settings", "sd_fr", "sd_fa",
                                "sd_wdr"]
    # 2 matrices per (K, L): 8 settings x 10 judges = 80 cells, and a spread over the matrices
    assert len(t3) == 2 * 4 and (t3[["n_strong_pass", "n_boundary_pass", "n_reject"]].sum(axis=1) == 80).all()
    assert (t3["n_settings"] == 8).all() and t3["sd_wdr"].notna().all()
    md = (out / "tables.md").read_text()
    assert "## Table 1" in md and "## Table 2" in md and "## Table 3" in md
    # the CLI runs exactly the library's grid
    lib = run_experiment(sparse_overlap_settings(n_items=100, n_matrices=2, rng=4), coverages=[0.1, 0.5],
                         n_repetitions=2, rng=4)
    pd.testing.assert_frame_equal(t3, lib.table3(), check_dtype=False, atol=1e-12)


def test_simulate_json_with_real_set(tmp_path) -> None:
    summ = shared_data("alttest", "summeval")
    r = runner.invoke(app, ["simulate", "--no-synthetic", "--full", str(summ), "--repetitions", "2",
                            "--design", "strat", "--coverage", "0.05", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["n_validations"] == 2 * 6 and d["table3"][0]["n_reject"] == 6


def test_simulate_errors() -> None:
    r = runner.invoke(app, ["simulate", "--preset", "nope"])
    assert r.exit_code == 2
    r = runner.invoke(app, ["simulate", "--no-synthetic"])
    assert r.exit_code == 1 and "--full" in r.output
    r = runner.invoke(app, ["simulate", "--repetitions", "0"])
    assert r.exit_code == 1
    r = runner.invoke(app, ["simulate", "--repetitions", "1", "--coverage", "3"])
    assert r.exit_code == 1 and "coverages" in r.output
