"""The `voirdire raters` command (registered on import): parse, call
:func:`voirdire.workflows.diagnose_raters` (``--by``: ``diagnose_raters_by``), render; with ``--adjudicate``,
write the most contested items as an assignment file."""

from __future__ import annotations

from pathlib import Path

import typer

from .._option_specs import FileFormat, OutputFormat, PoolCoefficient, ScoreName
from ._app import (
    ReaderOptions, app, console, emit_json, err_console, fail, format_options, handle_errors, option,
    reader_options, require_overlap,
)


@app.command("raters")
@handle_errors
@format_options
@reader_options
def raters_command(
    file: Path = typer.Argument(..., metavar="FILE", readable=False, help="Annotation file (CSV/TSV/JSONL/Parquet/JSON) or AltTest-style folder."),
    judge: list[str] = option("raters.judge"),
    rater_names: list[str] = option("raters.rater_names"),
    score: ScoreName | None = option("raters.score"),
    coefficient: PoolCoefficient = option("raters.coefficient"),
    margin: float = option("raters.margin"),
    significance_level: float = option("raters.significance_level"),
    min_items: int = option("raters.min_items"),
    competence: bool = option("raters.competence"),
    top: int = option("raters.top"),
    sensitivity: bool = option("raters.sensitivity"),
    adjudicate: Path | None = option("raters.adjudicate"),
    adjudicator: str = option("raters.adjudicator"),
    file_format: FileFormat = option("raters.file_format"),
    output_format: OutputFormat = option("raters.output_format"),
    seed: int = option("raters.seed"),
    resamples: int = option("raters.resamples"),
    confidence_level: float = option("confidence_level"),
    *,
    reader: ReaderOptions,
) -> None:
    """Which annotators drag agreement down, and which items are contested? Per-annotator diagnostics,
    outlier flags with a stated rule, and the most contested items for adjudication."""
    if adjudicate is not None and top == 0:
        fail("--adjudicate writes the --top most contested items: give --top >= 1.")
    opts = dict(raters=list(rater_names) if rater_names else None, score=None if score is None else score.value,
                coefficient=coefficient.value, margin=margin, significance_level=significance_level,
                min_items=min_items, confidence_level=confidence_level, n_resamples=resamples, competence=competence,
                seed=seed)
    if reader.by:
        from ..report.console.raters import render_raters_by
        from ..workflows import diagnose_raters_by

        if adjudicate is not None:
            fail("--adjudicate with --by is not available yet: write each group's file with --where COLUMN=VALUE.")
        grouped = reader.load_groups(file, judges=judge)
        res_by = diagnose_raters_by(grouped, **opts)
        if output_format == "json":
            emit_json(res_by.to_dict())
        elif output_format == "csv":
            from ..report.console.terminal import echo_csv

            echo_csv(res_by.to_frame())
        else:
            render_raters_by(console, err_console, res_by, grouped.pooled.n_items)
        return
    from ..report.console.raters import render_raters
    from ..workflows import diagnose_raters

    table = reader.load(file, judges=judge)
    require_overlap(table)
    res = diagnose_raters(table, top=top, sensitivity=sensitivity, **opts)  # type: ignore[arg-type]
    written = None
    if adjudicate is not None and res.items is not None:
        from ..design import write_assignments

        if not res.items.n_ranked:
            fail("No item has two or more labels from the pool: nothing to adjudicate.")
        written = write_assignments(res.items.assignments(top, adjudicator=adjudicator), adjudicate,
                                    format=None if file_format is None else file_format.value, inputs=[file])
    if output_format == "json":
        emit_json({**res.to_dict(), "adjudication_file": None if written is None else str(written[0])})
    elif output_format == "csv":
        from ..report.console.terminal import echo_csv

        echo_csv(res.to_frame())
    else:
        render_raters(console, err_console, table, res, written=written)
