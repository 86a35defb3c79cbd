"""One seed, one set of numbers: ``voirdire validate``, ``voirdire agree``, ``voirdire report`` and the
Python API print the same results for the same file, options and seed (they all call the workflows)."""

from __future__ import annotations

import json

import pytest

from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.data import read_annotations
from voirdire.workflows import compare_raters, validate_judges

from ..conftest import shared_data

runner = CliRunner()
JUDGES = ["gemini_pro", "gpt-4o"]


def _wax_slice(tmp_path):
    """The first 120 items of WAX as a long CSV with a role column (a file, as a user has it)."""
    t = read_annotations(shared_data("alttest", "wax"))
    s = t.select(items=range(120))
    df = s.to_frame()
    df["role"] = [str(s.roles[s.rater_index(r)]) for r in df["rater"]]
    path = tmp_path / "wax120.csv"
    df[["item", "rater", "label", "role"]].to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_validate_report_and_api_agree(tmp_path):
    path = _wax_slice(tmp_path)
    common = ["--role", "role", "--seed", "3", "--n-resamples", "60"]
    js = sum((["-j", j] for j in JUDGES), [])
    cli = runner.invoke(app, ["validate", str(path), *js, *common, "--format", "json"])
    assert cli.exit_code == 0, cli.output
    cli_doc = json.loads(cli.stdout)
    out = tmp_path / "rep"
    rep = runner.invoke(app, ["report", str(path), *js, *common, "-o", str(out), "-q"])
    assert rep.exit_code == 0, rep.output
    rep_doc = json.loads((out / "report.json").read_text())
    val = rep_doc["sections"]["validation"]["results"]
    api = validate_judges(read_annotations(path, role="role"), JUDGES, seed=3, n_resamples=60).to_dict()
    api = json.loads(json.dumps(api))  # the same JSON round trip the files went through
    for key in ("judges", "ranking", "reference", "options"):
        assert cli_doc[key] == api[key], key
        assert val[key] == api[key], key
    # a judge's numbers do not depend on which other judges are validated with it
    one = validate_judges(read_annotations(path, role="role"), [JUDGES[1]], seed=3, n_resamples=60).to_dict()
    assert json.loads(json.dumps(one["judges"][0])) == api["judges"][1]
    # and the seed matters
    other = validate_judges(read_annotations(path, role="role"), [JUDGES[1]], seed=4, n_resamples=60).to_dict()
    assert other["judges"][0]["leave_one_out"]["d_low"] != one["judges"][0]["leave_one_out"]["d_low"]


def test_agree_report_and_api_agree(tmp_path):
    path = _wax_slice(tmp_path)
    common = ["--role", "role", "--seed", "5", "--n-resamples", "40"]
    cli = runner.invoke(app, ["agree", str(path), "-j", "gpt-4o", *common, "--format", "json"])
    assert cli.exit_code == 0, cli.output
    cli_doc = json.loads(cli.stdout)
    out = tmp_path / "rep"
    rep = runner.invoke(app, ["report", str(path), "-j", "gpt-4o", *common, "-o", str(out), "-q"])
    assert rep.exit_code == 0, rep.output
    sel = json.loads((out / "report.json").read_text())["sections"]["agreement"]["results"]["selections"]
    api = json.loads(json.dumps(compare_raters(read_annotations(path, role="role", judges=["gpt-4o"]), ["gpt-4o"],
                                               seed=5, n_resamples=40).to_dict()))
    assert cli_doc["groups"] == api["groups"] == sel


