"""`voirdire watch`: the sequential rule on a file with a round column."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.data import read_annotations, read_rounds
from voirdire.datasets import load_hanna
from voirdire.validation import validate_sequential

runner = CliRunner()


@pytest.fixture(scope="module")
def rounds_file(tmp_path_factory):
    t = load_hanna(criterion="Coherence")
    f = t.to_frame()
    f["round"] = f["item"].astype("category").cat.codes // 150
    p = tmp_path_factory.mktemp("watch") / "labels.csv"
    f[["item", "rater", "role", "label", "round"]].to_csv(p, index=False)
    return p


def test_watch_json_equals_library(rounds_file) -> None:
    r = runner.invoke(app, ["watch", str(rounds_file), "--role", "role", "--judge", "Beluga-13B", "--round-column",
                            "round", "--method", "loo", "-f", "json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["judges"][0]
    t = read_annotations(rounds_file, role="role")
    lib = validate_sequential(t, "Beluga-13B", rounds=read_rounds(rounds_file, column="round"), method="loo")
    assert got["decision"] == lib.decision and got["looks"] == list(lib.looks)
    np.testing.assert_allclose(np.array(got["e_loss"], dtype=float), lib.e_loss)


def test_watch_table_and_follow_gives_up(rounds_file) -> None:
    r = runner.invoke(app, ["watch", str(rounds_file), "--role", "role", "--judge", "ChatGPT", "--round-column",
                            "round", "--follow", "0.05", "--max-wait", "0.2"])
    assert r.exit_code == 0, r.output
    assert "sequential alt-test" in r.stdout and "Anytime-valid" in r.stdout
    decided = any(w in r.stdout for w in ("ACCEPT", "REJECT"))
    assert decided or "no decision after 0.2 s" in r.output


def test_watch_bad_input(rounds_file, tmp_path) -> None:
    r = runner.invoke(app, ["watch", str(rounds_file), "--role", "role", "--round-column", "batch"])
    assert r.exit_code == 1 and "missing column(s) ['batch']" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["watch", str(rounds_file), "--role", "role", "--round-column", "round", "--q", "2"])
    assert r.exit_code == 1 and "--q must be in (0, 1)" in r.output
    r = runner.invoke(app, ["watch", str(rounds_file), "--role", "role", "--round-column", "round", "-j", "nobody"])
    assert r.exit_code == 1 and "nobody" in r.output
    bad = tmp_path / "bad.csv"
    bad.write_text("item,rater,role,label,round\n1,a,human,1,0\n1,b,human,1,\n1,j,judge,1,0\n")
    r = runner.invoke(app, ["watch", str(bad), "--role", "role", "--round-column", "round"])
    assert r.exit_code == 1 and "empty round" in r.output and "row 3" in r.output


def test_validate_sequential_equals_watch_and_gates(rounds_file) -> None:
    base = [str(rounds_file), "--role", "role", "--judge", "Beluga-13B", "--round-column", "round", "--method", "loo"]
    v = runner.invoke(app, ["validate", *base, "--sequential", "-f", "json"])
    w = runner.invoke(app, ["watch", *base, "-f", "json"])
    assert v.exit_code == 0 and w.exit_code == 0, v.output
    assert json.loads(v.stdout) == json.loads(w.stdout)
    decision = json.loads(v.stdout)["judges"][0]["decision"]
    gated = runner.invoke(app, ["validate", *base, "--sequential", "--fail-on", "reject"])
    assert gated.exit_code == (3 if decision == "reject" else 0), gated.output
    r = runner.invoke(app, ["validate", str(rounds_file), "--role", "role", "--sequential", "--method", "loo"])
    assert r.exit_code == 1 and "--round-column" in r.output
    r = runner.invoke(app, ["validate", str(rounds_file), "--role", "role", "--sequential", "--round-column", "round"])
    assert r.exit_code == 1 and "one method" in r.output


def test_watch_and_study_add_take_the_shared_reader_options() -> None:
    # declared once in cli._app (reader_options): watch and study add offer every one of them
    import typer.main

    from voirdire.cli._app import _reader_parameters

    shared = {p.default.param_decls[0] for p in _reader_parameters()}
    root = typer.main.get_command(app)
    watch = root.commands["watch"]  # type: ignore[attr-defined]
    add = root.commands["study"].commands["add"]  # type: ignore[attr-defined]
    for cmd in (watch, add):
        opts = {o for p in cmd.params for o in p.opts}
        assert shared <= opts, sorted(shared - opts)


def test_watch_reads_cluster_sep(rounds_file) -> None:
    # --cluster-sep: an option watch lacked before it moved onto ReaderOptions; read as the library reads it
    r = runner.invoke(app, ["watch", str(rounds_file), "--role", "role", "--judge", "Beluga-13B", "--round-column",
                            "round", "--method", "loo", "--cluster-sep", "1", "-f", "json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["judges"][0]
    t = read_annotations(rounds_file, role="role", cluster_sep="1")
    assert t.clusters is not None
    lib = validate_sequential(t, "Beluga-13B", rounds=read_rounds(rounds_file, column="round"), method="loo")
    np.testing.assert_allclose(np.array(got["e_loss"], dtype=float), lib.e_loss)


def test_a_row_repeated_whole_is_one_label_and_two_rounds_name_the_file(tmp_path):
    # every reader keeps an identical duplicate row once; watch refused it ("the rounds give two
    # rounds" without file, for one round); two different rounds are refused naming the file
    rows = ["item,rater,label,round"]
    for i in range(12):
        rows += [f"i{i},h1,{i % 2},1", f"i{i},h2,{i % 2},1", f"i{i},j,{(i // 3) % 2},{1 + i // 6}"]
    p = tmp_path / "w.csv"
    p.write_text("\n".join(rows + ["i0,j,0,1"]) + "\n")
    base = runner.invoke(app, ["watch", str(p), "-j", "j", "--round-column", "round", "-f", "json"])
    assert base.exit_code == 0, base.output
    p.write_text("\n".join(rows + ["i0,j,0,2"]) + "\n")
    res = runner.invoke(app, ["watch", str(p), "-j", "j", "--round-column", "round"])
    assert res.exit_code == 1
    assert f"{p}: item 'i0', rater 'j' has two rounds ('1' and '2')" in res.stderr, res.output
    ok = runner.invoke(app, ["watch", str(p), "-j", "j", "--round-column", "round", "--duplicates", "first", "-f", "json"])
    assert ok.exit_code == 0, ok.output


# --------------------------------------------------------------------- --follow on a file being written
def _rows(n_items: int, *, start: int = 0, rnd: int = 0, seed: int = 0) -> str:
    """CSV rows (no header): 3 humans and a judge on ``n_items`` items, all in round ``rnd``."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(start, start + n_items):
        truth = int(rng.integers(1, 6))
        for h in ("h1", "h2", "h3"):
            out.append(f"it{i},{h},human,{truth if rng.random() < 0.7 else int(rng.integers(1, 6))},{rnd}\n")
        out.append(f"it{i},j1,judge,{truth if rng.random() < 0.6 else int(rng.integers(1, 6))},{rnd}\n")
    return "".join(out)


