"""The `voirdire agree` command (registered on import): parse, call
:func:`voirdire.workflows.compare_raters`, render."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from ._app import (
    Level, OutputFormat, ReaderOptions, app, console, emit_json, err_console, format_options, handle_errors,
    numeric_nominal_note, reader_options,
)
from ._console import echo_csv
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
    file: Path = typer.Argument(..., readable=False, help="Annotation file (CSV/TSV/JSONL/Parquet/JSON) or AltTest-style folder."),
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
    stream: bool = typer.Option(
        False, "--stream",
        help="Read a Parquet/CSV file in batches, holding per-item statistics only (tables larger than memory; "
             "items must be grouped). Streams observed_agreement, fleiss_kappa, krippendorff_alpha, gwet_ac1/ac2 "
             "and bennett_s."),
    scheduler: str | None = typer.Option(
        None, "--scheduler", help="With --stream: compute the statistics of a Parquet file's row groups on this Dask "
                                  "scheduler (tcp://host:8786; only one you trust: Dask unpickles what it sends); "
                                  "needs voirdire[dask]."),
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
    if stream or scheduler:
        _agree_stream(file, judge, coefficient, level, weights, abstain_policy, judge_only_items, positive,
                      output_format, seed, n_resamples, confidence_level, matrix, scheduler, reader)
        return
    if reader.by:
        _agree_by(file, judge, coefficient, level, weights, abstain_policy, judge_only_items, positive,
                  output_format, seed, n_resamples, confidence_level, matrix, reader)
        return
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
        echo_csv(comp.to_frame())
        return
    render_comparison(console, err_console, table, comp)


def _agree_stream(file: Path, judge: list[str] | None, coefficient: list[str] | None, level: Level | None,
                  weights: str | None, abstain_policy: AbstainPolicy, judge_only_items: JudgeOnlyItems,
                  positive: str | None, output_format: OutputFormat, seed: int, n_resamples: int,
                  confidence_level: float, matrix: bool, scheduler: str | None, reader: ReaderOptions) -> None:
    """``agree --stream``: :func:`voirdire.workflows.compare_raters_stream`, rendered as ``agree`` renders."""
    from types import SimpleNamespace

    from ..exceptions import InvalidParameterError
    from ..report import render_comparison
    from ..workflows import compare_raters_stream
    from ._app import _FORMAT_OPTS

    unsupported = [name for name, given in (
        ("--role", reader.role), ("--cluster", reader.cluster), ("--cluster-sep", reader.cluster_sep),
        ("--matrix", matrix), ("--positive", positive is not None),
        *((f"--{k.replace('_', '-')}", bool(v) and v not in ("auto", "long")) for k, v in _FORMAT_OPTS.get().items()))
        if given]
    if unsupported:
        raise InvalidParameterError(
            f"--stream reads a long item/rater/label table in batches; {', '.join(unsupported)} "
            f"{'is' if len(unsupported) == 1 else 'are'} not supported with it (read the file whole instead).")
    if str(file) == "-" or file.suffix.lower() not in (".parquet", ".pq", ".csv", ".tsv", ".tab"):
        raise InvalidParameterError(f"--stream reads .parquet, .csv or .tsv files; got {str(file)!r}.")
    cats = [c.strip() for part in reader.categories for c in part.split(",") if c.strip()] \
        if reader.categories else None
    opts = dict(scale=reader.scale.value if reader.scale else None, categories=cats, abstain=reader.abstain or (),
                item=reader.item, rater=reader.rater, label=reader.label, duplicates=reader.duplicates.value,
                missing=reader.missing.value)
    comp, summary = compare_raters_stream(
        file, judge or None, reader=opts, coefficients=list(coefficient) if coefficient else None,
        level=level.value if level else None, weights=weights, abstain_policy=abstain_policy.value,
        judge_only_items=judge_only_items.value, confidence_level=confidence_level, n_resamples=n_resamples,
        seed=seed, scheduler=scheduler)
    if output_format == OutputFormat.json:
        emit_json({"table": summary, **comp.to_dict()})
        return
    if output_format == OutputFormat.csv:
        echo_csv(comp.to_frame())
        return
    render_comparison(console, err_console, SimpleNamespace(summary=lambda: summary), comp)


def _agree_by(file: Path, judge: list[str] | None, coefficient: list[str] | None, level: Level | None,
              weights: str | None, abstain_policy: AbstainPolicy, judge_only_items: JudgeOnlyItems,
              positive: str | None, output_format: OutputFormat, seed: int, n_resamples: int,
              confidence_level: float, matrix: bool, reader: ReaderOptions) -> None:
    """``agree --by COLUMN``: :func:`voirdire.workflows.compare_raters_by`, one table per group and the pool."""
    from ..report import render_grouped_comparison
    from ..workflows import compare_raters_by

    grouped = reader.load_groups(file, judges=judge)
    comp = compare_raters_by(grouped, judge or None, coefficients=list(coefficient) if coefficient else None,
                             level=level.value if level else None, weights=weights,
                             abstain_policy=abstain_policy.value, positive=positive, matrix=matrix,
                             judge_only_items=judge_only_items.value, confidence_level=confidence_level,
                             n_resamples=n_resamples, seed=seed)
    if output_format == OutputFormat.json:
        emit_json({"table": grouped.pooled.summary(), **comp.to_dict()})
        return
    if output_format == OutputFormat.csv:
        echo_csv(comp.to_frame())
        return
    render_grouped_comparison(console, err_console, comp)
