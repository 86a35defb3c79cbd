"""`voirdire estimate` and `voirdire plan-estimate` through typer's CliRunner."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.estimation import classical_mean, dr_mean, plan_allocation, ppi_mean, required_sample_size

runner = CliRunner()


def _design(seed=0, n_items=300, frac=0.3):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(3, 0.8, n_items), 2)
    truth = 0.5 + 0.8 * x + rng.normal(0, 0.5, n_items)
    pi = np.where(x > 3, 0.5, 0.2) if frac is None else np.full(n_items, frac)
    sel = rng.random(n_items) < pi
    h1 = np.round(truth + rng.normal(0, 0.3, n_items), 1)
    h2 = np.round(truth + rng.normal(0, 0.3, n_items), 1)
    return x, h1, h2, pi, sel


def _write(tmp_path, *, seed=0, frac=0.3, name="scores.csv", mutate=None):
    x, h1, h2, pi, sel = _design(seed, frac=frac)
    rows = []
    for i in range(x.size):
        rows.append({"item": f"s{i}", "rater": "llm", "label": x[i], "pi": pi[i], "stratum": "hi" if x[i] > 3 else "lo"})
        if sel[i]:
            rows.append({"item": f"s{i}", "rater": "ann1", "label": h1[i], "pi": pi[i], "stratum": "hi" if x[i] > 3 else "lo"})
            if i % 2 == 0:
                rows.append({"item": f"s{i}", "rater": "ann2", "label": h2[i], "pi": pi[i],
                             "stratum": "hi" if x[i] > 3 else "lo"})
    df = pd.DataFrame(rows)
    if mutate is not None:
        df = mutate(df)
    path = tmp_path / name
    df.to_csv(path, index=False)
    # expected per-item arrays (human score = mean of the humans on the item)
    y = np.full(x.size, np.nan)
    y[sel] = np.where(np.arange(x.size)[sel] % 2 == 0, (h1[sel] + h2[sel]) / 2, h1[sel])
    return path, x, y, pi


def _one_line_error(res, *needles):
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    err = res.stderr
    assert err.startswith("error:"), err
    for n in needles:
        assert n in err.replace("\n", " "), err
    return err


def test_estimate_json_matches_library(tmp_path):
    path, x, y, pi = _write(tmp_path)
    res = runner.invoke(app, ["estimate", str(path), "--judge", "llm", "--inclusion-prob", "pi",
                              "--model", "linear", "--seed", "3", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    # item order in the file is s0, s1, ...; the table keeps first-seen order
    ref = dr_mean(x, y, pi, model="linear", rng=3)
    assert out["estimates"]["doubly_robust"]["estimate"] == pytest.approx(ref.estimate, rel=1e-12)
    assert out["estimates"]["doubly_robust"]["se"] == pytest.approx(ref.se, rel=1e-12)
    assert out["estimates"]["human_only"]["estimate"] == pytest.approx(classical_mean(y, pi).estimate)
    assert out["estimates"]["ppi"]["estimate"] == pytest.approx(ppi_mean(x, y).estimate)
    assert out["estimates"]["doubly_robust"]["n_labeled"] == int(np.isfinite(y).sum())
    assert out["design"]["min"] == out["design"]["max"] == 0.3
    assert out["design"]["expected_n_labeled"] == pytest.approx(0.3 * x.size)


def test_estimate_table_and_number(tmp_path):
    path, x, y, pi = _write(tmp_path)
    res = runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "0.3"])
    assert res.exit_code == 0, res.output
    assert "DR" in res.stdout and "human-only" in res.stdout and "PPI++" in res.stdout
    ref = dr_mean(x, y, 0.3, rng=0)  # the CLI's default model (calibrated) and seed
    assert f"{ref.estimate:.3f}" in res.stdout
    assert "residual penalty" in res.stdout


def test_estimate_strata_and_unequal_probabilities(tmp_path):
    path, x, y, pi = _write(tmp_path, frac=None)
    res = runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "pi", "--strata", "stratum",
                              "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    ref = dr_mean(x, y, pi, strata=np.where(x > 3, "hi", "lo"), rng=0)
    assert out["estimates"]["doubly_robust"]["se"] == pytest.approx(ref.se, rel=1e-12)
    assert out["estimates"]["doubly_robust"]["n_strata"] == 2
    assert "ppi" not in out["estimates"]  # PPI assumes a uniform subsample
    res = runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "pi"])
    assert "PPI++ not shown" in res.stdout


def test_probability_outside_unit_interval_names_row(tmp_path):
    def bad(df):
        df.loc[3, "pi"] = 1.5
        return df

    path, *_ = _write(tmp_path, mutate=bad)
    _one_line_error(runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "pi"]),
                    str(path), "row 5", "column 'pi'", "outside (0, 1]")


def test_percentage_probability(tmp_path):
    path, *_ = _write(tmp_path)
    _one_line_error(runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "30"]), "Did you mean a fraction")


def test_human_on_zero_probability_item(tmp_path):
    def zero(df):
        item = df.loc[df["rater"] == "ann1", "item"].iloc[0]
        df.loc[df["item"] == item, "pi"] = 0
        return df

    path, *_ = _write(tmp_path, mutate=zero)
    _one_line_error(runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "pi"]),
                    "human 'ann1' scored item", "inclusion probability is 0", "row ", "column 'pi'")


def test_probability_not_a_number_and_inconsistent(tmp_path):
    def text(df):
        df["pi"] = df["pi"].astype(object)
        df.loc[0, "pi"] = "high"
        return df

    path, *_ = _write(tmp_path, mutate=text, name="a.csv")
    _one_line_error(runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "pi"]),
                    "row 2", "'high' is not a number")

    def twice(df):
        item = df.loc[df["rater"] == "ann1", "item"].iloc[0]
        idx = df.index[(df["item"] == item) & (df["rater"] == "ann1")][0]
        df.loc[idx, "pi"] = 0.9
        return df

    path, *_ = _write(tmp_path, mutate=twice, name="b.csv")
    _one_line_error(runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "pi"]),
                    "has two values", "constant within an item")


def test_human_item_without_probability(tmp_path):
    def blank(df):
        df["pi"] = df["pi"].astype(object)
        item = df.loc[df["rater"] == "ann1", "item"].iloc[0]
        df.loc[df["item"] == item, "pi"] = ""
        return df

    path, *_ = _write(tmp_path, mutate=blank)
    _one_line_error(runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "pi"]),
                    "was scored by humans but has no inclusion probability")


def test_unknown_column(tmp_path):
    path, *_ = _write(tmp_path)
    _one_line_error(runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "prob"]),
                    "names column 'prob'", "not in the file")


def test_no_labelled_item(tmp_path):
    def abstain(df):
        df.loc[df["rater"] != "llm", "label"] = -1
        return df

    path, *_ = _write(tmp_path, mutate=abstain)
    _one_line_error(runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "pi", "--abstain", "-1"]),
                    "no item has a human score")


def test_scores_that_are_not_numbers(tmp_path):
    def word(df):
        df["label"] = df["label"].astype(object)
        df.loc[2, "label"] = "good"
        return df

    path, *_ = _write(tmp_path, mutate=word)
    _one_line_error(runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "pi"]),
                    "row 4", "column 'label'", "'good' is not a number")


def test_judge_missing_on_some_items(tmp_path):
    def drop(df):
        with_humans = df.loc[df["rater"] == "ann1", "item"].iloc[:2]
        return df.drop(index=df.index[(df["rater"] == "llm") & df["item"].isin(with_humans)])

    path, x, y, pi = _write(tmp_path, mutate=drop)
    _one_line_error(runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "pi"]),
                    "has no score for 2 of", "--drop-unscored")
    res = runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "pi", "--drop-unscored", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["estimates"]["doubly_robust"]["n_total"] == x.size - 2


def test_unknown_judge(tmp_path):
    path, *_ = _write(tmp_path)
    res = runner.invoke(app, ["estimate", str(path), "-j", "gpt", "-p", "pi"])
    assert res.exit_code == 1 and "Traceback" not in res.output


# ------------------------------------------------------------------------------------ plan-estimate
def test_plan_estimate_json_matches_library():
    res = runner.invoke(app, ["plan-estimate", "--target-halfwidth", "0.1", "--sd", "0.9", "--r2", "0.5",
                              "--N", "1200", "--format", "json"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)["plan"]
    ref = required_sample_size(target_halfwidth=0.1, sd=0.9, r2=0.5, n_total=1200)
    assert plan["n_labeled"] == ref.n_labeled and plan["solved_for"] == "n_labeled"
    assert plan["n_star"] == pytest.approx(ref.n_star)


def test_plan_estimate_table_and_power():
    res = runner.invoke(app, ["plan-estimate", "--effect-size", "0.2", "--sd", "1", "--r2", "0.6", "-p", "0.25"])
    assert res.exit_code == 0, res.output
    ref = required_sample_size(effect_size=0.2, sd=1, r2=0.6, inclusion_prob=0.25)
    assert f"{ref.n_total:,}" in res.stdout and "solved" in res.stdout


def test_plan_estimate_infeasible():
    res = runner.invoke(app, ["plan-estimate", "--n-star", "500", "--r2", "0.3", "--n", "200"])
    _one_line_error(res, "Infeasible", "effective sample size")
    res = runner.invoke(app, ["plan-estimate", "--n-star", "500", "--r2", "0.3", "--N", "300"])
    _one_line_error(res, "Infeasible", "Score at least 500 items")


def test_plan_estimate_needs_r2_or_pilot():
    _one_line_error(runner.invoke(app, ["plan-estimate", "--n-star", "100", "--N", "500"]), "--r2")
    _one_line_error(runner.invoke(app, ["plan-estimate", "--n-star", "100", "--N", "500", "--r2", "1.2"]),
                    "'r2' parameter", "[0, 1)")


def test_plan_estimate_from_pilot(tmp_path):
    path, x, y, pi = _write(tmp_path, frac=1.0)
    res = runner.invoke(app, ["plan-estimate", "--pilot", str(path), "--judge", "llm", "--target-halfwidth", "0.05",
                              "--N", "5000", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    ok = np.isfinite(y)
    r2 = np.corrcoef(x[ok], y[ok])[0, 1] ** 2
    assert out["pilot"]["r2"] == pytest.approx(r2, abs=0.03)  # cross-fitted R^2 ~ squared correlation
    assert out["pilot"]["sd"] == pytest.approx(np.std(y[ok]), rel=1e-9)
    _one_line_error(runner.invoke(app, ["plan-estimate", "--pilot", str(path), "--n-star", "9"]), "--judge")


def test_plan_estimate_allocation(tmp_path):
    f = tmp_path / "strata.csv"
    f.write_text("stratum,n_items,residual_sd,cost\neasy,800,0.3,1\nhard,200,1.2,2\n")
    res = runner.invoke(app, ["plan-estimate", "--strata", str(f), "--budget", "200", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    ref = plan_allocation({"easy": {"n_items": 800, "residual_sd": 0.3, "cost": 1},
                           "hard": {"n_items": 200, "residual_sd": 1.2, "cost": 2}}, budget=200)
    assert [r["inclusion_prob"] for r in out["strata"]] == pytest.approx(ref.strata["inclusion_prob"].tolist())
    res = runner.invoke(app, ["plan-estimate", "--strata", str(f), "--budget", "200"])
    assert res.exit_code == 0 and "relative efficiency" in res.stdout
    _one_line_error(runner.invoke(app, ["plan-estimate", "--strata", str(f)]), "--budget")
    g = tmp_path / "bad.csv"
    g.write_text("stratum,n_items,residual_sd\na,lots,0.3\n")
    _one_line_error(runner.invoke(app, ["plan-estimate", "--strata", str(g), "--budget", "10"]),
                    "row 2", "column 'n_items'")


def test_plan_estimate_draws_the_sample(tmp_path):
    path, x, y, pi = _write(tmp_path)
    out = tmp_path / "sample.csv"
    args = ["plan-estimate", "--target-halfwidth", "0.2", "--r2", "0.5", "--sd", "1", "--draw", str(path),
            "--out", str(out), "--seed", "5", "--format", "json"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    ref = required_sample_size(target_halfwidth=0.2, r2=0.5, sd=1, n_total=x.size)
    assert info["plan"]["n_labeled"] == ref.n_labeled and info["plan"]["n_total"] == x.size
    sample = pd.read_csv(out)
    assert len(sample) == x.size
    np.testing.assert_allclose(sample["inclusion_prob"], ref.inclusion_prob, rtol=1e-12)
    assert info["sample"]["n_selected"] == int(sample["selected"].sum())
    again = runner.invoke(app, args)  # same seed, same sample
    assert again.exit_code == 0
    pd.testing.assert_frame_equal(pd.read_csv(out), sample)
    # the drawn sample feeds `voirdire estimate`: humans score the selected items
    _one_line_error(runner.invoke(app, ["plan-estimate", "--n-star", "50", "--r2", "0.5", "--draw", str(path)]),
                    "--out")


def test_plan_estimate_draws_by_stratum(tmp_path):
    path, *_ = _write(tmp_path, frac=None)
    counts = pd.read_csv(path).drop_duplicates("item")["stratum"].value_counts()
    f = tmp_path / "strata.csv"
    f.write_text(f"stratum,n_items,residual_sd\nhi,{counts['hi']},1.2\nlo,{counts['lo']},0.3\n")
    out = tmp_path / "s.csv"
    res = runner.invoke(app, ["plan-estimate", "--strata", str(f), "--budget", "60", "--draw", str(path),
                              "--strata-column", "stratum", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "warning" not in res.stderr
    sample = pd.read_csv(out)
    p = sample.groupby("stratum")["inclusion_prob"].first()
    assert p["hi"] / p["lo"] == pytest.approx(4.0)  # pi ~ residual sd
    assert (sample["inclusion_prob"] * 1).sum() == pytest.approx(60)
    _one_line_error(runner.invoke(app, ["plan-estimate", "--strata", str(f), "--budget", "60", "--draw", str(path),
                                        "--out", str(out)]), "--strata-column")


def test_workflow_plan_draw_score_estimate(tmp_path):
    # plan -> draw -> humans score the drawn items -> estimate (the Dr. Okafor path in USERS.md)
    rng = np.random.default_rng(9)
    n = 400
    x = np.round(rng.normal(3, 0.8, n), 2)
    truth = 0.4 + 0.9 * x + rng.normal(0, 0.4, n)
    items = tmp_path / "items.csv"
    pd.DataFrame({"item": [f"r{i}" for i in range(n)], "rater": "llm", "label": x}).to_csv(items, index=False)
    sample = tmp_path / "sample.csv"
    res = runner.invoke(app, ["plan-estimate", "--n-star", "150", "--r2", "0.6", "--draw", str(items),
                              "--out", str(sample), "--seed", "2"])
    assert res.exit_code == 0, res.output
    s = pd.read_csv(sample)
    rows = [{"item": f"r{i}", "rater": "llm", "label": x[i]} for i in range(n)]
    rows += [{"item": f"r{i}", "rater": "expert", "label": round(truth[i], 1)} for i in np.flatnonzero(s["selected"])]
    scores = pd.DataFrame(rows).merge(s[["item", "inclusion_prob"]], on="item")
    path = tmp_path / "scores.csv"
    scores.to_csv(path, index=False)
    res = runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "inclusion_prob", "--model", "linear",
                              "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)["estimates"]["doubly_robust"]
    y = np.full(n, np.nan)
    y[s["selected"].to_numpy()] = np.round(truth[s["selected"].to_numpy()], 1)
    ref = dr_mean(x, y, s["inclusion_prob"].to_numpy(), model="linear", rng=0)
    assert out["estimate"] == pytest.approx(ref.estimate, rel=1e-12)
    assert out["n_labeled"] == int(s["selected"].sum())


def test_judges_not_named_are_listed_and_an_impossible_count_fails(tmp_path):
    # issue 29 item 1: --judge j1 on a file that also holds judges j2 and j3 counted them as humans
    # (n_labeled 600 where the design expects 60). Now: one-line error naming the file and the column.
    from tests.estimation.test_design_check import _judges_as_humans

    df = _judges_as_humans()
    p = tmp_path / "est.csv"
    df.to_csv(p, index=False)
    res = runner.invoke(app, ["estimate", str(p), "--judge", "j1", "--inclusion-prob", "pi"])
    err = _one_line_error(res, f"{p}, column 'pi'", "600 of 600 items are human-scored", "expected 60",
                          "'j2', 'j3', 'h1'", "--judge")
    assert err.count("error:") == 1
    res = runner.invoke(app, ["estimate", str(p), "--judge", "j1", "--inclusion-prob", "0.1"])
    _one_line_error(res, "--inclusion-prob 0.1", "600 of 600")
    # every judge named: runs, and the raters taken as humans are listed in a one-line warning
    res = runner.invoke(app, ["estimate", str(p), "-j", "j1", "-j", "j2", "-j", "j3", "-p", "pi", "-f", "json"])
    assert res.exit_code == 0, res.output
    warn = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warn) == 1 and "1 rater(s) not named by --judge are counted as humans: 'h1'" in warn[0]
    doc = json.loads(res.stdout)
    assert doc["estimates"]["doubly_robust"]["n_labeled"] == int((df.rater == "h1").sum())
    assert doc["raters_counted_as_humans"] == ["h1"] and any("not named by --judge" in w for w in doc["warnings"])
    # roles from a --role column: nothing to warn about
    res = runner.invoke(app, ["estimate", str(p), "-j", "j1", "--role", "role", "-p", "pi", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert "warning:" not in res.stderr and json.loads(res.stdout)["raters_counted_as_humans"] == []


def test_plan_estimate_never_asks_for_more_items_than_the_draw_file_has(tmp_path):
    # issue 28 ("advice that can be acted on"): with --draw the study's items are on hand; a target beyond them
    # said "Score at least 38415 items" of a 300-item file. Now: it cannot be settled with the items you have.
    import re

    path, x, *_ = _write(tmp_path)
    out = tmp_path / "s.csv"
    for target in (["--n-star", "500"], ["--target-halfwidth", "0.01", "--sd", "1"]):
        res = runner.invoke(app, ["plan-estimate", *target, "--r2", "0.5", "--draw", str(path), "--out", str(out)])
        err = _one_line_error(res, f"cannot be settled with the {x.size} items you have", "less precision")
        numbers = [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*\.?\d*", err.replace(str(path), ""))]
        assert numbers and max(numbers) <= x.size, err
        assert not out.exists() and res.stdout == ""
    # the same target with N typed (no file on hand) still says how many items the plan needs
    _one_line_error(runner.invoke(app, ["plan-estimate", "--n-star", "500", "--r2", "0.5", "--N", "300"]),
                    "Score at least 500 items")
    # a target the file's items can reach is planned as before
    res = runner.invoke(app, ["plan-estimate", "--n-star", "299", "--r2", "0.5", "--draw", str(path), "--out", str(out),
                              "-f", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["plan"]["n_labeled"] <= x.size


def test_plan_estimate_error_keeps_its_one_line(tmp_path):
    # --draw with --strata but no --strata-column printed the allocation table, then the error
    path, *_ = _write(tmp_path, frac=None)
    f = tmp_path / "strata.csv"
    f.write_text("stratum,n_items,residual_sd\nhi,150,1.2\nlo,150,0.3\n")
    res = runner.invoke(app, ["plan-estimate", "--strata", str(f), "--budget", "60", "--draw", str(path),
                              "--out", str(tmp_path / "s.csv")])
    _one_line_error(res, "--strata-column")
    assert res.stdout == "" and not (tmp_path / "s.csv").exists()


def test_plan_estimate_pilot_names_each_judge_once(tmp_path):
    path, *_ = _write(tmp_path, frac=1.0)
    res = runner.invoke(app, ["plan-estimate", "--pilot", str(path), "-j", "llm", "-j", "llm", "--n-star", "50",
                              "--N", "500", "-f", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["pilot"]["judges"] == ["llm"]


def _weak_judge(tmp_path, *, seed, frac, n_items=300):
    """A judge that barely tracks the humans (``0.1 x`` in a score of sd 0.65), humans on a Poisson ``frac``."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(3, 0.8, n_items), 2)
    h = np.round(0.5 + 0.8 * rng.normal(3, 0.8, n_items) + 0.1 * x + rng.normal(0, 0.3, n_items), 1)
    sel = rng.random(n_items) < frac
    rows = [{"item": f"s{i}", "rater": "llm", "label": x[i]} for i in range(n_items)]
    rows += [{"item": f"s{i}", "rater": "ann1", "label": h[i]} for i in np.flatnonzero(sel)]
    path = tmp_path / f"weak_{seed}_{frac}.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _widths(path, frac):
    res = runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", str(frac), "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    est = out["estimates"]
    w = {k: est[k]["ci"]["high"] - est[k]["ci"]["low"] for k in ("doubly_robust", "human_only")}
    return out, est["doubly_robust"]["n_labeled"], w


