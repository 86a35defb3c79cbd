"""``validate_judges_by`` / ``compare_raters_by`` and ``--by`` on the command line: one result per group
at the seed of a ``--where`` run, the pool, the rules across groups, the gate naming the groups."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire._simulation.slices import slice_failure_frame
from voirdire.cli import app
from voirdire.data import read_annotation_groups, read_annotations
from voirdire.data._groups import split_groups
from voirdire.datasets import hanna_path
from voirdire.workflows import compare_raters, compare_raters_by, validate_judges, validate_judges_by
from voirdire.workflows._groups import _simpson

HANNA = dict(label="score", role="role", scale="interval", abstain=[-1], cluster="story")
runner = CliRunner()


def _dump(res) -> str:
    return json.dumps(res.to_dict(), sort_keys=True)


@pytest.mark.slow
def test_hanna_six_criteria_five_judges_equal_six_where_runs():
    """The goal of issue 31: one grouped call gives, per criterion, the numbers of a --where run at the same seed."""
    opts = dict(n_resamples=100, seed=7)
    g = read_annotation_groups(hanna_path(), by="criterion", **HANNA)
    res = validate_judges_by(g, **opts)
    assert len(res.groups) == 6 and len(res.judges) == 5 and len(res.cells) == 30
    for name, r in zip(res.groups, res.results):
        alone = validate_judges(read_annotations(hanna_path(), where=[f"criterion={name}"], **HANNA), **opts)
        assert _dump(r) == _dump(alone), name
    assert _dump(res.pooled) == _dump(validate_judges(read_annotations(hanna_path(), **HANNA), **opts))


def test_agreement_by_group_equals_where_runs():
    where = ["criterion=Coherence", "criterion=Complexity"]
    g = read_annotation_groups(hanna_path(), by="criterion", where=where, **HANNA)
    res = compare_raters_by(g, ["ChatGPT"], n_resamples=40, seed=2)
    for name, r in zip(res.groups, res.results):
        alone = compare_raters(read_annotations(hanna_path(), where=[f"criterion={name}"], **HANNA), ["ChatGPT"],
                               n_resamples=40, seed=2)
        assert _dump(r) == _dump(alone)
    assert res.to_frame()["group"].iloc[-1] == "(pooled)"


def _sliced(n=300, seed=0, **kw):
    df = slice_failure_frame(n, np.random.default_rng(seed), column="domain", **kw)
    return split_groups(df, np.arange(len(df)) + 2, ["domain"], src="sim", item="item", rater="rater",
                        label="label", role="role")


def test_planted_slice_is_flagged_and_named():
    res = validate_judges_by(_sliced(500, p_bad=0.5), ["judge"], n_resamples=60, check_raters=False)
    flagged = [c.group for c in res.cells if c.slice_flag]
    assert flagged == ["E"]
    c = res.cell("judge", "E")
    assert "slice_below_pool" in c.verdict.codes and c.advantage < 0 and c.advantage_high < 0
    assert "below the rest of the pool" in c.slice_reason and "Holm" in c.slice_reason
    s = res.slices["judge"]
    assert s.below.tolist() == [False, False, False, False, True] and s.p_value[4] < 0.001
    assert "Worst slice" in res.rule and "Holm" in res.rule


def test_family_correction_never_adds_an_accept_and_none_keeps_the_group_verdicts():
    g = _sliced(300, seed=3, fail=False)
    fw = validate_judges_by(g, ["judge"], n_resamples=60, check_raters=False, group_error="fwer")
    no = validate_judges_by(g, ["judge"], n_resamples=60, check_raters=False, group_error="none")
    for a, b in zip(fw.cells, no.cells):
        assert a.group_verdict == b.group_verdict          # the group's own numbers do not move
        assert b.verdict.decision == b.group_verdict.decision
        assert a.omega_family is not None and b.omega_family is None
        alt = next(e.alt_test for e in fw.results[fw.groups.index(a.group)].judges)
        assert a.omega_family <= alt.omega               # Holm over more p-values rejects no more
        if a.verdict.decision != a.group_verdict.decision:
            assert a.verdict.decision == "inconclusive" and a.verdict.codes[0] == "group_multiplicity"


def test_too_small_group_gets_its_reason_not_a_number():
    df = slice_failure_frame(105, np.random.default_rng(1), column="domain", fail=False)
    df.loc[df["item"].isin(["0", "5"]), "domain"] = "tiny"      # two items in their own group
    g = split_groups(df, np.arange(len(df)) + 2, ["domain"], src="sim", item="item", rater="rater", label="label",
                     role="role")
    res = validate_judges_by(g, ["judge"], n_resamples=20, check_raters=False)
    c = res.cell("judge", "tiny")
    assert c.group_verdict is None and c.verdict.decision == "inconclusive"
    assert c.verdict.codes == ("group_too_small",) and "2 items < min_group_items=10" in c.error
    assert res.results[res.groups.index("tiny")] is None


def test_excluded_human_absent_from_a_group_is_not_an_error_there():
    df = slice_failure_frame(200, np.random.default_rng(6), column="domain", fail=False)
    df = df[~((df["rater"] == "h3") & (df["domain"] == "A"))]          # h3 labelled nothing in A
    g = split_groups(df.reset_index(drop=True), np.arange(len(df)) + 2, ["domain"], src="sim", item="item",
                     rater="rater", label="label", role="role")
    res = validate_judges_by(g, ["judge"], n_resamples=20, check_raters=False, exclude_raters=["h3"])
    assert all(e is None for e in res.errors)
    assert res.results[1].excluded_raters == ("h3",) and res.results[0].excluded_raters == ()


def test_simpson_sentence_both_ways():
    def cells(*ds):
        return [SimpleNamespace(group=f"g{k}", group_verdict=SimpleNamespace(decision=d)) for k, d in enumerate(ds)]

    pooled = SimpleNamespace(verdicts={"J": SimpleNamespace(decision="accept")})
    s = _simpson("J", pooled, cells("reject", "reject", "accept"))
    assert s.startswith("Simpson's case: J is accepted on the pool but rejected in 2 of 3") and "g0, g1" in s
    assert _simpson("J", pooled, cells("reject", "accept", "accept")) is None
    pooled = SimpleNamespace(verdicts={"J": SimpleNamespace(decision="reject")})
    assert "rejected on the pool but accepted in 2 of 2" in _simpson("J", pooled, cells("accept", "accept"))


# ------------------------------------------------------------------------------------------------ command line
def _file(tmp_path, **kw):
    df = slice_failure_frame(400, np.random.default_rng(5), column="domain", **kw)
    p = tmp_path / "sliced.csv"
    df.to_csv(p, index=False)
    return p


def test_cli_gate_fails_naming_the_group_and_writes_one_record_per_judge_group(tmp_path):
    p = _file(tmp_path, p_bad=0.3)
    base = ["validate", str(p), "--role", "role", "--by", "domain", "--n-resamples", "60", "--no-check-raters"]
    r = runner.invoke(app, [*base, "--fail-on", "reject"])
    assert r.exit_code == 3, r.output
    assert "gate failed (--fail-on reject --by domain): judge is reject on E" in " ".join(r.output.split())
    r = runner.invoke(app, [*base, "-f", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [(x["judge"], x["group"]) for x in doc["records"]] == [("judge", g) for g in "ABCDE"]
    assert doc["records"][4]["verdict"]["decision"] == "reject" and doc["group_error"] == "fwer"
    assert doc["pooled"]["judges"][0]["judge"] == "judge"
    r = runner.invoke(app, [*base, "-f", "junit", "--fail-on", "reject"])
    assert r.exit_code == 3
    assert r.stdout.count("<testcase ") == 5 and r.stdout.count("<failure ") == 1 and 'name="judge / E"' in r.stdout
    r = runner.invoke(app, [*base, "-f", "markdown"])
    assert "| judge | A (80) | B (80) | C (80) | D (80) | E (80) | (pooled) |" in r.stdout
    assert "| **reject** (slice flagged) |" in r.stdout
    r = runner.invoke(app, [*base, "--group-error", "fdr", "-f", "csv"])
    assert r.exit_code == 0 and r.stdout.splitlines()[0].startswith("judge,group,n_items,verdict")
    r = runner.invoke(app, [*base, "--group-error", "bonferroni"])
    assert r.exit_code == 1 and "--group-error must be one of" in r.output


def test_cli_table_shows_grid_pool_and_flag(tmp_path):
    r = runner.invoke(app, ["validate", str(_file(tmp_path, p_bad=0.45)), "--role", "role", "--by", "domain",
                            "--n-resamples", "60", "--no-check-raters"])
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "Verdicts by domain" in out and "(pooled)" in out and "Worst slice" in out
    assert "judge / E:" in out and "below the rest of the pool's" in out


def test_cli_by_is_shared_and_refused_where_not_supported(tmp_path):
    p = _file(tmp_path, fail=False)
    r = runner.invoke(app, ["agree", str(p), "--role", "role", "--by", "domain", "--n-resamples", "20", "-f", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [x["group"] for x in doc["groups"]] == list("ABCDE") and doc["pooled"]["groups"]
    r = runner.invoke(app, ["overlap", str(p), "--role", "role", "--by", "domain"])
    assert r.exit_code == 1 and "--by is not available for this command yet" in r.output
    r = runner.invoke(app, ["validate", str(p), "--role", "role", "--by", "domain", "--sequential",
                            "--round-column", "domain", "--method", "alt-test"])
    assert r.exit_code == 1 and "--by is not available with --sequential" in r.output


def test_raters_by_group_equals_where_runs(tmp_path):
    p = _file(tmp_path, fail=False)
    base = ["raters", str(p), "--role", "role", "--n-resamples", "40", "--no-competence", "-f", "json"]
    r = runner.invoke(app, [*base, "--by", "domain"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    alone = runner.invoke(app, [*base, "--where", "domain=C"])
    assert alone.exit_code == 0, alone.output
    assert doc["groups"][2]["group"] == "C" and doc["groups"][2]["raters"] == json.loads(alone.stdout)["raters"]
    assert doc["pooled"] and len(doc["groups"]) == 5


def test_estimate_and_watch_by_group_in_python(tmp_path):
    # issue 31: the workflows behind `estimate --by` and `watch --by`; a rubric of 2 criteria over 6 items, the judge
    # j on every (item, criterion), humans h1, h2 on items 1, 3, 5 (probability 0.5), rounds: items 1-3, then 4-6
    import pandas as pd

    from voirdire.data import read_rounds
    from voirdire.workflows import estimate_mean, estimate_mean_by, watch_judges, watch_judges_by

    rows = []
    for k in range(1, 7):
        for crit, shift in (("clarity", 0), ("depth", 1)):
            rows.append((f"s{k}", "j", k + shift, crit, int(k > 3)))
            if k % 2:
                rows += [(f"s{k}", h, k + shift + d, crit, int(k > 3)) for h, d in (("h1", 1), ("h2", 0))]
    p = tmp_path / "rubric.csv"
    pd.DataFrame(rows, columns=["item", "rater", "label", "criterion", "round"]).to_csv(p, index=False)
    g = read_annotation_groups(p, by="criterion", judges=["j"], scale="interval")
    assert g.source_items[:2] == ["s1", "s1"] and g.pooled_suffix("depth") == " | depth"
    est = estimate_mean_by(g, ["j"], {f"s{k}": 0.5 for k in range(1, 7)}, model="identity")
    one = estimate_mean(read_annotations(p, judges=["j"], scale="interval", where=["criterion=depth"]), ["j"],
                        {f"s{k}": 0.5 for k in range(1, 7)}, model="identity")
    assert est.results[1].to_dict() == one.to_dict() and est.pooled.n_items == 12 and est.pooled.n_labeled == 6
    frame = est.to_frame()
    assert list(frame["group"].unique()) == ["clarity", "depth", "(pooled)"]
    rounds = read_rounds(p, column="round").drop_duplicates()   # one row per criterion: one arrival
    w = watch_judges_by(g, rounds, ["j"], method="loo")
    direct = watch_judges(read_annotations(p, judges=["j"], scale="interval", where=["criterion=clarity"]), rounds,
                          ["j"], method="loo")
    assert w.results[0][0].to_dict() == direct[0].to_dict()
    assert list(w.pooled[0].looks) == ["0", "1"] and len(w.to_frame()) == 3


def test_a_group_with_one_rater_gets_its_reason_while_the_others_run(tmp_path):
    # domain 'solo' is labelled by h1 alone: it gets 'only 1 rater' (group_too_small), the others their verdicts
    df = slice_failure_frame(200, np.random.default_rng(8), column="domain", fail=False)
    solo = df[(df["item"] == "0") & (df["rater"] == "h1")].assign(item="solo-1", domain="solo")
    df = pd.concat([df, solo], ignore_index=True)
    p = tmp_path / "solo.csv"
    df.to_csv(p, index=False)
    g = read_annotation_groups(p, by="domain", role="role")
    res = validate_judges_by(g, ["judge"], n_resamples=20, check_raters=False)
    c = res.cell("judge", "solo")
    assert c.group_verdict is None and c.verdict.codes == ("group_too_small",) and "only 1 rater" in c.error
    assert all(res.cell("judge", d).group_verdict is not None for d in "ABCDE")
    comp = compare_raters_by(g, ["judge"], n_resamples=20)
    assert comp.results[-1] is None and "only 1 rater" in comp.errors[-1] and comp.results[0] is not None
    r = runner.invoke(app, ["validate", str(p), "--role", "role", "--by", "domain", "--n-resamples", "20",
                            "--no-check-raters", "-f", "json"])
    assert r.exit_code == 0, r.output
    rec = [x for x in json.loads(r.stdout)["records"] if x["group"] == "solo"][0]
    assert rec["verdict"]["decision"] == "inconclusive" and "only 1 rater" in rec["error"]


def test_a_rubric_draws_each_stream_once_and_each_group_equals_its_where_run(monkeypatch):
    # criteria over the same items (a rubric) share their bootstrap draws in validate_judges_by; the numbers
    # of each group are still those of the group's table validated alone
    from voirdire._simulation.slices import margin_frame
    from voirdire._stats import resampling

    df = margin_frame(60, 3, np.random.default_rng(4))
    g = split_groups(df, np.arange(len(df)) + 2, ["criterion"], src="sim", item="item", rater="rater",
                     label="label", role="role")
    made = []
    real = resampling._draw_counts
    monkeypatch.setattr(resampling, "_draw_counts", lambda *a, **k: made.append(a[1:]) or real(*a, **k))
    opts = dict(n_resamples=30, seed=3, check_raters=False)
    res = validate_judges_by(g, ["judge"], **opts)
    grouped = len(made)
    made.clear()
    alone = [validate_judges(t, ["judge"], **opts) for t in g.tables]
    # three criteria alone draw three times what the grouped call draws (the pool, over the same 60 clustered
    # items, draws the same streams too)
    assert grouped > 0 and 3 * grouped == len(made)
    for r, a in zip(res.results, alone):
        assert _dump(r) == _dump(a)


def test_the_pool_and_groups_on_threads_give_what_they_give_one_after_the_other(monkeypatch):
    # validate_judges_by runs the pool and the groups side by side (n_jobs threads): the same numbers, verdicts
    # and notes (each run's warnings in its own notes, none lost or crossed) as n_jobs=1, and nothing printed
    import threading
    import warnings

    from voirdire.workflows import _validate

    ran_on: dict[int, set[int]] = {1: set(), 3: set()}
    jobs = [1]
    real = _validate.validate_judges

    def recorded(*a, **k):
        ran_on[jobs[0]].add(threading.get_ident())
        return real(*a, **k)

    monkeypatch.setattr(_validate, "validate_judges", recorded)
    g = read_annotation_groups(hanna_path(), by="criterion", where=["criterion=Coherence", "criterion=Empathy",
                                                                    "criterion=Surprise"], **HANNA)
    opts = dict(n_resamples=40, seed=5, check_raters=False)
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        one = validate_judges_by(g, **opts, n_jobs=1)
        jobs[0] = 3
        two = validate_judges_by(g, **opts, n_jobs=3)
    assert ran_on[1] == {threading.get_ident()} and len(ran_on[3]) > 1  # one thread, then several
    assert _dump(one) == _dump(two)
    assert any(r.notes for r in one.results)  # the comparison covers notes
    assert [str(w.message) for w in shown][:len(shown) // 2] == [str(w.message) for w in shown][len(shown) // 2:]
    with pytest.raises(Exception, match="n_jobs"):
        validate_judges_by(g, **opts, n_jobs=0)
