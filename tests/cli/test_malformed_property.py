"""Property test (issue 17): every command, given a randomly malformed file, exits 1 with one line, no traceback.

Each example takes a valid annotation file, breaks it in one of several ways (NUL bytes, bytes
that are not UTF-8, a column named twice, a short row, random bytes, a truncated archive, JSON
nested too deeply or holding non-objects) and runs one command on it through typer's runner. The
command must exit with code 1, print one ``error:`` line and never let an exception (a traceback)
or an "internal error" through. Hostile but well-formed names (markup, escape sequences, formula
prefixes) must never crash a command either.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from voirdire.cli import app

runner = CliRunner()

HOSTILE = ["[/j]", "[bold red]X", "\x1b]0;T\x07", "=1+2", "+ judge", "@x", "a\u202eb", ":smile:", "[link=x]y"]


def _rows(rng: random.Random, judge: str = "j") -> list[list[str]]:
    rows = []
    for i in range(12):
        truth = rng.randrange(2)
        for r in ("h1", "h2", judge):
            rows.append([f"i{i}", r, str(truth if rng.random() < 0.8 else 1 - truth)])
    return rows


def _csv(header: list[str], rows: list[list[str]]) -> bytes:
    def cell(c: str) -> str:
        return '"' + c.replace('"', '""') + '"' if any(x in c for x in ',"\n\r') else c
    return ("\n".join(",".join(cell(c) for c in r) for r in [header, *rows]) + "\n").encode("utf-8")


def malformed(kind: str, rng: random.Random, junk: bytes) -> tuple[str, bytes]:
    rows = _rows(rng)
    header = ["item", "rater", "label"]
    k = rng.randrange(len(rows))
    if kind == "nul":
        rows[k][1] = rows[k][1] + "\x00x"
        return "f.csv", _csv(header, rows)
    if kind == "latin1":
        data = _csv(header, rows)
        pos = rng.randrange(len(b"item,rater,label\n"), len(data))
        return "f.csv", data[:pos] + b"\xe9" + data[pos:]
    if kind == "dup-header":
        return "f.csv", _csv([*header, "label"], [[*r, "0"] for r in rows])
    if kind == "short-row":
        rows[k] = rows[k][:2]
        return "f.csv", _csv(header, rows)
    if kind == "random-bytes":
        return rng.choice(["f.csv", "f.jsonl", "f.json", "f.tsv"]), b"\x00" + junk
    if kind == "truncated-gz":
        data = gzip.compress(_csv(header, rows))
        return "f.csv.gz", data[: rng.randrange(10, len(data) - 8)]
    if kind == "not-gzip":
        return "f.csv.gz", _csv(header, rows)
    if kind == "deep-json":
        return "f.json", b"[" * 50_000 + b"]" * 50_000
    if kind == "non-objects":
        recs: list[object] = [dict(zip(header, r)) for r in rows]
        recs.insert(k, rng.choice([5, "x", None, [1, 2]]))
        return "f.json", json.dumps(recs).encode()
    if kind == "huge-int":
        lines = [json.dumps(dict(zip(header, r))) for r in rows]
        lines[k] = '{"item": "i0", "rater": "h1", "label": ' + "9" * 5000 + "}"
        return "f.jsonl", ("\n".join(lines) + "\n").encode()
    raise AssertionError(kind)


KINDS = ["nul", "latin1", "dup-header", "short-row", "random-bytes", "truncated-gz", "not-gzip", "deep-json",
         "non-objects", "huge-int"]


def commands(f: str, out: Path) -> dict[str, list[str]]:
    return {
        "agree": ["agree", f, "--resamples", "0"],
        "validate": ["validate", f, "--judge", "j", "--resamples", "0"],
        "overlap": ["overlap", f],
        "plan": ["plan", f, "--judge", "j"],
        "assign": ["assign", f, "-n", "1", "-r", "new", "-o", str(out / "a.csv")],
        "estimate": ["estimate", f, "--judge", "j", "--inclusion-prob", "0.5"],
        "plan-estimate": ["plan-estimate", "--pilot", f, "--judge", "j", "--target-halfwidth", "0.2", "--N", "100"],
        "pairwise": ["pairwise", f, "--particles", "10"],
        "raters": ["raters", f],
        "report": ["report", f, "--judge", "j", "--out", str(out / "rep"), "--n-resamples", "0", "-q"],
    }


def _no_escape(res: object, what: str) -> None:
    exc = getattr(res, "exception", None)
    assert exc is None or isinstance(exc, SystemExit), f"{what}: {exc!r} escaped"
    assert "Traceback" not in res.output and "internal error" not in res.output, f"{what}: {res.output}"  # type: ignore[attr-defined]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), command=st.sampled_from(list(commands("f", Path("."))) ), seed=st.integers(0, 10**6),
       junk=st.binary(min_size=0, max_size=200))
def test_every_command_refuses_malformed_files_in_one_line(tmp_path: Path, kind: str, command: str, seed: int,
                                                          junk: bytes) -> None:
    rng = random.Random(seed)
    name, data = malformed(kind, rng, junk)
    d = tmp_path / f"ex{seed}"
    d.mkdir(exist_ok=True)
    f = d / name
    f.write_bytes(data)
    res = runner.invoke(app, commands(str(f), d)[command])
    _no_escape(res, f"{command} on {kind}")
    assert res.exit_code == 1, f"{command} on {kind}: exit {res.exit_code}: {res.output[-500:]}"
    err = [ln for ln in res.output.strip().splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and str(f) in err[0] or "f." in err[0], res.output


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(HOSTILE), command=st.sampled_from(["agree", "validate", "overlap", "plan", "raters",
                                                               "estimate"]))
def test_hostile_names_never_crash_a_command(tmp_path: Path, name: str, command: str) -> None:
    rng = random.Random(0)
    f = tmp_path / "h.csv"
    f.write_bytes(_csv(["item", "rater", "label"], _rows(rng, judge=name)))
    args = commands(str(f), tmp_path)[command]
    args = [name if a == "j" else a for a in args]
    res = runner.invoke(app, args)
    _no_escape(res, f"{command} with judge {name!r}")
    assert res.exit_code in (0, 1), res.output
    assert "\x1b" not in res.output
