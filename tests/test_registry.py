"""One registry per kind of name users type (issue 28, ARCHITECTURE "Third wave"): coefficients and scores
(``voirdire._scores``), input formats (``voirdire._format_names``) and reason codes
(``voirdire.workflows.REASON_CODES``). The CLI's choices and help, the report's labels and the library's checks
read them, so a name added to a registry is enough; no command, renderer or workflow spells a coefficient's name
itself. Read from the source with ``ast`` where the question is "who spells it"."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from voirdire import _format_names, _scores
from voirdire.cli import app

SRC = Path(__file__).resolve().parents[1] / "src" / "voirdire"
runner = CliRunner()

#: Files that still spell a registry name, each owned by another change of this wave (issue 28); remove an
#: entry when its file reads the registry (REFERENCE_COEFFICIENT). The test fails on any other file.
NOT_YET: dict[str, str] = {}


def _help(*argv: str) -> str:
    res = runner.invoke(app, [*argv, "--help"], terminal_width=400)
    assert res.exit_code == 0, res.output
    return " ".join(res.output.split())


def test_every_coefficient_has_one_spelling_per_medium():
    names = set(_scores.COEFFICIENTS)
    assert set(_scores.TERMINAL_NAMES) == set(_scores.HTML_NAMES) == names
    for subset in (_scores.PER_ITEM_COEFFICIENTS, _scores.PAIRWISE_COEFFICIENTS, _scores.WEIGHTED_COEFFICIENTS,
                   tuple(_scores.SCORE_COEFFICIENT.values()), (_scores.REFERENCE_COEFFICIENT,)):
        assert set(subset) <= names, subset
    assert _scores.matrix_coefficient("nominal") in _scores.PAIRWISE_COEFFICIENTS
    assert _scores.matrix_coefficient("interval") in _scores.PAIRWISE_COEFFICIENTS


def test_the_library_reads_the_registry():
    from voirdire.agreement import COEFFICIENTS, STREAMABLE
    from voirdire.data import FORMATS
    from voirdire.diagnostics import POOL_COEFFICIENTS
    from voirdire.report._terminal import DISPLAY

    assert COEFFICIENTS is _scores.COEFFICIENTS
    assert STREAMABLE is POOL_COEFFICIENTS is _scores.PER_ITEM_COEFFICIENTS
    assert DISPLAY is _scores.TERMINAL_NAMES
    assert FORMATS is _format_names.INPUT_FORMATS


def test_the_commands_choices_and_help_list_every_registered_name():
    agree, raters, validate = _help("agree"), _help("raters"), _help("validate")
    for name in _scores.COEFFICIENTS:
        assert name in agree, name
    for name in _scores.PER_ITEM_COEFFICIENTS:
        assert name in raters, name
    choices = "<" + "|".join(_scores.SCORES) + ">"
    assert f"--score {choices}" in raters and f"--score {choices}" in validate
    for name in _format_names.INPUT_FORMATS:
        assert f" {name}" in agree.split("--format-in", 1)[1].split("--wide", 1)[0], name


def test_adding_a_name_to_a_registry_is_enough():
    # a fresh interpreter in which the registries hold one more name each, before anything reads them
    code = """
import voirdire._scores as s, voirdire._format_names as f
s.COEFFICIENTS += ("zz_coefficient",)
s.PER_ITEM_COEFFICIENTS += ("zz_coefficient",)
s.SCORES += ("zzscore",)
f.INPUT_FORMATS["zz-format"] = "a new tool"
from typer.testing import CliRunner
from voirdire.cli import app
import voirdire.agreement, voirdire.diagnostics, voirdire.data
r = CliRunner()
out = {c: " ".join(r.invoke(app, [c, "--help"], terminal_width=400).output.split()) for c in ("agree", "raters", "validate")}
assert "zz_coefficient" in out["agree"] and "zz_coefficient" in out["raters"], out
assert "|zzscore>" in out["raters"] and "|zzscore>" in out["validate"]
assert "zz-format" in out["agree"] and "zz-format" in out["validate"]
assert "zz_coefficient" in voirdire.agreement.COEFFICIENTS and "zz_coefficient" in voirdire.diagnostics.POOL_COEFFICIENTS
assert "zz-format" in voirdire.data.FORMATS
print("OK")
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "OK" in res.stdout, res.stdout[-2000:] + res.stderr[-2000:]


