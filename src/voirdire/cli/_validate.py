"""The `voirdire validate` command (registered on import): parse, call
:func:`voirdire.workflows.validate_judges` (``--by``: ``validate_judges_by``), render; the exit code can gate a
pipeline (``--fail-on``)."""

from __future__ import annotations

import sys

from pathlib import Path
from typing import Any

import typer

from .._io import check_not_input, write_text
from .._option_specs import Correction, Method, PerHumanTest, RankBy, ScoreName, Scoring
from ._app import (
    EXIT_GATE, ReaderOptions, app, console, emit_json, emit_result_json, err_console, fail, format_options,
    handle_errors, option, reader_options, require_overlap, scale_notes,
)
from ..report.console.terminal import styled


#: ``--format`` of ``validate``: the shared table/json/csv plus the CI summaries.
FORMATS = ("table", "json", "csv", "markdown", "junit")


@app.command("validate")
@handle_errors
@format_options
@reader_options
def validate_command(
    file: Path = typer.Argument(..., readable=False, help="Annotation file (CSV/TSV/JSONL/Parquet/JSON) or AltTest-style folder."),
    judge: list[str] = option("validate.judge"),
    method: Method = option("validate.method"),
    epsilon: float | None = option("validate.epsilon"),
    alt_epsilon: float | None = option("validate.alt_epsilon"),
    score: ScoreName | None = option("validate.score"),
    scoring: Scoring | None = option("validate.scoring"),
    threshold: float = option("validate.threshold"),
    min_items: int = option("validate.min_items"),
    correction: Correction = option("validate.correction"),
    test: PerHumanTest = option("validate.test"),
    q: float = option("validate.q"),
    min_items_per_human: int = option("validate.min_items_per_human"),
    min_humans_per_item: int = option("validate.min_humans_per_item"),
    rank_by: RankBy | None = option("validate.rank_by"),
    stability_threshold: float = option("validate.stability_threshold"),
    reference_floor: float = option("validate.reference_floor"),
    fail_on: str | None = option("validate.fail_on"),
    output_format: str = option("validate.output_format"),
    junit: Path | None = option("validate.junit"),
    seed: int = option("seed"),
    n_resamples: int = option("n_resamples"),
    confidence_level: float = option("confidence_level"),
    exclude_rater: list[str] = option("validate.exclude_rater"),
    check_raters: bool = option("validate.check_raters"),
    sequential: bool = option("validate.sequential"),
    round_column: str | None = option("validate.round_column"),
    group_error: str = option("validate.group_error"),
    *,
    reader: ReaderOptions,
) -> None:
    """May this LLM judge stand in for the humans? Verdicts, leave-one-human-out rule and Alternative Annotator Test."""
    if output_format not in FORMATS:
        fail(f"--format must be one of {list(FORMATS)}. Got {output_format!r}.")
    if junit is not None:
        if sequential or round_column is not None or reader.by:
            fail("--junit writes the JUnit report of a plain validation, not with --sequential or --by.")
        check_not_input(junit, [file])
        if junit.is_dir() or not junit.parent.is_dir():  # said before the work, not after it
            fail(f"Cannot write --junit {str(junit)!r}: " + ("it is a folder." if junit.is_dir() else
                 f"the folder {str(junit.parent)!r} does not exist. Create it first."))
    if (sequential or round_column is not None) and reader.by:
        fail("--by is not available with --sequential yet; watch each group with --where COLUMN=VALUE.")
    if sequential or round_column is not None:
        _validate_sequential(file, judge, method, epsilon, q, seed, round_column, fail_on, output_format, reader)
        return
    from ..workflows import method_margins

    loo_epsilon, alt_test_epsilon = method_margins(method.value, epsilon, alt_epsilon)
    opts: dict[str, Any] = dict(
        method=method.value, score=None if score is None else score.value,
        scoring=None if scoring is None else scoring.value, epsilon=loo_epsilon, alt_test_epsilon=alt_test_epsilon,
        threshold=threshold, min_items=min_items, correction=correction.value, test=test.value, q=q,
        min_items_per_human=min_items_per_human, min_humans_per_item=min_humans_per_item,
        rank_by=None if rank_by is None else rank_by.value, confidence_level=confidence_level,
        n_resamples=n_resamples, seed=seed, stability_threshold=stability_threshold,
        reference_floor=reference_floor, exclude_raters=exclude_rater or None, check_raters=check_raters)
    if reader.by:
        _validate_by(file, judge, opts, fail_on, output_format, group_error, reader)
        return
    from ..report import render_junit, render_markdown, render_validation
    from ..report.console.raters import sensitivity_lines
    from ..workflows import judges_to_validate, validate_judges, validated_table

    table = reader.load(file, judges=judge)
    require_overlap(table)
    res = validate_judges(table, judges_to_validate(table, judge), **opts)
    table = validated_table(table, res)
    if output_format == "json":
        emit_result_json(res, {"table": table.summary()}, notes=scale_notes(table, reader))
    elif output_format == "csv":
        from ..report.console.terminal import echo_csv

        echo_csv(res.methods_frame())
    elif output_format in ("markdown", "junit"):
        sys.stdout.write((render_markdown if output_format == "markdown" else render_junit)(res, fail_on=fail_on))
    else:
        render_validation(console, err_console, table, res)
        sensitivity_lines(console, res.annotators, [j.sensitivity for j in res.judges if j.sensitivity is not None])
    if junit is not None:
        write_text(junit, render_junit(res, fail_on=fail_on), inputs=[file])
    _gate(fail_on, res, output_format)


