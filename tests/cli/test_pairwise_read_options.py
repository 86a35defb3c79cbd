"""The pairwise reader options, declared once (``cli._app.PairwiseReaderOptions``): ``pairwise``,
``bias`` and ``report --pairwise`` accept the same options, read a file the same way and give the
same errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import typer.main
from typer.testing import CliRunner

from voirdire.cli import app
from voirdire.cli._app import PairwiseReaderOptions
from voirdire.data import read_pairwise
from voirdire.pairwise import bias_report, simulate_pairwise

runner = CliRunner()
COMMANDS = ("pairwise", "bias", "report")
#: every option of the group, spelled as on the command line
FLAGS = {"--pair", "--rater", "--verdict", "--order", "--role", "--presented", "--verdict-map", "--missing"}
#: reading options in a file's own spelling: a two-column pair key, renamed columns, verdicts in the
#: presented order with other spellings, and one empty verdict dropped
OPTIONS = ["--pair", "q", "--pair", "sys", "--rater", "who", "--verdict", "winner", "--order", "shown", "--role",
           "kind", "--presented", "--verdict-map", "model_1=A", "--verdict-map", "model_2=B", "--missing", "drop"]


def _invoke(cmd: str, file, tmp_path, *extra: str):
    if cmd == "report":
        args = ["report", "--pairwise", str(file), "-o", str(tmp_path / "rep"), "-q", *extra]
    elif cmd == "pairwise":
        args = ["pairwise", str(file), "--particles", "10", "-f", "json", *extra]
    else:
        args = ["bias", str(file), "-f", "json", *extra]
    return runner.invoke(app, args)


@pytest.fixture(scope="module")
def votes(tmp_path_factory):
    t, _ = simulate_pairwise(40, biases=[0.8], rng=3)
    df = t.to_frame()
    # presented order: A is the response shown first (swapped back on BA rows)
    swap = df["order"] == "BA"
    df.loc[swap, "verdict"] = df.loc[swap, "verdict"].map({"A": "B", "B": "A", "T": "T"})
    df["verdict"] = df["verdict"].map({"A": "model_1", "B": "model_2", "T": "tie"})
    df.loc[0, "verdict"] = ""                                        # dropped with --missing drop
    k = df["pair"].str.split("_").str[1].astype(int)
    df["q"] = "q" + (k % 7).astype(str)
    df["sys"] = "s" + k.astype(str)
    df = df.drop(columns=["pair"]).rename(columns={"rater": "who", "verdict": "winner", "order": "shown",
                                                   "role": "kind"})
    d = tmp_path_factory.mktemp("pwopts")
    df.to_csv(d / "votes.csv", index=False)
    bad = df.copy()
    bad.loc[4, "winner"] = "maybe"
    bad.to_csv(d / "bad.csv", index=False)
    return d / "votes.csv", d / "bad.csv"


def test_the_three_commands_declare_the_same_group():
    cli = typer.main.get_command(app)
    fields = {f.replace("_", "-") for f in PairwiseReaderOptions.__dataclass_fields__}
    assert {f"--{f}" for f in fields} == FLAGS
    for cmd in COMMANDS:
        opts = {o for p in cli.commands[cmd].params for o in p.opts}
        assert FLAGS <= opts, (cmd, FLAGS - opts)
        # declared once: no option name twice (report shares --rater/--role/--missing with the graded reader)
        names = [o for p in cli.commands[cmd].params for o in p.opts]
        assert len(names) == len(set(names)), cmd


def test_the_three_commands_read_the_file_the_same_way(votes, tmp_path):
    good, _ = votes
    want = read_pairwise(good, pair=["q", "sys"], rater="who", verdict="winner", order="shown", role="kind",
                         presented=True, verdict_map={"model_1": "A", "model_2": "B"}, missing="drop")
    assert want.n_pairs == 40 and want.summary().dropped == {"empty verdict": 1}
    swap = bias_report(want).effects.set_index("effect").loc["position (swap)", "estimate"]
    r = _invoke("pairwise", good, tmp_path, *OPTIONS)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["table"]["n_pairs"] == 40 and doc["table"]["verdict_counts"] == want.summary().verdict_counts
    assert sorted(p["pair"] for p in doc["pairs"]) == sorted(want.pairs.tolist())
    r = _invoke("bias", good, tmp_path, *OPTIONS)
    assert r.exit_code == 0, r.output
    eff = {e["effect"]: e for e in json.loads(r.stdout)["effects"]}
    assert eff["position (swap)"]["estimate"] == pytest.approx(swap)
    r = _invoke("report", good, tmp_path, *OPTIONS)
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert doc["summary"]["n_pairs"] == 40
    got = {e["effect"]: e for e in doc["sections"]["biases"]["results"]["bias"]["effects"]}
    assert got["position (swap)"]["estimate"] == pytest.approx(swap)
    assert np.isfinite(swap) and swap > 0.1            # the planted first-position bias is there


@pytest.mark.parametrize(("extra", "code", "message"), [
    (("--verdict-map", "nonsense"), 1, "--verdict-map expects RAW=A|T|B"),
    (("--pair", "q", "--pair", "nope"), 1, "missing column 'nope'"),
    (("--missing", "ignore"), 2, "--missing"),
    (("--verdict", "nope"), 1, "missing column 'nope'"),
])
def test_the_three_commands_give_the_same_errors(votes, tmp_path, extra, code, message):
    good, _ = votes
    for cmd in COMMANDS:
        r = _invoke(cmd, good, tmp_path, *OPTIONS, *extra)
        out = " ".join(r.output.split())
        assert r.exit_code == code and message in out and "Traceback" not in out, (cmd, r.output)


def test_a_bad_verdict_names_file_row_and_column_in_each_command(votes, tmp_path):
    _, bad = votes
    lines = set()
    for cmd in COMMANDS:
        r = _invoke(cmd, bad, tmp_path, *OPTIONS)
        assert r.exit_code == 1, (cmd, r.output)
        out = " ".join(r.output.split())
        assert "bad.csv, row 6, column 'winner': unknown verdict 'maybe'" in out, (cmd, out)
        lines.add(out[out.index("bad.csv"):])
    assert len(lines) == 1          # word for word the same error
