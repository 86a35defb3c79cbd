"""The command line reads each tool's export with no flags beyond --format-in/--wide/--where/--control/--question."""

from __future__ import annotations

from pathlib import Path

import pytest

from voirdire.cli import app

from ..data.test_formats import FIX, WIDE
from .test_bad_input import COMMANDS, check_error, check_hinted_flags_exist, check_ok, runner


def _agree(*args: str):
    return runner.invoke(app, ["agree", *args, "--resamples", "0"])


@pytest.mark.parametrize("args, first", [
    (["label_studio_export.json", "--control", "sentiment"], "3 items, 3 humans, 1 judges, 9 labels"),
    (["label_studio_min.json", "--control", "sentiment"], "3 items, 3 humans, 0 judges, 6 labels"),
    (["argilla_records.json", "--question", "label"], "3 items, 3 humans, 1 judges, 9 labels"),
    (["promptfoo_results.json"], "4 items, 1 humans, 2 judges, 11 labels"),
    (["lm_eval/EleutherAI__pythia-160m/samples_boolq_2024-06-01T12-00-00.000000.jsonl"],
     "6 items, 1 humans, 1 judges, 12 labels"),
])
def test_agree_reads_each_tool_export(args, first):
    res = _agree(str(FIX / args[0]), *args[1:])
    check_ok(res)
    assert first in res.stdout.splitlines()[0]


def test_agree_reads_an_inspect_log():
    pytest.importorskip("inspect_ai", reason="the inspect extra (pip install 'voirdire[inspect]') is not installed")
    res = _agree(str(FIX / "inspect_support_grading.eval"), "--judge", "model_graded_qa")
    check_ok(res)
    assert "4 items, 2 humans, 1 judges" in res.stdout.splitlines()[0]


def test_stdin_with_format_in():
    data = (FIX / "label_studio_export.json").read_bytes()
    res = runner.invoke(app, ["agree", "-", "--format-in", "label-studio", "--control", "sentiment", "--resamples", "0"],
                        input=data)
    check_ok(res)
    assert res.stdout.startswith("<stdin>: 3 items")


def test_wide_where_and_a_tool_error(tmp_path):
    p = tmp_path / "sheet.csv"
    p.write_text("item,criterion,ann1,ann2,gpt4\n" + "".join(
        f"s{k},{c},{a},{b},{g}\n" for k, (c, a, b, g) in enumerate(
            [("fluency", 1, 2, 1), ("fluency", 2, 2, 2), ("coherence", 3, 1, 3), ("fluency", 1, 1, 2)])))
    res = _agree(str(p), "--wide", "--where", "criterion=fluency", "--judge", "gpt4")
    check_ok(res)  # the --where column describes the item; it is not a rater
    assert "3 items, 2 humans, 1 judges, 9 labels" in res.stdout.splitlines()[0]
    err = check_error(_agree(str(FIX / "argilla_records.json")), "--question NAME")
    check_hinted_flags_exist("agree", err)


def _raters(f: str, j: str) -> list[str]:
    return ["raters", f, "-j", j]


@pytest.mark.parametrize("cmd", [*COMMANDS, "raters"])
def test_guessed_format_errors_name_flags_the_command_has(tmp_path, cmd):
    p = tmp_path / "sheet.csv"
    p.write_text(WIDE)
    res = runner.invoke(app, (COMMANDS.get(cmd) or _raters)(str(p), "nobody"))
    err = check_error(res, "read as a wide table", "--format-in")
    check_hinted_flags_exist(cmd, err)