_HEADER = "item,rater,role,label,round\n"


def _follow(path, *extra: str, max_wait: str = "3"):
    return runner.invoke(app, ["watch", str(path), "--role", "role", "--round-column", "round", "--follow", "0.05",
                               "--max-wait", max_wait, "-f", "json", *extra])


def _once(path) -> dict:
    r = runner.invoke(app, ["watch", str(path), "--role", "role", "--round-column", "round", "-f", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _later(delay: float, action) -> "threading.Thread":
    import threading
    import time

    t = threading.Thread(target=lambda: (time.sleep(delay), action()), daemon=True)
    t.start()
    return t


def test_follow_waits_for_a_half_written_row(tmp_path) -> None:
    # issue 29 item 7: a read while the writer had appended half a row exited 1 ("the row has 3 fields")
    p = tmp_path / "labels.csv"
    full = _HEADER + _rows(6, rnd=0) + _rows(6, start=6, rnd=1, seed=1)
    cut = full.rindex("\n", 0, len(full) - 1) + 12            # the last row half written
    p.write_text(full[:cut])

    def finish() -> None:
        with open(p, "a") as fh:
            fh.write(full[cut:])

    t = _later(0.4, finish)
    r = _follow(p, max_wait="1.5")
    t.join()
    assert r.exit_code == 0, r.output
    assert "last row is not complete" in r.stderr and "fields" not in r.output
    assert json.loads(r.stdout) == _once(p)                  # every row, the completed one too; the verdicts


def test_follow_waits_for_labels_after_the_header_and_for_a_rotated_file(tmp_path, monkeypatch) -> None:
    # issue 29 item 7: a header-only file exited ("the table has no rows"); a rotated file (renamed away,
    # a new one created) was "file not found". The writer acts once the watch has seen each state (not after
    # fixed delays, which a loaded machine outlasts before the watch's first look)
    import threading

    from voirdire.workflows import _sequential

    p = tmp_path / "labels.csv"
    p.write_text(_HEADER)
    saw_header, saw_missing = threading.Event(), threading.Event()
    real_not_ready, real_signature = _sequential.not_ready, _sequential._signature

    def not_ready(file):
        why = real_not_ready(file)
        if why is not None and "only its header" in why:
            saw_header.set()
        return why

    def signature(file):
        sig = real_signature(file)
        if sig is None:
            saw_missing.set()
        return sig

    monkeypatch.setattr(_sequential, "not_ready", not_ready)
    monkeypatch.setattr(_sequential, "_signature", signature)

    def writer() -> None:
        if not saw_header.wait(10):
            return
        with open(p, "a") as fh:
            fh.write(_rows(5, rnd=0))
        import time

        time.sleep(0.3)
        p.rename(tmp_path / "labels.csv.1")                   # logrotate: the old file moves away ...
        if saw_missing.wait(10):                             # ... and a new one comes once the watch missed it
            p.write_text(_HEADER + _rows(8, rnd=0) + _rows(8, start=8, rnd=1, seed=2))

    t = _later(0.0, writer)
    r = _follow(p, max_wait="2.5")
    t.join(10)
    assert r.exit_code == 0, r.output
    assert "only its header" in r.stderr and "not there" in r.stderr and "not found" not in r.output
    assert json.loads(r.stdout) == _once(p)                  # the new file's labels
    assert len(p.read_text().splitlines()) == 1 + 16 * 4


def test_follow_gives_up_on_a_file_that_never_gets_labels(tmp_path) -> None:
    p = tmp_path / "labels.csv"
    p.write_text(_HEADER)
    r = _follow(p, max_wait="0.2")
    assert r.exit_code == 1 and "no labels to read after 0.2 s" in r.stderr and "Traceback" not in r.output
    # a file that did not change while read keeps its own error
    p.write_text(_HEADER + "it0,h1,human,1\n")
    r = _follow(p, max_wait="0.5")
    assert r.exit_code == 1 and "row 2" in r.stderr


def test_max_wait_negative_is_a_usage_error(rounds_file) -> None:
    r = runner.invoke(app, ["watch", str(rounds_file), "--role", "role", "--round-column", "round", "--follow", "1",
                            "--max-wait", "-1"])
    assert r.exit_code == 2 and "--max-wait" in r.output, r.output