def test_estimate_says_where_the_default_is_wider_than_human_only(tmp_path):
    # 31 labels, a judge that does not help: below 100 labelled items the default's small-sample
    # variance (a third of the way to the refitting jackknife) and t quantile are its own, and its
    # interval comes out wider than human-only's on the same labels; the user reads so, with both widths
    path = _weak_judge(tmp_path, seed=18, frac=0.1)
    out, n, w = _widths(path, 0.1)
    assert n < 100 and w["doubly_robust"] > w["human_only"]
    line = (f"below 100 labelled items the calibrated model's interval may be wider than human-only's: here "
            f"{w['doubly_robust']:.4g} vs {w['human_only']:.4g} on {n} labelled items")
    assert [h["code"] for h in out["hints"]].count("wider_than_human_only") == 1
    assert any(h["message"].startswith(line) for h in out["hints"])
    res = runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "0.1"])
    assert res.exit_code == 0, res.output
    assert line in res.stdout
    # from 100 labels on the bound holds (power tuning; the heavy-tail term capped by human-only's): no line
    path = _weak_judge(tmp_path, seed=18, frac=0.5)
    out, n, w = _widths(path, 0.5)
    assert n >= 100 and w["doubly_robust"] <= w["human_only"] * (1 + 1e-9)
    assert "wider_than_human_only" not in [h["code"] for h in out["hints"]]
    res = runner.invoke(app, ["estimate", str(path), "-j", "llm", "-p", "0.5"])
    assert res.exit_code == 0, res.output
    assert "may be wider than human-only" not in res.stdout and "human-only" in res.stdout
