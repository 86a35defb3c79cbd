"""The `voirdire estimate` and `voirdire plan-estimate` commands (registered on import).

``estimate`` reads a long annotation file in which the LLM judge scores every item and humans
score a designed subsample. The inclusion probabilities live in the same file: ``--inclusion-prob
COLUMN`` names a column holding, on the rows of each item (at least on its human rows), the
probability that the item was sent to humans; it must be the same on every row of an item.
``--inclusion-prob 0.1`` gives one probability for all items instead.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from ._app import (
    Level, ReaderOptions, TableOrJson, app, confidence_level_option, console, emit_json, err_console, fail,
    format_option, format_options, handle_errors, judge_option, reader_options, seed_option,
)


class Model(str, Enum):
    calibrated = "calibrated"
    identity = "identity"
    linear = "linear"
    ridge = "ridge"
    isotonic = "isotonic"
    gbm = "gbm"


class Target(str, Enum):
    superpopulation = "superpopulation"
    finite = "finite"


class Design(str, Enum):
    standard = "standard"
    active = "active"


#: What ``estimate`` and ``plan-estimate`` read: numeric scores.
_SCORES = dict(scale="Level of the scores (numeric).", abstain="A score value meaning 'cannot assess' (repeatable).",
               label="Score column.")


@app.command("estimate")
@handle_errors
@format_options
@reader_options(only=("scale", "abstain", "item", "rater", "label", "role", "cluster", "cluster_sep", "duplicates",
                      "missing"), defaults=dict(scale=Level.interval),
                helps=dict(_SCORES, cluster="Column grouping items into clusters.",
                           cluster_sep="Cluster = item id before this separator."))
def estimate_command(
    file: Path = typer.Argument(..., readable=False, help="Long annotation file (CSV/TSV/JSONL/Parquet): one row per item, rater, score."),
    judges: list[str] = judge_option("An LLM judge (repeatable: several judges, prompts or samples are combined); "
                                     "each must score every item.", required=True),
    inclusion_prob: str = typer.Option(..., "--inclusion-prob", "-p",
                                       help="Probability each item was sent to humans: a number for all items, or a "
                                            "column of FILE (constant within an item)."),
    model: Model = typer.Option(Model.calibrated, "--model",
                                help="Prediction of the human score from the judges': calibrated (ridge + power "
                                     "tuning, never worse than human-only), identity (the paper's), linear, ridge, "
                                     "isotonic, gbm."),
    cross_fit: int = typer.Option(0, "--cross-fit",
                                  help="Cross-fitting folds (1 = none); 0 (default) = auto: leave-one-out for "
                                       "calibrated/linear/ridge up to 2000 labelled units, else 5."),
    strata: str | None = typer.Option(None, "--strata", help="Column of FILE with the design stratum of each item."),
    target: Target = typer.Option(Target.superpopulation, "--target",
                                  help="superpopulation (items sampled from a larger pool) or finite (these items)."),
    confidence_level: float = confidence_level_option(),
    compare: bool = typer.Option(True, "--compare/--no-compare", help="Also show human-only and PPI++ estimates."),
    drop_unscored: bool = typer.Option(False, "--drop-unscored",
                                       help="Drop items the judge did not score instead of failing."),
    seed: int = seed_option("Seed of the cross-fitting folds."),
    output: TableOrJson = format_option(TableOrJson.table),
    *,
    reader: ReaderOptions,
) -> None:
    """Estimate the mean human score from LLM scores on every item and human scores on a designed subsample.

    Doubly robust: the judge's score, corrected by the humans' residuals weighted by 1/inclusion
    probability. Valid whatever the judge's quality, because the probabilities are known by design.
    """
    from ..report.console.estimate import estimate_warnings, render_estimate
    from ..workflows import estimate_from_file

    if reader.scale == Level.nominal:
        fail("--scale nominal has no mean; use interval (default), ratio or ordinal with numeric scores.")
    judges = list(dict.fromkeys(judges))  # a judge named twice is one predictor
    # with --by: one table per group and the pooled one (one estimate each)
    table = reader.load_groups(file, judges=judges) if reader.by else reader.load(file, judges=judges)
    res = estimate_from_file(file, table, judges, inclusion_prob, strata=strata, role=reader.role, item=reader.item,
                             rater=reader.rater, model=model.value, cross_fit=cross_fit or "auto", target=target.value,
                             confidence_level=confidence_level, compare=compare, drop_unscored=drop_unscored,
                             seed=seed)
    if output == TableOrJson.json:
        estimate_warnings(err_console, res)
        emit_json(res.to_dict())
    else:
        render_estimate(console, err_console, res)


@app.command("plan-estimate")
@handle_errors
@format_options
@reader_options(only=("scale", "abstain", "item", "rater", "label", "role", "duplicates", "missing"),
                defaults=dict(scale=Level.interval),
                helps=dict(item="Item id column of the pilot and --draw files.", rater="Rater column of the pilot.",
                           label="Score column of the pilot.", scale="Level of the pilot's scores.",
                           role="Column with human/judge per row of the pilot (instead of --judge).",
                           abstain="A pilot score meaning 'cannot assess' (repeatable)."))
def plan_estimate_command(
    target_halfwidth: float | None = typer.Option(None, "--target-halfwidth", help="Wanted CI half-width (score units)."),
    n_star: float | None = typer.Option(None, "--n-star", help="Human-only sample size whose precision to match."),
    effect_size: float | None = typer.Option(None, "--effect-size", help="Difference to detect (score units)."),
    power: float = typer.Option(0.8, "--power", help="Power for --effect-size."),
    significance_level: float = typer.Option(0.05, "--significance-level", help="Test level for --effect-size."),
    confidence_level: float = confidence_level_option("Level for --target-halfwidth."),
    sd: float | None = typer.Option(None, "--sd", help="Standard deviation of the human scores (or from --pilot)."),
    r2: float | None = typer.Option(None, "--r2", help="Share of the human variance the judge explains, in [0, 1)."),
    pilot: Path | None = typer.Option(None, "--pilot", readable=False, help="Pilot annotation file (judge and humans on the same items)."),
    judges: list[str] = judge_option("A judge in the pilot file (repeatable: several judges are combined, as in "
                                     "estimate)."),
    design: Design = typer.Option(Design.standard, "--design",
                                  help="standard (sample sizes, or Neyman strata with --strata) or active: "
                                       "item-level probabilities from the judges' predicted residuals and costs "
                                       "(needs --pilot with every judge on every item, --budget and --out)."),
    cost_column: str | None = typer.Option(None, "--cost-column", help="Column of the --pilot file with each item's "
                                                                       "cost of a human label (--design active)."),
    pilot_prob: str | None = typer.Option(None, "--pilot-prob", help="Probability with which the pilot's human-scored "
                                                                     "items were drawn: a number or a column "
                                                                     "(--design active)."),
    floor: float | None = typer.Option(None, "--floor", help="Share of the uniform design mixed into --design active "
                                                             "(default: chosen on the pilot's residuals, 1 = uniform "
                                                             "when they are not predictable; 0.3 without a pilot)."),
    model: Model = typer.Option(Model.calibrated, "--model", help="Prediction model the study will use (for the pilot R\u00b2; "
                                                                  "the same default as estimate)."),
    n_total: int | None = typer.Option(None, "--N", "--n-total", help="Items the LLM scores."),
    n_labeled: int | None = typer.Option(None, "--n", "--n-labeled", help="Items humans score."),
    inclusion_prob: float | None = typer.Option(None, "--inclusion-prob", "-p", help="pi = n/N instead of --n."),
    strata_file: Path | None = typer.Option(None, "--strata", readable=False, help="CSV of strata (stratum, n_items, residual_sd[, cost][, sd]) "
                                                                   "for a Neyman allocation; needs --budget."),
    budget: float | None = typer.Option(None, "--budget", help="Expected cost of human labels for --strata."),
    min_prob: float = typer.Option(0.0, "--min-prob", help="Floor on each stratum's inclusion probability."),
    draw: Path | None = typer.Option(None, "--draw", readable=False, help="File listing the study's items (an item column): draw the "
                                                         "human sample with the planned probabilities."),
    draw_out: Path | None = typer.Option(None, "--out", "-o", readable=False, help="Where --draw writes the assignment CSV "
                                                                   "(item, inclusion_prob, selected[, stratum])."),
    strata_column: str | None = typer.Option(None, "--strata-column", help="Column of the --draw file with each item's "
                                                                           "stratum (with --strata)."),
    seed: int = seed_option("Seed of the --draw sample (same seed, same sample)."),
    output: TableOrJson = format_option(TableOrJson.table),
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
    if design == Design.standard:
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
    if output == TableOrJson.json:
        plan_estimate_warnings(err_console, plan)
        emit_json(plan.to_dict())
    else:
        render_plan_estimate(console, err_console, plan)
