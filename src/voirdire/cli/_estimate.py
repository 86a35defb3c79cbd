"""The `voirdire estimate` and `voirdire plan-estimate` commands (registered on import).

``estimate`` reads a long annotation file in which the LLM judge scores every item and humans
score a designed subsample. The inclusion probabilities live in the same file: ``--inclusion-prob
COLUMN`` names a column holding, on the rows of each item (at least on its human rows), the
probability that the item was sent to humans; it must be the same on every row of an item.
``--inclusion-prob 0.1`` gives one probability for all items instead.
"""

from __future__ import annotations

from pathlib import Path

import typer

from .._option_specs import Design, Model, TableOrJson, Target
from ._app import (
    ReaderOptions, app, console, emit_json, err_console, fail, format_options, handle_errors, option,
    reader_options,
)


@app.command("estimate")
@handle_errors
@format_options
@reader_options(command="estimate", only=("scale", "abstain", "item", "rater", "label", "role", "cluster",
                                          "cluster_sep", "duplicates", "missing"))
def estimate_command(
    file: Path = typer.Argument(..., readable=False, help="Long annotation file (CSV/TSV/JSONL/Parquet): one row per item, rater, score."),
    judges: list[str] = option("estimate.judges"),
    inclusion_prob: str = option("estimate.inclusion_prob"),
    model: Model = option("estimate.model"),
    cross_fit: int = option("estimate.cross_fit"),
    strata: str | None = option("estimate.strata"),
    target: Target = option("estimate.target"),
    confidence_level: float = option("confidence_level"),
    compare: bool = option("estimate.compare"),
    drop_unscored: bool = option("estimate.drop_unscored"),
    seed: int = option("estimate.seed"),
    output: TableOrJson = option("format"),
    *,
    reader: ReaderOptions,
) -> None:
    """Estimate the mean human score from LLM scores on every item and human scores on a designed subsample.

    Doubly robust: the judge's score, corrected by the humans' residuals weighted by 1/inclusion
    probability. Valid whatever the judge's quality, because the probabilities are known by design.
    """
    from ..report.console.estimate import estimate_warnings, render_estimate
    from ..workflows import estimate_from_file

    if reader.scale == "nominal":
        fail("--scale nominal has no mean; use interval (default), ratio or ordinal with numeric scores.")
    judges = list(dict.fromkeys(judges))  # a judge named twice is one predictor
    # with --by: one table per group and the pooled one (one estimate each)
    table = reader.load_groups(file, judges=judges) if reader.by else reader.load(file, judges=judges)
    res = estimate_from_file(file, table, judges, inclusion_prob, strata=strata, role=reader.role, item=reader.item,
                             rater=reader.rater, model=model.value, cross_fit=cross_fit or "auto", target=target.value,
                             confidence_level=confidence_level, compare=compare, drop_unscored=drop_unscored,
                             seed=seed)
    if output == "json":
        estimate_warnings(err_console, res)
        emit_json(res.to_dict())
    else:
        render_estimate(console, err_console, res)


@app.command("plan-estimate")
@handle_errors
@format_options
@reader_options(command="plan-estimate", only=("scale", "abstain", "item", "rater", "label", "role", "duplicates",
                                               "missing"))
def plan_estimate_command(
    target_halfwidth: float | None = option("plan-estimate.target_halfwidth"),
    n_star: float | None = option("plan-estimate.n_star"),
    effect_size: float | None = option("plan-estimate.effect_size"),
    power: float = option("plan-estimate.power"),
    significance_level: float = option("plan-estimate.significance_level"),
    confidence_level: float = option("plan-estimate.confidence_level"),
    sd: float | None = option("plan-estimate.sd"),
    r2: float | None = option("plan-estimate.r2"),
    pilot: Path | None = option("plan-estimate.pilot"),
    judges: list[str] = option("plan-estimate.judges"),
    design: Design = option("plan-estimate.design"),
    cost_column: str | None = option("plan-estimate.cost_column"),
    pilot_prob: str | None = option("plan-estimate.pilot_prob"),
    floor: float | None = option("plan-estimate.floor"),
    model: Model = option("plan-estimate.model"),
    n_total: int | None = option("plan-estimate.n_total"),
    n_labeled: int | None = option("plan-estimate.n_labeled"),
    inclusion_prob: float | None = option("plan-estimate.inclusion_prob"),
    strata_file: Path | None = option("plan-estimate.strata_file"),
    budget: float | None = option("plan-estimate.budget"),
    min_prob: float = option("plan-estimate.min_prob"),
    draw: Path | None = option("plan-estimate.draw"),
    draw_out: Path | None = option("plan-estimate.draw_out"),
    strata_column: str | None = option("plan-estimate.strata_column"),
    seed: int = option("plan-estimate.seed"),
    output: TableOrJson = option("format"),
    *,
    reader: ReaderOptions,
) -> None:
    """Plan a two-stage study: how many items the LLM and the humans must score, or where to put the human labels.

    Solves 1/n* = R\u00b2/N + (1 - R\u00b2)/n for the missing one of n* (from --target-halfwidth,
    --effect-size or --n-star), N and n (or pi). With --strata and --budget: Neyman allocation.
    With --draw ITEMS --out FILE: also draw the Poisson human sample and write it with the
    probabilities beside it (N defaults to the number of items in ITEMS).
    """
    from .._io import check_not_input
    from ..report.console.estimate import plan_estimate_warnings, render_plan_estimate
    from ..workflows import plan_estimation, write_plan_sample

    judges = list(dict.fromkeys(judges or []))  # a judge named twice is one predictor
    if design == "standard":
        if (draw is None) != (draw_out is None):
            fail("--draw ITEMS and --out FILE go together (the items to sample from, and where to write the sample).")
        if draw_out is not None:
            check_not_input(draw_out, [draw, pilot, strata_file])  # --out over an input would destroy it
    plan = plan_estimation(
        design=design.value, target_halfwidth=target_halfwidth, n_star=n_star, effect_size=effect_size, power=power,
        significance_level=significance_level, confidence_level=confidence_level, sd=sd, r2=r2, pilot=pilot,
        read_pilot=lambda js: reader.load(pilot, judges=js),  # type: ignore[arg-type]
        judges=judges, model=model.value, n_total=n_total, n_labeled=n_labeled, inclusion_prob=inclusion_prob,
        strata=strata_file, budget=budget, min_prob=min_prob, draw=draw, strata_column=strata_column, out=draw_out,
        cost_column=cost_column, pilot_prob=pilot_prob, floor=floor, item=reader.item, rater=reader.rater,
        seed=seed)
    write_plan_sample(plan, draw_out, inputs=[draw, pilot, strata_file])  # type: ignore[arg-type]
    if output == "json":
        plan_estimate_warnings(err_console, plan)
        emit_json(plan.to_dict())
    else:
        render_plan_estimate(console, err_console, plan)
