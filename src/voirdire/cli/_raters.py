"""The `voirdire raters` command (registered on import): each annotator against the pool, outlier flags,
the contested items, and an adjudication file for the most contested ones."""

from __future__ import annotations

import math
from enum import Enum
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ._assign import FileFormat
from ._app import (
    Duplicates, Level, Missing, OutputFormat, app, console, duplicates_option, emit_json, format_options,
    handle_errors, load_table, missing_option, require_overlap, role_option,
)
from ._console import styled


class RaterScore(str, Enum):
    agreement = "agreement"
    alpha = "alpha"
    kappa = "kappa"
    ac1 = "ac1"


class PoolCoefficient(str, Enum):
    krippendorff_alpha = "krippendorff_alpha"
    fleiss_kappa = "fleiss_kappa"
    gwet_ac1 = "gwet_ac1"
    gwet_ac2 = "gwet_ac2"
    observed_agreement = "observed_agreement"
    bennett_s = "bennett_s"


def _f(x: Any, digits: int = 3, sign: bool = False) -> str:
    v = float(x)
    if not math.isfinite(v):
        return "-"
    return f"{v:+.{digits}f}" if sign else f"{v:.{digits}f}"


def _iv(lo: Any, hi: Any, sign: bool = False) -> str:
    if not (math.isfinite(float(lo)) and math.isfinite(float(hi))):
        return "-"
    return f"[{_f(lo, 2, sign)}, {_f(hi, 2, sign)}]"


def _p(p: float) -> str:
    if not math.isfinite(p):
        return "-"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def raters_table(d: Any) -> Table:
    """The per-annotator table of a :class:`~voirdire.diagnostics.RaterDiagnosticsResult`."""
    pct = f"{100 * d.confidence_level:g}% CI"
    t = Table(title=f"Annotators: each against the rest of the pool (S = {d.score}; pool = {d.coefficient})")
    for col in ("rater", "items", f"S(k;pool) [{pct}]", "gap", "p", f"delta pool [{pct}]", "DS", "MACE", "flag"):
        t.add_column(col, justify="left" if col in ("rater", "flag") else "right")
    for k, r in enumerate(d.raters):
        t.add_row(r, f"{int(d.n_items[k]):,}", f"{_f(d.s[k])} {_iv(d.s_low[k], d.s_high[k])}", _f(d.gap[k], sign=True),
                  _p(d.p_value[k]), f"{_f(d.delta[k], sign=True)} {_iv(d.delta_low[k], d.delta_high[k], sign=True)}",
                  _f(d.ds_accuracy[k], 2), _f(d.mace_competence[k], 2),
                  "OUTLIER" if d.flagged[k] else ("-" if d.evaluated[k] else "not tested"))
    return t


def items_table(r: Any, k: int) -> Table:
    """The ``k`` most contested items of an :class:`~voirdire.diagnostics.ItemDiagnosticsResult`."""
    t = Table(title=f"Contested items: observed vs chance-expected disagreement (top {k} {r.unit}s)")
    cols = ["rank", "item"] + (["cluster"] if r.clusters is not None else []) + ["labels", "observed", "expected",
                                                                                  "excess"]
    for c in cols:
        t.add_column(c, justify="left" if c in ("item", "cluster") else "right")
    for i in r.top(k).tolist():
        row = [str(int(r.rank[i]) + 1), str(r.items[i])]
        if r.clusters is not None:
            row.append(str(r.clusters[i]))
        row += [str(int(r.n_labels[i])), _f(r.observed[i]), _f(r.expected[i]), _f(r.excess[i], sign=True)]
        t.add_row(*row)
    return t


def sensitivity_lines(d: Any, sens: list[Any]) -> None:
    """Print the flagged annotators and each judge's sensitivity line."""
    if d is None or not sens:
        return
    console.print(styled(("Flagged annotators", "bold yellow"), f": {', '.join(d.flagged_raters)} (voirdire raters "
                         "FILE says why). Leave-one-out without them, a sensitivity line; the decision is yours "
                         "(--exclude-rater NAME):"))
    for x in sens:
        console.print(styled(("  " + x.sentence, "yellow" if x.won_mainly_against_excluded else "")))


