"""``--role COLUMN`` (human/judge per row) on every command that reads an annotation file.

A long file may mark its judges in a column (like ``examples/hanna_complexity.csv``) instead of
naming them with ``--judge``; every command must accept it.
"""

from __future__ import annotations

import json

import pytest

from voirdire.cli import app

from .test_bad_input import COMMANDS, _good_rows, _options, check_ok, runner

ROLE_COMMANDS = [c for c in COMMANDS if c != "simulate"]  # simulate --full files name judges with -j


@pytest.fixture(scope="module")
def role_files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("role")
    good = _good_rows()
    plain = d / "plain.csv"
    plain.write_text("item,rater,label\n" + "\n".join(good) + "\n")
    roled = d / "roled.csv"
    roled.write_text("item,rater,label,role\n" + "\n".join(
        f"{r},{'judge' if r.split(',')[1] == 'llm' else 'human'}" for r in good) + "\n")
    return {"plain": str(plain), "roled": str(roled)}


@pytest.mark.parametrize("cmd", ROLE_COMMANDS)
def test_every_reading_command_has_role(cmd):
    assert "--role" in _options(cmd)


@pytest.mark.parametrize("cmd", ROLE_COMMANDS)
def test_role_column_is_accepted(cmd, role_files):
    room = ["-r", "h9"] if cmd == "assign" else []
    check_ok(runner.invoke(app, [*COMMANDS[cmd](role_files["roled"]), *room, "--role", "role"]))


@pytest.mark.parametrize("cmd", ["overlap", "plan"])
def test_role_marks_the_judge_without_judge_option(cmd, role_files):
    # the judge comes from the role column alone; the result equals naming it with -j
    by_role = runner.invoke(app, [cmd, role_files["roled"], "--role", "role", "-f", "json"])
    by_name = runner.invoke(app, [cmd, role_files["plain"], "-j", "llm", "-f", "json"])
    check_ok(by_role)
    check_ok(by_name)
    a, b = json.loads(by_role.stdout), json.loads(by_name.stdout)
    for doc in (a, b):  # the source file differs; everything computed from it must not
        doc.pop("source", None)
        doc.pop("file", None)
    assert a == b
