"""`voirdire bias`: table, json and csv output; bad input gives one line and exit code 1."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.pairwise import simulate_pairwise

runner = CliRunner()


def _csv(tmp_path, lengths=True):
    t, _ = simulate_pairwise(200, biases=[1.0], rng=0)
    df = t.to_frame()
    rng = np.random.default_rng(0)
    pairs = df["pair"].unique()
    meta = pd.DataFrame({"pair": pairs, "model_a": rng.choice(["gpt-4", "vicuna"], len(pairs)),
                         "model_b": "koala", "len_a": rng.integers(10, 400, len(pairs)), "len_b": 100})
    df = df.merge(meta, on="pair")
    df["rater"] = df["rater"].replace({"judge_1": "gpt-4o"})
    if not lengths:
        df = df.drop(columns=["len_a", "len_b"])
    p = tmp_path / "v.csv"
    df.to_csv(p, index=False)
    return p, df


def test_bias_formats(tmp_path):
    p, _ = _csv(tmp_path)
    r = runner.invoke(app, ["bias", str(p), "--judge", "gpt-4o", "-f", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    eff = {e["effect"]: e for e in doc["effects"]}
    assert eff["position (swap)"]["flagged"] is True and eff["position (swap)"]["estimate"] > 0.2
    assert eff["length"]["estimate"] is not None and eff["self-preference"]["n_pairs"] > 0
    r = runner.invoke(app, ["bias", str(p), "--judge", "gpt-4o", "-f", "csv"])
    assert r.exit_code == 0
    got = pd.read_csv(io.StringIO(r.output))
    assert list(got["effect"]) == ["position (swap)", "position (humans tie)", "length", "self-preference"]
    r = runner.invoke(app, ["bias", str(p), "--judge", "gpt-4o"])
    assert r.exit_code == 0 and "Judge biases" in r.output


def test_bias_bad_input(tmp_path):
    p, df = _csv(tmp_path)
    df.loc[5, "len_a"] = -3
    bad = tmp_path / "bad.csv"
    df.to_csv(bad, index=False)
    r = runner.invoke(app, ["bias", str(bad), "--judge", "gpt-4o"])
    assert r.exit_code == 1 and "row 6" in r.output and "len_a" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["bias", str(p)])
    assert r.exit_code == 1 and "--judge" in r.output
    r = runner.invoke(app, ["bias", str(p), "--judge", "gpt-4o", "--family", "nonsense"])
    assert r.exit_code == 1 and "NAME=FAMILY" in r.output