def _gate(fail_on: str | None, res: Any, output_format: str, where: str = "") -> None:
    """``--fail-on``: exit with code 3 when a verdict of ``res`` fails the gate (said on stderr with the table
    format; :func:`voirdire.workflows.gate_failures`)."""
    from ..workflows import gate_failures

    failing = [] if fail_on is None else gate_failures(res, fail_on)
    if failing:
        if output_format == "table":
            err_console.print(styled(("gate failed", "bold red"), f" (--fail-on {fail_on}{where}): "
                                     + ", ".join(failing)), highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_GATE)


def _validate_sequential(file: Path, judge: list[str] | None, method: Any, epsilon: float | None, q: float, seed: int,
                         round_column: str | None, fail_on: str | None, output_format: str,
                         reader: ReaderOptions) -> None:
    """``validate --sequential``: the anytime-valid rule of ``voirdire watch`` (its reading and
    :func:`voirdire.workflows.sequential_validation`), the verdicts beside it; "continue" counts as inconclusive."""
    from ..report.console.watch import render_looks, render_verdicts
    from ._watch import read_watch

    if round_column is None:
        fail("--sequential needs --round-column COL: the column with each label's round (batch or time).")
    if method.value == "both":
        fail("--sequential runs one method: add --method alt-test or --method loo.")
    if output_format not in ("table", "json"):
        fail(f"--sequential writes table or json. Got --format {output_format}.")
    res, table = read_watch(file, judges=list(judge or []), round_column=round_column, method=method.value,
                            epsilon=epsilon, q=q, seed=seed, reader=reader)
    if output_format == "json":
        emit_json({"file": str(file), "judges": [r.to_dict() for r in res.results], "verdicts": res.verdicts_dict()})
    else:
        render_looks(console, res.results, n_items=table.n_items)
        render_verdicts(console, res)
    _gate(fail_on, res, output_format)


def _validate_by(file: Path, judge: list[str] | None, opts: dict[str, Any], fail_on: str | None,
                 output_format: str, group_error: str, reader: ReaderOptions) -> None:
    """``validate --by COLUMN``: one verdict per (judge, group), the pooled one, the rules across groups;
    the gate fails when any (judge, group) verdict fails, naming them."""
    from ..report import grouped_junit, grouped_markdown, render_grouped_validation
    from ..workflows import judges_to_validate, validate_judges_by

    grouped = reader.load_groups(file, judges=judge)
    res = validate_judges_by(grouped, judges_to_validate(grouped.pooled, judge), group_error=group_error, **opts)  # type: ignore[arg-type]
    if output_format == "json":
        emit_json({"table": grouped.pooled.summary(), **res.to_dict(), "records": [c.to_dict() for c in res.cells]})
    elif output_format == "csv":
        from ..report.console.terminal import echo_csv

        echo_csv(res.to_frame())
    elif output_format in ("markdown", "junit"):
        sys.stdout.write((grouped_markdown if output_format == "markdown" else grouped_junit)(res, fail_on=fail_on))
    else:
        render_grouped_validation(console, err_console, res)
    _gate(fail_on, res, output_format, f" --by {','.join(res.by)}")
