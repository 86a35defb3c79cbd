"""The study workspace: rounds imported whole or not at all, every row accounted for, probabilities kept."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.exceptions import InvalidParameterError
from voirdire.study import SCHEMA_VERSION, Study, StudyError

runner = CliRunner()


def _labels(path: Path, n_items: int, *, humans=("h1", "h2", "h3"), judges=("j1",), seed: int = 0,
            start: int = 0, cover: float = 1.0) -> Path:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(start, start + n_items):
        truth = rng.integers(0, 2)
        for h in humans:
            if rng.random() < cover:
                rows.append((f"it{i}", h, "human", int(truth if rng.random() < 0.85 else 1 - truth)))
        for j in judges:
            rows.append((f"it{i}", j, "judge", int(truth if rng.random() < 0.8 else 1 - truth)))
    pd.DataFrame(rows, columns=["item", "rater", "role", "label"]).to_csv(path, index=False)
    return path


def _snapshot(path: Path) -> tuple:
    con = sqlite3.connect(path)
    try:
        return (con.execute("SELECT COUNT(*) FROM labels").fetchone()[0],
                con.execute("SELECT COUNT(*) FROM rounds").fetchone()[0],
                con.execute("SELECT COALESCE(SUM(n_imported), 0) FROM rounds").fetchone()[0])
    finally:
        con.close()


def test_add_accounts_for_every_row(tmp_path) -> None:
    s = Study.init(tmp_path / "s.vdb")
    f = _labels(tmp_path / "a.csv", 50)
    with open(f, "a") as fh:
        fh.write("it999,h1,human,\n")                       # an empty label: rejected with --missing drop
    r = s.add(f, role="role", missing="drop")
    assert r.n_rows == 50 * 4 + 1 == r.n_imported + r.n_duplicate + r.n_rejected + r.n_replaced
    assert r.n_rejected == 1 and r.rejected
    st = s.status()
    assert st.n_labels == 200 and st.n_items == 50 and (st.n_humans, st.n_judges) == (3, 1)
    row = st.rounds.iloc[0]
    assert row.n_rows == row.n_imported + row.n_duplicate + row.n_rejected + row.n_replaced
    assert s.integrity_check()
    with pytest.raises(StudyError, match="imported before"):
        s.add(f, role="role", missing="drop")
    assert s.status().n_labels == 200 and len(s.status().rounds) == 1    # untouched


def test_duplicates_across_rounds(tmp_path) -> None:
    s = Study.init(tmp_path / "s.vdb")
    s.add(_labels(tmp_path / "a.csv", 30, seed=1), role="role")
    before = _snapshot(s.path)
    other = _labels(tmp_path / "b.csv", 30, seed=2)            # same items, other labels
    with pytest.raises(StudyError, match="already has a label"):
        s.add(other, role="role")
    assert _snapshot(s.path) == before                         # refused whole
    first = s.add(other, role="role", duplicates="first")
    assert first.n_imported == 0 and first.n_duplicate == first.n_rows and first.n_replaced == 0
    new = pd.read_csv(other)
    new["label"] = 1 - new["label"]
    new.to_csv(tmp_path / "c.csv", index=False)
    last = s.add(tmp_path / "c.csv", role="role", duplicates="last")
    assert last.n_replaced + last.n_duplicate == last.n_rows and last.n_replaced > 0
    got = s.labels().merge(new.astype({"label": str}), on=["item", "rater"], suffixes=("", "_file"))
    assert (got["label"] == got["label_file"]).all()           # the file's labels won


def test_unassigned_labels_are_flagged_or_refused(tmp_path) -> None:
    s = Study.init(tmp_path / "s.vdb")
    s.add(_labels(tmp_path / "a.csv", 40, humans=("h1", "h2", "h3"), cover=0.5, seed=3), role="role")
    res, rnd = s.assign(design="random", n_per_rater=3, raters=["h2"], rng=0)
    assert rnd == 2 and len(res.item) == 3
    st = s.status()
    assert st.n_open_assignments == 3
    assigned = {str(i) for i in res.item}
    rows = [(i, "h2", "human", 1) for i in sorted(assigned)] + [("it0", "h9", "human", 0)]
    pd.DataFrame(rows, columns=["item", "rater", "role", "label"]).to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(StudyError, match="never assigned"):
        s.add(tmp_path / "b.csv", role="role", strict=True, duplicates="last")
    r = s.add(tmp_path / "b.csv", role="role", duplicates="last")
    assert r.n_flagged == 1
    st = s.status()
    assert st.n_delivered_assignments == 3 and st.n_open_assignments == 0 and st.n_flagged == 1
    probs = pd.read_sql_query("SELECT inclusion_prob FROM assignments", sqlite3.connect(s.path))["inclusion_prob"]
    assert ((probs > 0) & (probs <= 1)).all()


def test_role_change_and_item_type_clash_refused(tmp_path) -> None:
    s = Study.init(tmp_path / "s.vdb")
    pd.DataFrame({"item": ["001", "002"], "rater": ["h1", "j1"], "role": ["human", "judge"], "label": [1, 0]}) \
        .to_csv(tmp_path / "a.csv", index=False)
    s.add(tmp_path / "a.csv", role="role")
    before = _snapshot(s.path)
    pd.DataFrame({"item": ["003"], "rater": ["h1"], "role": ["judge"], "label": [1]}).to_csv(tmp_path / "b.csv",
                                                                                            index=False)
    with pytest.raises(StudyError, match="keeps one role"):
        s.add(tmp_path / "b.csv", role="role")
    pd.DataFrame({"item": ["1"], "rater": ["h2"], "role": ["human"], "label": [1]}).to_csv(tmp_path / "c.csv",
                                                                                          index=False)
    with pytest.raises(StudyError, match="same number as item '001'"):
        s.add(tmp_path / "c.csv", role="role")
    assert _snapshot(s.path) == before


def test_not_a_study_newer_version_and_migration(tmp_path) -> None:
    with pytest.raises(StudyError, match="not a study"):
        Study(tmp_path / "missing.vdb")
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    with pytest.raises(StudyError, match="cannot be opened as a study|not a study"):
        Study(tmp_path / "x.csv")
    s = Study.init(tmp_path / "s.vdb")
    with pytest.raises(StudyError, match="already exists"):
        Study.init(tmp_path / "s.vdb")
    con = sqlite3.connect(s.path)
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    con.commit()
    con.close()
    with pytest.raises(StudyError, match="newer voirdire"):
        Study(s.path)
    # a study of the first schema (no n_replaced, no stratum) opens; reading leaves it as it is (issue 29
    # item 12: status and export migrated it in place), the first change migrates it in its transaction
    fixture = Path(__file__).with_name("study_schema1.sql")
    old = tmp_path / "old.vdb"
    con = sqlite3.connect(old)
    con.executescript(fixture.read_text())
    con.close()
    before = old.read_bytes()
    s1 = Study(old)
    st = s1.status()
    assert st.schema_version == 1 and st.n_labels == 4 and (st.rounds["n_replaced"] == 0).all()
    for cmd in (["status", str(old)], ["export", str(old), "-o", str(tmp_path / "old.csv")]):
        r = runner.invoke(app, ["study", *cmd])
        assert r.exit_code == 0, r.output
    assert old.read_bytes() == before                          # not migrated by reading
    assert len(pd.read_csv(tmp_path / "old.csv")) == 4
    s1.add(_labels(tmp_path / "n.csv", 3, start=100), role="role")
    assert s1.status().n_labels == 4 + 12 and s1.integrity_check()
    assert s1.status().schema_version == SCHEMA_VERSION and Study(old).schema_version == SCHEMA_VERSION


@pytest.mark.parametrize("value", ["abc", "2.0", "-5", "0", " ", None])
def test_tampered_schema_version_is_one_line(tmp_path, value) -> None:
    # issue 29 item 12: int('abc') was an internal error, '-5' ran the migrations on a current study
    s = Study.init(tmp_path / "s.vdb")
    s.add(_labels(tmp_path / "a.csv", 5), role="role")
    con = sqlite3.connect(s.path)
    if value is None:
        con.execute("DELETE FROM meta WHERE key = 'schema_version'")
    else:
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (value,))
    con.commit()
    con.close()
    before = s.path.read_bytes()
    with pytest.raises(StudyError, match="schema_version"):
        Study(s.path)
    for cmd in (["status", str(s.path)], ["export", str(s.path), "-o", str(tmp_path / "x.csv")],
                ["add", str(s.path), str(_labels(tmp_path / "b.csv", 3, start=50)), "--role", "role"],
                ["draw", str(s.path), "-n", "2", "-o", str(tmp_path / "d.csv")]):
        r = runner.invoke(app, ["study", *cmd])
        assert r.exit_code == 1 and "schema_version" in r.stderr, r.output
        assert "internal error" not in r.output and "Traceback" not in r.output
        assert len(r.stderr.strip().splitlines()) == 1
    assert s.path.read_bytes() == before


def test_draw_and_export(tmp_path) -> None:
    s = Study.init(tmp_path / "s.vdb")
    s.add(_labels(tmp_path / "a.csv", 200, humans=(), judges=("j1",), seed=4), role="role")
    drawn, rnd = s.draw(n=40, rng=1)
    assert rnd == 2 and set(drawn["inclusion_prob"]) == {0.2}
    pi = s.inclusion_probabilities()
    assert set(pi.index) == set(drawn["item"]) and np.allclose(pi, 0.2)
    with pytest.raises(InvalidParameterError, match="more than"):
        s.draw(n=1000)
    out = tmp_path / "ex.csv"
    r = runner.invoke(app, ["study", "export", str(s.path), "-o", str(out)])
    assert r.exit_code == 0, r.output
    ex = pd.read_csv(out)
    assert len(ex) == 200 and ex["inclusion_prob"].notna().sum() == len(drawn)


def test_study_validate_equals_validate_on_export(tmp_path) -> None:
    p = tmp_path / "s.vdb"
    assert runner.invoke(app, ["study", "init", str(p)]).exit_code == 0
    a = _labels(tmp_path / "a.csv", 60, seed=5)
    b = _labels(tmp_path / "b.csv", 60, seed=6, start=60)
    for f in (a, b):
        r = runner.invoke(app, ["study", "add", str(p), str(f), "--role", "role"])
        assert r.exit_code == 0, r.output
    st = runner.invoke(app, ["study", "status", str(p)])
    assert st.exit_code == 0 and "240" in st.stdout and "Rounds" in st.stdout
    out = tmp_path / "ex.csv"
    assert runner.invoke(app, ["study", "export", str(p), "-o", str(out)]).exit_code == 0
    args = ["--judge", "j1", "-f", "json", "--seed", "3"]
    via_study = runner.invoke(app, ["study", "validate", str(p), *args])
    direct = runner.invoke(app, ["validate", str(out), "--role", "role", *args])
    assert via_study.exit_code == direct.exit_code, via_study.output
    ds, dd = json.loads(via_study.stdout), json.loads(direct.stdout)
    ds.pop("source", None), dd.pop("source", None)
    for d in (ds, dd):
        if isinstance(d.get("table"), dict):
            d["table"].pop("source", None)
    assert json.dumps(ds, sort_keys=True) == json.dumps(dd, sort_keys=True).replace(str(out), str(out))
    bad = runner.invoke(app, ["study", "validate", str(p), "--judge", "nobody"])
    assert bad.exit_code == 1 and "nobody" in bad.output and "Traceback" not in bad.output
    r = runner.invoke(app, ["study", "status", str(tmp_path / "nope.vdb")])
    assert r.exit_code == 1 and "not a study" in r.output


_ADD = ("import sys; from voirdire.study import Study; "
        "Study(sys.argv[1]).add(sys.argv[2], role='role')")


@pytest.mark.slow
def test_sigkill_during_add_leaves_before_or_after(tmp_path) -> None:
    s = Study.init(tmp_path / "s.vdb")
    s.add(_labels(tmp_path / "base.csv", 500, seed=7), role="role")
    big = _labels(tmp_path / "big.csv", 7_500, seed=8, start=1000)     # 30,000 labels
    before = _snapshot(s.path)
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    # time one full import on a copy to place the kills inside it
    probe = tmp_path / "probe.vdb"
    Study.init(probe)
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _ADD, str(probe), str(big)], env=env, capture_output=True)
    full = time.monotonic() - t0
    assert done.returncode == 0, done.stderr
    after_n = before[0] + 30_000
    rng = np.random.default_rng(0)
    outcomes = []
    for _ in range(20):
        proc = subprocess.Popen([sys.executable, "-c", _ADD, str(s.path), str(big)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(float(rng.uniform(0.3, 1.05)) * full)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        snap = _snapshot(s.path)
        assert snap in (before, (after_n, before[1] + 1, before[2] + 30_000)), snap
        assert Study(s.path).integrity_check()
        outcomes.append(snap == before)
        if snap != before:      # it finished before the kill: start again from the old state
            con = sqlite3.connect(s.path)
            r = con.execute("SELECT MAX(round) FROM rounds").fetchone()[0]
            con.execute("DELETE FROM labels WHERE round = ?", (r,))
            con.execute("DELETE FROM rejections WHERE round = ?", (r,))
            con.execute("DELETE FROM rounds WHERE round = ?", (r,))
            con.commit()
            con.close()
            assert _snapshot(s.path) == before
    assert any(outcomes)        # at least some kills landed inside the import


@pytest.mark.slow
def test_two_writers_take_turns(tmp_path) -> None:
    s = Study.init(tmp_path / "s.vdb")
    a = _labels(tmp_path / "a.csv", 3000, seed=9)
    b = _labels(tmp_path / "b.csv", 3000, seed=10, start=5000)
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    procs = [subprocess.Popen([sys.executable, "-c", _ADD, str(s.path), str(f)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for f in (a, b)]
    outs = [p.communicate() for p in procs]        # communicate() also closes the pipes
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    st = s.status()
    assert st.n_labels == 2 * 3000 * 4 and len(st.rounds) == 2 and s.integrity_check()


def _scores(path: Path, items, *, judges=("j1", "j2"), humans=(), seed: int = 0) -> Path:
    """Numeric 1-5 scores: judges j1/j2 noisy around each item's truth, humans closer to it."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in items:
        k = int(i[2:])
        truth = 1 + (k * 7919 % 5)
        for j, sd in zip(judges, (0.3, 1.5)):
            rows.append((i, j, "judge", float(np.clip(round(truth + rng.normal(0, sd + (k % 3))), 1, 5))))
        for h in humans:
            rows.append((i, h, "human", float(np.clip(round(truth + rng.normal(0, 0.5)), 1, 5))))
    pd.DataFrame(rows, columns=["item", "rater", "role", "label"]).to_csv(path, index=False)
    return path


