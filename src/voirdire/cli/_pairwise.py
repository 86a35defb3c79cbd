"""The `voirdire pairwise` command (registered on import): the Bayesian pairwise model on a file of
A / tie / B verdicts from humans and LLM judges, and optionally the leave-one-human-out comparison."""

from __future__ import annotations

from pathlib import Path

import typer

from ._app import (
    OutputFormat, PairwiseReaderOptions, app, console, emit_json, err_console, fail, format_option, handle_errors,
    judge_option, pairwise_reader_options, seed_option,
)
from ._console import progress_bar


@app.command("pairwise")
@handle_errors
@pairwise_reader_options
def pairwise_command(
    file: Path = typer.Argument(..., readable=False, help="Long table of verdicts: one row per (pair, rater, presented order)."),
    judge: list[str] = judge_option("A rater that is an LLM judge (repeatable)."),
    evaluate: bool = typer.Option(False, "--evaluate", help="Leave-one-human-out comparison with the baselines."),
    group: list[str] = typer.Option(None, "--group", help="Human group for --evaluate: NAME=GROUP or PREFIX*=GROUP (first match wins)."),
    choice: bool = typer.Option(True, "--choice/--no-choice",
                                help="Held-out choice of the forecaster: the model and the baselines forecast held-out "
                                     "humans; the per-pair forecasts shown are those of the lowest held-out NLL "
                                     "(the model on a tie)."),
    choice_folds: int = typer.Option(5, "--choice-folds", help="Folds of humans for the held-out choice (>= 2)."),
    particles: int = typer.Option(300, "--particles", help="SMC particles."),
    update: str = typer.Option("soft", "--update", help="Dirichlet update of the humans' counts: soft or hard."),
    laplace: bool = typer.Option(True, "--laplace/--profile", help="Laplace-corrected or profile-likelihood weights."),
    judge_ties: bool = typer.Option(True, "--judge-ties/--no-judge-ties", help="Learn each judge's tie offset."),
    judge_reliability: bool = typer.Option(True, "--judge-reliability/--no-judge-reliability",
                                           help="Learn each judge's reliability in [0, 1] (0: its verdicts carry no "
                                                "information; both --no-* options: the paper's judge)."),
    calibrated: bool = typer.Option(False, "--calibrated-intervals",
                                    help="Judges' bias intervals of nominal coverage: adaptive quadrature and "
                                         "a batch move of the particles after the stream (about 3x the time)."),
    mode: str = typer.Option("auto", "--mode", help="Particles: joint, per-judge, or auto (per-judge above 16 judges)."),
    seed: int = seed_option("Random seed (reproducible results)."),
    top: int = typer.Option(10, "--top", help="How many of the most uncertain pairs to list (0: none)."),
    max_humans: int = typer.Option(8, "--max-humans", help="Confusion matrices shown in the table output."),
    save_state: Path = typer.Option(None, "--save-state", readable=False, help="Save the model state (.npz) to resume the stream."),
    resume: Path = typer.Option(None, "--resume", readable=False, help="Continue the stream from a saved state (model options come from the state)."),
    fmt: OutputFormat = format_option(OutputFormat.table, "table, json, or csv (one row per pair; with --evaluate the "
                                                          "comparison)."),
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

    if particles < 1:  # option checks before any reading (fit_pairwise checks them again)
        fail(f"--particles must be an integer >= 1. Got {particles}.")
    if top < 0:
        fail(f"--top must be an integer >= 0 (0 lists no pair). Got {top}.")
    if max_humans < 0:
        fail(f"--max-humans must be an integer >= 0. Got {max_humans}.")
    if update not in ("soft", "hard"):
        fail(f"--update must be 'soft' or 'hard'. Got {update!r}.")
    if mode not in ("auto", "joint", "per-judge"):
        fail(f"--mode must be auto, joint or per-judge. Got {mode!r}.")
    if choice_folds < 2:
        fail(f"--choice-folds must be an integer >= 2. Got {choice_folds}.")
    preader.verdict_spellings()  # a malformed --verdict-map fails before any reading
    if save_state is not None:  # the state may replace --resume's file (atomically), never the votes
        from .._io import check_not_input

        check_not_input(save_state, [file])
    table, _ = preader.read(file, judges=judge)
    step = "leave-one-human-out fits"
    with progress_bar(step, quiet=fmt != OutputFormat.table or not (evaluate or choice), count=True) as progress:
        fit = fit_pairwise(table, n_particles=particles, update=update, laplace=laplace, judge_ties=judge_ties,
                           judge_reliability=judge_reliability, calibrated=calibrated, mode=mode, seed=seed, top=top,
                           resume=resume, evaluate=evaluate, groups=group or (), choose=choice,
                           choice_folds=choice_folds,
                           progress=lambda done, total: progress(step, done, total))
    if save_state is not None:
        fit.model.save(save_state)
    if fmt == OutputFormat.csv:  # one table: the chosen forecaster's pairs (stream order), or with --evaluate the comparison
        from ._console import echo_csv

        echo_csv(fit.forecasts if fit.evaluation is None else fit.evaluation.table)
    elif fmt == OutputFormat.json:
        emit_json(pairwise_json(fit, str(file)))
    else:
        render_pairwise(console, err_console, fit, file=str(file), max_humans=max_humans,
                        save_state=None if save_state is None else str(save_state))
