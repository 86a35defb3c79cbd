"""`voirdire estimate --by COLUMN` (issue 31): one estimate per group and the pooled one; a group's numbers are
those of `--where COLUMN=VALUE` at the same seed, and a group where no estimate can run gets its reason."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app

runner = CliRunner()


def _slices(tmp_path):
    """Four languages over disjoint items, the judge llm on every item, the human h on half of en and fr
    (inclusion probability 0.5 on every row):

    en: e1..e4, llm 1 2 3 4, h on e1, e2 scores 2 2; fr: f1..f4, llm 2 2 4 4, h on f3, f4 scores 5 3;
    de: one item (too small); it: two items, the judge's score missing on one (the estimator needs it)."""
    rows = [(f"e{k}", "llm", x, "en") for k, x in enumerate([1, 2, 3, 4], 1)]
    rows += [("e1", "h", 2, "en"), ("e2", "h", 2, "en")]
    rows += [(f"f{k}", "llm", x, "fr") for k, x in enumerate([2, 2, 4, 4], 1)]
    rows += [("f3", "h", 5, "fr"), ("f4", "h", 3, "fr")]
    rows += [("d1", "llm", 3, "de"), ("d1", "h", 3, "de")]
    rows += [("i1", "llm", 1, "it"), ("i1", "h", 1, "it"), ("i2", "h", 2, "it")]
    df = pd.DataFrame(rows, columns=["item", "rater", "label", "lang"]).assign(pi=0.5)
    p = tmp_path / "slices.csv"
    df.to_csv(p, index=False)
    return p


