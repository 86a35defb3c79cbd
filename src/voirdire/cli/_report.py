"""The `voirdire report` command (registered on import): annotation file -> report.html + report.json."""

from __future__ import annotations

from pathlib import Path

import typer

from ._app import (
    PairwiseReaderOptions, ReaderOptions, app, console, err_console, fail, format_options, handle_errors, option,
    pairwise_reader_options, progress_bar, reader_options,
)


@app.command("report")
@handle_errors
@format_options
@pairwise_reader_options
@reader_options
def report_command(
    file: Path | None = typer.Argument(None, readable=False, help="Annotation file (CSV/TSV/JSONL/Parquet/JSON) or AltTest-style "
                                                  "folder; omit it for a pairwise-only report (--pairwise)."),
    judge: list[str] = option("judge"),
    out: Path = option("report.out"),
    pairwise: Path | None = option("report.pairwise"),
    pairwise_judge: list[str] = option("report.pairwise_judge"),
    choice: bool = option("report.choice"),
    choice_folds: int = option("report.choice_folds"),
    inclusion_prob: str | None = option("report.inclusion_prob"),
    seed: int = option("report.seed"),
    confidence_level: float = option("report.confidence_level"),
    n_resamples: int = option("report.n_resamples"),
    epsilon: float = option("report.epsilon"),
    alt_epsilon: float = option("report.alt_epsilon"),
    stability_threshold: float = option("report.stability_threshold"),
    reference_floor: float = option("report.reference_floor"),
    title: str | None = option("report.title"),
    unsampled: str = option("report.unsampled"),
    quiet: bool = option("report.quiet"),
    *,
    reader: ReaderOptions,
    preader: PairwiseReaderOptions,
) -> None:
    """Write a self-contained HTML validation report (with plots) and a JSON file with every number."""
    from ..report import build_report, write_report
    from ..report.console.report import render_written_report

    if file is None and pairwise is None:
        fail("give an annotation file, or --pairwise VOTES for a pairwise-only report.")
    table = None
    grouped = None
    if file is not None and reader.by and inclusion_prob is not None and unsampled != "error":
        fail("--unsampled with --by is not available yet: report each group with --where COLUMN=VALUE.")
    if file is not None and reader.by:  # --by: the page is the pool's, with a "By group" section
        grouped = reader.load_groups(file, judges=judge)
        table = grouped.pooled
    elif file is not None:
        table = reader.load(file, judges=judge)
        if not table.judges:
            fail("no LLM judge: name one with --judge NAME (or mark judges in a --role column).")
    elif inclusion_prob is not None:
        fail("--inclusion-prob needs the annotation file (it is about the graded items).")
    pi = None
    by_estimate = None
    if inclusion_prob is not None and grouped is not None and file is not None:  # as `estimate --by` at this seed
        from ..workflows import estimate_from_file

        by_estimate = estimate_from_file(file, grouped, list(dict.fromkeys(judge)) or list(grouped.pooled.judges),
                                         inclusion_prob, role=reader.role, item=reader.item, rater=reader.rater,
                                         confidence_level=confidence_level, seed=seed)
    elif inclusion_prob is not None and file is not None and table is not None:
        from ..workflows import read_inclusion_prob

        pi = read_inclusion_prob(inclusion_prob, file, table, item=reader.item, rater=reader.rater, unsampled=unsampled)
    ptable = None
    pcov = None
    if pairwise is not None:
        # judges: --pairwise-judge, else the file's 'role' column, else the --judge names in it
        ptable, pcov = preader.read(pairwise, judges=pairwise_judge,
                                    fallback_judges=judge or (table.judges if table is not None else ()),
                                    covariates=True, role_if_present=True)  # + length, self-preference
    with progress_bar("Reading", quiet=quiet, elapsed=True) as progress:
        rep = build_report(table, judges=list(dict.fromkeys(judge)) if judge and table is not None else None,
                           pairwise=ptable, pairwise_covariates=pcov, inclusion_prob=pi, seed=seed,
                           confidence_level=confidence_level,
                           n_resamples=n_resamples, epsilon=epsilon, alt_test_epsilon=alt_epsilon,
                           stability_threshold=stability_threshold, reference_floor=reference_floor,
                           input_path=file if file is not None else pairwise, pairwise_path=pairwise,
                           title=title, progress=progress, unsampled=unsampled, grouped=grouped,
                           pairwise_choice=choice, pairwise_choice_folds=choice_folds, grouped_estimate=by_estimate)
        progress("Writing", 1, 1)
        paths = write_report(rep, out, inputs=[f for f in (file, pairwise) if f is not None])
    problem = render_written_report(console, err_console, rep, paths)
    if problem:  # a page of errors is no report: say so
        fail(problem)