def render(table: Any, d: Any, items: Any, k: int) -> None:
    s = table.summary()
    console.print(f"{s.source}: {s.n_items:,} items, {len(d.raters)} annotators in the pool, "
                  f"pool {d.coefficient} ({d.coefficient_level}) = {_f(d.pool_estimate)} "
                  f"{_iv(d.pool.low, d.pool.high)}; resampling unit: {d.resampling_unit}.")
    console.print(raters_table(d))
    console.print("S(k;pool): the annotator vs the other annotators on the same items (the bar a judge must clear in "
                  "validate --method loo); gap: S minus the others' median; p: bootstrap p-value of gap >= -margin; "
                  "delta pool: the pool's coefficient without the annotator minus with; DS: Dawid-Skene accuracy; "
                  "MACE: 1 - spamming probability.", style="dim")
    console.print(f"Rule: {d.rule}", style="dim")
    if d.flagged.any():
        for r, why in zip(d.raters, d.reason):
            if why is not None and r in d.flagged_raters:
                console.print(styled(("Outlier", "bold yellow"), f" {r}: {why}."))
        console.print("A flagged annotator may be the only one who is right: read their contested items before "
                      "retraining, re-weighting or dropping them (validate --exclude-rater shows a validation "
                      "without them).", style="dim")
    else:
        console.print("No annotator is flagged.")
    for r, why in zip(d.raters, d.reason):
        if why is not None and r not in d.flagged_raters:
            console.print(f"  {r}: {why}.", style="dim")
    if d.note:
        console.print(f"Note: {d.note}.", style="dim")
    if items is not None and items.n_ranked:
        console.print(items_table(items, k))
        console.print("observed, expected: disagreement on the item in units of the pool's chance disagreement "
                      "(1 = as much as random labels); expected: if the same annotators labelled at random with "
                      "their own habits; excess = observed - expected.", style="dim")