def _run(*args):
    r = runner.invoke(app, ["estimate", *map(str, args), "--judge", "llm", "--inclusion-prob", "pi", "-f", "json",
                            "--seed", "3"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_estimate_by_gives_each_group_the_where_runs_numbers(tmp_path):
    p = _slices(tmp_path)
    by = _run(p, "--by", "lang", "--model", "identity")
    groups = {g["group"]: g for g in by["groups"]}
    assert list(groups) == ["en", "fr", "de", "it"]
    for lang in ("en", "fr"):
        one = _run(p, "--where", f"lang={lang}", "--model", "identity")
        assert groups[lang]["result"]["estimates"] == one["estimates"], lang
        assert groups[lang]["error"] is None and groups[lang]["n_items"] == 4
    # identity model (m(X) = X): mean of llm + (1/N) sum over the human-scored items of (h - llm) / pi
    # en: 2.5 + ((2 - 1) + (2 - 2)) / 0.5 / 4 = 3.0;  fr: 3 + ((5 - 4) + (3 - 4)) / 0.5 / 4 = 3.0
    assert abs(groups["en"]["result"]["estimates"]["doubly_robust"]["estimate"] - 3.0) < 1e-12
    assert abs(groups["fr"]["result"]["estimates"]["doubly_robust"]["estimate"] - 3.0) < 1e-12
    # groups too small, or with nothing to estimate from, get the reason and no number
    assert groups["de"]["result"] is None and groups["de"]["error"].startswith("too small: 1 items")
    assert groups["it"]["result"] is None and "judge 'llm' has no score for 1 of 2 item(s)" in groups["it"]["error"]
    # the pool: every row (the --by column kept, no --where)
    pooled = _run(p, "--model", "identity", "--drop-unscored")
    assert by["pooled"] is None and "has no score" in by["pooled_error"]
    by = _run(p, "--by", "lang", "--model", "identity", "--drop-unscored")
    assert by["pooled"]["estimates"] == pooled["estimates"] and by["pooled"]["n_items"] == 10


def test_estimate_by_on_a_rubric_pools_each_item_and_criterion(tmp_path):
    # every item scored on two criteria: the pool has one unit per (item, criterion), clustered by the item,
    # and each pooled unit finds its item's probability (its id in the file)
    rows = []
    for k in range(1, 7):
        for crit, shift in (("clarity", 0), ("depth", 1)):
            rows.append((f"s{k}", "llm", k + shift, crit))
            if k % 2:
                rows.append((f"s{k}", "h", k + shift + 1, crit))
    df = pd.DataFrame(rows, columns=["item", "rater", "label", "criterion"]).assign(pi=0.5)
    p = tmp_path / "rubric.csv"
    df.to_csv(p, index=False)
    by = _run(p, "--by", "criterion")
    for g in by["groups"]:
        one = _run(p, "--where", f"criterion={g['group']}")
        assert g["result"]["estimates"] == one["estimates"], g["group"]
    assert by["pooled"]["n_items"] == 12 and by["pooled"]["n_labeled"] == 6


def test_estimate_by_table_names_each_group_and_its_reason(tmp_path):
    r = runner.invoke(app, ["estimate", str(_slices(tmp_path)), "--judge", "llm", "--inclusion-prob", "pi",
                            "--by", "lang", "--model", "identity"])
    assert r.exit_code == 0, r.output
    out = " ".join(r.stdout.split())
    assert "lang = en (4 items): mean human score" in out and "(pooled) (11 items): no estimate" in out
    assert "lang = de (1 items): no estimate: too small" in out


def _rubric(tmp_path):
    """Two criteria on the same 40 items: the judge on every item, two humans on a 50% design sample."""
    import numpy as np

    rng = np.random.default_rng(5)
    rows = []
    for crit in ("clarity", "accuracy"):
        for i in range(40):
            truth = rng.normal(3, 1)
            rows.append((f"x{i}", "llm", round(truth + rng.normal(0, 0.6), 2), crit))
            if i % 2 == 0:
                rows += [(f"x{i}", h, round(truth + rng.normal(0, 0.3), 2), crit) for h in ("h1", "h2")]
    p = tmp_path / "rubric.csv"
    pd.DataFrame(rows, columns=["item", "rater", "label", "criterion"]).assign(pi=0.5).to_csv(p, index=False)
    return p


@pytest.mark.slow  # a whole report with a By group section: 1.3 CPU-s idle, near the fast suite's budget under load
def test_report_by_with_inclusion_prob_shows_estimate_by_numbers(tmp_path):
    p = _rubric(tmp_path)
    common = ["-j", "llm", "--by", "criterion", "--inclusion-prob", "pi", "--scale", "interval", "--seed", "3"]
    est = runner.invoke(app, ["estimate", str(p), *common, "--format", "json"])
    assert est.exit_code == 0, est.output
    out = tmp_path / "rep"
    rep = runner.invoke(app, ["report", str(p), *common, "--n-resamples", "30", "-o", str(out), "-q"])
    assert rep.exit_code == 0, rep.output
    doc = json.loads((out / "report.json").read_text(encoding="utf-8"))
    sec = doc["sections"]["groups_estimate"]
    assert sec["status"] == "ok"
    want = json.loads(est.stdout)
    assert sec["results"]["groups"] == want["groups"] and sec["results"]["pooled"] == want["pooled"]
    # the pool's own Estimation section points there, not at an --inclusion-prob the user gave
    pool = doc["sections"]["estimation"]
    assert pool["status"] == "not available" and "'By group: mean human score'" in pool["reason"], pool
    # every estimate the page shows is the JSON's, to its digits
    page = (out / "report.html").read_text(encoding="utf-8")
    shown = re.findall(r'data-pointer="(/sections/groups_estimate/[^"]+)"[^>]*>([^<]*)<', page)
    assert len(shown) >= 6  # 3 estimators x (2 criteria + the pool)
    for pointer, text in shown:
        node = doc
        for part in pointer.strip("/").split("/"):
            node = node[int(part)] if isinstance(node, list) else node[part]
        assert text.strip() == f"{node:.3f}" or abs(float(text) - node) < 5e-3, (pointer, text, node)
