"""The top-level command: help, version, and the one-line error contract."""

from __future__ import annotations

from typer.testing import CliRunner

from voirdire import __version__
from voirdire.cli import app

runner = CliRunner()


def test_version():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and __version__ in res.output


def test_help_lists_commands():
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0
    assert "Examine an LLM judge" in res.output


def test_no_args_shows_help():
    res = runner.invoke(app, [])
    assert "Usage" in res.output


def test_n_resamples_help_says_what_each_command_accepts(tmp_path):
    # agree, validate, plan and raters run without resamples ("0 = ..."); the report's sections all have
    # intervals, so its help states its minimum and the report refuses fewer with that minimum in the error
    from voirdire._defaults import REPORT_MIN_N_RESAMPLES

    def help_of(*argv: str) -> str:
        res = runner.invoke(app, [*argv, "--help"], terminal_width=400)
        assert res.exit_code == 0, res.output
        return " ".join(res.output.split())

    for cmd in ("agree", "validate", "plan", "raters"):
        assert "(0 = " in help_of(cmd), cmd
    for argv in (["report"], ["demo"], ["study", "report"]):
        text = help_of(*argv)
        assert f"(at least {REPORT_MIN_N_RESAMPLES})" in text and "0 = none" not in text, argv
    f = tmp_path / "labels.csv"
    f.write_text("item,rater,label\n" + "".join(f"{i},{r},{(i + k) % 2}\n" for i in range(8)
                                                for k, r in enumerate(("h1", "h2", "judge"))))
    res = runner.invoke(app, ["report", str(f), "-j", "judge", "--n-resamples", "0", "-o", str(tmp_path / "r")])
    assert res.exit_code == 1 and f">= {REPORT_MIN_N_RESAMPLES}" in res.output
    res = runner.invoke(app, ["agree", str(f), "-j", "judge", "--n-resamples", "0", "-f", "json"])
    assert res.exit_code == 0, res.output
