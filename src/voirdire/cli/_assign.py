"""The `voirdire assign` command (registered on import): the next round's assignment file."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from ._app import (
    Duplicates, Level, Missing, app, console, duplicates_option, emit_json, fail, handle_errors, load_table,
    missing_option, role_option, format_options,
)
from ._app import _FORMAT_OPTS
from ._plan import DesignName


class FileFormat(str, Enum):
    csv = "csv"
    jsonl = "jsonl"
    label_studio = "label-studio"
    argilla = "argilla"


@app.command("assign")
@handle_errors
@format_options
def assign_command(
    file: Path = typer.Argument(..., readable=False, help="The labels so far (long CSV/TSV/JSONL/Parquet, or an AltTest directory)."),
    n_per_rater: int = typer.Option(..., "--n-per-rater", "-n", help="Items each rater gets."),
    output: Path = typer.Option(..., "--output", "-o", readable=False, help="File to write (.csv, .jsonl, or .json with --to)."),
    design: DesignName = typer.Option(DesignName.strat, "--design",
                                      help="random, strat (primary's labels as strata), panel (one shared panel), "
                                           "seq-refined or seq-coverage."),
    assignee: list[str] = typer.Option(None, "--rater", "-r",
                                       help="Who gets work, in order (repeatable; new names allowed). "
                                            "Default: every human but the primary."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="An LLM judge in FILE (repeatable)."),
    primary: str | None = typer.Option(None, "--primary", help="Human whose labels define the strata."),
    seed: int | None = typer.Option(None, "--seed", help="Seed (a drawn seed is recorded in the manifest)."),
    file_format: FileFormat = typer.Option(None, "--to", "--format", "-f",
                                           help="csv or jsonl (default: from the extension), or the annotation tool "
                                                "that will import the round: label-studio (tasks JSON) or argilla "
                                                "(records JSON)."),
    json_out: bool = typer.Option(False, "--json", help="Print the manifest as JSON instead of a summary."),
    scale: Level = typer.Option(None, "--scale", help="Level of measurement of the labels."),
    categories: list[str] = typer.Option(None, "--categories", help="Categories in order (comma-separated)."),
    abstain: list[str] = typer.Option(None, "--abstain", help="A label meaning 'cannot assess' (repeatable)."),
    item: str = typer.Option("item", "--item", help="Item id column."),
    rater_col: str = typer.Option("rater", "--rater-column", help="Rater column of FILE."),
    label: str = typer.Option("label", "--label", help="Label column."),
    role: str | None = role_option(),
    judge_file: Path | None = typer.Option(None, "--judge-file", readable=False, help="Nested JSON of judge labels."),
    duplicates: Duplicates = duplicates_option(),
    missing: Missing = missing_option(),
) -> None:
    """Write who labels which item next, with a manifest (design, seed, source table hash).

    Spreadsheet formula cells (starting with = + - @) are escaped in CSV output. Items a rater
    already labelled are never assigned to them again.
    """
    from ..data import read_item_data
    from ..design import write_assignments
    from ..report.console.assign import render_assignment
    from ..workflows import draw_batch

    if n_per_rater < 1:
        fail(f"--n-per-rater must be >= 1. Got {n_per_rater}.")
    table = load_table(file, judges=judge, scale=scale, categories=categories, abstain=abstain, item=item,
                       rater=rater_col, label=label, judge_file=judge_file, duplicates=duplicates, missing=missing,
                       role=role)
    tool = file_format in (FileFormat.label_studio, FileFormat.argilla)
    # the source export's task data / record fields: the text the tool shows annotators
    item_data = read_item_data(file, item=item, control=_FORMAT_OPTS.get().get("control")) if tool else None
    draw = draw_batch(table, design=design.value, n_per_rater=n_per_rater, raters=assignee or None, primary=primary,
                      seed=seed, item_data=item_data)
    out, man = write_assignments(draw.assignment, output, format=None if file_format is None else file_format.value,
                                 inputs=[file, judge_file], item_data=item_data)
    if json_out:
        emit_json(draw.assignment.manifest() | {"file": str(out), "manifest": str(man)})
    else:
        render_assignment(console, draw, design=design.value, source=str(table.source), file=str(file), written=out,
                          manifest=man)
