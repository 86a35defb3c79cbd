"""`voirdire agree` through typer's CliRunner: exit codes, tables, JSON, CSV, one-line errors."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app

from ..conftest import shared_data

runner = CliRunner()


@pytest.fixture(scope="module")
def binary_csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 60
    truth = rng.integers(0, 2, n)
    rows = []
    for i in range(n):
        for h in ("ann", "bob", "cat"):
            lab = truth[i] if rng.random() < 0.85 else 1 - truth[i]
            rows.append((f"q{i}", h, ["fail", "pass"][lab]))
        j = truth[i] if rng.random() < 0.8 else 1 - truth[i]
        rows.append((f"q{i}", "gpt-x", ["fail", "pass"][j] if i % 17 else "cannot assess"))
    f = tmp_path_factory.mktemp("agree") / "labels.csv"
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(f, index=False)
    return f


def test_table_output_with_judge_and_binary_block(binary_csv):
    res = runner.invoke(app, ["agree", str(binary_csv), "--judge", "gpt-x", "--abstain", "cannot assess",
                              "--resamples", "200", "--seed", "1"])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "Fleiss kappa" in out and "Kripp. alpha" in out and "+ gpt-x" in out and "humans" in out
    assert "Binary family" in out and "phi = MCC = Pearson r = Spearman rho = Kendall tau-b" in out
    assert "kappa/phi" in out
    assert "Abstention policy: exclude" in out and "4 abstentions" in out  # items 0, 17, 34, 51
    assert "gpt-x: 4 of 60 answers are abstentions" in out


def test_json_output_is_complete_and_reproducible(binary_csv):
    args = ["agree", str(binary_csv), "-j", "gpt-x", "--abstain", "cannot assess", "--format", "json",
            "--resamples", "100", "--seed", "4", "-c", "krippendorff_alpha", "-c", "gwet_ac1"]
    a = runner.invoke(app, args)
    b = runner.invoke(app, args)
    assert a.exit_code == 0, a.output
    doc = json.loads(a.stdout)
    assert doc == json.loads(b.stdout)
    assert [g["label"] for g in doc["groups"]] == ["humans", "+ gpt-x"]
    coefs = [r["coefficient"] for r in doc["groups"][0]["results"]]
    assert coefs == ["krippendorff_alpha", "gwet_ac1"]
    r = doc["groups"][1]["results"][0]
    assert r["ci"]["low"] < r["estimate"] < r["ci"]["high"] and r["n_resamples"] == 100
    assert doc["binary"][0]["judge"] == "gpt-x" and doc["binary"][0]["coincide"] is True


def test_csv_output(binary_csv):
    res = runner.invoke(app, ["agree", str(binary_csv), "-j", "gpt-x", "--abstain", "cannot assess",
                              "--format", "csv", "--resamples", "0", "--abstain-policy", "disagree"])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.stdout))
    # CSV cells pass the formula guard (voirdire._safe.csv_cell): '+ gpt-x' would start a formula
    assert set(df["group"]) == {"humans", "'+ gpt-x"}
    assert (df["abstain_policy"] == "disagree").all()
    assert {"estimate", "ci_low", "ci_high", "n_items", "n_pairs"} <= set(df.columns)


def test_without_judges_all_raters_form_one_group(binary_csv):
    res = runner.invoke(app, ["agree", str(binary_csv), "--abstain", "cannot assess", "--resamples", "0",
                              "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [g["label"] for g in doc["groups"]] == ["all raters"] and doc["binary"] == []


@pytest.mark.parametrize("args, message", [
    (["--judge", "nobody"], "judge(s) ['nobody'] are not raters"),
    (["--coefficient", "kappa"], "--coefficient 'kappa' is not one of"),
    (["--confidence-level", "95"], "Did you mean 0.95?"),
    (["--level", "interval"], "needs numeric labels"),
    (["--resamples", "5"], "must be 0 or at least 20"),
])
def test_bad_input_gives_one_line_error(binary_csv, args, message):
    res = runner.invoke(app, ["agree", str(binary_csv), "--abstain", "cannot assess", *args])
    assert res.exit_code == 1
    err = res.stderr
    assert message in err.replace("\n", " ") and "Traceback" not in err


def test_missing_file_and_bad_column(tmp_path, binary_csv):
    res = runner.invoke(app, ["agree", str(tmp_path / "nope.csv")])
    assert res.exit_code == 1 and "file not found" in res.stderr
    res = runner.invoke(app, ["agree", str(binary_csv), "--label", "score"])
    assert res.exit_code == 1 and "missing column" in res.stderr


def test_alttest_folder_with_clusters():
    path = shared_data("alttest", "mtbench")
    res = runner.invoke(app, ["agree", str(path), "--judge", "gpt-4o", "--cluster-sep", "__", "--resamples", "100",
                              "--format", "json", "-c", "fleiss_kappa"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    r = doc["groups"][0]["results"][0]
    assert r["resampling_unit"] == "cluster" and r["n_units"] < doc["table"]["n_items"]


def test_binary_notes_explain_the_kappa_phi_gap():
    from types import SimpleNamespace

    from voirdire.report._terminal import binary_notes

    b = SimpleNamespace(judge="gpt-x", positive="pass", kappa_phi_ratio=0.9, judge_rate=0.7, prevalence=0.5,
                        n_judge_abstentions=0, n_judge_labels=10, judge_coverage=1.0,
                        abstention=SimpleNamespace(policy="exclude"))
    (line,) = binary_notes(b)
    assert "says 'pass' more often than the humans" in line and "kappa/phi = 0.900" in line


def test_matrix_option(binary_csv):
    res = runner.invoke(app, ["agree", str(binary_csv), "-j", "gpt-x", "--abstain", "cannot assess", "--matrix",
                              "--resamples", "0", "-c", "fleiss_kappa"])
    assert res.exit_code == 0, res.output
    assert "Cohen kappa for each pair of raters" in res.stdout
    res = runner.invoke(app, ["agree", str(binary_csv), "-j", "gpt-x", "--abstain", "cannot assess", "--matrix",
                              "--resamples", "0", "--format", "json"])
    doc = json.loads(res.stdout)
    assert doc["matrix"]["raters"] == ["ann", "bob", "cat", "gpt-x"] and doc["matrix"]["n_items"][0][1] == 60
