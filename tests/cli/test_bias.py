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
    assert r.exit_code == 1 and "row 7," in r.output and "len_a" in r.output and "Traceback" not in r.output
    # no --judge: the file's 'role' column names the judges (the shared pairwise reader); without it, an error
    r = runner.invoke(app, ["bias", str(p), "-f", "json"])
    assert r.exit_code == 0 and {e["judge"] for e in json.loads(r.output)["effects"]} == {"gpt-4o"}
    pd.read_csv(p).drop(columns=["role"]).to_csv(bad, index=False)
    r = runner.invoke(app, ["bias", str(bad)])
    assert r.exit_code == 1 and "--judge" in r.output
    r = runner.invoke(app, ["bias", str(p), "--judge", "gpt-4o", "--family", "nonsense"])
    assert r.exit_code == 1 and "NAME=FAMILY" in r.output


def test_pair_key_spanning_several_columns(tmp_path):
    from voirdire.data import read_pairwise

    p = tmp_path / "k.csv"
    p.write_text("q_id,model_a,model_b,rater,verdict,order\n"
                 "q1,x,y,h,A,\nq1,x,y,gpt-4o,A,AB\nq1,x,z,h,B,\nq1,x,z,gpt-4o,B,AB\nq2,x,y,h,T,\nq2,x,y,gpt-4o,A,AB\n")
    t = read_pairwise(p, pair=["q_id", "model_a", "model_b"], judges=["gpt-4o"])
    assert t.pairs.tolist() == ["q1|x|y", "q1|x|z", "q2|x|y"]
    r = runner.invoke(app, ["bias", str(p), "--judge", "gpt-4o", "--pair", "q_id", "--pair", "model_a",
                            "--pair", "model_b", "-f", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["n_pairs"] == 3
    r = runner.invoke(app, ["pairwise", str(p), "--judge", "gpt-4o", "--pair", "q_id", "--pair", "nope",
                            "--particles", "10"])
    assert r.exit_code == 1 and "missing column 'nope'" in r.output


def test_bad_lengths_name_the_file_line_and_the_row_that_differs(tmp_path):
    # the rows were 1-based frame rows (one line short of the file's, whose header is line 1) and a
    # pair's two lengths were reported at the pair's first row rather than where they differ
    p, df = _csv(tmp_path)
    first = df.index[df["pair"] == df["pair"].iloc[0]]
    bad = df.copy()
    bad.loc[first[1], "len_a"] = int(bad.loc[first[0], "len_a"]) + 1
    bad.to_csv(p, index=False)
    res = runner.invoke(app, ["bias", str(p), "-j", "gpt-4o"])
    assert res.exit_code == 1
    assert f"row {first[1] + 2}, column 'len_a': pair" in res.stderr and f"at row {first[0] + 2}, " in res.stderr, res.stderr
    neg = df.copy()
    neg.loc[5, "len_b"] = -3
    neg.to_csv(p, index=False)
    res = runner.invoke(app, ["bias", str(p), "-j", "gpt-4o"])
    assert res.exit_code == 1 and "row 7, column 'len_b': length '-3' is not a non-negative number" in res.stderr, res.stderr


def test_bias_flag_ignores_untested_effects(tmp_path):
    # issue 29 item 2: the swap effect (q = 0.035, two tested effects) is flagged at 0.05 in every output
    from tests.pairwise.test_bias import _swap_only_table

    p = tmp_path / "swap.csv"
    _swap_only_table().to_frame().to_csv(p, index=False)
    r = runner.invoke(app, ["bias", str(p), "--judge", "g", "-f", "json"])
    assert r.exit_code == 0, r.output
    eff = {e["effect"]: e for e in json.loads(r.output)["effects"]}
    assert eff["position (swap)"]["flagged"] is True and eff["position (swap)"]["q_value"] < 0.05
    assert eff["length"]["flagged"] is False
    r = runner.invoke(app, ["bias", str(p), "--judge", "g"])
    assert r.exit_code == 0 and "yes" in r.output
