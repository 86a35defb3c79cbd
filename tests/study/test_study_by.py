"""`--by COLUMN` on the study commands (issue 31): `study add --by` keeps each item's group, and `study validate`,
`status`, `estimate` and `report` give one result per group with its verdict and reasons, the pooled one beside,
through the grouped workflows (the numbers of the same command with `--by` on `study export`'s file)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app

runner = CliRunner()


def _ok(*args: str) -> str:
    r = runner.invoke(app, list(args))
    assert r.exit_code == 0, r.output
    return r.stdout


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """3 humans and judge j on 30 items per language, added in 3 rounds of 10 per language with --by lang; the
    judge agrees with the truth more often in en (0.9) than in fr (0.4); de has one item (too small)."""
    rng = np.random.default_rng(5)
    rows = []
    for lang, n, good in (("en", 30, 0.9), ("fr", 30, 0.4), ("de", 1, 0.9)):
        for i in range(n):
            truth = int(rng.integers(1, 6))
            for h in ("h1", "h2", "h3"):
                lab = truth if rng.random() < 0.7 else int(rng.integers(1, 6))
                rows.append((f"{lang}{i}", h, "human", lab, i // 10, lang))
            rows.append((f"{lang}{i}", "j", "judge", truth if rng.random() < good else int(rng.integers(1, 6)),
                         i // 10, lang))
    df = pd.DataFrame(rows, columns=["item", "rater", "role", "label", "round", "lang"])
    d = tmp_path_factory.mktemp("study_by")
    s = d / "s.vdb"
    _ok("study", "init", str(s))
    for k in range(3):
        b = d / f"b{k}.csv"
        df[df["round"] == k].drop(columns="round").to_csv(b, index=False)
        _ok("study", "add", str(s), str(b), "--role", "role", "--by", "lang")
    _ok("study", "export", str(s), "-o", str(d / "all.csv"))
    return s


@pytest.mark.slow
def test_study_validate_by_equals_validate_by_on_the_export(study):
    exported = study.parent / "all.csv"
    assert "lang" in pd.read_csv(exported).columns  # the export keeps the group column
    via = json.loads(_ok("study", "validate", str(study), "--by", "lang", "-f", "json"))
    direct = json.loads(_ok("validate", str(exported), "--role", "role", "--by", "lang", "-f", "json"))
    assert via["records"] == direct["records"]  # one record per (judge, group): verdict and reasons
    assert [(c["group"], c["verdict"]["decision"]) for c in via["records"]] == [
        ("de", "inconclusive"), ("en", "accept"), ("fr", "reject")]
    assert "group_too_small" in [r["code"] for r in via["records"][0]["verdict"]["reasons"]]
    assert via["pooled"]["judges"][0]["verdict"] == direct["pooled"]["judges"][0]["verdict"]


@pytest.mark.slow
def test_study_status_by_gives_each_group_its_running_decision_beside_validate_by_verdict(study):
    doc = json.loads(_ok("study", "status", str(study), "--by", "lang", "-f", "json"))
    val = json.loads(_ok("study", "validate", str(study), "--by", "lang", "-f", "json"))
    cells = {(c["judge"], c["group"]): c["verdict"] for c in val["records"]}
    recs = {(r["judge"], r["group"]): r for r in doc["records"]}
    assert list(recs) == [("j", "de"), ("j", "en"), ("j", "fr"), ("j", "(pooled)")]
    for key, verdict in cells.items():  # the one verdict, as study validate --by gives it
        assert recs[key]["verdict"] == verdict, key
    assert recs[("j", "de")]["decision"] is None and recs[("j", "de")]["error"].startswith("too small")
    # the running decision per group: watch --by on the export, one look per round
    w = json.loads(_ok("watch", str(study.parent / "all.csv"), "--role", "role", "--round-column", "round",
                       "--by", "lang", "-f", "json"))
    for g in w["groups"]:
        if g["judges"]:
            assert recs[("j", g["group"])]["decision"] == g["judges"][0]["decision"]
            assert g["verdicts"][0]["verdict"] == cells[("j", g["group"])]  # watch --by: the same verdict
    # the pool beside: what study status says without --by
    plain = json.loads(_ok("study", "status", str(study), "-f", "json"))
    assert recs[("j", "(pooled)")]["verdict"] == plain["verdicts"][0]["verdict"]
    assert recs[("j", "(pooled)")]["decision"] == plain["sequential"][0]["decision"]
    out = " ".join(_ok("study", "status", str(study), "--by", "lang").split())
    assert "lang = de (1 items): no decision: too small" in out and "lang = en (30 items)" in out
    assert "(as study validate --by lang, seed 0)" in out and "beside it, the running anytime-valid" in out
    assert "(pooled) (61 items)" in out
    # the rule across groups is said once, after the pool (watch --by's closing lines are watch's, not status's)
    assert out.count("Verdicts: ") == 1 and "The e-BH level q holds within each group" not in out


@pytest.mark.slow
def test_study_estimate_and_report_by(study, tmp_path):
    s = tmp_path / "s.vdb"
    s.write_bytes(study.read_bytes())
    _ok("study", "draw", str(s), "-n", "40", "--seed", "1", "-o", str(tmp_path / "drawn.csv"))
    est = json.loads(_ok("study", "estimate", str(s), "--by", "lang", "-j", "j", "--scale", "interval", "-f",
                         "json"))
    assert [(g["group"], g["error"] is None) for g in est["groups"]] == [("de", False), ("en", True), ("fr", True)]
    # = voirdire estimate --by on the study's probability sample written as a file
    from voirdire.study import Study

    ps = tmp_path / "ps.csv"
    Study(s).probability_sample().to_frame().to_csv(ps, index=False)
    direct = json.loads(_ok("estimate", str(ps), "--by", "lang", "-j", "j", "--scale", "interval", "--role", "role",
                            "--inclusion-prob", "inclusion_prob", "-f", "json"))
    assert est["groups"] == json.loads(json.dumps(direct["groups"]).replace(str(ps), str(s)))
    r = runner.invoke(app, ["study", "report", str(s), "--by", "lang", "-o", str(tmp_path / "rep"), "-q"])
    assert r.exit_code == 0, r.output
    assert "no Estimation section" in r.output
    sec = json.loads((tmp_path / "rep" / "report.json").read_text())["sections"]["groups"]
    assert sec["status"] == "ok" and sec["results"]["by"] == ["lang"]


def test_study_by_refuses_what_it_cannot_group_in_one_line(tmp_path):
    s = tmp_path / "s.vdb"
    _ok("study", "init", str(s))
    f = tmp_path / "a.csv"
    f.write_text("item,rater,role,label,lang\n1,h1,human,1,en\n1,h2,human,1,fr\n1,j,judge,1,en\n")
    for by, words in (("lang", "row 3: item '1' has 'lang' = 'fr' here and 'en'"), ("nope", "no column 'nope'"),
                      ("round", "already have a column 'round'")):
        r = runner.invoke(app, ["study", "add", str(s), str(f), "--role", "role", "--by", by])
        assert r.exit_code == 1 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, (by, r.output)
    f.write_text("item,rater,role,label,lang\n1,h1,human,1,en\n1,h2,human,1,en\n2,h1,human,0,\n2,h2,human,0,\n")
    r = runner.invoke(app, ["study", "add", str(s), str(f), "--role", "role", "--by", "lang"])
    assert r.exit_code == 1 and "row 4: column 'lang' is empty" in r.stderr, r.output
    f.write_text("item,rater,role,label,lang\n1,h1,human,1,en\n1,h2,human,1,en\n1,j,judge,1,en\n")
    _ok("study", "add", str(s), str(f), "--role", "role")  # no --by: nothing kept
    for cmd in (["status", str(s), "--by", "lang"], ["validate", str(s), "--by", "lang"]):
        r = runner.invoke(app, ["study", *cmd])
        assert r.exit_code == 1 and "keeps no item group 'lang'" in r.stderr and "study add" in r.stderr, r.output
        assert "Traceback" not in r.output
    g = tmp_path / "b.csv"
    g.write_text("item,rater,role,label,lang\n1,h3,human,1,fr\n")
    _ok("study", "add", str(s), str(g), "--role", "role", "--by", "lang")  # the first value kept for item 1
    h = tmp_path / "c.csv"
    h.write_text("item,rater,role,label,lang\n1,h4,human,1,de\n")
    r = runner.invoke(app, ["study", "add", str(s), str(h), "--role", "role", "--by", "lang"])
    assert r.exit_code == 1 and "'lang' = 'de' here but 'fr' in an earlier round" in r.stderr, r.output
