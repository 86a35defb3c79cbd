"""Rendering of by-group results: the grid in colour and in words, the forest, the report's "By group"
section whose every number points at report.json (render only: the numbers are the workflow's)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from voirdire._simulation.slices import slice_failure_frame
from voirdire.cli import app
from voirdire.data._groups import split_groups
from voirdire.report import forest_svg, grid_svg, grouped_section
from voirdire.workflows import validate_judges_by


def _res():
    df = slice_failure_frame(300, np.random.default_rng(4), p_bad=0.4, column="domain")
    g = split_groups(df, np.arange(len(df)) + 2, ["domain"], src="sim", item="item", rater="rater", label="label",
                     role="role")
    return validate_judges_by(g, ["judge"], n_resamples=40, check_raters=False)


def test_grid_reads_in_print_and_forest_marks_the_flag():
    res = _res()
    svg = grid_svg(res)
    # every cell carries its word, not only its colour; the flagged slice its '!'
    assert svg.count("<rect") == 6 and "REJECT !" in svg and "(pooled)" in svg
    f = forest_svg(res)
    assert f.count("<circle") == 5 and f.count('fill="#cf222e"') == 1


def test_section_numbers_point_at_their_json():
    res = _res()
    sec = grouped_section(res)
    doc = {"sections": {"groups": sec.to_dict()}}
    doc = json.loads(json.dumps(doc, default=str))
    n = 0
    for block in sec.blocks:
        for row in getattr(block, "rows", ()):
            for cell in row:
                if cell.pointer:
                    node = doc
                    for part in cell.pointer.strip("/").split("/"):
                        node = node[int(part)] if isinstance(node, list) else node[part]
                    assert str(node)[:5] in cell.text or cell.text.startswith(f"{float(node):.3f}"[:5])
                    n += 1
    assert n >= 5


@pytest.mark.slow  # the whole report (every section) on 200 items
def test_report_by_writes_the_section(tmp_path):
    df = slice_failure_frame(200, np.random.default_rng(2), column="domain")
    p = tmp_path / "s.csv"
    df.to_csv(p, index=False)
    r = CliRunner().invoke(app, ["report", str(p), "--role", "role", "--by", "domain", "--n-resamples", "30",
                                 "-o", str(tmp_path / "rep"), "-q"])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert doc["sections"]["groups"]["status"] == "ok"
    assert len(doc["sections"]["groups"]["results"]["cells"]) == 5
    assert "Verdicts by domain" in (tmp_path / "rep" / "report.html").read_text()
