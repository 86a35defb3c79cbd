"""The one guard for untrusted strings (voirdire._safe) and the CLI console built on it."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from rich.table import Table

from voirdire._safe import csv_cell, csv_frame, escape_control, shown
from voirdire.report.console.terminal import SafeConsole, styled


@pytest.mark.parametrize("cell", ["=1+2", "+cmd", "-2+3", "@SUM(A1)", "\t=x", "\r=x", "+ judge", "  =1",
                                  "\uff1dSUM(A1)", "-", "+"])
def test_formula_prefixes_are_neutralised(cell: str) -> None:
    assert csv_cell(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["-3", "+1.5e3", ".5", "safe=1", "item_1", "", "a-b"])
def test_plain_values_pass_unchanged(cell: str) -> None:
    assert csv_cell(cell) == cell


def test_non_text_values_and_frames() -> None:
    assert csv_cell(7) == 7 and csv_cell(-1.5) == -1.5 and csv_cell(None) is None
    df = pd.DataFrame({"=rater": ["=HYPERLINK(\"x\")", "ok"], "n": [-1, 2]})
    out = csv_frame(df)
    assert list(out.columns) == ["'=rater", "n"]
    assert out.iloc[0, 0] == "'=HYPERLINK(\"x\")" and out.iloc[1, 0] == "ok" and list(out["n"]) == [-1, 2]
    assert df.iloc[0, 0] == "=HYPERLINK(\"x\")"  # the input frame is not modified


def test_control_characters_are_shown_escaped() -> None:
    assert escape_control("a\x1b[2Jb\x07") == "a\\x1b[2Jb\\x07"
    assert escape_control("a\x00b") == "a\\x00b"
    assert escape_control("x\u202ey") == "x\\u202ey"  # right-to-left override
    assert escape_control("\x9b31m") == "\\x9b31m"  # C1 CSI
    assert escape_control("line\nnext", keep="\n") == "line\nnext"
    assert escape_control("plain ünïcode") == "plain ünïcode"


def test_shown_cuts_long_values_and_quotes() -> None:
    s = shown("x" * 2_000_000)
    assert len(s) < 120 and s.endswith("(2,000,000 characters)")
    assert shown("a\x1bb") == "'a\\x1bb'" and "\u202e" not in shown("a\u202eb")


def _render(*objs: object) -> str:
    buf = io.StringIO()
    c = SafeConsole(file=buf, width=120, force_terminal=False, color_system=None)
    for o in objs:
        c.print(o)
    return buf.getvalue()


@pytest.mark.parametrize("name", ["[/j]", "[bold red]X", "[link=http://evil]click[/link]", ":smile:", "[/]"])
def test_markup_in_names_prints_literally(name: str) -> None:
    t = Table(title=name)
    t.add_column(name)
    t.add_row(name)
    out = _render(f"judge {name}", t, styled((name, "dim"), " ", name))
    assert out.count(name) == 6  # the line, the title, the header, the cell and twice in styled()


def test_escape_sequences_never_reach_the_terminal() -> None:
    evil = "\x1b]0;PWNED\x07\x1b[2J"
    t = Table()
    t.add_column("rater")
    t.add_row(evil)
    out = _render(evil, t, styled(evil))
    assert "\x1b" not in out and "\x07" not in out
    assert out.count("\\x1b]0;PWNED\\x07\\x1b[2J") == 3


def test_uncell_inverts_csv_cell_on_what_it_writes():
    from voirdire._safe import csv_cell, uncell

    for v in ["=1+2", "+ judge", "@x", "-x", "\tx", " =x", "\uff1dx", "plain", "-3", "'abc", "'-3", "", "'"]:
        assert uncell(csv_cell(v)) == v
    assert uncell("'-3") == "'-3" and uncell("'abc") == "'abc" and uncell(5) == 5
