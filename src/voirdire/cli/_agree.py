"""The `voirdire agree` command (registered on import): parse, call
:func:`voirdire.workflows.compare_raters` (``--by``: ``compare_raters_by``; ``--stream``:
``compare_raters_stream``), render."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from .._scores import COEFFICIENTS
from .._option_specs import AbstainPolicy, JudgeOnlyItems, Level, OutputFormat
from ._app import (
    ReaderOptions, app, console, emit_result_json, err_console, fail, format_options, handle_errors, option,
    progress_bar, reader_options, scale_notes,
)
from ..report.console.terminal import echo_csv


@app.command("agree")
@handle_errors
@format_options
@reader_options
def agree_command(
    file: Path = typer.Argument(..., readable=False, help="Annotation file (CSV/TSV/JSONL/Parquet/JSON) or AltTest-style folder."),
    judge: list[str] = option("judge"),
    coefficient: list[str] = option("agree.coefficient"),  # the registry's names
    level: Level | None = option("agree.level"),
    weights: str | None = option("agree.weights"),
    abstain_policy: AbstainPolicy = option("agree.abstain_policy"),
    judge_only_items: JudgeOnlyItems = option("agree.judge_only_items"),
    positive: str | None = option("agree.positive"),
    output_format: OutputFormat = option("agree.output_format"),
    seed: int = option("seed"),
    n_resamples: int = option("n_resamples"),
    confidence_level: float = option("confidence_level"),
    matrix: bool = option("agree.matrix"),
    stream: bool = option("agree.stream"),
    scheduler: str | None = option("agree.scheduler"),
    *,
    reader: ReaderOptions,
) -> None:
    """Agreement coefficients with bootstrap intervals: humans among themselves and each judge with them."""
    for c in coefficient or []:
        if c not in COEFFICIENTS:
            fail(f"--coefficient {c!r} is not one of {list(COEFFICIENTS)}.")
    judges = list(dict.fromkeys(judge)) if judge else None  # `-j X -j X` is one judge
    opts: dict[str, Any] = dict(
        coefficients=list(coefficient) if coefficient else None, level=level.value if level else None,
        weights=weights, abstain_policy=abstain_policy.value, judge_only_items=judge_only_items.value,
        confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)
    if stream or scheduler:
        _agree_stream(file, judges, opts, positive, matrix, scheduler, output_format, reader)
    elif reader.by:
        from ..report import render_grouped_comparison
        from ..workflows import compare_raters_by

        grouped = reader.load_groups(file, judges=judges)
        res = compare_raters_by(grouped, judges, positive=positive, matrix=matrix, **opts)
        _emit(res, {"table": grouped.pooled.summary()}, output_format,
              lambda: render_grouped_comparison(console, err_console, res))
    else:
        from ..report import render_comparison
        from ..workflows import compare_raters

        table = reader.load(file, judges=judges)
        with progress_bar("agreement", quiet=output_format != "table") as progress:
            comp = compare_raters(table, judges, positive=positive, matrix=matrix, progress=progress, **opts)
        _emit(comp, {"table": table.summary()}, output_format, lambda: render_comparison(console, err_console, table, comp),
              notes=scale_notes(table, reader), drop=() if comp.matrix is not None else ("matrix",))


def _emit(res: Any, head: dict[str, Any], output_format: OutputFormat, render: Any, *, notes: list[str] | None = None,
          drop: tuple[str, ...] = ()) -> None:
    """``res`` as JSON (``head`` first, ``notes`` before its own, the ``drop`` keys left out), CSV or the terminal."""
    if output_format == "json":
        emit_result_json(res, head, notes=notes, drop=drop)
    elif output_format == "csv":
        echo_csv(res.to_frame())
    else:
        render()


def _agree_stream(file: Path, judges: list[str] | None, opts: dict[str, Any], positive: str | None, matrix: bool,
                  scheduler: str | None, output_format: OutputFormat, reader: ReaderOptions) -> None:
    """``agree --stream``: :func:`voirdire.workflows.compare_raters_stream`, rendered as ``agree`` renders."""
    from types import SimpleNamespace

    from ..report import render_comparison
    from ..workflows import compare_raters_stream
    from ._app import _FORMAT_OPTS

    unsupported = [name for name, given in (
        ("--role", reader.role), ("--cluster", reader.cluster), ("--cluster-sep", reader.cluster_sep),
        ("--matrix", matrix), ("--positive", positive is not None),
        *((f"--{k.replace('_', '-')}", bool(v) and v not in ("auto", "long")) for k, v in _FORMAT_OPTS.get().items()))
        if given]
    if unsupported:
        fail(f"--stream reads a long item/rater/label table in batches; {', '.join(unsupported)} "
             f"{'is' if len(unsupported) == 1 else 'are'} not supported with it (read the file whole instead).")
    if str(file) == "-" or file.suffix.lower() not in (".parquet", ".pq", ".csv", ".tsv", ".tab"):
        fail(f"--stream reads .parquet, .csv or .tsv files; got {str(file)!r}.")
    read = {k: v for k, v in reader.read_kwargs().items() if k not in ("role", "cluster", "cluster_sep")}
    comp, summary = compare_raters_stream(file, judges, reader=read, scheduler=scheduler, **opts)
    _emit(comp, {"table": summary}, output_format,
          lambda: render_comparison(console, err_console, SimpleNamespace(summary=lambda: summary), comp))
