"""One seed, one set of numbers for the estimation family: ``voirdire estimate``, ``voirdire plan-estimate``,
the report's Estimation section and the Python API (:func:`voirdire.workflows.estimate_from_file`,
:func:`~voirdire.workflows.estimate_judges`, :func:`~voirdire.workflows.plan_estimation`) give the same
numbers for the same file, options and seed: the commands only parse, call the workflow and render."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.data import read_annotation_groups, read_annotations
from voirdire.workflows import estimate_from_file, estimate_judges, inclusion_prob_from_file, plan_estimation

runner = CliRunner()


def _json(obj):
    return json.loads(json.dumps(obj))  # the round trip the command's output went through (nan -> null)


def _scores(tmp_path, n=160, seed=0, equal=False):
    """Judges ``llm`` (every item) and ``llm2`` (all but two human-scored items), humans ``h1``/``h2`` on a
    Poisson sample drawn with the probabilities of the ``pi`` column (0.5 where llm > 3, else 0.25; 0.3 for
    every item with ``equal``: then PPI++ is shown too)."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(3, 0.8, n), 2)
    x2 = np.round(x + rng.normal(0, 0.4, n), 2)
    truth = 0.5 + 0.8 * x + rng.normal(0, 0.5, n)
    pi = np.full(n, 0.3) if equal else np.where(x > 3, 0.5, 0.25)
    sel = rng.random(n) < pi
    rows = []
    missing2 = set(np.flatnonzero(sel)[:2])
    for i in range(n):
        rows.append((f"i{i}", "llm", x[i], "judge", pi[i]))
        if i not in missing2:
            rows.append((f"i{i}", "llm2", x2[i], "judge", pi[i]))
        if sel[i]:
            rows.append((f"i{i}", "h1", round(float(truth[i] + rng.normal(0, 0.3)), 1), "human", pi[i]))
            if i % 2:
                rows.append((f"i{i}", "h2", round(float(truth[i] + rng.normal(0, 0.3)), 1), "human", pi[i]))
    p = tmp_path / f"scores{int(equal)}.csv"
    pd.DataFrame(rows, columns=["item", "rater", "label", "role", "pi"]).to_csv(p, index=False)
    return p


def _cli(*args):
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _report_section(path, tmp_path):
    out = tmp_path / "rep"
    rep = runner.invoke(app, ["report", str(path), "-j", "llm", "-j", "llm2", "--role", "role", "--scale", "interval",
                              "--inclusion-prob", "pi", "--seed", "3", "--n-resamples", "10", "-o", str(out), "-q"])
    assert rep.exit_code == 0, rep.output
    return json.loads((out / "report.json").read_text())["sections"]["estimation"]["results"]


def _api_judges(path):
    t = read_annotations(path, role="role", scale="interval")
    return _json(estimate_judges(t, ["llm", "llm2"], inclusion_prob_from_file("pi", path, t), seed=3).to_dict())


@pytest.mark.slow  # a whole report: 1.6 CPU-s idle, over the 2 CPU-s budget of the fast suite on a loaded machine
def test_the_report_shows_the_workflows_estimates(tmp_path):
    path = _scores(tmp_path, n=100, equal=True)
    section = _report_section(path, tmp_path)
    assert section["judges"] == _api_judges(path)["judges"]  # every number of the section
    assert [j["judge"] for j in section["judges"]] == ["llm", "llm2"]
    assert all("ppi" in j and "human_only" in j for j in section["judges"])
    # and voirdire estimate on the same file, judge and seed: the same rows (the test below: every judge, both models)
    cli = _cli("estimate", path, "-j", "llm2", "--role", "role", "-p", "pi", "--seed", "3", "--drop-unscored", "-f",
               "json")["estimates"]
    llm2 = section["judges"][1]
    assert (llm2["dr_calibrated"], llm2["human_only"], llm2["ppi"]) == (cli["doubly_robust"], cli["human_only"],
                                                                       cli["ppi"])