@app.command("raters")
@handle_errors
@format_options
def raters_command(
    file: Path = typer.Argument(..., metavar="FILE", readable=False, help="Annotation file (CSV/TSV/JSONL/Parquet/JSON) or AltTest-style folder."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="Mark this rater as a judge (left out of the pool)."),
    rater_names: list[str] = typer.Option(None, "--rater-name", help="Pool of annotators (repeat; default: every human)."),
    score: RaterScore = typer.Option(RaterScore.agreement, "--score", help="Leave-one-out score S (as validate's)."),
    coefficient: PoolCoefficient = typer.Option(
        PoolCoefficient.krippendorff_alpha, "--coefficient", metavar="<name>",  # the choices fit in 80 columns below
        help="Pool coefficient recomputed without each annotator: krippendorff_alpha, fleiss_kappa, gwet_ac1, "
             "gwet_ac2, observed_agreement or bennett_s."),
    margin: float = typer.Option(0.05, "--margin", help="Smallest shortfall below the others' median worth flagging (units of S)."),
    significance_level: float = typer.Option(0.05, "--significance-level", help="Family-wise error rate of the flags (Holm)."),
    min_items: int = typer.Option(10, "--min-items", help="Annotators sharing fewer items with the pool are not tested."),
    competence: bool = typer.Option(True, "--competence/--no-competence", help="Fit Dawid-Skene and MACE."),
    top: int = typer.Option(10, "--top", help="Contested items to show (0 = none)."),
    sensitivity: bool = typer.Option(True, "--sensitivity/--no-sensitivity", help="When an annotator is flagged, "
                                     "show each judge's leave-one-out decision again without them."),
    adjudicate: Path | None = typer.Option(None, "--adjudicate", readable=False, help="Write the --top most contested items as an "
                                           "assignment file (.csv, .jsonl, or .json with --to) with a manifest."),
    adjudicator: str = typer.Option("adjudicator", "--adjudicator", help="Rater name in the adjudication file."),
    file_format: FileFormat = typer.Option(None, "--to", help="Format of the --adjudicate file: csv or jsonl (default: "
                                           "from the extension), label-studio (tasks JSON) or argilla (records JSON)."),
    scale: Level | None = typer.Option(None, "--scale", help="Level of measurement of the labels."),
    categories: list[str] = typer.Option(None, "--categories", help="Categories in order (comma-separated or repeated)."),
    abstain: list[str] = typer.Option(None, "--abstain", help="A label value meaning 'cannot assess' (repeatable)."),
    item: str = typer.Option("item", "--item", help="Item id column."),
    rater: str = typer.Option("rater", "--rater", help="Rater column."),
    label: str = typer.Option("label", "--label", help="Label column."),
    role: str | None = role_option(),
    cluster: str | None = typer.Option(None, "--cluster", help="Column grouping items into clusters (resampled together)."),
    cluster_sep: str | None = typer.Option(None, "--cluster-sep", help="Cluster = item id before this separator (e.g. '__')."),
    duplicates: Duplicates = duplicates_option(),
    missing: Missing = missing_option(),
    output_format: OutputFormat = typer.Option(OutputFormat.table, "--format", "-f", help="table, json or csv."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap (same seed, same numbers)."),
    resamples: int = typer.Option(2000, "--n-resamples", "--resamples",
                                  help="Bootstrap resamples (0 = no intervals, no flags)."),
    confidence_level: float = typer.Option(0.95, "--confidence-level", help="Level of the intervals."),
) -> None:
    """Which annotators drag agreement down, and which items are contested? Per-annotator diagnostics,
    outlier flags with a stated rule, and the most contested items for adjudication."""
    from ..design import write_assignments
    from ..diagnostics import item_diagnostics, loo_sensitivity, rater_diagnostics
    from ..exceptions import InvalidParameterError

    if top < 0:
        raise InvalidParameterError(f"--top must be >= 0. Got {top}.")
    if adjudicate is not None and top == 0:
        raise InvalidParameterError("--adjudicate writes the --top most contested items: give --top >= 1.")
    from ._app import _FORMAT_OPTS

    if _FORMAT_OPTS.get().get("by"):
        _raters_by(file, judge, rater_names, score, coefficient, margin, significance_level, min_items, competence,
                   adjudicate, output_format, seed, resamples, confidence_level,
                   dict(scale=scale, categories=categories, abstain=abstain, item=item, rater=rater, label=label,
                        role=role, cluster=cluster, cluster_sep=cluster_sep, duplicates=duplicates, missing=missing))
        return
    t = load_table(file, judges=judge, scale=scale, categories=categories, abstain=abstain, item=item, rater=rater,
                   label=label, role=role, cluster=cluster, cluster_sep=cluster_sep, duplicates=duplicates,
                   missing=missing)
    require_overlap(t)
    pool = list(rater_names) if rater_names else None
    d = rater_diagnostics(t, raters=pool, score=score.value, coefficient=coefficient.value, margin=margin,
                          significance_level=significance_level, min_items=min_items,
                          confidence_level=confidence_level, n_resamples=resamples, competence=competence, rng=seed)
    items = item_diagnostics(t, raters=pool) if top else None
    sens = []
    if sensitivity and d.flagged.any() and t.judges and pool is None:
        sens = [loo_sensitivity(t, j, diagnostics=d, score=score.value, min_items=min_items, n_resamples=resamples,
                                rng=seed) for j in t.judges]
    written = None
    if adjudicate is not None and items is not None:
        if not items.n_ranked:
            raise InvalidParameterError("No item has two or more labels from the pool: nothing to adjudicate.")
        written = write_assignments(items.assignments(top, adjudicator=adjudicator), adjudicate,
                                    format=None if file_format is None else file_format.value, inputs=[file])
    if output_format == OutputFormat.json:
        emit_json({"raters": d.to_dict(), "items": None if items is None else items.to_frame().head(top).to_dict(
            orient="records"), "sensitivity": [{"judge": x.judge, "excluded": list(x.excluded),
                                                "won_mainly_against_excluded": x.won_mainly_against_excluded,
                                                "reasons": list(x.reasons), "sentence": x.sentence,
                                                "variants": x.to_frame().to_dict(orient="records")} for x in sens],
                   "adjudication_file": None if written is None else str(written[0])})
        return
    if output_format == OutputFormat.csv:
        from ._console import echo_csv

        echo_csv(d.to_frame())
        return
    render(t, d, items, top)
    sensitivity_lines(d, sens)
    if written is not None and items is not None:
        console.print(f"Adjudication: {written[0]} ({min(top, items.n_ranked)} {items.unit}s) and {written[1]}.")


def _raters_by(file: Path, judge: list[str] | None, rater_names: list[str] | None, score: Any, coefficient: Any,
               margin: float, significance_level: float, min_items: int, competence: bool, adjudicate: Path | None,
               output_format: OutputFormat, seed: int, resamples: int, confidence_level: float,
               read: dict[str, Any]) -> None:
    """``raters --by COLUMN``: :func:`voirdire.workflows.diagnose_raters_by`, one annotator table per group
    and the pool's (flags Holm-controlled within each group)."""
    from enum import Enum as _Enum

    from ._app import fail, load_groups
    from ..workflows import diagnose_raters_by

    POOLED = "(pooled)"
    if adjudicate is not None:
        fail("--adjudicate with --by is not available yet: write each group's file with --where COLUMN=VALUE.")
    read = {k: (v.value if isinstance(v, _Enum) else v) for k, v in read.items()}
    read["abstain"] = tuple(read.get("abstain") or ())
    grouped = load_groups(file, judges=judge, **read)
    res = diagnose_raters_by(grouped, raters=list(rater_names) if rater_names else None, score=score.value,
                             coefficient=coefficient.value, margin=margin, significance_level=significance_level,
                             min_items=min_items, confidence_level=confidence_level, n_resamples=resamples,
                             competence=competence, rng=seed)
    if output_format == OutputFormat.json:
        emit_json(res.to_dict())
        return
    if output_format == OutputFormat.csv:
        from ._console import echo_csv

        echo_csv(res.to_frame())
        return
    for g, n, d, e in [*zip(res.groups, res.n_items, res.results, res.errors), (POOLED, grouped.pooled.n_items,
                                                                               res.pooled, None)]:
        console.print(styled((f"{', '.join(res.by)} = {g}" if g != POOLED else POOLED, "bold"), f" ({n} items)"),
                      highlight=False, soft_wrap=True)
        if d is None:
            console.print(styled("  ", ("not computed", "bold yellow"), f": {e}"), highlight=False, soft_wrap=True)
        else:
            console.print(raters_table(d))
        console.print()
    console.print("Outlier flags are Holm-controlled within each group (not across groups).", highlight=False)
