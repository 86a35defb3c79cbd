"""The hostile corpus of issue 29 (items 10, 11, 13) through the command line: every case is one
``error:`` line or a well-formed output, never an internal error.

* judge names with control characters, non-characters, bidi overrides, markup and XML syntax:
  ``validate -f junit`` is well-formed XML 1.0 and ``-f markdown`` one table row per judge;
* a file where no item has two raters: "no item has two raters" (was NotImplementedError);
* ``plan`` moments that overflow (``--sigma0 1e308``): Infeasible (was OverflowError);
* ``watch --max-wait -1``: refused (was accepted);
* ``--scheduler`` at a server that is not Dask: one line (was "ran out of memory").
"""

from __future__ import annotations

import random
import socket
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from voirdire.cli import app

runner = CliRunner()

#: names a CI reporter must survive: C0/C1 controls, DEL, non-characters, bidi, XML and Markdown syntax
NAMES = ["j\x1b]0;title\x07", "a\x01b\x0bc\x0cd", "x\x7f\x85y", "n\ufffe\uffffm", "r\u202el", "<&>\"'", "]]>",
         "| pipe | *b* _i_ `c`", "[link](http://x)", "a\tb\rc\nd"]


def _labels(tmp_path: Path, judges: list[str], *, n_items: int = 30, seed: int = 0) -> Path:
    import json

    rng = random.Random(seed)
    lines = []
    for i in range(n_items):
        truth = rng.randrange(2)
        for r in ("h1", "h2", "h3", *judges):
            lines.append(json.dumps({"item": f"i{i}", "rater": r, "label": truth if rng.random() < 0.85 else 1 - truth}))
    p = tmp_path / "names.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def _no_internal_error(res: object) -> None:
    exc = getattr(res, "exception", None)
    assert exc is None or isinstance(exc, SystemExit), repr(exc)
    out = res.output  # type: ignore[attr-defined]
    assert "Traceback" not in out and "internal error" not in out, out


def test_junit_and_markdown_are_well_formed_for_any_judge_name(tmp_path: Path) -> None:
    f = _labels(tmp_path, NAMES)
    args = ["validate", str(f), "--n-resamples", "0", "--no-check-raters", "--fail-on", "reject"]
    for name in NAMES:
        args += ["--judge", name]
    junit = tmp_path / "out.xml"
    res = runner.invoke(app, [*args, "-f", "markdown", "--junit", str(junit)])  # one run writes both
    _no_internal_error(res)
    assert res.exit_code in (0, 3), res.output
    suite = ET.fromstring(junit.read_bytes()).find("testsuite")  # XML 1.0: the parser refuses \x01, \ufffe...
    assert suite is not None and suite.get("tests") == str(len(NAMES))
    shown = [c.get("name") for c in suite.iter("testcase")]
    assert shown[0] == "j\\x1b]0;title\\x07" and shown[3] == "n\\ufffe\\uffffm" and shown[5] == "<&>\"'"
    assert all("\x1b" not in s and "\ufffe" not in s for s in shown)  # type: ignore[operator]
    rows = [ln for ln in res.stdout.splitlines() if ln.startswith("| ") and "verdict" not in ln]
    assert len(rows) == len(NAMES), res.stdout  # one row per judge: no name broke a line or the table
    assert all(ln.count(" | ") == 4 for ln in rows)  # the judge's '|' is escaped, never a column
    assert "\x1b" not in res.stdout and "\x01" not in res.stdout
    res = runner.invoke(app, [*args, "-f", "junit"])
    _no_internal_error(res)
    assert ET.fromstring(res.stdout.encode()).find("testsuite") is not None


def test_validate_junit_refuses_to_overwrite_its_input(tmp_path: Path) -> None:
    f = _labels(tmp_path, ["j"])
    res = runner.invoke(app, ["validate", str(f), "-j", "j", "--junit", str(f)])
    assert res.exit_code == 1 and "Refusing to write" in res.output
    assert f.read_text().startswith('{"item"')
    res = runner.invoke(app, ["validate", str(f), "-j", "j", "--junit", str(tmp_path / "no" / "j.xml")])
    assert res.exit_code == 1 and "the folder" in res.output and "does not exist" in res.output