def test_draw_active_and_neyman_record_probabilities_that_estimate_uses(tmp_path) -> None:
    from voirdire.estimation import plan_active

    p = tmp_path / "s.vdb"
    s = Study.init(p)
    items = [f"it{i:03d}" for i in range(300)]
    s.add(_scores(tmp_path / "judges.csv", items), role="role")
    r = runner.invoke(app, ["study", "draw", str(p), "-n", "60", "--design", "active", "--seed", "1",
                            "-o", str(tmp_path / "d1.csv")])
    assert r.exit_code == 0, r.output
    drawn = pd.read_csv(tmp_path / "d1.csv")
    pi = s.inclusion_probabilities()
    assert np.allclose(pi.loc[drawn["item"].astype(str)].to_numpy(), drawn["inclusion_prob"].to_numpy())
    assert drawn["inclusion_prob"].nunique() > 5           # item-level, not uniform
    # the recorded probabilities are plan_active's (disagreement of the two judges, floor 0.3)
    from voirdire.estimation import judge_matrix

    t = s.to_table(scale="interval")
    X, _, _ = judge_matrix(t, ["j1", "j2"])
    want = plan_active(X, budget=60, floor=0.3, uncertainty="disagreement").inclusion_prob
    want = dict(zip([str(i) for i in t.items], want))
    assert np.allclose(drawn["inclusion_prob"], drawn["item"].map(want))
    # the humans score the drawn items; study estimate weights by the recorded probabilities
    s.add(_scores(tmp_path / "humans.csv", list(drawn["item"]), judges=(), humans=("h1", "h2"), seed=2),
          role="role")
    args = ["-j", "j1", "--scale", "interval", "-f", "json", "--seed", "0"]
    via = runner.invoke(app, ["study", "estimate", str(p), *args])
    assert via.exit_code == 0, via.output
    out = tmp_path / "ex.csv"
    assert runner.invoke(app, ["study", "export", str(p), "-o", str(out)]).exit_code == 0
    ex = pd.read_csv(out)
    ex["pi_recorded"] = ex["item"].astype(str).map(pi)
    ex.to_csv(out, index=False)
    direct = runner.invoke(app, ["estimate", str(out), "--role", "role", "--inclusion-prob", "pi_recorded", *args])
    uniform = runner.invoke(app, ["estimate", str(out), "--role", "role", "--inclusion-prob", "0.2", *args])
    assert direct.exit_code == 0 and uniform.exit_code == 0, direct.output + uniform.output
    dv, dd, du = (json.loads(x.stdout)["estimates"] for x in (via, direct, uniform))
    assert dv == dd                                         # the recorded probabilities, nothing else
    assert dv["doubly_robust"]["estimate"] != du["doubly_robust"]["estimate"]     # and they matter: n/N would give another estimate
    # neyman: strata = j1's score, one probability per stratum, recorded with the stratum
    drawn2, _ = s.draw(n=60, design="neyman", rng=2, judges=["j1"])
    assert "stratum" in drawn2.columns
    per = drawn2.groupby("stratum")["inclusion_prob"].nunique()
    assert (per == 1).all() and drawn2["inclusion_prob"].nunique() > 1
    assert drawn2["inclusion_prob"].min() >= 0.3 * 60 / 300 - 1e-12
    with sqlite3.connect(p) as con:
        rows = con.execute("SELECT COUNT(*) FROM assignments WHERE design = 'neyman' AND stratum IS NOT NULL"
                           ).fetchone()[0]
    assert rows == len(drawn2)
    with pytest.raises(InvalidParameterError, match="draw design"):
        s.draw(n=10, design="cluster")


