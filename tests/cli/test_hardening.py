"""Hardening (issue 17): hostile names, internal errors, output paths equal to inputs.

Each test is the regression test of one cause found by the adversarial pass; the hostile inputs
are written by the tests themselves.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from voirdire.cli import app

runner = CliRunner()


def _binary(path: Path, judge: str, n: int = 12) -> Path:
    rows = ["item,rater,label"]
    for i in range(n):
        for k, r in enumerate(("h1", "h2", judge)):
            rows.append(f"{i},{_csv(r)},{(i + (k == 2 and i % 4 == 0)) % 2}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _csv(s: str) -> str:
    return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n') else s


@pytest.mark.parametrize("judge", ["[/j]", "[bold red]X", "[link=http://evil.example]j[/link]"])
@pytest.mark.parametrize("command", ["agree", "validate"])
def test_markup_in_a_judge_name_is_printed_literally(tmp_path: Path, judge: str, command: str) -> None:
    f = _binary(tmp_path / "m.csv", judge)
    res = runner.invoke(app, [command, str(f), "--judge", judge, "--resamples", "50"])
    assert res.exit_code == 0, res.output
    assert judge in res.output


def test_escape_sequences_in_rater_names_never_reach_the_terminal(tmp_path: Path) -> None:
    judge = "j\x1b]0;PWNED\x07\x1b[2J"
    f = _binary(tmp_path / "e.csv", judge)
    res = runner.invoke(app, ["agree", str(f), "--judge", judge, "--resamples", "50"])
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "\x07" not in res.output
    assert "\\x1b]0;PWNED" in res.output


def test_an_internal_error_is_one_line_with_a_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import voirdire.workflows as workflows

    def boom(*a: object, **k: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(workflows, "compare_raters", boom)  # `voirdire agree` calls the workflow
    f = _binary(tmp_path / "ok.csv", "llm")
    res = runner.invoke(app, ["agree", str(f), "--judge", "llm"])
    assert res.exit_code == 1
    assert "internal error (RuntimeError: simulated bug)" in res.output and "--debug" in res.output
    assert "Traceback" not in res.output
    res = runner.invoke(app, ["--debug", "agree", str(f), "--judge", "llm"])
    assert isinstance(res.exception, RuntimeError)  # with --debug the exception (and its traceback) comes through
    from voirdire.cli._errors import set_debug

    set_debug(False)


def test_console_script_handles_debug_anywhere_and_never_prints_a_traceback(tmp_path: Path) -> None:
    f = tmp_path / "deep.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    r = subprocess.run([sys.executable, "-m", "voirdire", "agree", str(f)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = subprocess.run([sys.executable, "-m", "voirdire", "agree", str(f), "--debug"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1


def test_assign_refuses_to_overwrite_its_input(tmp_path: Path) -> None:
    f = _binary(tmp_path / "labels.csv", "llm")
    before = f.read_bytes()
    res = runner.invoke(app, ["assign", str(f), "-n", "2", "-r", "new1", "--design", "random", "-o", str(f)])
    assert res.exit_code == 1 and "also an input" in res.output
    assert f.read_bytes() == before
