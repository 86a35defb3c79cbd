"""`voirdire plan` and `voirdire overlap` through typer's CliRunner."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.design import plan_certification, plan_ranking
from voirdire.simulate import simulate_annotations, subsample

runner = CliRunner()


@pytest.fixture(scope="module")
def pilot_csv(tmp_path_factory):
    full = simulate_annotations(n_items=300, n_humans=3, judge_accuracies=[0.9, 0.75], rng=0).table
    sparse = subsample(full, "random", 0.2, rng=1)
    df = sparse.to_frame()[["item", "rater", "label"]]
    p = tmp_path_factory.mktemp("plan") / "labels.csv"
    df.to_csv(p, index=False)
    return p, sparse


def test_overlap_table(pilot_csv) -> None:
    p, _ = pilot_csv
    r = runner.invoke(app, ["overlap", str(p), "--judge", "judge_1", "--judge", "judge_2"])
    assert r.exit_code == 0, r.output
    assert "Coverage" in r.output and "primary (labelled every item): human_1" in r.output
    assert "do not share a panel" in r.output and "Leave-one-out" in r.output


def test_overlap_json(pilot_csv) -> None:
    p, table = pilot_csv
    r = runner.invoke(app, ["overlap", str(p), "-j", "judge_1", "-j", "judge_2", "--format", "json",
                            "--min-eligible", "100"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["primary"] == "human_1" and d["n_items"] == 300
    lab = dict(zip(d["raters"], d["n_labelled"]))
    assert [lab[h] for h in ("human_1", "human_2", "human_3", "judge_1")] == [300, 60, 60, 300]
    pairs = pd.DataFrame(d["pairs"])
    sel = pairs.apply(lambda x: {x.rater_a, x.rater_b} == {"human_2", "human_3"}, axis=1)
    row = pairs[sel].iloc[0]
    assert row.expected == pytest.approx(60 * 60 / 300)
    assert d["warnings"] and "fewer than 100 eligible items" in d["warnings"][0]


def test_plan_json_matches_library(pilot_csv) -> None:
    p, table = pilot_csv
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "-j", "judge_2", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    lib = plan_certification(table, judge="judge_1")
    assert d["certification"]["judge_1"]["m_star"] == lib.m_star
    assert d["ranking"]["m_star"] == plan_ranking(table).m_star
    assert d["simulation"] is None


def test_plan_with_kappa(pilot_csv) -> None:
    p, table = pilot_csv
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "-j", "judge_2", "--score", "kappa", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)["certification"]["judge_1"]
    lib = plan_certification(table, judge="judge_1", score="kappa")
    # same d_k; sigma0 is a bootstrap figure (the file's row order changes the draws)
    assert d["score"] == "kappa" and d["mu_d"] == pytest.approx(lib.mu_d)
    assert 0.7 < d["m_star"] / lib.m_star < 1.4


def test_plan_table_with_simulation(pilot_csv) -> None:
    p, _ = pilot_csv
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "--budget", "20,60", "--repetitions", "10"])
    assert r.exit_code == 0, r.output
    assert "Certify judge_1 (leave-one-out, fixed sample): m*_cert" in r.output and "Simulated decision" in r.output
    # judge_1 (the only judge named: judge_2 counts as a human) is inconclusive because of the humans'
    # agreement: more labels of it will not help, and the anytime-valid rule's accept is shown beside
    flat = " ".join(r.output.split())
    assert "judge_1: INCONCLUSIVE - " in flat and "What would settle it: more labels of this judge will not settle it" in flat
    assert "beside it, the running anytime-valid leave-one-out rule already says accept" in flat
    assert "Smallest budget with FR" in r.output


def test_plan_from_moments_and_infeasible() -> None:
    r = runner.invoke(app, ["plan", "--mu-d", "0.02", "--sigma0", "0.3", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["certification"]["(given moments)"]["m_star"] == 71
    r = runner.invoke(app, ["plan", "--mu-d", "-0.2", "--sigma0", "0.3"])
    assert r.exit_code == 1 and "not positive" in r.output
    r = runner.invoke(app, ["plan", "--sigma0", "0.4", "--delta-min", "0.05", "--n-judges", "3", "--format", "json"])
    assert json.loads(r.stdout)["ranking"]["m_star"] == 492
    r = runner.invoke(app, ["plan"])
    assert r.exit_code == 1 and "Give a pilot FILE" in r.output


def test_plan_errors(pilot_csv, tmp_path) -> None:
    p, _ = pilot_csv
    r = runner.invoke(app, ["plan", str(p), "-j", "nobody"])
    assert r.exit_code == 1 and "error:" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "--budget", "ten"])
    assert r.exit_code == 1 and "whole numbers" in r.output
    r = runner.invoke(app, ["overlap", str(tmp_path / "missing.csv")])
    assert r.exit_code == 1 and "file not found" in r.output
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "--significance-level", "5"])
    assert r.exit_code == 1 and "Did you mean 0.05" in r.output


def test_plan_reports_infeasible_judge(tmp_path) -> None:
    full = simulate_annotations(n_items=200, n_humans=3, judge_accuracies=[0.3, 0.95], rng=1).table
    p = tmp_path / "l.csv"
    full.to_frame()[["item", "rater", "label"]].to_csv(p, index=False)
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "-j", "judge_2", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert "judge_1" in d["infeasible"] and "judge_2" in d["certification"]
    assert np.isfinite(d["certification"]["judge_2"]["m_star"])


def test_plan_one_answer_per_judge_settled_gets_no_top_up() -> None:
    from tests.conftest import shared_data
    from voirdire.design import plan_judges
    from voirdire.data import read_annotations

    lesion = shared_data("alttest", "lesion")
    r = runner.invoke(app, ["plan", str(lesion), "--judge", "gpt-4o", "--judge", "gemini_pro"])
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "One answer per judge" in out
    # the verdict is validate's (same seed and defaults); the anytime-valid rule is shown beside it, labelled
    from voirdire.workflows import validate_judges

    val = validate_judges(read_annotations(lesion), ["gpt-4o", "gemini_pro"], seed=0)
    from voirdire.report._terminal import verdict_lines

    for e, line in zip(val.judges, verdict_lines(val)):  # validate's own line, word for word
        assert " ".join(line.plain.split()) in " ".join(out.split())
        assert e.advice.sentence in " ".join(out.split())
    assert "beside it, the running anytime-valid leave-one-out rule" in out
    assert "no more labels are needed" in out   # settled: no top-up
    assert "--n-per-rater N " not in out and "Next:" in out
    lib = plan_judges(read_annotations(lesion), ["gpt-4o", "gemini_pro"])
    js = json.loads(runner.invoke(app, ["plan", str(lesion), "-j", "gpt-4o", "-j", "gemini_pro", "-f", "json"]).stdout)
    assert [p["status"] for p in js["answers"]["plans"]] == [p.status for p in lib.plans]
    assert [v["verdict"]["decision"] for v in js["verdicts"]] == [e.verdict.decision for e in val.judges]
    # no Next: command for a settled or rejected judge
    if all(e.advice.command() is None for e in val.judges):
        assert "voirdire assign" not in out


@pytest.fixture(scope="module")
def hanna_sparse(tmp_path_factory):
    """The sparse HANNA Complexity labels of docs/tutorials/validating-judges.md (300 stories, each worker
    keeping 45% of their labels), built exactly as the tutorial builds them."""
    from pathlib import Path

    df = pd.read_csv(Path(__file__).resolve().parents[2] / "examples" / "hanna_complexity.csv")
    rng = np.random.default_rng(7)
    stories = rng.choice(df["item"].unique(), size=300, replace=False)
    df = df[df["item"].isin(stories)]
    keep = (df["role"] == "judge") | (rng.random(len(df)) < 0.45)
    p = tmp_path_factory.mktemp("hanna") / "labels.csv"
    df[keep].to_csv(p, index=False)
    return p


READ = ["--role", "role", "--scale", "interval", "--abstain", "-1"]


def _line(out: str, judge: str) -> str:
    flat = " ".join(out.split())
    start = flat.index(f"{judge}: ")
    return flat[start:flat.index("]", flat.index(" [leave-one-out", start)) + 1]


@pytest.mark.slow
def test_plan_and_validate_give_beluga_the_same_verdict_and_reasons(hanna_sparse) -> None:
    # the tutorial's commands (default seed and resamples): the same verdict line, reasons and "what would
    # settle it" word for word, from one place (workflows' verdict and advice)
    v = runner.invoke(app, ["validate", str(hanna_sparse), *READ, "--judge", "Beluga-13B"])
    p = runner.invoke(app, ["plan", str(hanna_sparse), *READ, "--judge", "Beluga-13B"])
    assert v.exit_code == 0 and p.exit_code == 0, v.output + p.output
    line = _line(v.stdout, "Beluga-13B")
    assert line.startswith("Beluga-13B: INCONCLUSIVE - ") and "reference_unreliable" in line
    assert _line(p.stdout, "Beluga-13B") == line
    # both tests accept and the humans' alpha is below the floor: labels cannot make an accept stand, so
    # neither command suggests a batch
    assert "What would settle it: more labels of this judge will not settle it: every test accepts it" in line
    assert "voirdire assign" not in p.stdout
    vj = json.loads(runner.invoke(app, ["validate", str(hanna_sparse), *READ, "-j", "Beluga-13B", "-f", "json"]).stdout)
    pj = json.loads(runner.invoke(app, ["plan", str(hanna_sparse), *READ, "-j", "Beluga-13B", "-f", "json"]).stdout)
    assert pj["verdicts"][0]["verdict"] == vj["judges"][0]["verdict"]
    assert pj["verdicts"][0]["advice"] == vj["judges"][0]["advice"]


@pytest.fixture(scope="module")
def open_csv(tmp_path_factory):
    """A judge the items on hand can settle: just below the humans (accuracy 0.78 against 0.85), 3,000 items,
    each human on 12% of them (as tests/workflows/test_one_decision.py)."""
    full = simulate_annotations(n_items=3000, n_humans=3, judge_accuracies=[0.78], rng=0).table
    df = full.to_frame()
    keep = (df["rater"] == "judge_1") | (np.random.default_rng(0).random(len(df)) < 0.12)
    df = df[keep][["item", "rater", "label"]].copy()
    df["role"] = np.where(df["rater"] == "judge_1", "judge", "human")
    p = tmp_path_factory.mktemp("open") / "sparse.csv"
    df.to_csv(p, index=False)
    return p


def test_plan_prints_what_the_simulation_check_found(open_csv) -> None:
    r = runner.invoke(app, ["plan", str(open_csv), "--role", "role", "--n-resamples", "200"])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.stdout.split())
    m = re.search(r"Next: voirdire assign .* checked by simulation \(200 runs of this (\w+) batch of ([\d,]+) items "
                  r"per assignee, each human labelling at their observed rate\): it gives about ([\d,]+) new "
                  r"comparisons per open held-out human, ([\d,]+) needed: enough\)", flat)
    assert m, flat
    n = [int(m.group(k).replace(",", "")) for k in (2, 3, 4)]
    assert n[1] >= n[2] and n[0] <= 3000
    # the command reads the file as plan did, and gives what the check found (these humans never abstain)
    cmd = re.search(r"Next: voirdire (assign .*?) \(for judge_1", flat).group(1)
    assert cmd.endswith("-o next_batch.csv --role role")
    out = open_csv.parent / "next.csv"
    a = runner.invoke(app, cmd.replace("next_batch.csv", str(out)).split())
    assert a.exit_code == 0, a.output
    from voirdire.data import read_annotations
    from voirdire.workflows import comparison_capacity

    df = pd.read_csv(open_csv)
    batch = pd.read_csv(out)[["item", "rater"]].assign(label=df["label"].iloc[0], role="human")
    merged = open_csv.parent / "merged.csv"
    pd.concat([df, batch]).to_csv(merged, index=False)
    gain = (comparison_capacity(read_annotations(merged, role="role"), "judge_1")[1]
            - comparison_capacity(read_annotations(open_csv, role="role"), "judge_1")[1])
    assert int(gain.min()) == n[1]


def test_plan_never_prints_a_batch_the_check_fails(open_csv, monkeypatch) -> None:
    # the check finds every batch short: no assign command anywhere, what the check found, and what would
    # settle it instead (without the check, plan printed the drawn batch as its Next: command)
    import voirdire.workflows._planning as planning

    real = planning.check_batch

    def short(*args, **kwargs):
        c = real(*args, **kwargs)
        return None if c is None else dataclasses.replace(c, fewest=c.need / 2, enough=False)

    monkeypatch.setattr(planning, "check_batch", short)
    r = runner.invoke(app, ["plan", str(open_csv), "--role", "role", "--n-resamples", "200"])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.stdout.split())
    assert "voirdire assign" not in flat and "--n-per-rater" not in flat
    assert re.search(r"judge_1: checked by simulation .* not enough; instead, about [\d,]+ more comparisons per "
                     r"held-out human .*: have each human label about [\d,]+ of the 3,000 items on hand", flat), flat
    assert "Next: no batch of the items on hand passed the simulation check" in flat


def test_plan_never_prints_a_size_above_the_items_on_hand(pilot_csv) -> None:
    # judge_2 needs more comparisons than 300 items can give: every size says so instead of a number
    p, _ = pilot_csv
    r = runner.invoke(app, ["plan", str(p), "-j", "judge_1", "-j", "judge_2", "--n-resamples", "200"])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.stdout.split())
    assert re.search(r"m\*_cert = > 300 \(cannot be settled with the 300 items you have: needs about [\d,]+ more "
                     r"items labelled by 3 humans\)", flat), flat
    for m in re.finditer(r"(?<![\d,.>] )\b(\d[\d,]*) (?:more )?(?:items|comparisons|eligible items) per", flat):
        assert int(m.group(1).replace(",", "")) <= 300, m.group(0)
