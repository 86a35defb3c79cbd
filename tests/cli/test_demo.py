"""`voirdire demo`: agreement on the bundled HANNA data, humans and the five LLM judges side by side."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.cli._demo import run_demo

runner = CliRunner()


@pytest.mark.slow
def test_demo_command_prints_the_side_by_side_tables(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # without --out the report goes to ./voirdire-report/
    res = runner.invoke(app, ["demo", "--resamples", "100", "--seed", "2"])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "HANNA" in out and "6336 items" in out and "1056 clusters" in out
    for judge in ("Beluga-13B", "Mistral-7B", "Llama-13B", "ChatGPT"):
        assert judge in out
    assert "Kripp. alpha" in out and "(interval)" in out and "per criterion" in out
    assert "bootstrap over 1056 stories" in out


@pytest.mark.slow
def test_run_demo_returns_the_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = run_demo(quiet=True, n_resamples=50, seed=1)
    groups = [label for label, _ in res["groups"]]
    assert groups[0] == "humans" and len(groups) == 6
    overall = res["overall"]
    humans = overall[0]["krippendorff_alpha"]
    assert humans.level == "interval" and humans.resampling_unit == "cluster" and humans.n_units == 1056
    assert np.isfinite(humans.estimate) and humans.ci.low < humans.estimate < humans.ci.high
    assert [c for c, _ in res["per_criterion"]] == sorted(c for c, _ in res["per_criterion"])
    assert len(res["per_criterion"]) == 6 and all(len(row) == 6 for _, row in res["per_criterion"])
    # same seed, same numbers
    again = run_demo(quiet=True, n_resamples=50, seed=1)
    assert again["overall"][2]["krippendorff_alpha"].ci == overall[2]["krippendorff_alpha"].ci


@pytest.mark.slow
def test_demo_out_folder(tmp_path):
    import json

    out = tmp_path / "demo"
    res = runner.invoke(app, ["demo", "--resamples", "20", "--out", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "agreement.json").read_text())
    assert doc["overall"][0]["label"] == "humans" and len(doc["per_criterion"]) == 6
    f = tmp_path / "file.txt"
    f.write_text("x")
    res = runner.invoke(app, ["demo", "--resamples", "20", "--out", str(f)])
    assert res.exit_code == 1 and "is not a folder" in res.stderr
