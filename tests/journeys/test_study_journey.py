"""The study loop as a user walks it, through the installed ``voirdire`` console script (issue 27).

init, add (a first pass: two judges on every item, one annotator on 100), assign (the next batch for
two more annotators), add (what came back), draw (the human sample for estimation), add (its
labels), estimate, report, on ``examples/hanna_complexity.csv`` (HANNA's Complexity criterion:
1,056 stories, three humans and LLM judges, scores 1-5). The round files are cut from the example
the way a user cuts them from the tools' exports. Every step asserts what the user reads: the
counts of each round, the batch and the draw, the estimate and what it left out, the report's title
and its Estimation section. Runs in the user environment (pandas 3: the loop crashed there).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ._cli import EXAMPLE, needs_console_script, number, table, voirdire

pytestmark = [pytest.mark.slow, needs_console_script]


def _voirdire(*args: str, cwd: Path) -> tuple[str, str]:
    """Run the console script (exit 0, no traceback); stdout and stderr with every line wrap made one space."""
    r = voirdire(*args, cwd=cwd)
    return " ".join(r.out.split()), " ".join(r.err.split())


def test_study_loop_from_first_pass_to_estimate_and_report(tmp_path: Path) -> None:
    ex = pd.read_csv(EXAMPLE, dtype=str)
    humans = ex[ex["role"] == "human"]
    n_items = ex["item"].nunique()
    assert n_items == 1056

    # init
    out, _ = _voirdire("study", "init", "s.vdb", cwd=tmp_path)
    assert out == "Created study s.vdb (schema 3)."  # schema 3: item groups (study add --by)

    # add: the first pass, two judges on every item and human_1 on the first 100 items
    first = ex[ex["rater"].isin(["ChatGPT", "Llama-13B"]) | ((ex["rater"] == "human_1") & (ex["item"].astype(int) < 100))]
    first.to_csv(tmp_path / "first.csv", index=False)
    out, _ = _voirdire("study", "add", "s.vdb", "first.csv", "--role", "role", cwd=tmp_path)
    assert out == ("Round 1: 2,212 rows from first.csv: 2,212 imported, 0 replaced, 0 duplicate, 0 rejected; "
                   "0 flagged (never assigned).")

    # assign: 30 items each for human_2 and human_3
    out, _ = _voirdire("study", "assign", "s.vdb", "-n", "30", "-r", "human_2", "-r", "human_3", "--design", "random",
                       "--seed", "1", "-o", "batch.csv", cwd=tmp_path)
    assert out.startswith("Round 2: 60 assignments (random, seed 1) recorded with their inclusion probabilities; "
                          "wrote batch.csv and batch.manifest.json")
    batch = pd.read_csv(tmp_path / "batch.csv", dtype=str)
    assert len(batch) == 60 and batch.groupby("rater").size().to_dict() == {"human_2": 30, "human_3": 30}
    assert set(batch["item"]) <= set(ex["item"])

    # add: what came back (the annotators' labels of exactly those items)
    done = ex.merge(batch[["item", "rater"]], on=["item", "rater"])
    done.to_csv(tmp_path / "batch_done.csv", index=False)
    out, _ = _voirdire("study", "add", "s.vdb", "batch_done.csv", "--role", "role", cwd=tmp_path)
    assert out == ("Round 3: 60 rows from batch_done.csv: 60 imported, 0 replaced, 0 duplicate, 0 rejected; "
                   "0 flagged (never assigned).")

    # draw: the human sample for estimation, pi = 100/1056 on every item (Poisson: about 100 drawn)
    out, _ = _voirdire("study", "draw", "s.vdb", "-n", "100", "--seed", "2", "-o", "draw.csv", cwd=tmp_path)
    drawn = pd.read_csv(tmp_path / "draw.csv", dtype=str)
    k = len(drawn)
    assert out == f"Round 4: {k} items drawn (uniform, seed 2); probabilities recorded; wrote draw.csv."
    assert 60 <= k <= 140 and drawn["item"].is_unique
    assert np.allclose(drawn["inclusion_prob"].astype(float), 100 / n_items)

    # add: the three humans' scores of the drawn items (human_1's first-pass labels come again: duplicates)
    labels = humans[humans["item"].isin(drawn["item"])]
    labels.to_csv(tmp_path / "drawn_done.csv", index=False)
    dup = int(labels.merge(pd.concat([first, done]), on=["item", "rater"]).shape[0])
    out, _ = _voirdire("study", "add", "s.vdb", "drawn_done.csv", "--role", "role", cwd=tmp_path)
    assert out == (f"Round 5: {3 * k} rows from drawn_done.csv: {3 * k - dup} imported, 0 replaced, {dup} duplicate, "
                   "0 rejected; 0 flagged (never assigned).")

    # estimate: the probability sample only; the validation rounds' human labels are left out, and said so
    in_study = pd.concat([first, done, labels]).drop_duplicates(["item", "rater"])
    h = in_study[in_study["role"] == "human"]
    left = h[~h["item"].isin(drawn["item"])]
    out, _ = _voirdire("study", "estimate", "s.vdb", "-j", "ChatGPT", "-f", "json", cwd=tmp_path)
    est = json.loads(out)
    assert est["study"]["n_human_labels_left_out"] == len(left) and est["study"]["n_items_drawn"] == k
    assert (f"Estimating from the probability sample of draw round(s) 4: {k} item(s) drawn with recorded "
            f"probabilities, {k} of them with human labels ({3 * k} labels). Left out: {len(left)} other human "
            f"label(s) on {left['item'].nunique()} item(s) no chosen draw drew (round(s) 1, 3)") in est["study"]["note"]
    dr = est["estimates"]["doubly_robust"]
    assert est["file"] == "s.vdb" and (dr["n_labeled"], dr["n_total"]) == (k, n_items)
    # the mean human score over all 1,056 items (all three humans scored every story) is in the interval
    truth = humans.assign(label=humans["label"].astype(float)).groupby("item")["label"].mean().mean()
    assert dr["ci"]["low"] < truth < dr["ci"]["high"] and dr["ci"]["high"] - dr["ci"]["low"] < 0.5
    shown = voirdire("study", "estimate", "s.vdb", "-j", "ChatGPT", cwd=tmp_path)
    assert f"Left out: {len(left)} other human label(s)" in shown.flat
    row = table(shown.out, header_has="estimator", title_has="Mean human score").by("estimator")["DR"]
    assert (number(row["estimate"]), number(row["n"]), number(row["N"])) == (round(dr["estimate"], 3), k, n_items)
    assert row["interval"] == f"[{dr['ci']['low']:.3f}, {dr['ci']['high']:.3f}]"

    # report: titled after the study, its Estimation section from the recorded probabilities
    out, err = _voirdire("study", "report", "s.vdb", "-j", "ChatGPT", "--scale", "interval", "--n-resamples", "100",
                         "-o", "rep", "-q", cwd=tmp_path)
    assert out == "Report: rep/report.html JSON: rep/report.json" and "Estimation" not in err
    rep = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert rep["title"] == "voirdire validation report: s.vdb"
    assert rep["summary"]["n_items"] == n_items and rep["summary"]["n_humans"] == 3
    sec = rep["sections"]["estimation"]
    assert sec["status"] == "ok" and sec["results"]["n_human_labels_left_out"] == len(left)
    assert np.isclose(sec["results"]["judges"][0]["dr_calibrated"]["estimate"], dr["estimate"])
    assert rep["sections"]["validation"]["status"] == "ok"
    assert "<title>voirdire validation report: s.vdb</title>" in (tmp_path / "rep" / "report.html").read_text()
