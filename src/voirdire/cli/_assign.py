"""The `voirdire assign` command (registered on import): the next round's assignment file."""

from __future__ import annotations

from pathlib import Path

import typer

from .._options import ANNOTATION_TOOLS
from .._option_specs import DesignName, FileFormat
from ._app import (
    ReaderOptions, _FORMAT_OPTS, app, console, emit_json, format_options, handle_errors, option, reader_options,
)


@app.command("assign")
@handle_errors
@format_options
# assign's --rater is who gets the work: its rater column is --rater-column (the registry's "assign.rater")
@reader_options(command="assign", only=("scale", "categories", "abstain", "item", "rater", "label", "role",
                                        "duplicates", "missing"))
def assign_command(
    file: Path = typer.Argument(..., readable=False, help="The labels so far (long CSV/TSV/JSONL/Parquet, or an AltTest directory)."),
    n_per_rater: int = option("assign.n_per_rater"),
    output: Path = option("assign.output"),
    design: DesignName = option("assign.design"),
    assignee: list[str] = option("assign.assignee"),
    judge: list[str] = option("assign.judge"),
    primary: str | None = option("assign.primary"),
    seed: int | None = option("assign.seed"),
    file_format: FileFormat = option("assign.file_format"),
    json_out: bool = option("assign.json_out"),
    judge_file: Path | None = option("judge_file"),
    *,
    reader: ReaderOptions,
) -> None:
    """Write who labels which item next, with a manifest (design, seed, source table hash).

    Spreadsheet formula cells (starting with = + - @) are escaped in CSV output. Items a rater
    already labelled are never assigned to them again.
    """
    from ..data import read_item_data
    from ..design import write_assignments
    from ..report.console.assign import render_assignment
    from ..workflows import draw_batch

    table = reader.load(file, judges=judge, judge_file=judge_file)
    tool = file_format is not None and file_format.value in ANNOTATION_TOOLS
    # the source export's task data / record fields: the text the tool shows annotators
    item_data = read_item_data(file, item=reader.item, control=_FORMAT_OPTS.get().get("control")) if tool else None
    draw = draw_batch(table, design=design.value, n_per_rater=n_per_rater, raters=assignee or None, primary=primary,
                      seed=seed, item_data=item_data)
    out, man = write_assignments(draw.assignment, output, format=None if file_format is None else file_format.value,
                                 inputs=[file, judge_file], item_data=item_data)
    if json_out:
        emit_json(draw.assignment.manifest() | {"file": str(out), "manifest": str(man)})
    else:
        render_assignment(console, draw, design=design.value, source=str(table.source), file=str(file), written=out,
                          manifest=man)
