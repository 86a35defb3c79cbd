"""The `voirdire agree` command (registered on import): parse, call
:func:`voirdire.workflows.compare_raters`, render."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from .._safe import csv_frame
from ._app import (
    Level, OutputFormat, ReaderOptions, app, console, emit_json, err_console, format_options, handle_errors,
    numeric_nominal_note, reader_options,
)
from ._validate import n_resamples_option


class AbstainPolicy(str, Enum):
    exclude = "exclude"
    category = "category"
    disagree = "disagree"


class JudgeOnlyItems(str, Enum):
    drop = "drop"
    keep = "keep"


@app.command("agree")
@handle_errors
@format_options
@reader_options
def agree_command(
    file: Path = typer.Argument(..., help="Annotation file (CSV/TSV/JSONL/Parquet/JSON) or AltTest-style folder."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="An LLM judge (repeat for several)."),
    coefficient: list[str] = typer.Option(
        None, "--coefficient", "-c",
        help="observed_agreement, cohen_kappa, scott_pi, fleiss_kappa, conger_kappa, krippendorff_alpha, "
             "gwet_ac1, gwet_ac2, bennett_s (repeatable; default: a sensible set)."),
    level: Level | None = typer.Option(None, "--level", help="Metric of Krippendorff's alpha (default: the scale)."),
    weights: str | None = typer.Option(None, "--weights", help="Weights of the weighted coefficients (linear, quadratic, ...)."),
    abstain_policy: AbstainPolicy = typer.Option(AbstainPolicy.exclude, "--abstain-policy",
                                                 help="exclude, category (its own label) or disagree (a penalty)."),
    judge_only_items: JudgeOnlyItems = typer.Option(
        JudgeOnlyItems.drop, "--judge-only-items",
        help="Items only the judge labelled: drop them from the 'humans + judge' rows (default; they would only "
             "shift the chance term) or keep them (the old behaviour)."),
    positive: str | None = typer.Option(None, "--positive", help="Positive category of the binary family."),
    output_format: OutputFormat = typer.Option(OutputFormat.table, "--format", "-f", help="table, json or csv."),
    seed: int = typer.Option(0, "--seed", help="Seed of every random stream (same seed, same numbers)."),
    n_resamples: int = n_resamples_option(),
    confidence_level: float = typer.Option(0.95, "--confidence-level", help="Level of the intervals."),
    matrix: bool = typer.Option(False, "--matrix", help="Also print the rater-by-rater Cohen's kappa matrix."),
    *,
    reader: ReaderOptions,
) -> None:
    """Agreement coefficients with bootstrap intervals: humans among themselves and each judge with them."""
    from ..report import render_comparison
    from ..workflows import compare_raters

    from ..agreement import COEFFICIENTS
    from ..exceptions import InvalidParameterError

    for c in coefficient or []:
        if c not in COEFFICIENTS:
            raise InvalidParameterError(f"--coefficient {c!r} is not one of {list(COEFFICIENTS)}.")
    judge = list(dict.fromkeys(judge)) if judge else judge  # `-j X -j X` is one judge
    table = reader.load(file, judges=judge)
    quiet = output_format != OutputFormat.table
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TimeRemainingColumn

    from ._console import description_column

    with Progress(description_column(), BarColumn(), TaskProgressColumn(), TimeRemainingColumn(),
                  console=err_console, transient=True, disable=quiet) as bar:
        task = bar.add_task("agreement", total=1)

        def progress(step: str, done: int, total: int) -> None:
            bar.update(task, description=step, completed=done, total=total)

        comp = compare_raters(table, judge or None, coefficients=list(coefficient) if coefficient else None,
                              level=level.value if level else None, weights=weights,
                              abstain_policy=abstain_policy.value, positive=positive, matrix=matrix,
                              judge_only_items=judge_only_items.value, confidence_level=confidence_level,
                              n_resamples=n_resamples, seed=seed, progress=progress)
    if output_format == OutputFormat.json:
        doc = {"table": table.summary(), **comp.to_dict()}
        scale_note = numeric_nominal_note(table) if reader.scale is None else None
        if scale_note:
            doc["notes"] = [scale_note] + doc["notes"]
        if comp.matrix is None:
            doc.pop("matrix")
        emit_json(doc)
        return
    if output_format == OutputFormat.csv:
        from .._safe import csv_frame

        typer.echo(csv_frame(comp.to_frame()).to_csv(index=False), nl=False)
        return
    render_comparison(console, err_console, table, comp)