@pytest.mark.slow
def test_plan_validate_and_report_give_the_same_planning_number(tmp_path):
    # one planner (plan_judges) behind voirdire plan, validate's "what would settle it" and the report's
    # planning block: on the 300-item framing slice (first 300 sorted ids) every judge gets the same
    # answer in all three, and a judge left inconclusive by validate carries it
    t = read_annotations(shared_data("alttest", "framing"))
    idx = {str(x): k for k, x in enumerate(t.items)}
    s = t.select(items=[idx[i] for i in sorted(idx)[:300]])
    df = s.to_frame()
    df["role"] = [str(s.roles[s.rater_index(r)]) for r in df["rater"]]
    path = tmp_path / "framing300.csv"
    df[["item", "rater", "label", "role"]].to_csv(path, index=False)
    judges = ["gpt-4o-mini", "mistral-v03", "llama-31"]
    js = sum((["-j", j] for j in judges), [])
    common = ["--role", "role", "--seed", "3"]
    plan = runner.invoke(app, ["plan", str(path), *js, *common, "--n-resamples", "60", "-f", "json"])
    assert plan.exit_code == 0, plan.output
    answers = {p["judge"]: p for p in json.loads(plan.stdout)["answers"]["plans"]}
    val = runner.invoke(app, ["validate", str(path), *js, *common, "--n-resamples", "60", "-f", "json"])
    assert val.exit_code == 0, val.output
    out = tmp_path / "rep"
    rep = runner.invoke(app, ["report", str(path), *js, *common, "--n-resamples", "60", "-o", str(out), "-q"])
    assert rep.exit_code == 0, rep.output
    doc = json.loads((out / "report.json").read_text())
    plans = {p["judge"]: p for p in doc["sections"]["design"]["results"]["plans"]}
    assert set(answers) == set(plans) == set(judges)
    for j in judges:  # the report plans only what labels might settle, with plan's own numbers
        assert plans[j] == answers[j] or "error" in plans[j], j
    assert any("error" not in p for p in plans.values())
    statuses = {p["status"] for p in answers.values()}
    assert "open" in statuses and "settled" in statuses  # the slice exercises both kinds of answer
    for p in answers.values():  # no top-up for a settled judge
        assert (p["more_per_human"] == 0) == (p["status"] == "settled")
    advice = {a["judge"]: a for a in doc["sections"]["design"]["results"]["advice"]}
    plan_verdicts = {v["judge"]: v for v in json.loads(plan.stdout)["verdicts"]}
    for e in json.loads(val.stdout)["judges"]:
        j = e["judge"]
        # the running anytime-valid rule, the verdict and its advice: one of each per judge, in all three
        if e["plan"] is not None:
            assert e["plan"] == answers[j]
        else:  # no planner for a settled verdict or one labels cannot change
            assert e["advice"]["status"] in ("settled", "not_labels")
        assert e["advice"] == advice[j] == plan_verdicts[j]["advice"]
        assert e["verdict"] == plan_verdicts[j]["verdict"]
        assert e["advice"]["decision"] == e["verdict"]["decision"]
        if e["verdict"]["decision"] == "inconclusive":
            (settle,) = [r for r in e["verdict"]["reasons"] if r["code"] == "what_would_settle"]
            assert e["advice"]["sentence"] in settle["message"]
        else:
            assert e["advice"]["status"] == "settled" and e["advice"]["design"] is None
    # the report shows the same validation entries (and so the same settle line) as validate
    assert doc["sections"]["validation"]["results"]["judges"] == json.loads(val.stdout)["judges"]


def test_the_humans_alpha_has_one_interval_in_agree_validate_and_the_api(tmp_path):
    # issue 28: the humans' alpha at one seed was [0.493, 0.642] in agree and [0.490, 0.639] in validate
    # (two streams); both now draw it from compare_raters' stream, with the method named alike
    path = _wax_slice(tmp_path)
    common = ["--role", "role", "--seed", "3", "--n-resamples", "40"]
    ag = runner.invoke(app, ["agree", str(path), "-j", "gpt-4o", *common, "--format", "json"])
    assert ag.exit_code == 0, ag.output
    humans = json.loads(ag.stdout)["groups"][0]
    alpha = [r for r in humans["results"] if r["coefficient"] == "krippendorff_alpha"]
    (a,) = alpha
    t = read_annotations(path, role="role")
    ref = validate_judges(t, ["gpt-4o"], seed=3, n_resamples=40, check_raters=False, method="loo").reference
    assert ref.level == a["level"]
    assert (ref.estimate, ref.ci.low, ref.ci.high) == (a["estimate"], a["ci"]["low"], a["ci"]["high"])
    assert ref.ci.method == a["ci"]["method"]


