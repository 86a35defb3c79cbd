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
