"""`voirdire raters`: per-annotator diagnostics, contested items, adjudication file, bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app

runner = CliRunner()


@pytest.fixture
def spam_csv(tmp_path):
    # 5 good annotators (accuracy 0.8) and a spammer on 200 items, 4 categories, 20% missing, and a judge
    rng = np.random.default_rng(0)
    n, q = 200, 4
    z = rng.integers(0, q, n)
    rows = []
    for k in range(6):
        lab = rng.integers(0, q, n) if k == 5 else np.where(rng.random(n) < 0.8, z, (z + rng.integers(1, q, n)) % q)
        keep = rng.random(n) >= 0.2
        name = "spam" if k == 5 else f"h{k}"
        rows += [(f"i{i}", name, f"c{int(lab[i])}") for i in np.flatnonzero(keep)]
    rows += [(f"i{i}", "llm", f"c{int(z[i])}") for i in range(n)]
    p = tmp_path / "labels.csv"
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(p, index=False)
    return p


def test_flags_the_spammer_and_writes_adjudication(spam_csv, tmp_path):
    out = tmp_path / "adj.csv"
    res = runner.invoke(app, ["raters", str(spam_csv), "-j", "llm", "--resamples", "300", "--top", "5",
                              "--adjudicate", str(out), "--adjudicator", "=boss", "--no-competence"])
    assert res.exit_code == 0, res.output
    assert "Outlier spam" in res.output and "OUTLIER" in res.output and "llm" not in res.output.split("Rule:")[0]
    assert "may be the only one who is right" in res.output
    lines = out.read_text().splitlines()
    assert lines[0] == "rater,item,stratum" and len(lines) == 6 and lines[1].startswith("'=boss,")
    man = json.loads((tmp_path / "adj.manifest.json").read_text())
    assert man["design"] == "adjudication" and man["n_assignments"] == 5


def test_json_and_csv(spam_csv):
    res = runner.invoke(app, ["raters", str(spam_csv), "-j", "llm", "--resamples", "200", "-f", "json", "--top", "3"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["raters"]["raters"][-1] == "spam" or "spam" in doc["raters"]["raters"]
    k = doc["raters"]["raters"].index("spam")
    assert doc["raters"]["flagged"][k] is True and len(doc["items"]) == 3
    res = runner.invoke(app, ["raters", str(spam_csv), "-j", "llm", "--resamples", "0", "-f", "csv", "--no-competence"])
    assert res.exit_code == 0 and res.output.splitlines()[0].startswith("rater,n_labels,n_items")


def test_bad_input_one_line(tmp_path):
    two = tmp_path / "two.csv"
    pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "rater": ["a", "b"] * 3, "label": [1, 1, 2, 1, 1, 1]}).to_csv(two, index=False)
    res = runner.invoke(app, ["raters", str(two), "--resamples", "50"])
    assert res.exit_code == 0 and "No annotator is flagged" in res.output and "two raters" in res.output
    one = tmp_path / "one.csv"
    pd.DataFrame({"item": [1, 2], "rater": ["a", "a"], "label": [1, 2]}).to_csv(one, index=False)
    res = runner.invoke(app, ["raters", str(one)])
    assert res.exit_code == 1 and "at least two raters" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["raters", str(tmp_path / "missing.csv")])
    assert res.exit_code == 1 and "Traceback" not in res.output
    res = runner.invoke(app, ["raters", str(two), "--top", "-1"])
    assert res.exit_code == 1 and "--top" in res.output
    res = runner.invoke(app, ["raters", str(two), "--margin", "2"])
    assert res.exit_code == 1 and "margin" in res.output


def test_adjudication_to_label_studio(spam_csv, tmp_path):
    out = tmp_path / "tasks.json"
    res = runner.invoke(app, ["raters", str(spam_csv), "-j", "llm", "--resamples", "0", "--no-competence", "--top", "4",
                              "--adjudicate", str(out), "--to", "label-studio"])
    assert res.exit_code == 0, res.output
    tasks = json.loads(out.read_text())
    assert len(tasks) == 4 and all(t["data"]["assigned_to"] == ["adjudicator"] for t in tasks)
    assert tasks[0]["data"]["stratum"] == "rank 1"


@pytest.fixture
def beats_spammers_csv(tmp_path):
    # 3 good humans, 3 spammers, a judge that beats only the spammers (leave-one-out accepts at omega >= 0.5)
    rng = np.random.default_rng(0)
    n, q = 200, 4
    z = rng.integers(0, q, n)

    def rater(acc):
        return np.where(rng.random(n) < acc, z, (z + rng.integers(1, q, n)) % q)

    cols = {"g1": rater(0.85), "g2": rater(0.85), "g3": rater(0.85), "s1": rng.integers(0, q, n),
            "s2": rng.integers(0, q, n), "s3": rng.integers(0, q, n), "llm": rater(0.55)}
    rows = [(f"i{i}", r, f"c{int(v[i])}") for r, v in cols.items() for i in range(n)]
    p = tmp_path / "beats.csv"
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(p, index=False)
    return p


def test_validate_says_when_won_against_flagged(beats_spammers_csv):
    res = runner.invoke(app, ["validate", str(beats_spammers_csv), "-j", "llm", "--method", "loo", "--resamples", "300",
                              "-f", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["judges"][0]["leave_one_out"]["decision"] == "accept"
    assert sorted(doc["flagged_raters"]) == ["s1", "s2", "s3"]
    assert doc["judges"][0]["sensitivity"]["won_mainly_against_excluded"]
    codes = [r["code"] for r in doc["judges"][0]["verdict"]["reasons"]]
    assert "won_mainly_against_flagged_annotators" in codes
    res = runner.invoke(app, ["validate", str(beats_spammers_csv), "-j", "llm", "--method", "loo", "--resamples", "300"])
    assert "won mainly against the excluded annotators" in " ".join(res.output.split())
    # the user decides: without the spammers the judge is rejected, and the output says who was left out
    res = runner.invoke(app, ["validate", str(beats_spammers_csv), "-j", "llm", "--method", "loo", "--resamples", "300",
                              "--exclude-rater", "s1", "--exclude-rater", "s2", "--exclude-rater", "s3", "-f", "json"])
    doc = json.loads(res.output)
    assert doc["judges"][0]["leave_one_out"]["decision"] == "reject"
    assert doc["excluded_raters"] == ["s1", "s2", "s3"] and "Excluded by the user" in doc["notes"][0]
    res = runner.invoke(app, ["validate", str(beats_spammers_csv), "-j", "llm", "--exclude-rater", "llm"])
    assert res.exit_code == 1 and "not a human" in res.output
    res = runner.invoke(app, ["validate", str(beats_spammers_csv), "-j", "llm", "--method", "loo", "--resamples", "50",
                              "--no-check-raters", "-f", "json"])
    assert json.loads(res.output)["judges"][0]["sensitivity"] is None
