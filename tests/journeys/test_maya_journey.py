"""Maya's path (../shared/USERS.md, 1) through the installed console script (issue 27, Build 3).

Three annotators labelled a sparse, little-overlapping share of 120 HANNA stories (the bundled
``examples/hanna_complexity.csv``; every story has all three workers' real scores, so the test
knows each label an annotator would give); five judges scored everything. She validates two judges,
asks ``plan`` what would settle them, writes the next batch with ``assign --design strat``, the
annotators fill it in (a ``label`` column added to the assignment file, copied from HANNA), she
reads the filled batch back, appends it to her labels and validates again. Item ids are
zero-padded strings ("00011"), which a careless reader turns into numbers.

What is asserted is what she reads: the per-human comparison counts of the leave-one-out table
(against a count made here from the file), the verdict words (table, JSON and plan agree), the
batch's raters, items and counts, and after the batch the counts grown by every assigned label.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ._cli import EXAMPLE, needs_console_script, number, table, tables, verdict_lines, voirdire

pytestmark = [pytest.mark.slow, needs_console_script]

READ = ("--role", "role", "--scale", "interval", "--abstain", "-1")
JUDGES = ("Beluga-13B", "ChatGPT")


def _month(tmp: Path) -> pd.DataFrame:
    """Write labels.csv (the sparse month) and return every label of the 120 stories (the truth)."""
    df = pd.read_csv(EXAMPLE, dtype={"item": str})
    rng = np.random.default_rng(7)
    stories = rng.choice(df["item"].unique(), size=120, replace=False)
    full = df[df["item"].isin(stories)].copy()
    full["item"] = full["item"].map(lambda s: f"{int(s):05d}")
    keep = (full["role"] == "judge") | (rng.random(len(full)) < 0.3)
    full[keep].to_csv(tmp / "labels.csv", index=False)
    return full


def _eligible(labels: pd.DataFrame, judge: str) -> dict[str, int]:
    """Items each held-out human shares with the judge and at least one other human (the rule's items)."""
    h = labels[labels["role"] == "human"]
    judged = set(labels.loc[(labels["rater"] == judge) & (labels["label"] != -1), "item"])
    per_item = h.groupby("item")["rater"].nunique()
    shared = set(per_item[per_item >= 2].index)
    return {k: len(set(g["item"]) & shared & judged) for k, g in h.groupby("rater")}


def _loo_items(out: str, judge: str) -> dict[str, int]:
    t = table(out, header_has="S(J;P)", title_has=f"{judge}: leave-one-human-out")
    return {k: int(number(r["items"])) for k, r in t.by("human").items()}


def test_maya_validate_plan_assign_label_validate_again(tmp_path: Path) -> None:
    full = _month(tmp_path)
    labels = pd.read_csv(tmp_path / "labels.csv", dtype={"item": str})
    judges = [a for j in JUDGES for a in ("--judge", j)]

    # 1. validate two judges: the comparisons per held-out human are the file's, and every judge has a verdict
    v1 = voirdire("validate", "labels.csv", *READ, *judges, "--n-resamples", "200", cwd=tmp_path)
    assert v1.out.startswith("labels.csv: 120 items, 3 humans, 5 judges, interval labels"), v1
    before = {j: _loo_items(v1.out, j) for j in JUDGES}
    for j in JUDGES:
        assert before[j] == _eligible(labels, j), (j, before[j])
    verdicts = verdict_lines(v1.out)
    assert set(verdicts) >= set(JUDGES), v1

    # the JSON a pipeline reads says the same at the same seed
    vj = json.loads(voirdire("validate", "labels.csv", *READ, *judges, "--n-resamples", "200", "-f", "json",
                             cwd=tmp_path).out)
    assert {j["judge"]: j["verdict"]["decision"].upper() for j in vj["judges"]} == {j: verdicts[j] for j in JUDGES}
    for j in vj["judges"]:
        loo = j["leave_one_out"]
        assert dict(zip(loo["humans"], loo["n_items"])) == before[j["judge"]]

    # 2. plan: one answer per judge, the verdict the same as validate's
    p = voirdire("plan", "labels.csv", *READ, "--judge", "Beluga-13B", "--n-resamples", "200", cwd=tmp_path)
    row = next(line.split() for line in p.out.splitlines() if line.strip().startswith("Beluga-13B "))
    assert row[1] == verdicts["Beluga-13B"], p

    # 3. assign the next batch, 20 stories for each annotator
    a = voirdire("assign", "labels.csv", *READ, "--judge", "Beluga-13B", "--design", "strat", "-n", "20",
                 "--seed", "0", "-o", "next_batch.csv", cwd=tmp_path)
    shown = table(a.out, header_has="items", title_has="strat assignments").by("rater")
    assert {k: int(r["items"]) for k, r in shown.items()} == {"human_1": 20, "human_2": 20, "human_3": 20}
    assert "Wrote next_batch.csv and next_batch.manifest.json (seed 0)." in a.flat
    with open(tmp_path / "next_batch.csv", newline="") as fh:
        batch = list(csv.DictReader(fh))
    assert len(batch) == 60 and list(batch[0]) == ["rater", "item", "stratum"]
    ids = set(full["item"])
    assert {b["item"] for b in batch} <= ids, "item ids did not survive assign (zero-padded strings)"
    done = set(zip(labels["rater"], labels["item"]))
    assert not {(b["rater"], b["item"]) for b in batch} & done, "an item was assigned to someone who labelled it"
    manifest = json.loads((tmp_path / "next_batch.manifest.json").read_text())
    assert (manifest["design"], manifest["seed"], manifest["n_assignments"]) == ("strat", 0, 60)
    assert manifest["raters"] == ["human_1", "human_2", "human_3"]

    # 4. the annotators fill in the batch: a label column, each their real HANNA score
    truth = full.set_index(["item", "rater"])["label"]
    with open(tmp_path / "batch_done.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["rater", "item", "stratum", "label"])
        for b in batch:
            w.writerow([b["rater"], b["item"], b["stratum"], truth[b["item"], b["rater"]]])

    # read back on its own: the same raters, 20 labels each, the ids as written
    o = voirdire("overlap", "batch_done.csv", "--scale", "interval", cwd=tmp_path)
    cov = table(o.out, header_has="labelled").by("rater")
    assert {k: int(r["labelled"]) for k, r in cov.items()} == {"human_1": 20, "human_2": 20, "human_3": 20}

    # 5. combine and validate again
    back = pd.read_csv(tmp_path / "batch_done.csv", dtype={"item": str})
    back["role"] = "human"
    combined = pd.concat([labels, back[["item", "rater", "role", "label"]]], ignore_index=True)
    combined.to_csv(tmp_path / "labels.csv", index=False)
    v2 = voirdire("validate", "labels.csv", *READ, *judges, "--n-resamples", "200", cwd=tmp_path)
    assert v2.out.startswith("labels.csv: 120 items, 3 humans, 5 judges"), v2
    after = {j: _loo_items(v2.out, j) for j in JUDGES}
    for j in JUDGES:
        assert after[j] == _eligible(combined, j)
        # strat without a primary gives each rater items another human labelled: every assigned label
        # is a new comparison for its rater (and may make one for the others)
        for k in before[j]:
            assert after[j][k] >= before[j][k] + 20, (j, k, before[j][k], after[j][k])
    # the numbers moved with the labels: the held-out humans' scores against the pool are not the same
    s = [{r[0]: r[4] for r in t.rows} for t in tables(v1.out) + tables(v2.out) if "S(k;P)" in t.header]
    assert s[0] != s[2] and s[1] != s[3]
    assert set(verdict_lines(v2.out)) >= set(JUDGES)
