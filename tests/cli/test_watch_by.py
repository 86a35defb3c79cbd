"""`voirdire watch --by COLUMN` (issue 31): one running anytime-valid decision per (judge, group) and per judge on
the pool; a group's decisions and verdicts are those of `watch --where COLUMN=VALUE` at the same seed."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from voirdire.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def slices(tmp_path_factory):
    """3 humans and judge j on 30 items per language, in 3 rounds of 10; the judge agrees with the truth
    more often in en (0.9) than in fr (0.4); de has one item (too small)."""
    rng = np.random.default_rng(5)
    rows = ["item,rater,role,label,round,lang"]
    for lang, n, good in (("en", 30, 0.9), ("fr", 30, 0.4), ("de", 1, 0.9)):
        for i in range(n):
            truth = int(rng.integers(1, 6))
            for h in ("h1", "h2", "h3"):
                lab = truth if rng.random() < 0.7 else int(rng.integers(1, 6))
                rows.append(f"{lang}{i},{h},human,{lab},{i // 10},{lang}")
            lab = truth if rng.random() < good else int(rng.integers(1, 6))
            rows.append(f"{lang}{i},j,judge,{lab},{i // 10},{lang}")
    p = tmp_path_factory.mktemp("watch_by") / "labels.csv"
    p.write_text("\n".join(rows) + "\n")
    return p


def _json(p, *extra):
    r = runner.invoke(app, ["watch", str(p), "--role", "role", "--round-column", "round", "--method", "loo",
                            "-f", "json", *extra])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_watch_by_gives_each_group_the_where_runs_decisions_and_validate_by_verdicts(slices):
    # the running decisions per group are those of --where on it; the verdict beside them is validate --by's
    # (the rules across groups applied), the pooled one validate's on the whole file
    by = _json(slices, "--by", "lang")
    groups = {g["group"]: g for g in by["groups"]}
    assert list(groups) == ["en", "fr", "de"]
    val = runner.invoke(app, ["validate", str(slices), "--role", "role", "--by", "lang", "-f", "json"])
    assert val.exit_code == 0, val.output
    cells = {(c["judge"], c["group"]): c for c in json.loads(val.stdout)["records"]}
    for lang in ("en", "fr"):
        one = _json(slices, "--where", f"lang={lang}")
        assert groups[lang]["judges"] == one["judges"], lang
        assert [v["verdict"] for v in groups[lang]["verdicts"]] == [cells[("j", lang)]["verdict"]], lang
        assert groups[lang]["n_items"] == 30 and groups[lang]["error"] is None
    assert groups["de"]["judges"] is None and groups["de"]["error"].startswith("too small: 1 items")
    assert by["rule"] == json.loads(val.stdout)["rule"]
    # one record per (judge, group), the pool last: the running decision beside validate --by's verdict
    recs = {(r["group"], r["judge"]): r for r in by["records"]}
    assert list(recs) == [("en", "j"), ("fr", "j"), ("de", "j"), ("(pooled)", "j")]
    assert recs[("de", "j")]["decision"] is None and recs[("de", "j")]["verdict"] == cells[("j", "de")]["verdict"]
    assert recs[("en", "j")]["decision"] == groups["en"]["judges"][0]["decision"]
    whole = _json(slices)
    assert by["pooled"] == whole["judges"] and by["pooled_verdicts"] == whole["verdicts"]


def test_watch_by_table(slices):
    r = runner.invoke(app, ["watch", str(slices), "--role", "role", "--round-column", "round", "--method", "loo",
                            "--by", "lang"])
    assert r.exit_code == 0, r.output
    out = " ".join(r.stdout.split())
    assert "lang = en (30 items)" in out and "lang = de (1 items): no decision: too small" in out
    assert "(pooled) (61 items)" in out and "running anytime-valid decision" in out


def test_watch_by_follow_ends_on_the_same_json_as_one_look(slices):
    # --follow reads the complete file once, shows each (judge, group)'s running decision, and, with a group that
    # never decides (de: too small), stops at --max-wait with the same JSON as watch --by without --follow
    once = _json(slices, "--by", "lang")
    followed = _json(slices, "--by", "lang", "--follow", "0.05", "--max-wait", "0.5")
    assert followed == once
    r = runner.invoke(app, ["watch", str(slices), "--role", "role", "--round-column", "round", "--method", "loo",
                            "--by", "lang", "--follow", "0.05", "--max-wait", "0.5"])
    assert r.exit_code == 0, r.output
    out = " ".join(r.stdout.split())
    assert "running anytime-valid decisions: j / en:" in out and "de: no decision (too small" in out
    assert "lang = en (30 items)" in out and "no decision after 0.5 s" in " ".join(r.output.split())
