"""The `voirdire plan` and `voirdire overlap` commands (registered on import).

``overlap`` shows who labelled what and what the leave-one-out rule can use; ``plan`` turns a pilot
(or given moments) into the overlap each comparison needs (m*_cert, m*_rank) and, with
``--budget``, simulates the decision's false-reject and false-accept rates at candidate budgets.
"""

from __future__ import annotations

from pathlib import Path

import typer

from .._option_specs import DesignName, ScoreName, TableOrJson
from ._app import (
    ReaderOptions, app, console, emit_json, err_console, fail, format_options, handle_errors, option,
    reader_options,
)
from ..report.console.terminal import progress_bar


def _unique(names: list[str] | None) -> list[str] | None:
    """Names in order, each once (`-j X -j X` is one judge)."""
    return list(dict.fromkeys(names)) if names else names


@app.command("overlap")
@handle_errors
@format_options
@reader_options
def overlap_command(
    file: Path = typer.Argument(..., readable=False, help="Annotation file (long CSV/TSV/JSONL/Parquet, or an AltTest directory)."),
    judge: list[str] = option("judge"),
    primary: str | None = option("overlap.primary"),
    min_eligible: int = option("overlap.min_eligible"),
    output: TableOrJson = option("format"),
    judge_file: Path | None = option("judge_file"),
    *,
    reader: ReaderOptions,
) -> None:
    """Who labelled what: per-rater coverage, shared items, and what the leave-one-out rule can use.

    Expected overlap assumes each partial rater's items were an independent random subset: with
    coverage rho that is rho*n items with the primary but only rho^2*n between two secondaries.
    """
    from ..report.console.plan import overlap_json, render_overlap
    from ..workflows import design_overview

    table = reader.load(file, judges=_unique(judge), judge_file=judge_file)
    res = design_overview(table, primary=primary, min_eligible=min_eligible)
    if output == "json":
        emit_json(overlap_json(res))
    else:
        render_overlap(console, err_console, res)


def _budget_list(values: list[str] | None) -> list[int]:
    out: list[int] = []
    for part in (p.strip() for v in values or [] for p in str(v).split(",")):
        if part:
            if not part.lstrip("-").isdigit():
                fail(f"--budget takes whole numbers of items per secondary human. Got {part!r}.")
            if int(part) < 1:
                fail(f"--budget values must be >= 1. Got {int(part)}.")
            out.append(int(part))
    return out


@app.command("plan")
@handle_errors
@format_options
@reader_options
def plan_command(
    file: Path | None = typer.Argument(None, readable=False, help="Pilot annotation file (omit to plan from --mu-d/--sigma0)."),
    judge: list[str] = option("plan.judge"),
    epsilon: float = option("plan.epsilon"),
    significance_level: float = option("plan.significance_level"),
    score: ScoreName = option("plan.score"),
    mu_d: float | None = option("plan.mu_d"),
    sigma0: float | None = option("plan.sigma0"),
    delta_min: float | None = option("plan.delta_min"),
    n_judges: int | None = option("plan.n_judges"),
    budget: list[str] = option("plan.budget"),
    design: DesignName = option("plan.design"),
    repetitions: int = option("plan.repetitions"),
    fr_target: float = option("plan.fr_target"),
    fa_target: float = option("plan.fa_target"),
    n_jobs: int = option("plan.n_jobs"),
    seed: int = option("plan.seed"),
    n_resamples: int = option("n_resamples"),
    output: TableOrJson = option("format"),
    judge_file: Path | None = option("judge_file"),
    *,
    reader: ReaderOptions,
) -> None:
    """How many overlapping human labels you need to certify a judge, or to rank several.

    m*_cert = ceil(z^2 sigma0^2 / (mu_d + epsilon)^2) eligible items per held-out human keeps one
    comparison's false-reject probability below a/2; m*_rank adds Bonferroni over the rivals.
    Asymptotic planning aids: --budget checks them by simulating the whole decision. The "Next:"
    batch is checked by simulation on the file's own structure before it is printed.
    """
    from ..report.console.plan import assign_options, plan_json, render_plan
    from ..workflows import plan_from_moments, plan_validation

    budgets = _budget_list(budget)
    if file is None:
        if mu_d is None and sigma0 is None and delta_min is None:
            fail("Give a pilot FILE, or the moments --mu-d and --sigma0 (and --delta-min --n-judges to rank).")
        if sigma0 is None:
            fail("--sigma0 is needed to plan without a pilot.")
        if delta_min is not None and n_judges is None:
            fail("--delta-min needs --n-judges.")
        if budgets:
            fail("--budget simulates from a pilot: give the pilot FILE.")
        res = plan_from_moments(mu_d=mu_d, sigma0=sigma0, delta_min=delta_min, n_judges=n_judges, epsilon=epsilon,
                                significance_level=significance_level)
    else:
        table = reader.load(file, judges=_unique(judge), judge_file=judge_file)
        judges = _unique(list(judge)) if judge else list(table.judges)
        if not judges:
            fail(f"{file}: no judge. Name it with --judge.")
        if len(table.humans) < 2:
            fail(f"{file}: planning needs at least two human raters; found {len(table.humans)}.")
        step = "simulating budgets"
        with progress_bar(step, quiet=output != "table" or not budgets, count=True) as progress:
            res = plan_validation(table, judges, epsilon=epsilon, significance_level=significance_level,
                                  score=score.value, seed=seed, n_resamples=n_resamples, budgets=budgets,
                                  design=design.value, fr_target=fr_target, fa_target=fa_target,
                                  n_repetitions=repetitions, n_jobs=n_jobs,
                                  progress=lambda done, total: progress(step, done, total))
    if output == "json":
        emit_json(plan_json(res, None if file is None else str(file)))
    else:
        render_plan(console, err_console, res, file=None if file is None else str(file),
                    options=assign_options(reader.read_kwargs(), _unique(judge), judge_file))