def test_status_shows_the_running_sequential_decision(tmp_path) -> None:
    from voirdire.validation import validate_sequential

    p = tmp_path / "s.vdb"
    s = Study.init(p)
    for k in range(3):
        s.add(_labels(tmp_path / f"a{k}.csv", 60, seed=k, start=60 * k, judges=("j1", "j2")), role="role")
    r = runner.invoke(app, ["study", "status", str(p), "-f", "json", "--method", "loo"])
    assert r.exit_code == 0, r.output
    got = {d["judge"]: d for d in json.loads(r.stdout)["sequential"]}
    # the same rule as voirdire watch on the exported labels with their rounds (one look per round)
    df = s.labels()
    t = s.to_table()
    for j in ("j1", "j2"):
        lib = validate_sequential(t, j, rounds=df[["item", "rater", "round"]], method="loo")
        assert got[j]["decision"] == lib.decision and lib.looks == ("1", "2", "3")
        at = lib.looks.index(lib.decided_at) if lib.decided_at else -1
        assert got[j]["reason"] == lib.reasons[at]
    # beside it, the one verdict per judge: validate_judges on the study's labels at the same seed
    from voirdire.workflows import validate_judges

    val = validate_judges(t, ["j1", "j2"], seed=0)
    got_v = {d["judge"]: d for d in json.loads(r.stdout)["verdicts"]}
    for e in val.judges:
        assert got_v[e.judge]["verdict"] == json.loads(json.dumps(e.verdict.to_dict()))
    table = runner.invoke(app, ["study", "status", str(p)])
    assert table.exit_code == 0 and "Verdict per judge" in table.stdout and "running anytime-valid" in table.stdout
    flat = " ".join(table.stdout.split())
    for e in val.judges:
        assert f"{e.judge}: {e.verdict.decision.upper()} - " in flat
    # a study of one judge's scores has no humans: status says why there is no decision, and still runs
    q = tmp_path / "j.vdb"
    Study.init(q).add(_labels(tmp_path / "j.csv", 30, humans=(), judges=("j1", "j2"), seed=9), role="role")
    r = runner.invoke(app, ["study", "status", str(q), "-f", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["sequential"] == [] and "human" in d["sequential_note"]


def test_init_where_sqlite_cannot_create_the_file_is_one_line(tmp_path, monkeypatch):
    # a read-only folder (or a full disk): SQLite's OperationalError was an internal error
    import voirdire.study._study as mod

    def refuse(*a, **k):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(mod.sqlite3, "connect", refuse)
    with pytest.raises(StudyError, match="cannot be created: unable to open database file"):
        Study.init(tmp_path / "s.vdb")
    res = runner.invoke(app, ["study", "init", str(tmp_path / "t.vdb")])
    assert res.exit_code == 1 and "internal error" not in res.output, res.output
    assert "cannot be created" in res.stderr and list(tmp_path.iterdir()) == []


def test_add_after_assign_and_draw_under_copy_on_write(tmp_path) -> None:
    # issue 27: under pandas 3 `.to_numpy()` of a Series is a read-only view, and `hit |= ...` in the
    # flagging of unassigned labels failed with "output array is read-only" on every add after an
    # assign or a draw. Copy-on-write is always on in pandas 3; pandas 2 is asked for it here.
    import contextlib

    cow = (pd.option_context("mode.copy_on_write", True) if int(pd.__version__.split(".")[0]) < 3
           else contextlib.nullcontext())
    with cow:
        s = Study.init(tmp_path / "s.vdb")
        s.add(_labels(tmp_path / "a.csv", 30, humans=("h1", "h2"), cover=0.5, seed=11), role="role")
        res, _ = s.assign(design="random", n_per_rater=4, raters=["h2"], rng=0)
        drawn, _ = s.draw(n=5, rng=3)
        rows = [(str(i), "h2", "human", 1) for i in res.item] + [(i, "h3", "human", 0) for i in drawn["item"]]
        rows += [("it29", "h9", "human", 1)]                   # never assigned: flagged
        pd.DataFrame(rows, columns=["item", "rater", "role", "label"]).to_csv(tmp_path / "b.csv", index=False)
        r = s.add(tmp_path / "b.csv", role="role", duplicates="last")
    assert r.n_flagged == 1 and r.n_rows == len(rows)
    assert s.status().n_open_assignments == 0


def _state(path: Path) -> tuple:
    con = sqlite3.connect(path)
    try:
        return tuple(con.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
                     for t in ("rounds", "assignments", "labels", "meta"))
    finally:
        con.close()


@pytest.mark.parametrize("command", ["draw", "assign"])
def test_draw_and_assign_record_nothing_when_the_output_cannot_be_written(tmp_path, command) -> None:
    # issue 29 item 4: the round (open assignments, probabilities estimate would use) was recorded
    # before -o was written, and stayed when the write was refused
    p = tmp_path / "s.vdb"
    s = Study.init(p)
    s.add(_labels(tmp_path / "a.csv", 40, humans=("h1", "h2"), cover=0.5, seed=12), role="role")
    before = _state(p)
    args = ["-n", "5"] if command == "draw" else ["-n", "3", "-r", "h2", "--to", "csv"]
    for out, why in ((p, "also an input"), (tmp_path / "missing" / "x.csv", "does not exist")):
        r = runner.invoke(app, ["study", command, str(p), *args, "-o", str(out)])
        assert r.exit_code == 1 and why in r.stderr, r.output
        assert _state(p) == before                             # no round, no assignment, no probability
    # the library's hook: an exception before the commit rolls the round back
    def boom(*_):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        s.draw(n=5, before_commit=boom) if command == "draw" else s.assign(design="random", n_per_rater=3,
                                                                           raters=["h2"], before_commit=boom)
    assert _state(p) == before
    ok = runner.invoke(app, ["study", command, str(p), *args, "-o", str(tmp_path / "ok.csv")])
    assert ok.exit_code == 0, ok.output
    assert len(_state(p)[0]) == len(before[0]) + 1 and (tmp_path / "ok.csv").is_file()


# ------------------------------------------------------------------ estimate / report / validate on a study
_TEMP_NAME = re.compile(r"tmp[a-z0-9_]{8}")   # tempfile's names: no temporary export may reach the user


def _validation_then_draw(tmp_path: Path) -> tuple[Path, set[str], int]:
    """A study: judges on 120 items, a validation round of two humans on 30 of them, a uniform draw of ~30,
    the humans' scores on the drawn items. Returns the study, the drawn items and the human labels left out."""
    p = tmp_path / "s.vdb"
    s = Study.init(p)
    items = [f"it{i:03d}" for i in range(120)]
    s.add(_scores(tmp_path / "judges.csv", items), role="role")
    s.add(_scores(tmp_path / "val.csv", items[:30], judges=(), humans=("h1", "h2"), seed=3), role="role")
    r = runner.invoke(app, ["study", "draw", str(p), "-n", "30", "--seed", "1", "-o", str(tmp_path / "d.csv")])
    assert r.exit_code == 0, r.output
    drawn = set(pd.read_csv(tmp_path / "d.csv", dtype=str)["item"])
    s.add(_scores(tmp_path / "drawn.csv", sorted(drawn), judges=(), humans=("h1", "h2"), seed=4), role="role",
          duplicates="first")
    left_out = 2 * len(set(items[:30]) - drawn)
    return p, drawn, left_out


def test_study_estimate_uses_the_probability_sample_after_validation_rounds(tmp_path) -> None:
    # issue 29 item 5: a study with validation rounds and then a draw never gave an estimate ("item ... has no
    # inclusion probability ... Put the item's design probability on its rows", naming a temporary file)
    p, drawn, left_out = _validation_then_draw(tmp_path)
    assert 0 < left_out < 60
    args = ["-j", "j1", "-f", "json", "--seed", "0"]
    r = runner.invoke(app, ["study", "estimate", str(p), *args])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    assert r.stderr == ""                                      # machine-readable: the note is in the JSON
    note = got["study"]["note"]
    assert f"Left out: {left_out} other human label(s) on {left_out // 2} item(s)" in note
    assert f"{len(drawn)} item(s) drawn" in note and "round(s) 3" in note and "round(s) 2" in note
    assert got["study"]["n_human_labels_left_out"] == left_out and got["study"]["draw_rounds"] == [3]
    assert got["study"]["left_out_rounds"] == [2] and got["study"]["n_items_drawn"] == len(drawn)
    assert got["file"] == str(p) and not _TEMP_NAME.search(r.output)
    dr = got["estimates"]["doubly_robust"]
    assert dr["n_labeled"] == len(drawn) and dr["n_total"] == 120
    # = voirdire estimate on the probability sample written as a file, with the recorded probabilities
    ps = Study(p).probability_sample()
    assert ps.n_human_labels_left_out == left_out and ps.draw_rounds == (3,)
    ps.to_frame().to_csv(tmp_path / "sample.csv", index=False)
    direct = runner.invoke(app, ["estimate", str(tmp_path / "sample.csv"), "--role", "role", "--inclusion-prob",
                                 "inclusion_prob", *args])
    assert direct.exit_code == 0, direct.output
    assert got["estimates"] == json.loads(direct.stdout)["estimates"] and "study" not in json.loads(direct.stdout)
    # --rounds: the draw rounds to use; any other round is one line naming the draw rounds
    same = runner.invoke(app, ["study", "estimate", str(p), *args, "--rounds", "3"])
    assert same.exit_code == 0 and json.loads(same.stdout)["estimates"] == got["estimates"]
    for bad, why in (("2", "round 2 is a labels round; --rounds takes draw rounds"), ("9", "not a round"),
                     ("x", "round numbers")):
        r = runner.invoke(app, ["study", "estimate", str(p), *args, "--rounds", bad])
        assert r.exit_code == 1 and why in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output
    # the table view says the same to the reader, on stdout
    t = runner.invoke(app, ["study", "estimate", str(p), "-j", "j1"])
    assert t.exit_code == 0 and "Left out:" in t.stdout and "DR" in t.stdout and not _TEMP_NAME.search(t.output)
    # no draw round: the study says so
    q = tmp_path / "q.vdb"
    Study.init(q).add(tmp_path / "judges.csv", role="role")
    r = runner.invoke(app, ["study", "estimate", str(q), "-j", "j1"])
    assert r.exit_code == 1 and "has no draw round" in r.stderr


def test_study_estimate_help_lists_its_options_and_nothing_names_a_temporary_file(tmp_path) -> None:
    r = runner.invoke(app, ["study", "estimate", "--help"])
    assert r.exit_code == 0
    for opt in ("--judge", "--rounds", "--model", "--inclusion-prob", "--seed", "--format"):
        assert opt in r.stdout, opt
    assert "--role" not in r.stdout and "--item" not in r.stdout      # the study fixes its own columns
    for cmd in ("validate", "report"):
        h = runner.invoke(app, ["study", cmd, "--help"])
        assert h.exit_code == 0 and "--judge" in h.stdout and "--seed" in h.stdout
    p, _, _ = _validation_then_draw(tmp_path)
    v = runner.invoke(app, ["study", "validate", str(p), "-j", "j1", "--scale", "interval", "--n-resamples", "50"])
    assert v.exit_code == 0, v.output
    head = " ".join(v.stdout.split())          # a long temporary path may wrap the first line
    assert head.startswith(f"{p}: 120 items") and not _TEMP_NAME.search(v.output) and ".csv" not in v.output


@pytest.mark.slow
def test_study_report_title_and_estimation_from_the_recorded_draws(tmp_path) -> None:
    # issue 29 item 5: the report said "Estimation (not available)" and was titled after a temporary export
    p, drawn, left_out = _validation_then_draw(tmp_path)
    out = tmp_path / "rep"
    r = runner.invoke(app, ["study", "report", str(p), "-j", "j1", "--scale", "interval", "--n-resamples", "20",
                            "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert not _TEMP_NAME.search(r.output) and "Estimation" not in r.stderr
    rep = json.loads((out / "report.json").read_text())
    assert rep["title"] == "voirdire validation report: s.vdb" and rep["meta"]["input"]["name"] == "s.vdb"
    assert "<title>voirdire validation report: s.vdb</title>" in (out / "report.html").read_text()
    est = rep["sections"]["estimation"]
    assert est["status"] == "ok" and est["results"]["n_human_labels_left_out"] == left_out
    dr = est["results"]["judges"][0]["dr_calibrated"]
    assert dr["n_labeled"] == len(drawn)
    e = runner.invoke(app, ["study", "estimate", str(p), "-j", "j1", "--scale", "interval", "-f", "json",
                            "--drop-unscored"])
    assert e.exit_code == 0, e.output
    assert np.isclose(dr["estimate"], json.loads(e.stdout)["estimates"]["doubly_robust"]["estimate"])
    # the other sections use every human label (the validation round's too)
    assert rep["sections"]["validation"]["status"] == "ok"


def test_ids_that_look_like_formulas_survive_export_and_draw(tmp_path) -> None:
    # issue 29 item 5: '-404f...' came back from the CSV export as "'-404f..." and lost its probability
    from voirdire.data import read_annotations

    items = [f"{c}{i:02d}f" for i in range(24) for c in ("-", "=", "+", "@", "x")]
    p = tmp_path / "s.vdb"
    s = Study.init(p)
    rows = [(i, j, "judge", float(1 + (k + m) % 5)) for k, i in enumerate(items) for m, j in enumerate(("j1", "j2"))]
    pd.DataFrame(rows, columns=["item", "rater", "role", "label"]).to_csv(tmp_path / "j.csv", index=False)
    s.add(tmp_path / "j.csv", role="role")
    r = runner.invoke(app, ["study", "draw", str(p), "-n", "40", "--seed", "5", "-o", str(tmp_path / "d.csv")])
    assert r.exit_code == 0, r.output
    cells = pd.read_csv(tmp_path / "d.csv", dtype=str)["item"]
    assert cells.str.startswith("'").any()                   # the CSV is formula-safe ...
    drawn = set(s.inclusion_probabilities().index)
    # ... and the annotators' file, keyed by those cells, lands on the study's items
    hum = [(c, h, "human", 3) for c in cells for h in ("h1", "h2")]
    pd.DataFrame(hum, columns=["item", "rater", "role", "label"]).to_csv(tmp_path / "h.csv", index=False)
    added = s.add(tmp_path / "h.csv", role="role")
    assert added.n_imported == 2 * len(cells) and added.n_flagged == 0 and s.status().n_items == len(items)
    assert set(s.labels().query("role == 'human'")["item"]) == drawn
    e = runner.invoke(app, ["study", "estimate", str(p), "-j", "j1", "-f", "json"])
    assert e.exit_code == 0, e.output
    assert json.loads(e.stdout)["estimates"]["doubly_robust"]["n_labeled"] == len(drawn)
    out = tmp_path / "ex.csv"
    assert runner.invoke(app, ["study", "export", str(p), "-o", str(out)]).exit_code == 0
    assert set(map(str, read_annotations(out, role="role").items)) == set(items)
    direct = runner.invoke(app, ["estimate", str(out), "-j", "j1", "--role", "role", "--inclusion-prob",
                                 "inclusion_prob", "-f", "json"])
    assert direct.exit_code == 0, direct.output
    assert json.loads(direct.stdout)["estimates"] == json.loads(e.stdout)["estimates"]


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def _through_fifo(tmp_path: Path, name: str, data: bytes) -> tuple[Path, object]:
    """A FIFO ``name`` and a started thread writing ``data`` into it (join it after the read)."""
    import threading

    fifo = tmp_path / name
    os.mkfifo(fifo)
    w = threading.Thread(target=fifo.write_bytes, args=(data,), daemon=True)
    w.start()
    return fifo, w


@needs_fifo
def test_add_reads_a_fifo_once_as_every_reader_does(tmp_path) -> None:
    # issue 29: `study add <(...)` said "file not found"; now the pipe is copied once (within the pipe limits),
    # hashed and read, and the round is the same as the file's: 20 items x (3 humans + 1 judge) = 80 labels
    f = _labels(tmp_path / "a.csv", 20)
    fifo, w = _through_fifo(tmp_path, "round.csv", f.read_bytes())
    s = Study.init(tmp_path / "s.vdb")
    r = runner.invoke(app, ["study", "add", str(s.path), str(fifo), "--role", "role"])
    w.join(5)
    assert r.exit_code == 0, r.output
    st = s.status()
    assert st.n_labels == 80 and st.rounds.iloc[0].source == str(fifo)
    with pytest.raises(StudyError, match="imported before"):    # the FIFO's bytes were hashed: the file is the same
        s.add(f, role="role")
    one, w = _through_fifo(tmp_path, "h4.csv", b"item,rater,role,label\nit0,h4,human,1\nit1,h4,human,0\n")
    assert s.add(one, role="role").n_imported == 2               # one annotator's batch: the reader's second pass
    w.join(5)


def test_add_names_what_it_cannot_read(tmp_path) -> None:
    s = Study.init(tmp_path / "s.vdb")
    before = _snapshot(s.path)
    if Path("/dev/null").exists():
        r = runner.invoke(app, ["study", "add", str(s.path), "/dev/null"])
        assert r.exit_code == 1 and r.output.strip() == "error: /dev/null: the file is empty.", r.output
    r = runner.invoke(app, ["study", "add", str(s.path), str(tmp_path)])
    assert r.exit_code == 1 and r.output.strip().endswith("is a folder; a round is one file of labels."), r.output
    r = runner.invoke(app, ["study", "add", str(s.path), str(tmp_path / "nope.csv")])
    assert r.exit_code == 1 and "nope.csv': file not found." in r.output, r.output
    assert _snapshot(s.path) == before


def test_status_names_a_draw_round_by_its_design_and_seed(tmp_path, monkeypatch) -> None:
    # a draw round has no source file; under pandas 3 the missing name was NaN and printed as 'nan'
    p, _, _ = _validation_then_draw(tmp_path)
    from voirdire.report.console.terminal import console

    monkeypatch.setattr(console, "width", 300)    # the 'from' column folds at 80 columns
    r = runner.invoke(app, ["study", "status", str(p)])
    assert r.exit_code == 0, r.output
    rounds = r.output.split("Coverage")[0]
    assert "seed 1" in rounds and " nan" not in rounds, rounds