@pytest.mark.slow
def test_pairwise_family_bias_report_and_api_agree(tmp_path):
    # the pairwise family through one workflow (summarise_pairwise): voirdire bias, the report's Judge biases
    # and Pairwise sections, and the API give the same effects and posterior at one seed
    import math

    import numpy as np

    from voirdire.data import read_pairwise
    from voirdire.pairwise import simulate_pairwise
    from voirdire.workflows import summarise_pairwise

    pt, _ = simulate_pairwise(60, rng=1)
    f = pt.to_frame()
    f["model_a"] = np.where(f["pair"].str[-1].isin(list("02468")), "gpt-4o", "llama-3")
    f["model_b"] = "claude-3"
    pf = tmp_path / "votes.csv"
    f.to_csv(pf, index=False)
    cli = runner.invoke(app, ["bias", str(pf), "-f", "json"])
    assert cli.exit_code == 0, cli.output
    out = tmp_path / "rep"
    rep = runner.invoke(app, ["report", "--pairwise", str(pf), "-o", str(out), "-q", "--seed", "2"])
    assert rep.exit_code == 0, rep.output
    doc = json.loads((out / "report.json").read_text())["sections"]
    table = read_pairwise(pf, role="role")
    from voirdire.pairwise import pair_covariates

    import pandas as pd

    cov = pair_covariates(pd.read_csv(pf))
    api = json.loads(json.dumps(summarise_pairwise(table, covariates=cov, seed=2).to_dict()))
    assert doc["biases"]["results"]["bias"] == api["bias"]
    assert doc["pairwise"]["results"]["posterior"] == api["posterior"]

    def same(a, b):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))

    for e_cli, e_api in zip(json.loads(cli.stdout)["effects"], api["bias"]["effects"]):
        for k in ("judge", "effect", "estimate", "low", "high", "q_value", "flagged", "n_pairs"):
            a, b = e_cli[k], e_api[k]
            assert same(a, b) or (a is None and b is None) or (a is None and b != b) or (b is None and a != a), k


@pytest.mark.slow
def test_agreement_family_matrix_and_binary_in_agree_report_and_api(tmp_path):
    # the rater-by-rater matrix and the binary family come from compare_raters in voirdire agree, the
    # report's Agreement section and the API (the report no longer calls pairwise_matrix or binary_agreement)
    path = _wax_slice(tmp_path)
    common = ["--role", "role", "--seed", "3", "--n-resamples", "40"]
    ag = runner.invoke(app, ["agree", str(path), "-j", "gpt-4o", *common, "--matrix", "--format", "json"])
    assert ag.exit_code == 0, ag.output
    doc = json.loads(ag.stdout)
    out = tmp_path / "rep"
    rep = runner.invoke(app, ["report", str(path), "-j", "gpt-4o", *common, "-o", str(out), "-q"])
    assert rep.exit_code == 0, rep.output
    sec = json.loads((out / "report.json").read_text())["sections"]["agreement"]["results"]
    t = read_annotations(path, role="role", judges=["gpt-4o"])
    api = json.loads(json.dumps(compare_raters(t, ["gpt-4o"], seed=3, n_resamples=40, matrix=True).to_dict()))
    assert t.scale.level == "nominal"  # the report's matrix is Cohen's kappa here, as agree's
    assert doc["matrix"] == api["matrix"] == sec["pairwise_matrix"]
    assert doc["binary"] == api["binary"]
    if api["binary"]:
        assert sec["confusion"] == api["binary"]


@pytest.mark.slow
def test_sequential_family_watch_study_status_and_api_agree(tmp_path):
    # the running anytime-valid decision through one workflow (watch_judges): voirdire watch on the study's
    # export, study status and the API give the same looks and decisions, and the same verdicts beside them
    from voirdire.study import Study
    from voirdire.workflows import judge_verdicts, watch_judges

    path = _wax_slice(tmp_path)
    import pandas as pd

    df = pd.read_csv(path)
    items = sorted(df["item"].astype(str).unique())
    s = Study.init(tmp_path / "s.vdb")
    for k in range(2):
        b = tmp_path / f"b{k}.csv"
        df[df["item"].astype(str).isin(set(items[k::2]))].to_csv(b, index=False)
        s.add(b, role="role")
    exported = tmp_path / "all.csv"
    assert runner.invoke(app, ["study", "export", str(tmp_path / "s.vdb"), "-o", str(exported)]).exit_code == 0
    w = runner.invoke(app, ["watch", str(exported), "--round-column", "round", "--role", "role", "--method", "loo",
                            "-f", "json"])
    assert w.exit_code == 0, w.output
    st = runner.invoke(app, ["study", "status", str(tmp_path / "s.vdb"), "--method", "loo", "-f", "json"])
    assert st.exit_code == 0, st.output
    t = s.to_table()
    lab = s.labels()
    api = watch_judges(t, lab[["item", "rater", "round"]], method="loo")
    wdoc, sdoc = json.loads(w.stdout), json.loads(st.stdout)
    assert [r["judge"] for r in wdoc["judges"]] == [r.judge for r in api]
    for got, lib in zip(wdoc["judges"], api):
        assert got == json.loads(json.dumps(lib.to_dict()))
    for got, lib in zip(sdoc["sequential"], api):
        assert got["decision"] == lib.decision
    val = judge_verdicts(t, [r.judge for r in api], seed=0)
    want = [json.loads(json.dumps(j.verdict.to_dict())) for j in val.judges]
    assert [v["verdict"] for v in wdoc["verdicts"]] == [v["verdict"] for v in sdoc["verdicts"]] == want