def _spelled(path: Path, names: set[str], root: Path = SRC) -> list[str]:
    """The registry names a module spells as string constants (docstrings aside), with their lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [f"{path.relative_to(root)}:{n.lineno}: {n.value!r}" for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names
            and id(n) not in docstrings]


def test_no_command_renderer_or_workflow_spells_a_coefficient():
    names = set(_scores.COEFFICIENTS)
    found = [hit for package in ("cli", "report", "workflows") for f in sorted((SRC / package).rglob("*.py"))
             if str(f.relative_to(SRC)) not in NOT_YET for hit in _spelled(f, names)]
    assert found == []


def test_the_checker_sees_a_spelled_name(tmp_path):
    f = tmp_path / "_probe.py"
    f.write_text('"""Doc naming gwet_ac1."""\ndef g():\n    """gwet_ac1 again."""\n    return "gwet_ac1"\n',
                 encoding="utf-8")
    assert _spelled(f, {"gwet_ac1"}, tmp_path) == ["_probe.py:4: 'gwet_ac1'"]


def test_every_reason_code_a_verdict_carries_is_registered():
    from voirdire.diagnostics import WON_AGAINST_FLAGGED
    from voirdire.workflows import REASON_CODES

    assert WON_AGAINST_FLAGGED in REASON_CODES
    for status in ("noise", "undefined", "unreliable", "tentative", "reliable"):  # reference_status's values
        assert f"reference_{status}" in REASON_CODES, status
    literal = []
    for f in sorted((SRC / "workflows").rglob("*.py")):  # verdicts and their reasons are the workflows'
        for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == "Reason":
                for kw in n.keywords:
                    if kw.arg == "code" and isinstance(kw.value, ast.Constant):
                        literal.append(kw.value.value)
    assert literal and set(literal) <= set(REASON_CODES), sorted(set(literal) - set(REASON_CODES))


def test_option_values_come_from_their_registry():
    from voirdire import _options
    from voirdire.agreement._prepare import ABSTAIN_POLICIES
    from voirdire.validation._alt_test import CORRECTIONS, TESTS
    from voirdire.validation._ranking import BY
    from voirdire.workflows import GROUP_ERRORS
    from voirdire.workflows._compare import JUDGE_ITEMS
    from voirdire.workflows._validate import METHODS, RANK_BY

    assert (CORRECTIONS, TESTS, BY, RANK_BY, METHODS, GROUP_ERRORS, ABSTAIN_POLICIES, JUDGE_ITEMS) == (
        _options.CORRECTIONS, _options.PER_HUMAN_TESTS, _options.RANK_BY, _options.RANK_BY,
        _options.VALIDATION_METHODS, _options.GROUP_ERRORS, _options.ABSTAIN_POLICIES, _options.JUDGE_ONLY_ITEMS)
    validate, agree = _help("validate"), _help("agree")
    for option, values in (("--method", _options.VALIDATION_METHODS), ("--scoring", _options.ALT_TEST_SCORINGS),
                           ("--correction", _options.CORRECTIONS), ("--test", _options.PER_HUMAN_TESTS),
                           ("--rank-by", _options.RANK_BY)):
        assert f"{option} <{'|'.join(values)}>" in validate, option
    for option, values in (("--abstain-policy", _options.ABSTAIN_POLICIES),
                           ("--judge-only-items", _options.JUDGE_ONLY_ITEMS)):
        assert f"{option} <{'|'.join(values)}>" in agree, option


def test_reader_option_values_come_from_their_registry():
    # --scale/--level, --duplicates and --missing: the library's checks read the registry; the commands' shared
    # enums (cli._app, used by name across the commands) hold exactly its values
    from voirdire import _options
    from voirdire._stats.distances import LEVELS as DISTANCE_LEVELS
    from voirdire.agreement._coefficients import LEVEL_NAMES
    from voirdire.cli._app import Duplicates, Level, Missing
    from voirdire.data._scale import LEVELS
    from voirdire.validation._loo import _LEVELS

    assert LEVELS is DISTANCE_LEVELS is LEVEL_NAMES is _LEVELS is _options.LEVELS
    for enum, values in ((Level, _options.LEVELS), (Duplicates, _options.DUPLICATE_POLICIES),
                         (Missing, _options.MISSING_POLICIES)):
        assert tuple(e.value for e in enum) == values, enum
    agree = _help("agree")
    for option, values in (("--scale", _options.LEVELS), ("--duplicates", _options.DUPLICATE_POLICIES),
                           ("--missing", _options.MISSING_POLICIES)):
        assert f"{option} <{'|'.join(values)}>" in agree, option


def test_design_choices_are_the_registry_s():
    # the allocation designs (assign, plan, simulate, the library's allocate) and the study's draw designs
    from voirdire import _designs, _options
    from voirdire.study import _study

    assert _designs.DESIGNS is _options.ALLOCATION_DESIGNS and _study.DRAW_DESIGNS is _options.DRAW_DESIGNS
    for argv, values in ((("assign",), _options.ALLOCATION_DESIGNS), (("plan",), _options.ALLOCATION_DESIGNS),
                         (("study", "draw"), _options.DRAW_DESIGNS)):
        assert f"--design <{'|'.join(values)}>" in _help(*argv), argv


def test_sequential_methods_and_file_formats_are_the_registry_s():
    from voirdire import _options
    from voirdire.design._allocate import WRITE_FORMATS
    from voirdire.validation._sequential import METHODS

    assert METHODS is _options.SEQUENTIAL_METHODS and WRITE_FORMATS is _options.ASSIGNMENT_FORMATS
    assert set(_options.ANNOTATION_TOOLS) <= set(_options.ASSIGNMENT_FORMATS)
    for argv, option, values in ((("watch",), "--method", _options.SEQUENTIAL_METHODS),
                                 (("study", "status"), "--method", _options.SEQUENTIAL_METHODS),
                                 (("raters",), "--to", _options.ASSIGNMENT_FORMATS),
                                 (("study", "export"), "--to", _options.EXPORT_FORMATS)):
        assert f"{option} <{'|'.join(values)}>" in _help(*argv), argv
    assert f"--format <{'|'.join(_options.ASSIGNMENT_FORMATS)}>" in _help("assign")
