"""`voirdire report` through typer's CliRunner: exit codes, files written, one-line errors."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.report import report_schema

from ..report.conftest import make_table

runner = CliRunner()


@pytest.fixture(scope="module")
def labels_csv(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_report")
    t = make_table(n_items=40)
    df = t.to_frame()
    df["pi"] = 0.8
    f = d / "labels.csv"
    df[["item", "rater", "label", "pi"]].to_csv(f, index=False)
    return f


@pytest.mark.slow
def test_report_writes_html_and_json(labels_csv, tmp_path):
    out = tmp_path / "rep"
    res = runner.invoke(app, ["report", str(labels_csv), "--judge", "gpt-x", "--judge", "judge <b>2</b>",
                              "--abstain", "cannot assess", "--categories", "0,1", "-o", str(out),
                              "--seed", "3", "--n-resamples", "50"])
    assert res.exit_code == 0, res.output
    assert (out / "report.html").exists() and (out / "report.json").exists()
    assert "report.html" in res.stdout
    doc = json.loads((out / "report.json").read_text())
    jsonschema.validate(doc, report_schema())
    assert doc["meta"]["seed"] == 3
    assert doc["meta"]["judges"] == ["gpt-x", "judge <b>2</b>"]
    import hashlib

    assert doc["meta"]["input"]["sha256"] == hashlib.sha256(labels_csv.read_bytes()).hexdigest()


@pytest.mark.slow
def test_inclusion_prob_value_and_column(labels_csv, tmp_path):
    for spec, expect in (("0.5", {"kind": "constant", "value": 0.5}), ("pi", None)):
        out = tmp_path / f"rep_{spec}"
        res = runner.invoke(app, ["report", str(labels_csv), "-j", "gpt-x", "--abstain", "cannot assess",
                                  "--inclusion-prob", spec, "-o", str(out), "--n-resamples", "20", "-q"])
        assert res.exit_code == 0, res.output
        doc = json.loads((out / "report.json").read_text())
        if expect is not None:
            assert doc["meta"]["inclusion_prob"] == expect
        else:
            assert doc["meta"]["inclusion_prob"]["kind"] == "per item"
            assert doc["meta"]["inclusion_prob"]["mean"] == pytest.approx(0.8)


def test_missing_inclusion_column_is_a_one_line_error(labels_csv, tmp_path):
    res = runner.invoke(app, ["report", str(labels_csv), "-j", "gpt-x", "--abstain", "cannot assess",
                              "--inclusion-prob", "nope", "-o", str(tmp_path / "r")])
    assert res.exit_code == 1
    assert "nope" in res.output and "Traceback" not in res.output


def test_no_judge_is_an_error(labels_csv, tmp_path):
    res = runner.invoke(app, ["report", str(labels_csv), "--abstain", "cannot assess", "-o", str(tmp_path / "r")])
    assert res.exit_code == 1
    assert "--judge" in res.output


def test_unknown_judge_and_missing_file(labels_csv, tmp_path):
    res = runner.invoke(app, ["report", str(labels_csv), "-j", "nobody", "-o", str(tmp_path / "r")])
    assert res.exit_code == 1 and "nobody" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["report", str(tmp_path / "absent.csv"), "-j", "x"])
    assert res.exit_code == 1 and "not found" in res.output


def test_bad_confidence_level(labels_csv, tmp_path):
    res = runner.invoke(app, ["report", str(labels_csv), "-j", "gpt-x", "--abstain", "cannot assess",
                              "--confidence-level", "95", "-o", str(tmp_path / "r")])
    assert res.exit_code == 1 and "Did you mean 0.95" in res.output


def test_help():
    res = runner.invoke(app, ["report", "--help"])
    assert res.exit_code == 0 and "--pairwise" in res.output and "--inclusion-prob" in res.output


@pytest.mark.slow
def test_pairwise_file(labels_csv, tmp_path):
    from voirdire.pairwise import simulate_pairwise

    pt, _ = simulate_pairwise(60, rng=1)
    pf = tmp_path / "votes.csv"
    pt.to_frame().to_csv(pf, index=False)
    out = tmp_path / "rep"
    res = runner.invoke(app, ["report", str(labels_csv), "-j", "gpt-x", "--abstain", "cannot assess",
                              "--pairwise", str(pf), "-o", str(out), "--n-resamples", "20", "-q"])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "report.json").read_text())
    sec = doc["sections"]["pairwise"]
    assert sec["status"] == "ok"
    assert sec["results"]["posterior"]["judges"] == ["judge_1", "judge_2"]
    assert doc["meta"]["pairwise_input"]["name"] == "votes.csv"


@pytest.mark.slow  # a whole report: 1.7-2.9 CPU-s in the oracle environment (the fast suite allows 2)
def test_pairwise_only_report(tmp_path):
    from voirdire.pairwise import simulate_pairwise

    pt, _ = simulate_pairwise(60, rng=1)
    f = pt.to_frame()
    f["model_a"] = np.where(f["pair"].str[-1].isin(list("02468")), "gpt-4o", "llama-3")
    f["model_b"] = "claude-3"
    pf = tmp_path / "votes.csv"
    f.to_csv(pf, index=False)
    out = tmp_path / "rep"
    res = runner.invoke(app, ["report", "--pairwise", str(pf), "-o", str(out), "-q"])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "report.json").read_text())
    status = {k: v["status"] for k, v in doc["sections"].items()}
    assert status.pop("pairwise") == "ok" and status.pop("biases") == "ok"
    assert status.pop("glance") == "ok"  # a pairwise-only report opens with its own At a glance
    assert set(status.values()) == {"not available"} and "data" in status  # the graded sections say why
    effects = {e["effect"] for e in doc["sections"]["biases"]["results"]["bias"]["effects"]}
    assert {"position (swap)", "position (humans tie)", "self-preference"} <= effects
    assert doc["summary"]["n_pairs"] == 60 and doc["meta"]["input"]["name"] == "votes.csv"
    jsonschema.validate(doc, report_schema())
    html = (out / "report.html").read_text()
    assert "Judge biases" in html and "voirdire pairwise report" in html
    none = runner.invoke(app, ["report", "-o", str(tmp_path / "x")])
    assert none.exit_code == 1 and "--pairwise" in none.output


def test_bad_pairwise_file_is_a_one_line_error(labels_csv, tmp_path):
    pf = tmp_path / "votes.csv"
    pf.write_text("pair,rater,verdict\np1,a,maybe\n")
    res = runner.invoke(app, ["report", str(labels_csv), "-j", "gpt-x", "--abstain", "cannot assess",
                              "--pairwise", str(pf), "-o", str(tmp_path / "r")])
    assert res.exit_code == 1 and "votes.csv" in res.output and "Traceback" not in res.output


@pytest.mark.slow
def test_demo_ends_with_the_report(tmp_path):
    out = tmp_path / "demo"
    res = runner.invoke(app, ["demo", "--resamples", "20", "--seed", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    html, js = out / "report.html", out / "report.json"
    assert html.exists() and js.exists()
    assert str(html.resolve()) in res.stdout.replace("\n", "")
    doc = json.loads(js.read_text())
    jsonschema.validate(doc, report_schema())
    from voirdire.datasets import hanna_path

    import hashlib

    assert doc["meta"]["input"]["sha256"] == hashlib.sha256(hanna_path().read_bytes()).hexdigest()
    assert doc["summary"]["n_items"] == 6336 and doc["meta"]["seed"] == 1
    status = {k: v["status"] for k, v in doc["sections"].items()}
    for key in ("glance", "data", "agreement", "validation", "design"):
        assert status[key] == "ok", (key, doc["sections"][key]["reason"])


@pytest.mark.slow
def test_pairwise_reading_options(labels_csv, tmp_path):
    """Spellings and columns of the pairwise file: --verdict-map, --pair, --verdict (the hints errors give)."""
    from voirdire.pairwise import simulate_pairwise

    pt, _ = simulate_pairwise(40, rng=3)
    df = pt.to_frame().rename(columns={"pair": "pid", "verdict": "winner"})
    df["winner"] = df["winner"].map({"A": "model_1", "B": "model_2", "T": "tie"})
    pf = tmp_path / "votes.csv"
    df.to_csv(pf, index=False)
    base = ["report", str(labels_csv), "-j", "gpt-x", "--abstain", "cannot assess", "--pairwise", str(pf),
            "--n-resamples", "20", "-q", "-o", str(tmp_path / "r")]
    bad = runner.invoke(app, base + ["--pair", "pid", "--verdict", "winner"])
    assert bad.exit_code == 1 and "--verdict-map" in bad.output
    ok = runner.invoke(app, base + ["--pair", "pid", "--verdict", "winner", "--verdict-map", "model_1=A",
                                    "--verdict-map", "model_2=B"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    assert doc["sections"]["pairwise"]["status"] == "ok"
    res = runner.invoke(app, base + ["--verdict-map", "nonsense"])
    assert res.exit_code == 1 and "RAW=A|T|B" in res.output
    res = runner.invoke(app, base + ["--missing", "maybe"])  # the shared reader option: a usage error, as everywhere
    assert res.exit_code == 2 and "--missing" in res.output