def _spam_csv(tmp_path, n=120):
    """Five good annotators (accuracy 0.8), a spammer and a judge on ``n`` items, 4 categories, 20% missing."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    z = rng.integers(0, 4, n)
    rows = []
    for k in range(6):
        lab = rng.integers(0, 4, n) if k == 5 else np.where(rng.random(n) < 0.8, z, (z + rng.integers(1, 4, n)) % 4)
        keep = rng.random(n) >= 0.2
        rows += [(f"i{i}", "spam" if k == 5 else f"h{k}", f"c{int(lab[i])}") for i in np.flatnonzero(keep)]
    rows += [(f"i{i}", "llm", f"c{int(z[i]) if rng.random() < 0.85 else int(z[i] + 1) % 4}") for i in range(n)]
    p = tmp_path / "spam.csv"
    pd.DataFrame(rows, columns=["item", "rater", "label"]).to_csv(p, index=False)
    return p


def _jsonable(x):
    from voirdire._results import to_jsonable

    return json.loads(json.dumps(to_jsonable(x)))  # the JSON the files hold (nan as null)


def test_raters_family_cli_validate_and_api_agree(tmp_path):
    # the annotator check through one workflow (check_raters / diagnose_raters): voirdire raters, validate's own
    # check (the flags and sensitivity lines of voirdire validate) and the API give the same numbers at one seed
    from voirdire.workflows import diagnose_raters

    path = _spam_csv(tmp_path)
    cli = runner.invoke(app, ["raters", str(path), "-j", "llm", "--seed", "7", "--no-competence", "-f", "json"])
    assert cli.exit_code == 0, cli.output
    doc = json.loads(cli.stdout)
    t = read_annotations(path, judges=["llm"])
    api = diagnose_raters(t, seed=7, competence=False)
    val = validate_judges(t, ["llm"], seed=7, method="loo")
    assert "spam" in val.annotators.flagged_raters  # a flagged annotator: the sensitivity lines run too
    assert doc["raters"] == _jsonable(api.raters.to_dict()) == _jsonable(val.annotators.to_dict())
    assert doc["sensitivity"] == _jsonable(api.to_dict()["sensitivity"])
    (sens,) = doc["sensitivity"]
    s_val = val.judges[0].sensitivity
    assert (sens["sentence"], sens["excluded"]) == (s_val.sentence, list(s_val.excluded))
    assert sens["variants"] == _jsonable(s_val.to_frame().to_dict(orient="records"))
    cli_val = runner.invoke(app, ["validate", str(path), "-j", "llm", "--seed", "7", "-m", "loo", "-f", "json"])
    assert cli_val.exit_code == 0, cli_val.output
    assert json.loads(cli_val.stdout)["flagged_raters"] == [r for r, f in zip(doc["raters"]["raters"],
                                                                            doc["raters"]["flagged"]) if f]
    # and the seed matters
    other = diagnose_raters(t, seed=8, competence=False, top=0, sensitivity=False).raters
    assert _jsonable(other.to_dict())["p_value"] != doc["raters"]["p_value"]


@pytest.mark.slow
def test_raters_family_cli_report_and_api_agree(tmp_path):
    # voirdire raters, the report's Annotators section (report.json) and the API (diagnose_annotators, which the
    # report calls) give the same per-annotator numbers, sensitivity lines and contested items at one seed
    from voirdire.workflows import diagnose_annotators, diagnose_raters

    path = _spam_csv(tmp_path)
    cli = runner.invoke(app, ["raters", str(path), "-j", "llm", "--seed", "4", "--top", "15", "-f", "json"])
    assert cli.exit_code == 0, cli.output
    doc = json.loads(cli.stdout)
    out = tmp_path / "rep"
    rep = runner.invoke(app, ["report", str(path), "-j", "llm", "--seed", "4", "-o", str(out), "-q"])
    assert rep.exit_code == 0, rep.output
    sec = json.loads((out / "report.json").read_text())["sections"]["annotators"]["results"]
    t = read_annotations(path, judges=["llm"])
    api = diagnose_annotators(t, ["llm"], validation=validate_judges(t, ["llm"], seed=4, rater_competence=True), seed=4)
    assert sec["raters"] == doc["raters"] == _jsonable(api.raters.to_dict())
    assert sec["sensitivity"] == doc["sensitivity"] and len(doc["sensitivity"]) == 1
    assert sec["items"]["top"] == doc["items"] == _jsonable(api.items.to_frame().head(15).to_dict(orient="records"))
    # without judges the report checks the annotators itself, on the same stream
    alone = diagnose_annotators(t, (), seed=4)
    assert _jsonable(alone.raters.to_dict())["s_low"] == _jsonable(
        diagnose_raters(t, seed=4, top=0).raters.to_dict())["s_low"]


def test_one_order_of_judges_in_validate_its_json_and_the_api(tmp_path):
    # issue 28: one ordering of judges everywhere: P(best) tiers from the validation ranking; judges that cannot
    # be told apart share a tier, have no rank ('tie') and are said so in the one order (not the statistic's)
    from voirdire.workflows import order_text, ranking_tiers, tier_ranks, top_tier_note

    path = _wax_slice(tmp_path)
    common = ["--role", "role", "--seed", "3", "--n-resamples", "60", "--no-check-raters"]
    api = validate_judges(read_annotations(path, role="role"), None, seed=3, n_resamples=60, check_raters=False)
    tiers = ranking_tiers(api.ranking)
    assert len(tiers[0]) >= 2 and len(tiers) >= 2  # the slice has a tie at the top and an order below it
    doc = json.loads(runner.invoke(app, ["validate", str(path), *common, "-f", "json"]).stdout)
    assert ranking_tiers(doc["ranking"]) == tiers
    assert top_tier_note(api.ranking) in doc["notes"] and top_tier_note(doc["ranking"]) in doc["notes"]
    assert not any(n.startswith("The top two judges by ") for n in doc["notes"])  # the statistic's order, gone
    out = runner.invoke(app, ["validate", str(path), *common], terminal_width=200)
    assert out.exit_code == 0, out.output
    assert f"{order_text(tiers)}." in " ".join(out.stdout.split())
    rows = [line.split("│")[1:3] for line in out.stdout.splitlines() if line.count("│") >= 5]
    shown = [(rank.strip(), judge.strip()) for rank, judge in rows if judge.strip() in api.verdicts]
    ranks = tier_ranks(tiers)
    assert shown == [(ranks[j], j) for t in tiers for j in t]  # the ranking table: best first, 'tie' for a tie
    assert ranks[tiers[0][0]] == "tie" and ranks[tiers[-1][0]] == (str(len(tiers)) if len(tiers[-1]) == 1 else "tie")


@pytest.mark.slow
def test_one_order_of_judges_in_plan_and_the_report(tmp_path):
    # the report's ranking tiers, its note on the top tier, and plan's "Order" line are validate's
    from voirdire.workflows import order_text, ranking_tiers, top_tier_note

    path = _wax_slice(tmp_path)
    common = ["--role", "role", "--seed", "3", "--n-resamples", "60"]
    val = json.loads(runner.invoke(app, ["validate", str(path), *common, "-f", "json"]).stdout)
    tiers = ranking_tiers(val["ranking"])
    out = tmp_path / "rep"
    rep = runner.invoke(app, ["report", str(path), *common, "-o", str(out), "-q"])
    assert rep.exit_code == 0, rep.output
    sec = json.loads((out / "report.json").read_text())["sections"]["validation"]
    assert [tuple(t) for t in sec["results"]["tiers"]] == list(tiers)
    assert sec["results"]["ranking"] == val["ranking"]
    # the page itself (the same build, called directly): the ranking and at-a-glance rows in the one order,
    # the top tier's warning as validate's note
    from voirdire.report import build_report

    rep = build_report(read_annotations(path, role="role"), seed=3, n_resamples=60)
    order = [j for t in tiers for j in t]
    tables = {b.key: b for sec in rep.sections for b in sec.blocks if hasattr(b, "columns")}
    glance = [b for b in tables.values() if "P(best)" in b.columns and "verdict" in b.columns]
    assert glance and [r[0].text for r in glance[0].rows] == order
    ranking = [b for k, b in tables.items() if k.endswith("-ranking")]
    assert ranking and [r[1].text for r in ranking[0].rows] == order
    texts = [b.text for sec in rep.sections for b in sec.blocks if hasattr(b, "kind")]
    assert top_tier_note(val["ranking"]) in texts
    plan = runner.invoke(app, ["plan", str(path), *common], terminal_width=300)
    assert plan.exit_code == 0, plan.output
    assert f"Order (by P(best), as voirdire validate and the report): {order_text(tiers)}." in " ".join(
        plan.stdout.split())
