"""The ranges, least values, error rates and text choices of the commands' options, checked once before any
work (``voirdire._option_ranges``), through the installed command line's parser."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from voirdire._option_ranges import CHOICES, MINIMA, OPEN_UNIT, check_ranges
from voirdire.cli import app


@pytest.mark.parametrize("name, least", sorted(MINIMA.items()))
def test_an_integer_below_its_least_value_is_refused_and_the_least_value_passes(name, least):
    flag = "--" + name.replace("_", "-")
    assert check_ranges({name: least - 1}) == f"{flag} must be an integer >= {least}. Got {least - 1}."
    assert check_ranges({name: least}) is None


@pytest.mark.parametrize("name", OPEN_UNIT)
@pytest.mark.parametrize("value, ok", [(0.0, False), (1.0, False), (-0.1, False), (1e-9, True), (0.5, True)])
def test_an_error_rate_lies_strictly_between_0_and_1(name, value, ok):
    assert (check_ranges({name: value}) is None) is ok


@pytest.mark.parametrize("name, values", sorted(CHOICES.items()))
def test_a_text_option_takes_only_its_choices(name, values):
    for v in values:
        assert check_ranges({name: v}) is None
    assert check_ranges({name: "nonsense"}) == f"--{name.replace('_', '-')} must be one of {list(values)}. Got 'nonsense'."


@pytest.mark.parametrize("args, message", [
    (["watch", "x.csv", "--round-column", "r", "--q", "1"], "--q must be in (0, 1). Got 1."),
    (["validate", "x.csv", "--fail-on", "accept"], "--fail-on must be one of ['reject', 'inconclusive']."),
    (["validate", "x.csv", "--by", "c", "--group-error", "all"], "--group-error must be one of ['fwer', 'fdr', 'none']."),
    (["simulate", "--repetitions", "0"], "--repetitions must be an integer >= 1. Got 0."),
    (["bias", "x.csv", "--fdr", "0"], "--fdr must be in (0, 1). Got 0."),
])
def test_the_commands_refuse_before_reading_the_file_in_one_line(args, message):
    r = CliRunner().invoke(app, args)  # x.csv does not exist: the option is refused before any reading
    assert r.exit_code == 1, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], r.output
