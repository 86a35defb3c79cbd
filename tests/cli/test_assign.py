"""`voirdire assign`: the assignment file, its manifest and formula escaping."""

from __future__ import annotations

import csv
import json

import pandas as pd
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.data import read_annotations

runner = CliRunner()


def _labels(tmp_path):
    rows = []
    for i in range(60):
        item = ["=cmd|' /C calc'!A0", "+1+1", "@SUM(1)", "-evil"][i] if i < 4 else f"item{i}"
        lab = "pass" if i % 3 else "fail"
        rows.append((item, "prim", lab))
        rows.append((item, "gpt", lab))
        if i % 5 == 0:
            rows.append((item, "sec", lab))
    p = tmp_path / "labels.csv"
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(p, index=False)
    return p


def test_assign_csv_with_manifest_and_escaping(tmp_path) -> None:
    src = _labels(tmp_path)
    out = tmp_path / "next.csv"
    r = runner.invoke(app, ["assign", str(src), "--judge", "gpt", "--n-per-rater", "30", "--rater", "sec",
                            "--rater", "=new", "--design", "strat", "--seed", "7", "-o", str(out)])
    assert r.exit_code == 0, r.output
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 60
    for row in rows:
        for v in row.values():
            assert not v.startswith(("=", "+", "@", "-")), v
    assert {r_["rater"] for r_ in rows} == {"sec", "'=new"}
    sec_items = {r_["item"] for r_ in rows if r_["rater"] == "sec"}
    assert len(sec_items) == 30 and "item5" not in sec_items      # already labelled by sec
    man = json.loads((tmp_path / "next.manifest.json").read_text())
    table = read_annotations(src, judges=["gpt"])
    assert man["design"] == "strat" and man["seed"] == 7
    assert man["source_fingerprint"] == table.fingerprint()
    assert man["voirdire_version"] and man["n_per_rater"] == [30, 30]
    assert "Wrote" in r.output


def test_assign_jsonl_and_reproducible(tmp_path) -> None:
    src = _labels(tmp_path)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for p in (a, b):
        r = runner.invoke(app, ["assign", str(src), "-j", "gpt", "-n", "10", "-r", "x", "--seed", "3", "-o", str(p),
                                "--json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["seed"] == 3
    assert a.read_text() == b.read_text()
    recs = [json.loads(x) for x in a.read_text().splitlines()]
    assert len(recs) == 10 and set(recs[0]) == {"rater", "item", "stratum"}


def test_assign_errors(tmp_path) -> None:
    src = _labels(tmp_path)
    r = runner.invoke(app, ["assign", str(src), "-j", "gpt", "-n", "100", "-r", "sec", "-o", str(tmp_path / "x.csv")])
    assert r.exit_code == 1 and "only 48 are available" in r.output
    r = runner.invoke(app, ["assign", str(src), "-j", "gpt", "-n", "5", "-o", str(tmp_path / "x.xlsx")])
    assert r.exit_code == 1 and "Cannot tell the output format" in r.output
    r = runner.invoke(app, ["assign", str(src), "-j", "gpt", "-n", "5", "--design", "bogus", "-o", str(tmp_path / "x.csv")])
    assert r.exit_code == 2