@pytest.mark.parametrize("command", [["validate", "--judge", "j"], ["raters"]])
def test_no_item_with_two_raters_is_one_line(tmp_path: Path, command: list[str]) -> None:
    # each item labelled once: a NotImplementedError in a sparse step of the rater diagnostics
    f = tmp_path / "single.csv"
    f.write_text("item,rater,label\ni1,h1,1\ni2,h2,0\ni3,h3,1\ni4,j,0\ni5,h1,0\ni6,h2,1\n")
    res = runner.invoke(app, [command[0], str(f), *command[1:]])
    _no_internal_error(res)
    assert res.exit_code == 1
    err = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and "single.csv: no item has two raters (each of its 6 items has one label)" in err[0]


def test_rater_diagnostics_on_a_table_without_overlap_reports_nothing_comparable() -> None:
    from voirdire.data import AnnotationTable
    from voirdire.diagnostics import rater_diagnostics

    t = AnnotationTable.from_arrays(["i1", "i2", "i3", "i4"], ["a", "b", "c", "d"], [1, 0, 1, 0])
    d = rater_diagnostics(t, n_resamples=0)
    assert not any(d.flagged)


@pytest.mark.parametrize("args", [["--mu-d", "0.1", "--sigma0", "1e308"], ["--mu-d", "1e-320", "--sigma0", "1", "--epsilon", "0"],
                                  ["--sigma0", "1", "--delta-min", "1e-300", "--n-judges", "3"]])
def test_plans_beyond_any_budget_are_infeasible_not_an_overflow(args: list[str]) -> None:
    res = runner.invoke(app, ["plan", *args])
    _no_internal_error(res)
    assert res.exit_code == 1 and "error: Infeasible: the plan needs inf items" in res.output, res.output


def test_watch_refuses_a_negative_max_wait(tmp_path: Path) -> None:
    f = tmp_path / "w.csv"
    f.write_text("item,rater,label,round\ni1,h1,1,1\ni1,h2,1,1\ni1,j,1,1\n")
    res = runner.invoke(app, ["watch", str(f), "--round-column", "round", "--follow", "1", "--max-wait", "-1"])
    assert res.exit_code in (1, 2) and "max-wait" in res.output, res.output  # a range error or a usage error
    res = runner.invoke(app, ["watch", str(f), "--round-column", "round", "--follow", "1", "--max-wait", "1e12"])
    assert res.exit_code == 1 and "--max-wait must be at most 31,536,000" in res.output, res.output


class _Greeter:
    """A local server that greets every connection with ``payload`` (``None``: says nothing)."""

    def __init__(self, payload: bytes | None) -> None:
        self.payload, self.stop = payload, threading.Event()
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(4)
        self.srv.settimeout(0.05)
        self.port = self.srv.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        conns = []
        while not self.stop.is_set():
            try:
                c, _ = self.srv.accept()
            except OSError:
                continue
            conns.append(c)
            if self.payload is not None:
                c.sendall(self.payload)
        for c in conns:
            c.close()

    def __enter__(self) -> _Greeter:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(5)
        self.srv.close()


def test_a_scheduler_address_that_is_not_dask_is_one_line() -> None:
    pytest.importorskip("distributed")
    with _Greeter(b"SSH-2.0-OpenSSH_9.6\r\n") as g:  # Dask read 'SSH-2.0-' as a 3-EiB frame: "ran out of memory"
        res = runner.invoke(app, ["simulate", "--scheduler", f"tcp://127.0.0.1:{g.port}", "--repetitions", "2"])
    _no_internal_error(res)
    assert res.exit_code == 1
    assert (f"error: The server at 'tcp://127.0.0.1:{g.port}' is not a Dask scheduler: its first bytes b'SSH-2.0-' "
            "announce a 3,256,153,323,631,825,747-byte message") in res.output
    assert "schedulers you trust" in res.output


def test_the_scheduler_probe_names_silence_and_leaves_other_transports_to_dask() -> None:
    from voirdire._optional import _not_dask

    with _Greeter(None) as g:
        assert "sent nothing within 0.3 s" in str(_not_dask(f"tcp://127.0.0.1:{g.port}", timeout=0.3))
        assert "sent nothing" in str(_not_dask(f"127.0.0.1:{g.port}", timeout=0.3))  # no scheme means tcp
    with _Greeter(b"\x20\x00\x00\x00\x00\x00\x00\x00") as g:  # a plausible frame length: Dask may go on
        assert _not_dask(f"tcp://127.0.0.1:{g.port}", timeout=2) is None
    assert _not_dask("tls://127.0.0.1:1") is None and _not_dask("inproc://x/1/2") is None
