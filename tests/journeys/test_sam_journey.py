"""Sam's path (../shared/USERS.md, 4) through the installed console script (issue 27, Build 3).

Real pairwise verdicts: SummEval head-to-head (../shared/data/pairwise/summeval_h2h; skipped when
the shared data are absent), the coherence pairs of the first 160 system pairs: three experts (with
ties) and gpt-3.5-turbo asked in both orders. Sam fits the model (``pairwise``), resumes the stream
the next day from the saved state (``--save-state`` / ``--resume``: yesterday's pairs keep their
numbers), measures the judge's biases (``bias``) and writes the pairwise report (``report
--pairwise``).

Asserted is what he reads: the counts in the header, the judge's bias row, each confusion matrix
(rows sum to 1, 160 labels each), the least certain pairs (their ids, as in the file, in order of
entropy), the flip rate and the position effect recomputed here from the file, day 1's pairs
unchanged after day 2, and the report's numbers equal to the commands' at the same seed.
"""

from __future__ import annotations

import collections
import csv
import json
import re
from pathlib import Path

import pytest

from ..conftest import shared_data
from ._cli import needs_console_script, number, table, voirdire

pytestmark = [pytest.mark.slow, needs_console_script]

JUDGE = "gpt-3.5-turbo-0301"


def _votes(tmp: Path) -> list[dict[str, str]]:
    from voirdire.data import pairwise_set_frame

    root = shared_data("pairwise", "summeval_h2h").parent
    f = pairwise_set_frame("summeval_h2h", root)
    f = f[f["pair"].str.endswith("|coherence")]
    pairs = list(dict.fromkeys(f["pair"]))[:160]
    f = f[f["pair"].isin(pairs)]
    f.to_csv(tmp / "votes.csv", index=False)
    f[f["pair"].isin(pairs[:80])].to_csv(tmp / "day1.csv", index=False)
    f[f["pair"].isin(pairs[80:])].to_csv(tmp / "day2.csv", index=False)
    with open(tmp / "votes.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_sam_pairwise_resume_bias_and_report(tmp_path: Path) -> None:
    rows = _votes(tmp_path)
    pairs = list(dict.fromkeys(r["pair"] for r in rows))
    judge = collections.defaultdict(dict)
    humans = collections.defaultdict(list)
    for r in rows:
        if r["role"] == "judge":
            judge[r["pair"]][r["order"]] = r["verdict"]
        else:
            humans[r["pair"]].append(r["verdict"])
    assert len(pairs) == 160 and all(set(v) == {"AB", "BA"} for v in judge.values())

    # the model: the judge's position bias, the humans' confusion matrices, the pairs to send for review
    p = voirdire("pairwise", "votes.csv", "--role", "role", "--particles", "100", "--top", "5", cwd=tmp_path)
    assert p.out.startswith("votes.csv: 160 pairs, 3 humans, 1 judges, 800 verdicts "
                            "(160 pairs with a judge in both orders)"), p
    # before the posteriors: which method forecasts held-out humans best (its forecasts are the pairs shown)
    assert re.search(r"held-out choice: .+ \(leave-one-human-out, 3 folds of humans; rule: the method with the "
                     r"lowest held-out NLL", p.flat.split("Judges' position bias")[0]), p
    row = table(p.out, header_has="beta").by("judge")[JUDGE]
    lo, hi = (number(x) for x in row["95% interval"].strip("[]*").split(","))
    assert lo < number(row["beta"]) < hi and row["orders seen"] == "AB+BA"
    conf = table(p.out, header_has="said A")
    current = None
    for r in conf.rows:
        current = r[0] or current
        assert abs(sum(number(x) for x in r[2:5]) - 1) < 0.002, r
        if r[0]:
            assert number(r[5]) == 160
    assert {r[0] for r in conf.rows if r[0]} == {"expert_1", "expert_2", "expert_3"}
    unsure = table(p.out, header_has="entropy", title_has="Most uncertain pairs")
    assert len(unsure.rows) == 5 and set(unsure.column("pair")) <= set(pairs), "pair ids did not survive"
    ent = [number(x) for x in unsure.column("entropy")]
    assert ent == sorted(ent, reverse=True) and max(ent) <= 1.099

    # does the model earn its place? each human held out and predicted, next to the baselines
    e = voirdire("pairwise", "votes.csv", "--role", "role", "--particles", "100", "--top", "0", "--evaluate",
                 cwd=tmp_path)
    ev = table(e.out, header_has="accuracy", title_has="Leave-one-human-out").by("method")
    assert {"BayesJudge", "majority vote", "Dawid-Skene"} <= set(ev)
    assert {r["labels"] for r in ev.values()} == {"480"}          # 3 held-out humans x 160 pairs
    # one sentence each ([^[]: a match never runs on into the next '[group] metric:' sentence, such as
    # '[all] ece: BayesJudge best (0.802; next Dawid-Skene 0.809).')
    said = re.findall(r"\[all\] (accuracy|nll|brier|ece): ([^\[]+?) beats ([^\[]+?) \(([\d.]+) vs ([\d.]+)\)", e.flat)
    assert said, e
    column = {"accuracy": "accuracy", "nll": "NLL", "brier": "Brier", "ece": "ECE"}
    for metric, winner, loser, a, b in said:           # the sentences under the table quote the table
        scale, tol = (100, 0.1) if metric == "accuracy" else (1, 0.0011)   # '67.3%' beside '0.673'
        assert number(ev[winner][column[metric]]) == pytest.approx(float(a) * scale, abs=tol)
        assert number(ev[loser][column[metric]]) == pytest.approx(float(b) * scale, abs=tol)

    # day by day: day 2 resumes from day 1's state; day 1's pairs keep their numbers (the model's: a stream
    # resumed day by day skips the held-out choice, whose baselines would see one day's file only)
    d1 = json.loads(voirdire("pairwise", "day1.csv", "--role", "role", "--particles", "100", "--save-state", "s1.npz",
                             "--no-choice", "-f", "json", cwd=tmp_path).out)
    d2 = json.loads(voirdire("pairwise", "day2.csv", "--role", "role", "--resume", "s1.npz", "--save-state",
                             "s2.npz", "-f", "json", cwd=tmp_path).out)
    assert d2["model"]["n_items_seen"] == 160 and d2["model"]["resumed_from"] == "s1.npz"
    assert not d2["choice"]["made"] and "resumed stream" in d2["choice"]["not_made"]
    assert d2["model"]["n_particles"] == 100            # the model options come from the state
    day1 = {x["pair"]: x for x in d1["pairs"]}
    day2 = {x["pair"]: x for x in d2["pairs"]}
    assert set(day1) == set(pairs[:80]) and set(day2) == set(pairs)
    for k, x in day1.items():
        assert (day2[k]["p_A"], day2[k]["p_T"], day2[k]["p_B"]) == (x["p_A"], x["p_T"], x["p_B"]), k

    # biases: what can be measured here, recomputed from the file
    b = voirdire("bias", "votes.csv", "--role", "role", cwd=tmp_path)
    effects = {r["effect"]: r for r in table(b.out, header_has="effect").dicts() if r["judge"] == JUDGE}
    swap = effects["position (swap)"]
    flips = sum(v["AB"] != v["BA"] for v in judge.values())
    first = sum((v["AB"] == "A") + (v["BA"] == "B") for v in judge.values())
    second = sum((v["AB"] == "B") + (v["BA"] == "A") for v in judge.values())
    assert swap["pairs"] == "160" and f"flip rate {flips / 160:.3f} " in swap["detail"]
    assert number(swap["estimate"]) == round((first - second) / 320, 3)
    ties = sum(v.count("T") >= 2 for v in humans.values())          # the humans' majority is a tie
    assert effects["position (humans tie)"]["pairs"] == str(ties)
    assert "needs len_a and len_b" in effects["length"]["detail"]

    # the pairwise report: its numbers are the commands' at the same seed
    full = json.loads(voirdire("pairwise", "votes.csv", "--role", "role", "-f", "json", cwd=tmp_path).out)
    bj = json.loads(voirdire("bias", "votes.csv", "--role", "role", "-f", "json", cwd=tmp_path).out)
    r = voirdire("report", "--pairwise", "votes.csv", "-o", "report", "-q", cwd=tmp_path)
    assert "report/report.html" in r.flat
    rep = json.loads((tmp_path / "report" / "report.json").read_text())
    sec = rep["sections"]
    assert sec["pairwise"]["status"] == "ok" and sec["biases"]["status"] == "ok"
    post = sec["pairwise"]["results"]["posterior"]
    i = post["judges"].index(JUDGE)
    assert post["bias_mean"][i] == pytest.approx(full["judges"][0]["bias_mean"], abs=1e-12)
    # ... the held-out choice and the per-pair forecasts shown included (the report fits through fit_pairwise)
    assert sec["pairwise"]["results"]["choice"] == full["choice"] and full["choice"]["made"]
    assert sec["pairwise"]["results"]["forecasts"] == full["pairs"]
    assert sec["biases"]["results"]["bias"]["effects"] == bj["effects"]
    html = (tmp_path / "report" / "report.html").read_text()
    assert JUDGE in html and f"flip rate {flips / 160:.3f}" in html
