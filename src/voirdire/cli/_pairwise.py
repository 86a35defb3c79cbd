"""The `voirdire pairwise` command (registered on import): the Bayesian pairwise model on a file of
A / tie / B verdicts from humans and LLM judges, and optionally the leave-one-human-out comparison."""

from __future__ import annotations

from pathlib import Path

import typer

from .._option_specs import OutputFormat
from ._app import (
    PairwiseReaderOptions, app, console, emit_json, err_console, handle_errors, option, pairwise_reader_options,
)
from ..report.console.terminal import progress_bar


@app.command("pairwise")
@handle_errors
@pairwise_reader_options
def pairwise_command(
    file: Path = typer.Argument(..., readable=False, help="Long table of verdicts: one row per (pair, rater, presented order)."),
    judge: list[str] = option("pairwise.judge"),
    evaluate: bool = option("pairwise.evaluate"),
    group: list[str] = option("pairwise.group"),
    choice: bool = option("pairwise.choice"),
    choice_folds: int = option("pairwise.choice_folds"),
    particles: int = option("pairwise.particles"),
    update: str = option("pairwise.update"),
    laplace: bool = option("pairwise.laplace"),
    judge_ties: bool = option("pairwise.judge_ties"),
    judge_reliability: bool = option("pairwise.judge_reliability"),
    calibrated: bool = option("pairwise.calibrated"),
    mode: str = option("pairwise.mode"),
    seed: int = option("pairwise.seed"),
    top: int = option("pairwise.top"),
    max_humans: int = option("pairwise.max_humans"),
    save_state: Path = option("pairwise.save_state"),
    resume: Path = option("pairwise.resume"),
    fmt: OutputFormat = option("pairwise.fmt"),
    *,
    preader: PairwiseReaderOptions,
) -> None:
    """Position biases of the judges, confusion matrices of the humans, and the most uncertain pairs.

    The BayesJudge model (streaming SMC): a judge asked in both orders (AB and BA) reveals its
    position bias; humans are modelled with 3x3 confusion matrices. With --evaluate, every human
    is held out in turn and predicted from everything else, by BayesJudge and the baselines
    (majority vote, Bradley-Terry-Davidson, Dawid-Skene, MACE, GLAD).
    """
    from ..report.console.pairwise import pairwise_json, render_pairwise
    from ..workflows import fit_pairwise

    if save_state is not None:  # the state may replace --resume's file (atomically), never the votes
        from .._io import check_not_input

        check_not_input(save_state, [file])
    table, _ = preader.read(file, judges=judge)
    step = "leave-one-human-out fits"
    with progress_bar(step, quiet=fmt != "table" or not (evaluate or choice), count=True) as progress:
        fit = fit_pairwise(table, n_particles=particles, update=update, laplace=laplace, judge_ties=judge_ties,
                           judge_reliability=judge_reliability, calibrated=calibrated, mode=mode, seed=seed, top=top,
                           resume=resume, evaluate=evaluate, groups=group or (), choose=choice,
                           choice_folds=choice_folds,
                           progress=lambda done, total: progress(step, done, total))
    if save_state is not None:
        fit.model.save(save_state)
    if fmt == "csv":  # one table: the chosen forecaster's pairs (stream order), or with --evaluate the comparison
        from ..report.console.terminal import echo_csv

        echo_csv(fit.forecasts if fit.evaluation is None else fit.evaluation.table)
    elif fmt == "json":
        emit_json(pairwise_json(fit, str(file)))
    else:
        render_pairwise(console, err_console, fit, file=str(file), max_humans=max_humans,
                        save_state=None if save_state is None else str(save_state))
