"""``--duplicates`` and ``--missing`` on every command that reads an annotation file.

A conflicting duplicate fails by default and names the flag; ``--duplicates first|last`` keeps one.
An empty label fails by default and names the flag; ``--missing drop`` drops the row. A value
outside the choices is a usage error (exit 2).
"""

from __future__ import annotations

import json

import pytest

from voirdire.cli import app

from .test_bad_input import COMMANDS, _good_rows, _norm, check_error, check_hinted_flags_exist, check_ok, runner

H = "item,rater,label"


@pytest.fixture(scope="module")
def read_files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("readopts")
    good = _good_rows()
    first = good[0]  # "i0,h1,<label>"
    assert first.startswith("i0,h1,")
    other = f"i0,h1,{(int(first[-1]) + 1) % 3}"
    blank_at = next(k for k, r in enumerate(good) if r.startswith("i3,h2,"))

    def w(name: str, rows: list[str]) -> str:
        p = d / name
        p.write_text(H + "\n" + "\n".join(rows) + "\n")
        return str(p)

    return {
        "good": w("good.csv", good),
        # h1 labels i0 twice, differently: the second label at the end of the file
        "dup": w("dup.csv", [*good, other]),
        # what 'last' must read: the first label replaced by the second
        "dup_last": w("dup_last.csv", [other, *good[1:]]),
        "blank": w("blank.csv", [*good[:blank_at], "i3,h2,", *good[blank_at + 1:]]),
        "blank_dropped": w("blank_dropped.csv", [*good[:blank_at], *good[blank_at + 1:]]),
    }


def _run(cmd: str, f: str, *extra: str):
    # every human labelled every item: assign work to a new rater, so there is room to assign
    room = ["-r", "h9"] if cmd == "assign" else []
    return runner.invoke(app, [*COMMANDS[cmd](f), *room, *extra])


@pytest.mark.parametrize("cmd", COMMANDS)
def test_options_exist(cmd):
    from .test_bad_input import _options

    assert {"--duplicates", "--missing"} <= _options(cmd)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_conflicting_duplicate_fails_by_default_and_names_the_flag(cmd, read_files):
    err = check_error(_run(cmd, read_files["dup"]), read_files["dup"], "twice", "--duplicates first|last")
    check_hinted_flags_exist(cmd, err)


@pytest.mark.parametrize("policy", ["first", "last"])
@pytest.mark.parametrize("cmd", COMMANDS)
def test_conflicting_duplicate_kept_with_option(cmd, policy, read_files):
    check_ok(_run(cmd, read_files["dup"], "--duplicates", policy))


@pytest.mark.parametrize("cmd", COMMANDS)
def test_empty_label_fails_by_default_and_names_the_flag(cmd, read_files):
    err = check_error(_run(cmd, read_files["blank"]), read_files["blank"], "empty label", "--missing drop")
    check_hinted_flags_exist(cmd, err)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_empty_label_dropped_with_option(cmd, read_files):
    check_ok(_run(cmd, read_files["blank"], "--missing", "drop"))


@pytest.mark.parametrize("cmd", COMMANDS)
@pytest.mark.parametrize(("opt", "value"), [("--duplicates", "newest"), ("--missing", "ignore")])
def test_bad_choice_is_a_usage_error(cmd, opt, value, read_files):
    res = _run(cmd, read_files["good"], opt, value)
    # every command, report included, declares the reader options once (cli._app.reader_options): a typer choice
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert opt in _norm(res.output) and value in res.output


def _agree_json(f: str, *extra: str) -> dict:
    res = runner.invoke(app, ["agree", f, "-j", "llm", "--resamples", "0", "-f", "json", *extra])
    check_ok(res)
    return json.loads(res.stdout)


def _estimates(d: dict) -> dict:
    return {(g["label"], r["coefficient"]): r["estimate"] for g in d["groups"] for r in g["results"]}


def test_agree_duplicates_keeps_the_right_label(read_files):
    # 'first' reads the file as if the second label were absent; 'last' as if it had replaced the first
    good = _estimates(_agree_json(read_files["good"]))
    last = _estimates(_agree_json(read_files["dup_last"]))
    assert good != last  # the two labels differ, so the choice shows in the numbers
    assert _estimates(_agree_json(read_files["dup"], "--duplicates", "first")) == good
    assert _estimates(_agree_json(read_files["dup"], "--duplicates", "last")) == last


def test_agree_missing_drop_drops_the_row(read_files):
    assert (_estimates(_agree_json(read_files["blank"], "--missing", "drop"))
            == _estimates(_agree_json(read_files["blank_dropped"])))


def test_plan_estimate_pilot_duplicates(read_files):
    # plan-estimate reads only its --pilot file through the loader: the option reaches it
    base = ["plan-estimate", "--pilot", read_files["dup"], "-j", "llm", "--target-halfwidth", "0.1", "--N", "1000",
            "-f", "json"]
    first = runner.invoke(app, [*base, "--duplicates", "first"])
    check_ok(first)
    ref = runner.invoke(app, ["plan-estimate", "--pilot", read_files["good"], "-j", "llm", "--target-halfwidth", "0.1",
                              "--N", "1000", "-f", "json"])
    check_ok(ref)
    got, want = json.loads(first.stdout), json.loads(ref.stdout)
    assert got["pilot"].pop("file") == read_files["dup"]
    want["pilot"].pop("file")
    assert got == want
    last = runner.invoke(app, [*base, "--duplicates", "last"])
    check_ok(last)
    assert json.loads(last.stdout)["pilot"] != got["pilot"]
