"""Dr. Okafor's path (../shared/USERS.md, 2) through the installed console script (issue 27, Build 3).

The bundled HANNA Complexity scores: two LLM judges (Beluga-13B, OrcaPlatypus) score all 1,056
stories; the "expert" is HANNA's ``human_1``, whose score on every story is known, so the true mean
is known too. A pilot sends each story to the expert with probability 0.15. He estimates the mean
with both judges (``estimate --inclusion-prob pi``), asks ``plan-estimate`` how many expert labels a
+-0.1 interval needs (from the pilot: the same model as the estimate), draws the next expert sample
with ``plan-estimate --design active``, has it scored and estimates again with the probabilities the
draw wrote.

Asserted is what he reads: n and N, the human-only estimate equal to the expert sample's mean, the
DR interval no wider than expert-only and covering the true mean, the planner's R² and sd equal to
the estimate's and its n solving the stated formula, the draw's counts, and the second estimate's
standard error where the planner put it.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ._cli import EXAMPLE, needs_console_script, number, table, voirdire

pytestmark = [pytest.mark.slow, needs_console_script]

JUDGES = ("--judge", "Beluga-13B", "--judge", "OrcaPlatypus")
Z = 1.959963984540054


def _estimate(tmp: Path, file: str, prob: str) -> tuple[dict[str, dict[str, str]], float, float]:
    r = voirdire("estimate", file, *JUDGES, "--inclusion-prob", prob, cwd=tmp)
    rows = table(r.out, header_has="estimator", title_has="Mean human score, 2 judges").by("estimator")
    m = re.search(r"cross-fitted R² of the model (-?[\d.]+), sd of the human scores ([\d.]+)", r.flat)
    assert m, r
    return rows, float(m.group(1)), float(m.group(2))


def _interval(cell: str) -> tuple[float, float]:
    lo, hi = cell.strip("[]").split(",")
    return number(lo), number(hi)


def test_okafor_estimate_plan_draw_estimate(tmp_path: Path) -> None:
    df = pd.read_csv(EXAMPLE)
    expert = df[df["rater"] == "human_1"].set_index("item")["label"]
    truth = expert.mean()
    judges = df[df["rater"].isin(["Beluga-13B", "OrcaPlatypus"])]
    rng = np.random.default_rng(3)
    items = np.sort(df["item"].unique())
    pilot = items[rng.random(items.size) < 0.15]
    scores = pd.concat([judges, df[(df["rater"] == "human_1") & df["item"].isin(pilot)]])
    scores.assign(pi=0.15).to_csv(tmp_path / "scores.csv", index=False)

    # 1. the estimate with both judges
    rows, r2, sd = _estimate(tmp_path, "scores.csv", "pi")
    dr, ho = rows["DR"], rows["human-only"]
    assert (dr["n"], dr["N"], ho["n"]) == (str(pilot.size), "1,056", str(pilot.size))
    assert number(ho["estimate"]) == round(expert[pilot].mean(), 3)
    assert sd == round(expert[pilot].std(ddof=0), 3)     # the weighted (here: equal-weight) sd
    assert number(dr["SE"]) <= number(ho["SE"])          # never wider than expert-only from 100 labelled units
    lo, hi = _interval(dr["interval"])
    assert lo < truth < hi

    # 2. how many expert labels for +-0.1, from the pilot (the same model, so the same R² and sd)
    p = voirdire("plan-estimate", "--pilot", "scores.csv", *JUDGES, "--target-halfwidth", "0.1", "--N", "1056",
                 cwd=tmp_path)
    plan = {r["quantity"]: r for r in table(p.out, header_has="quantity").dicts()}
    assert number(plan["R²"]["value"]) == r2 and number(plan["sd of human scores"]["value"]) == sd
    n_star = number(plan["n* (human-only equivalent)"]["value"])
    assert n_star == pytest.approx((Z * sd / 0.1) ** 2, rel=2e-3)
    n = number(plan["n (items humans score)"]["value"])
    assert abs(n - (1 - r2) / (1 / n_star - r2 / 1056)) <= 1.5
    assert f"Pilot: {pilot.size} items scored by both" in p.flat

    # 3. the next expert sample, item-level probabilities, the pilot kept
    d = voirdire("plan-estimate", "--pilot", "scores.csv", *JUDGES, "--design", "active", "--budget", "200",
                 "--pilot-prob", "pi", "--out", "next.csv", "--seed", "1", cwd=tmp_path)
    nxt = pd.read_csv(tmp_path / "next.csv")
    assert sorted(nxt["item"]) == list(items)
    assert set(nxt.loc[nxt["pilot"], "item"]) == set(pilot)
    new = int((nxt["selected"] & ~nxt["pilot"]).sum())
    assert f"drew {new} new item(s) for the humans" in d.flat and f"beside {pilot.size} pilot item(s)" in d.flat
    assert nxt["inclusion_prob"].between(0, 1, inclusive="right").all()

    # 4. the expert scores them; the estimate with the probabilities the draw wrote
    chosen = nxt.loc[nxt["selected"], "item"]
    round2 = pd.concat([judges, df[(df["rater"] == "human_1") & df["item"].isin(chosen)]])
    round2.merge(nxt[["item", "inclusion_prob"]], on="item").to_csv(tmp_path / "scores2.csv", index=False)
    rows2, _, _ = _estimate(tmp_path, "scores2.csv", "inclusion_prob")
    dr2, ho2 = rows2["DR"], rows2["human-only"]
    assert dr2["n"] == str(chosen.size)
    assert number(dr2["SE"]) <= number(ho2["SE"]) < number(ho["SE"])
    lo2, hi2 = _interval(dr2["interval"])
    assert lo2 < truth < hi2
    # the planner's promise at this n: SE = sd / sqrt(n*), 1/n* = R²/N + (1 - R²)/n
    predicted = sd * math.sqrt(r2 / 1056 + (1 - r2) / chosen.size)
    assert number(dr2["SE"]) == pytest.approx(predicted, rel=0.15)