@pytest.mark.parametrize("equal", [False, True])
def test_estimate_and_the_api_give_the_reports_numbers(tmp_path, equal):
    # voirdire estimate --drop-unscored at the report's seed: its calibrated DR, human-only and PPI++ rows are the
    # report's (estimate_judges), its --model identity row the report's m(X) = X row
    path = _scores(tmp_path, equal=equal)
    api_all = _api_judges(path)
    read = ["--role", "role", "-p", "pi", "--seed", "3"]
    for k, judge in enumerate(["llm", "llm2"]):
        cal = _cli("estimate", path, "-j", judge, *read, "--drop-unscored", "-f", "json")
        ident = _cli("estimate", path, "-j", judge, *read, "--drop-unscored", "--model", "identity", "--no-compare",
                     "-f", "json")
        t = read_annotations(path, role="role", judges=[judge], scale="interval")
        api = estimate_from_file(path, t, [judge], "pi", role="role", drop_unscored=True, seed=3)
        assert cal == _json(api.to_dict())  # the whole document: estimates, design, hints, warnings
        entry = api_all["judges"][k]
        assert entry["judge"] == judge
        assert entry["dr_calibrated"] == cal["estimates"]["doubly_robust"]
        assert entry["human_only"] == cal["estimates"]["human_only"]
        assert ("ppi" in entry) == ("ppi" in cal["estimates"])
        if equal:  # PPI++ assumes a uniform subsample: shown only with equal probabilities
            assert entry["ppi"] == cal["estimates"]["ppi"]
        assert entry["hints"] == cal["hints"]
        assert entry["dr"] == ident["estimates"]["doubly_robust"]  # the paper's m(X) = X
        assert entry["n_items_scored"] == cal["estimates"]["doubly_robust"]["n_total"]
    assert cal["estimates"]["doubly_robust"]["n_total"] == 158  # llm2 misses two items: --drop-unscored


def test_estimate_seed_reaches_the_folds_alike_in_the_cli_and_the_api(tmp_path):
    path = _scores(tmp_path, seed=1)
    t = read_annotations(path, role="role", judges=["llm", "llm2"], scale="interval")
    docs = {}
    for seed in (3, 4):
        cli = _cli("estimate", path, "-j", "llm", "-j", "llm2", "--role", "role", "-p", "pi", "--drop-unscored",
                   "--cross-fit", "5", "--seed", seed, "-f", "json")
        api = estimate_from_file(path, t, ["llm", "llm2"], "pi", role="role", drop_unscored=True, cross_fit=5,
                                 seed=seed)
        assert cli == _json(api.to_dict())
        assert api.streams == {"cross_fit": seed}
        docs[seed] = cli["estimates"]["doubly_robust"]
    assert docs[3]["se"] != docs[4]["se"]  # five random folds: the seed matters, and reaches both alike


def test_estimate_by_group_cli_and_api_agree(tmp_path):
    path = _scores(tmp_path, seed=2)
    df = pd.read_csv(path)
    df["lang"] = np.where(df["item"].str[1:].astype(int) % 2 == 0, "en", "fr")
    df.to_csv(path, index=False)
    cli = _cli("estimate", path, "-j", "llm", "--role", "role", "-p", "pi", "--by", "lang", "--seed", "3", "-f", "json")
    grouped = read_annotation_groups(path, by=["lang"], role="role", judges=["llm"], scale="interval")
    api = estimate_from_file(path, grouped, ["llm"], "pi", role="role", seed=3)
    assert cli == _json(api.to_dict())
    assert [g["group"] for g in cli["groups"]] == ["en", "fr"] and cli["pooled"] is not None


def test_plan_estimate_cli_and_api_agree(tmp_path):
    path = _scores(tmp_path, seed=3)
    items = tmp_path / "items.csv"
    pd.DataFrame({"item": [f"t{i}" for i in range(400)]}).to_csv(items, index=False)
    out = tmp_path / "sample.csv"
    cli = _cli("plan-estimate", "--pilot", path, "-j", "llm", "--role", "role", "--target-halfwidth", "0.1",
               "--draw", items, "--out", out, "--seed", "5", "-f", "json")
    written = pd.read_csv(out)
    api = plan_estimation(pilot=path, read_pilot=lambda js: read_annotations(path, judges=js, role="role",
                                                                              scale="interval"),
                          judges=["llm"], target_halfwidth=0.1, draw=items, out=out, seed=5)
    assert cli == _json(api.to_dict())
    assert written["selected"].tolist() == api.sample.assignments["selected"].tolist()
    np.testing.assert_array_equal(written["inclusion_prob"], api.sample.assignments["inclusion_prob"])
    assert cli["plan"]["n_total"] == 400 and cli["plan"]["n_labeled"] <= 400
    assert api.streams == {"pilot_cross_fit": 0, "draw": 5}
    # the active design: the same probabilities, the same draw
    act = tmp_path / "active.csv"
    full = pd.read_csv(path)
    full = full[full["item"].isin(set(full.loc[full["rater"] == "llm2", "item"]))]  # every judge on every item
    full.to_csv(path, index=False)
    cli = _cli("plan-estimate", "--design", "active", "--pilot", path, "-j", "llm", "-j", "llm2", "--role", "role",
               "--budget", "30", "--pilot-prob", "pi", "--out", act, "--seed", "2", "-f", "json")
    api = plan_estimation(design="active", pilot=path, judges=["llm", "llm2"], budget=30, pilot_prob="pi", out=act,
                          seed=2, read_pilot=lambda js: read_annotations(path, judges=js, role="role",
                                                                          scale="interval"))
    assert cli == _json(api.to_dict())
    assert pd.read_csv(act)["selected"].tolist() == api.sample.assignments["selected"].tolist()
