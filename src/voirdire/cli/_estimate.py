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
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:  # annotations only: numpy is imported where a command runs
    import numpy as np

from ._app import (
    Duplicates, Level, Missing, ReaderOptions, app, console, duplicates_option, emit_json, err_console, fail,
    handle_errors, load_groups, load_table, missing_option, role_option, format_options,
)
from ._console import styled


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


class TableOrJson(str, Enum):
    table = "table"
    json = "json"


# ------------------------------------------------------------------------------------ reading
def _read_frame(file: Path, column: str, item_col: str, option: str) -> tuple[Any, Any, str]:
    from ..data import read_long_frame
    from ..exceptions import SchemaError

    if Path(file).is_dir() or Path(file).suffix.lower() == ".json":
        raise SchemaError(f"{option} {column!r} names a column, but {file} is not a long table "
                          "(CSV/TSV/JSONL/Parquet).", source=str(file))
    df, rows, src = read_long_frame(file)
    if column not in df.columns:
        raise SchemaError(f"{option} names column {column!r}, which is not in the file; found "
                          f"{[str(c) for c in df.columns]}.", source=src, column=column)
    if item_col not in df.columns:
        raise SchemaError(f"no item column {item_col!r} (set it with --item).", source=src, column=item_col)
    return df, rows, src


def _blank(v: Any) -> bool:
    import numpy as np
    return v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v.strip())


def _per_item_column(file: Path, column: str, table: Any, item_col: str, rater_col: str, *, numeric: bool,
                     option: str) -> tuple[dict[str, Any], str]:
    """Values of ``column`` per item (constant within an item); errors name the file, row and column."""
    from ..data import id_str
    from ..exceptions import SchemaError

    df, rows, src = _read_frame(file, column, item_col, option)
    # ids as the table reader reads them (a CSV export's "'-3x" is the item "-3x", see _safe.uncell)
    ids = df[item_col].map(id_str).to_numpy()
    raw = df[column].to_numpy(dtype=object)
    vals: list[Any] = [None] * len(raw)
    for k, v in enumerate(raw):
        if _blank(v):
            continue
        if numeric:
            try:
                vals[k] = float(str(v).strip())
            except ValueError:
                raise SchemaError(f"inclusion probability {str(v)!r} is not a number.",
                                  source=src, row=int(rows[k]), column=column) from None
        else:
            vals[k] = str(v).strip()
    if numeric:
        humans = set(table.humans)
        raters = df[rater_col].astype(str).str.strip().to_numpy() if rater_col in df.columns else None
        # humans on a zero-probability item first: the most specific message
        for k, v in enumerate(vals):
            if v == 0 and raters is not None and raters[k] in humans:
                raise SchemaError(f"human {raters[k]!r} scored item {ids[k]!r}, whose inclusion probability is 0: "
                                  "an item that could never be drawn cannot have been drawn. Fix the probability "
                                  "(the design's value for that item) or drop the row.",
                                  source=src, row=int(rows[k]), column=column)
        for k, v in enumerate(vals):
            if v is not None and not (0 < v <= 1):
                hint = " Probabilities are fractions: did you give a percentage?" if 1 < v <= 100 else ""
                raise SchemaError(f"inclusion probability {v:g} is outside (0, 1]; every item must have had a "
                                  f"positive chance of being sent to humans, and at most 1.{hint}",
                                  source=src, row=int(rows[k]), column=column)
    per_item: dict[str, Any] = {}
    first: dict[str, int] = {}
    for k, v in enumerate(vals):
        if v is None:
            continue
        i = ids[k]
        if i in per_item and per_item[i] != v:
            raise SchemaError(f"item {i!r} has two values ({per_item[i]!r} at row {first[i]} and {v!r}); "
                              f"{option} must be constant within an item.", source=src, row=int(rows[k]),
                              column=column)
        if i not in per_item:
            per_item[i] = v
            first[i] = int(rows[k])
    return per_item, src


def _inclusion_from_file(spec: str, file: Path, table: Any, item_col: str, rater_col: str,
                         human: np.ndarray) -> np.ndarray:
    import numpy as np
    from ..exceptions import SchemaError

    try:
        p = float(spec)
    except ValueError:
        p = None
    if p is not None:
        if not (0 < p <= 1):
            fail(f"--inclusion-prob must be a probability in (0, 1] or a column name. Got {spec}."
                 + (" Did you mean a fraction, e.g. 0.1?" if 1 < p <= 100 else ""))
        return np.full(table.n_items, p)
    per_item, src = _per_item_column(file, spec, table, item_col, rater_col, numeric=True, option="--inclusion-prob")
    out = np.array([per_item.get(str(i), np.nan) for i in table.items], dtype=float)
    miss = np.flatnonzero(np.isnan(out) & np.isfinite(human))
    if miss.size:
        raise SchemaError(f"item {str(table.items[miss[0]])!r} was scored by humans but has no inclusion "
                          f"probability in column {spec!r} ({miss.size} such item(s)). Put the item's design "
                          "probability on its rows.", source=src, column=spec)
    return out


def _unnamed_humans(table: Any, judges: list[str], role: str | None) -> list[str]:
    """The raters counted as humans only because --judge did not name them (no --role column, and
    no role the file's format gave): what the warning lists. Empty when the roles were given."""
    if role is not None or set(table.judges) != set(judges):
        return []
    return [str(r) for r in table.humans]


def _unnamed_text(file: Path, table: Any, unnamed: list[str]) -> str:
    """One line: which raters were taken as humans, those that scored every item first (as a judge does)."""
    import numpy as np
    from .._safe import escape_control

    per = np.bincount(table.rater_idx, minlength=len(table.raters))
    every = {str(table.raters[k]) for k in range(len(table.raters)) if per[k] >= table.n_items}
    names = sorted(unnamed, key=lambda r: (r not in every, unnamed.index(r)))
    shown = ", ".join(repr(escape_control(r)) for r in names[:8]) + (
        f" and {len(names) - 8:,} more" if len(names) > 8 else "")
    full = [r for r in names if r in every]
    also = (f" ({', '.join(repr(escape_control(r)) for r in full[:3])}{' ...' if len(full) > 3 else ''} scored "
            "every item, as a judge does)") if full else ""
    return (f"{file}: {len(names):,} rater(s) not named by --judge are counted as humans: {shown}{also}. "
            "If any is an LLM judge, name it with --judge (or mark every row's role with --role COLUMN).")


# ------------------------------------------------------------------------------------ rendering
def _render_estimates(rows: list[tuple[str, Any]], *, title: str, notes: list[Any]) -> None:
    from rich.table import Table

    from ..report import fmt_int, fmt_num

    t = Table(title=title, title_justify="left")
    for col in ("estimator", "estimate", "SE", "interval", "n", "N"):
        t.add_column(col, justify="left" if col == "estimator" else "right", no_wrap=True)
    for name, r in rows:
        t.add_row(name, fmt_num(r.estimate), fmt_num(r.se, 4), f"[{fmt_num(r.ci.low)}, {fmt_num(r.ci.high)}]",
                  fmt_int(r.n_labeled), fmt_int(r.n_total))
    console.print(t)
    for n in notes:
        console.print(n, highlight=False, soft_wrap=True)


@app.command("estimate")
@handle_errors
@format_options
def estimate_command(
    file: Path = typer.Argument(..., readable=False, help="Long annotation file (CSV/TSV/JSONL/Parquet): one row per item, rater, score."),
    judges: list[str] = typer.Option(..., "--judge", "-j",
                                     help="An LLM judge (repeatable: several judges, prompts or samples are "
                                          "combined); each must score every item."),
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
    confidence_level: float = typer.Option(0.95, "--confidence-level", help="Level of the intervals."),
    compare: bool = typer.Option(True, "--compare/--no-compare", help="Also show human-only and PPI++ estimates."),
    drop_unscored: bool = typer.Option(False, "--drop-unscored",
                                       help="Drop items the judge did not score instead of failing."),
    seed: int = typer.Option(0, "--seed", help="Seed of the cross-fitting folds."),
    output: TableOrJson = typer.Option(TableOrJson.table, "--format", "-f", help="table or json."),
    scale: Level = typer.Option(Level.interval, "--scale", help="Level of the scores (numeric)."),
    abstain: list[str] = typer.Option(None, "--abstain", help="A score value meaning 'cannot assess' (repeatable)."),
    item: str = typer.Option("item", "--item", help="Item id column."),
    rater: str = typer.Option("rater", "--rater", help="Rater column."),
    label: str = typer.Option("label", "--label", help="Score column."),
    role: str | None = role_option(),
    cluster: str | None = typer.Option(None, "--cluster", help="Column grouping items into clusters."),
    cluster_sep: str | None = typer.Option(None, "--cluster-sep", help="Cluster = item id before this separator."),
    duplicates: Duplicates = duplicates_option(),
    missing: Missing = missing_option(),
) -> None:
    """Estimate the mean human score from LLM scores on every item and human scores on a designed subsample.

    Doubly robust: the judge's score, corrected by the humans' residuals weighted by 1/inclusion
    probability. Valid whatever the judge's quality, because the probabilities are known by design.
    """
    from ..workflows import estimate_mean

    if scale == Level.nominal:
        fail("--scale nominal has no mean; use interval (default), ratio or ordinal with numeric scores.")
    judges = list(dict.fromkeys(judges))  # a judge named twice is one predictor
    same: dict[str, Any] = dict(model=model.value, cross_fit=cross_fit or "auto", target=target.value,
                confidence_level=confidence_level, compare=compare, drop_unscored=drop_unscored, seed=seed,
                source=str(file), strata_column=strata)
    if ReaderOptions().by:
        _estimate_by(file, judges, inclusion_prob, strata, output, same, scale=scale.value,
                     abstain=tuple(abstain or ()), item=item, rater=rater, label=label, role=role, cluster=cluster,
                     cluster_sep=cluster_sep, duplicates=duplicates.value, missing=missing.value)
        return
    table = load_table(file, judges=judges, scale=scale, abstain=abstain, item=item, rater=rater, label=label,
                       role=role, cluster=cluster, cluster_sep=cluster_sep, duplicates=duplicates, missing=missing)
    if not table.humans:
        fail(f"{file}: no human rater (every rater is a judge).")
    unnamed = _unnamed_humans(table, judges, role)
    prob, column = _probabilities(inclusion_prob, file, table, item, rater)
    st = None if strata is None else _per_item_column(file, strata, table, item, "rater", numeric=False,
                                                       option="--strata")[0]
    res = estimate_mean(table, judges, prob, strata=st, prob_column=column, unnamed=unnamed, **same)
    roles_note = _unnamed_text(file, table, unnamed) if unnamed else None
    if roles_note:  # once the estimate exists (an error keeps its one line)
        err_console.print(styled(("warning:", "yellow"), " ", roles_note), highlight=False, soft_wrap=True)
    if output == TableOrJson.json:
        d = _json_of(res, inclusion_prob)
        emit_json({"file": str(file), **{k: d[k] for k in ("judge", "judges", "model", "design", "estimates", "hints")},
                   "warnings": d["warnings"] + ([roles_note] if roles_note else []),
                   "raters_counted_as_humans": unnamed})
        return
    _render_mean(res, confidence_level=confidence_level, compare=compare)


def _probabilities(spec: str, file: Path, table: Any, item: str, rater: str) -> tuple[Any, str | None]:
    """``--inclusion-prob``: a number for every item, or the column's value per item (and the column's name)."""
    try:
        p = float(spec)
    except ValueError:
        per_item, _ = _per_item_column(file, spec, table, item, rater, numeric=True, option="--inclusion-prob")
        return per_item, spec
    if not (0 < p <= 1):
        fail(f"--inclusion-prob must be a probability in (0, 1] or a column name. Got {spec}."
             + (" Did you mean a fraction, e.g. 0.1?" if 1 < p <= 100 else ""))
    return p, None


def _json_of(res: Any, spec: str) -> dict[str, Any]:
    """One estimate's JSON, its design naming ``--inclusion-prob`` as given."""
    d = res.to_dict()
    d["design"]["inclusion_prob"] = spec
    return d


def _render_mean(res: Any, *, confidence_level: float, compare: bool, title: str | None = None) -> None:
    """One estimate as ``voirdire estimate`` prints it: the estimators' table and the notes under it."""
    from ..report import fmt_num

    comp, design = res.comparison, res.design
    dr = comp.dr
    tuned = "" if dr.lam is None else f", power tuning lambda {fmt_num(dr.lam)} (0 = human-only)"
    interval_kind = (f"t interval with {fmt_num(dr.df, 1)} effective df" if dr.ci.method == "t"
                     else "normal interval")
    if dr.skew:
        interval_kind += f", both ends moved by {fmt_num(dr.skew, 3)} SE for the skewness of the residuals"
    notes: list[Any] = [
        "n: human-scored items; N: all items (the judges score every one).",
        f"Variance of the DR estimate: human-variance term {fmt_num(dr.var_human, 6)} + residual penalty "
        f"{fmt_num(dr.var_residual, 6)} (target: {dr.target}); model {dr.model} on {dr.n_judges} judge column(s)"
        f"{tuned}; cross-fitted R\u00b2 of the model {fmt_num(dr.r2)}, sd of the human scores {fmt_num(dr.sd_human)}; "
        f"{interval_kind}.",
        f"Inclusion probabilities {fmt_num(design['min'], 4)} to {fmt_num(design['max'], 4)} "
        f"({design['n_distinct']} distinct value(s)); report them with the estimate: the interval is valid "
        "because they are known.",
    ]
    notes += [h["message"] for h in comp.hints]
    if compare and comp.ppi_note:
        notes.append(comp.ppi_note)
    notes += [styled(("warning:", "yellow"), f" {m}") for m in comp.warnings]
    cl_pct = f"{confidence_level * 100:g}%"
    judges = list(res.judges)
    who = judges[0] if len(judges) == 1 else f"{len(judges)} judges"
    _render_estimates(list(res.estimates.items()),
                      title=title or f"Mean human score, {who} as the predictor ({cl_pct} intervals)", notes=notes)


def _estimate_by(file: Path, judges: list[str], spec: str, strata: str | None, output: TableOrJson,
                 same: dict[str, Any], **read: Any) -> None:
    """``estimate --by COLUMN``: one estimate per group and the pooled one (:func:`voirdire.workflows.estimate_mean_by`)."""
    from ..workflows import estimate_mean_by

    grouped = load_groups(file, judges=judges, **read)
    pooled = grouped.pooled
    if not pooled.humans:
        fail(f"{file}: no human rater (every rater is a judge).")
    unnamed = _unnamed_humans(pooled, judges, read.get("role"))
    prob, column = _probabilities(spec, file, pooled, read["item"], read["rater"])
    st = None if strata is None else _per_item_column(file, strata, pooled, read["item"], "rater", numeric=False,
                                                       option="--strata")[0]
    res = estimate_mean_by(grouped, judges, prob, strata=st, prob_column=column, unnamed=unnamed, **same)
    roles_note = _unnamed_text(file, pooled, unnamed) if unnamed else None
    if roles_note:
        err_console.print(styled(("warning:", "yellow"), " ", roles_note), highlight=False, soft_wrap=True)
    if output == TableOrJson.json:
        d = res.to_dict()
        for g in [*d["groups"], {"result": d["pooled"]}]:  # the design names --inclusion-prob as given
            if g["result"] is not None:
                g["result"]["design"]["inclusion_prob"] = spec
        emit_json({"file": str(file), "judges": judges, **d,
                   "warnings": [roles_note] if roles_note else [], "raters_counted_as_humans": unnamed})
        return
    pooled_name = "(pooled)"
    cl_pct = f"{same['confidence_level'] * 100:g}%"
    who = judges[0] if len(judges) == 1 else f"{len(judges)} judges"
    for g, n, r, e in [*zip(res.groups, res.n_items, res.results, res.errors),
                       (pooled_name, pooled.n_items, res.pooled, res.pooled_error)]:
        head = f"{', '.join(res.by)} = {g}" if g != pooled_name else pooled_name
        if r is None:
            console.print(styled((head, "bold"), f" ({n} items): ", ("no estimate", "bold yellow"), f": {e}"),
                          highlight=False, soft_wrap=True)
        else:
            _render_mean(r, confidence_level=same["confidence_level"], compare=same["compare"],
                         title=f"{head} ({n} items): mean human score, {who} as the predictor ({cl_pct} intervals)")
        console.print()
    console.print("Each interval is for its own group; nothing is corrected across groups. A group's numbers are "
                  "those of --where on it at the same seed.", highlight=False, soft_wrap=True)


# ------------------------------------------------------------------------------------ planning
def _pilot(file: Path, judges: list[str], model: str, item: str, rater: str, label: str, scale: Level,
           abstain: list[str] | None, duplicates: Duplicates = Duplicates.error,
           missing: Missing = Missing.error, role: str | None = None) -> tuple[float, float, int]:
    from ..estimation import judge_matrix, pilot_r2

    judges = list(dict.fromkeys(judges))
    table = load_table(file, judges=judges, scale=scale, abstain=abstain, item=item, rater=rater, label=label,
                       role=role, duplicates=duplicates, missing=missing)
    X, y, _ = judge_matrix(table, judges)
    return pilot_r2(X if X.shape[1] > 1 else X[:, 0], y, model=model)


def _plan_active(pilot: Path | None, judges: list[str], budget: float | None, out: Path | None,
                 cost_column: str | None, pilot_prob: str | None, floor: float | None, model: str, seed: int,
                 output: TableOrJson, **read: Any) -> None:
    """``plan-estimate --design active``: item-level probabilities, drawn and written with the sample."""
    import numpy as np
    from .._io import atomic_write
    from .._safe import csv_frame
    from ..estimation import draw_human_sample, judge_matrix, plan_active
    from ..exceptions import SchemaError

    if pilot is None or not judges:
        fail("--design active needs --pilot FILE (every judge's score on every item of the study, and the humans' "
             "scores on the pilot items, if any) and --judge NAME (one or more).")
    if budget is None:
        fail("--design active needs --budget (the expected cost of the new human labels; with unit costs, their number).")
    if out is None:
        fail("--design active needs --out FILE (where to write the assignments with their probabilities).")
    judges = list(dict.fromkeys(judges))
    table = load_table(pilot, judges=judges, **read)
    X, y, _ = judge_matrix(table, judges)
    items = np.asarray(table.items)
    miss = ~np.isfinite(X).all(axis=1)
    if miss.any():
        k = int(np.flatnonzero(~np.isfinite(X).all(axis=0))[0])
        bad = items[~np.isfinite(X[:, k])]
        raise SchemaError(f"judge {judges[k]!r} has no score for {bad.size} item(s) (e.g. {str(bad[0])!r}); --design "
                          "active needs every judge's score on every item of the study.", source=str(pilot))
    costs = None
    if cost_column is not None:
        per, src = _per_item_column(pilot, cost_column, table, read["item"], read["rater"], numeric=False,
                                    option="--cost-column")
        costs = np.full(items.size, np.nan)
        for k, i in enumerate(items):
            v = per.get(str(i))
            try:
                costs[k] = float(v) if v is not None else np.nan
            except ValueError:
                raise SchemaError(f"cost {v!r} of item {str(i)!r} is not a number.", source=src,
                                  column=cost_column) from None
        bad_c = ~(np.isfinite(costs) & (costs > 0))
        if bad_c.any():
            k = int(np.flatnonzero(bad_c)[0])
            raise SchemaError(f"item {str(items[k])!r} has cost {costs[k]!r}; every item needs a positive cost of a "
                              "human label.", source=src, column=cost_column)
    p1: Any = None
    if np.isfinite(y).any():
        if pilot_prob is None:
            fail("the --pilot file has human scores: give --pilot-prob (the probability with which those items were "
                 "drawn, a number or a column), so that their labels can enter the estimate.")
        p1 = _inclusion_from_file(pilot_prob, pilot, table, read["item"], read["rater"], y)
    res = plan_active(X if X.shape[1] > 1 else X[:, 0], budget=float(budget), costs=costs,
                      human_scores=y if p1 is not None else None, pilot_prob=p1,
                      floor="auto" if floor is None else floor, model=model, rng=seed)
    sample = draw_human_sample(items, res, rng=seed)
    with atomic_write(out, inputs=[pilot]) as fh:
        csv_frame(sample.assignments).to_csv(fh, index=False)
    summary = {"file": str(out), "n_items": sample.n_items, "n_selected": sample.n_selected,
               "n_pilot": res.n_pilot, "expected_new_labels": res.expected_new_labels,
               "expected_cost": res.expected_cost, "uncertainty": res.uncertainty_source, "floor": res.floor,
               "predicted_variance_ratio": res.variance_ratio, "model": model, "judges": judges, "seed": seed}
    if output == TableOrJson.json:
        emit_json({"design": "active", "sample": summary, "note": res.note})
        return
    from ..report import fmt_int, fmt_num

    console.print(
        f"Active design ({res.uncertainty_source} uncertainty, model {model}, floor {fmt_num(res.floor, 2)}): drew "
        f"{fmt_int(sample.n_selected - res.n_pilot)} new item(s) for the humans (expected "
        f"{fmt_num(res.expected_new_labels, 1)}, expected cost {fmt_num(res.expected_cost, 1)}) beside "
        f"{fmt_int(res.n_pilot)} pilot item(s); predicted residual variance {fmt_num(res.variance_ratio, 2)}x the "
        f"uniform design's at the same budget. Wrote {out}: its inclusion_prob column is what `voirdire estimate "
        "--model " + model + "` needs (seed " + str(seed) + ").", highlight=False, soft_wrap=True)
    if res.note:
        console.print(res.note, highlight=False, soft_wrap=True)


@app.command("plan-estimate")
@handle_errors
@format_options
def plan_estimate_command(
    target_halfwidth: float | None = typer.Option(None, "--target-halfwidth", help="Wanted CI half-width (score units)."),
    n_star: float | None = typer.Option(None, "--n-star", help="Human-only sample size whose precision to match."),
    effect_size: float | None = typer.Option(None, "--effect-size", help="Difference to detect (score units)."),
    power: float = typer.Option(0.8, "--power", help="Power for --effect-size."),
    significance_level: float = typer.Option(0.05, "--significance-level", help="Test level for --effect-size."),
    confidence_level: float = typer.Option(0.95, "--confidence-level", help="Level for --target-halfwidth."),
    sd: float | None = typer.Option(None, "--sd", help="Standard deviation of the human scores (or from --pilot)."),
    r2: float | None = typer.Option(None, "--r2", help="Share of the human variance the judge explains, in [0, 1)."),
    pilot: Path | None = typer.Option(None, "--pilot", readable=False, help="Pilot annotation file (judge and humans on the same items)."),
    judges: list[str] = typer.Option(None, "--judge", "-j", help="A judge in the pilot file (repeatable: several "
                                                                 "judges are combined, as in estimate)."),
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
    seed: int = typer.Option(0, "--seed", help="Seed of the --draw sample (same seed, same sample)."),
    output: TableOrJson = typer.Option(TableOrJson.table, "--format", "-f", help="table or json."),
    item: str = typer.Option("item", "--item", help="Item id column of the pilot and --draw files."),
    rater: str = typer.Option("rater", "--rater", help="Rater column of the pilot."),
    label: str = typer.Option("label", "--label", help="Score column of the pilot."),
    role: str | None = typer.Option(None, "--role", help="Column with human/judge per row of the pilot (instead of --judge)."),
    scale: Level = typer.Option(Level.interval, "--scale", help="Level of the pilot's scores."),
    abstain: list[str] = typer.Option(None, "--abstain", help="A pilot score meaning 'cannot assess' (repeatable)."),
    duplicates: Duplicates = duplicates_option(),
    missing: Missing = missing_option(),
) -> None:
    """Plan a two-stage study: how many items the LLM and the humans must score, or where to put the human labels.

    Solves 1/n* = R\u00b2/N + (1 - R\u00b2)/n for the missing one of n* (from --target-halfwidth,
    --effect-size or --n-star), N and n (or pi). With --strata and --budget: Neyman allocation.
    With --draw ITEMS --out FILE: also draw the Poisson human sample and write it with the
    probabilities beside it (N defaults to the number of items in ITEMS).
    """
    import numpy as np
    judge = judges[0] if judges else None
    if design == Design.active:
        _plan_active(pilot, judges or [], budget, draw_out, cost_column, pilot_prob, floor, model.value, seed, output,
                     item=item, rater=rater, label=label, role=role, scale=scale, abstain=abstain,
                     duplicates=duplicates, missing=missing)
        return
    if (draw is None) != (draw_out is None):
        fail("--draw ITEMS and --out FILE go together (the items to sample from, and where to write the sample).")
    draw_items = draw_strata = None
    if draw is not None:
        from .._io import check_not_input

        check_not_input(draw_out or draw, [draw, pilot, strata_file])  # --out over an input would destroy it
        draw_items, draw_strata = _read_items(draw, item, strata_column)
    if strata_file is not None:
        alloc = _plan_allocation(strata_file, budget, min_prob,
                                 output if draw is None or output == TableOrJson.table else None)
        if draw is not None:
            if draw_strata is None:
                fail("--draw with --strata needs --strata-column (the column of the --draw file with each item's stratum).")
            planned = dict(zip(alloc.strata["stratum"].astype(str), alloc.strata["n_items"]))
            found = {str(k): int(v) for k, v in zip(*np.unique(draw_strata.astype(str), return_counts=True))}
            off = [f"{h!r}: {int(planned[h])} planned, {found.get(h, 0)} in the file"
                   for h in planned if int(planned[h]) != found.get(h, 0)]
            if off:
                err_console.print(styled(("warning:", "yellow"), f" the strata sizes of {strata_file} differ from {draw} "
                                  f"({'; '.join(off[:3])}): the expected number of labels will differ from the budget."),
                                  highlight=False, soft_wrap=True)
            _draw(draw_items, alloc, draw_out, seed, output, strata=draw_strata, plan=alloc.to_dict(),
                  inputs=(draw, strata_file))
        return
    if budget is not None:
        fail("--budget goes with --strata FILE (a Neyman allocation over strata).")
    if draw_items is not None and n_total is None and not (n_labeled is not None and inclusion_prob is not None):
        n_total = int(draw_items.size)
    elif draw_items is not None and n_total is not None and n_total != draw_items.size:
        fail(f"--N {n_total} differs from the {draw_items.size} items in {draw}; drop --N to plan for the file's items.")
    from ..estimation import required_sample_size

    pilot_info: dict[str, Any] | None = None
    if pilot is not None:
        if r2 is not None:
            fail("give --r2 or --pilot, not both.")
        if judge is None:
            fail("--pilot needs --judge NAME (the judge whose scores predict the humans).")
        r2_p, sd_p, n_p = _pilot(pilot, judges, model.value, item, rater, label, scale, abstain, duplicates, missing,
                                 role)
        pilot_info = {"file": str(pilot), "judge": judge, "judges": judges, "model": model.value, "r2": r2_p, "sd": sd_p, "n_pairs": n_p}
        from ..exceptions import InfeasiblePlanError

        if not np.isfinite(r2_p) and not sd_p > 0:
            raise InfeasiblePlanError(
                f"the pilot's R\u00b2 is undefined: the human scores in {pilot} do not vary (sd {sd_p:.3g} over "
                f"{n_p} item(s)), so there is nothing to predict and nothing to plan. Use a pilot whose human "
                "scores vary, or give --r2 and --sd.")
        if not np.isfinite(r2_p) or r2_p < 0:
            other = "isotonic" if model.value == "linear" else "linear"
            raise InfeasiblePlanError(
                f"the pilot's R\u00b2 for model {model.value!r} is {r2_p:.3g}: the judge predicts the human scores "
                f"no better than a constant, so LLM scores cannot replace human labels. Try --model {other} or plan "
                "a human-only study.")
        r2 = min(r2_p, 1 - 1e-12)
        if sd is None:
            sd = sd_p
    elif r2 is None:
        fail("give --r2 (share of the human variance the judge explains) or --pilot FILE --judge NAME.")
    res = required_sample_size(n_star=n_star, n_total=n_total, n_labeled=n_labeled, inclusion_prob=inclusion_prob,
                               r2=r2, sd=sd, target_halfwidth=target_halfwidth, effect_size=effect_size, power=power,
                               significance_level=significance_level, confidence_level=confidence_level)
    if draw_items is not None:
        if res.n_total != draw_items.size:
            fail(f"the plan needs N = {res.n_total} items but {draw} lists {draw_items.size}; plan for the file's items "
                 "(give two of --n-star/--target-halfwidth/--effect-size and --n/--inclusion-prob, or leave N free).")
        if output == TableOrJson.json:
            _draw(draw_items, res.inclusion_prob, draw_out, seed, output, plan={"plan": res.to_dict(), "pilot": pilot_info},
                  inputs=(draw, pilot))
            return
    if output == TableOrJson.json:
        emit_json({"plan": res.to_dict(), "pilot": pilot_info})
        return
    from rich.table import Table

    from ..report import fmt_int, fmt_num

    t = Table(title="Two-stage design", title_justify="left")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_column("")
    solved = res.solved_for
    t.add_row("n* (human-only equivalent)", fmt_num(res.n_star, 1), "solved" if solved == "n_star" else "target")
    t.add_row("N (items the LLM scores)", fmt_int(res.n_total), "solved" if solved == "n_total" else "given")
    t.add_row("n (items humans score)", fmt_int(res.n_labeled), "solved" if solved == "n_labeled" else "given")
    t.add_row("inclusion probability n/N", fmt_num(res.inclusion_prob, 4), "")
    t.add_row("R\u00b2", fmt_num(res.r2), "pilot" if pilot_info else "given")
    if np.isfinite(res.sd):
        t.add_row("sd of human scores", fmt_num(res.sd), "pilot" if pilot_info and sd == pilot_info["sd"] else "given")
        t.add_row("predicted SE", fmt_num(res.predicted_se, 4), "")
    console.print(t)
    if pilot_info:
        console.print(f"Pilot: {pilot_info['n_pairs']} items scored by both; R\u00b2 of the {model.value} model "
                      f"{fmt_num(pilot_info['r2'])} (cross-fitted).", highlight=False, soft_wrap=True)
    if res.note:
        console.print(res.note, highlight=False, soft_wrap=True)
    if draw_items is not None:
        _draw(draw_items, res.inclusion_prob, draw_out, seed, output, inputs=(draw, pilot))
    else:
        console.print("Draw the human sample with these probabilities and keep them: the estimate needs them "
                      "(--draw ITEMS --out FILE does it).", highlight=False, soft_wrap=True)


def _read_items(file: Path, item_col: str, strata_col: str | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Unique item ids of a long file (first-seen order) and, optionally, each item's stratum."""
    import numpy as np
    from ..data import read_long_frame
    from ..exceptions import SchemaError

    df, rows, src = read_long_frame(file)
    for col in (item_col, strata_col):
        if col is not None and col not in df.columns:
            raise SchemaError(f"no column {col!r}; found {[str(c) for c in df.columns]}.", source=src, column=col)
    ids = df[item_col].astype(str).str.strip()
    if (ids == "").any():
        k = int(np.flatnonzero((ids == "").to_numpy())[0])
        raise SchemaError("empty item id.", source=src, row=int(rows[k]), column=item_col)
    first = ~ids.duplicated().to_numpy()
    items = ids.to_numpy()[first]
    if strata_col is None:
        return items, None
    st = df[strata_col].astype(str).str.strip().to_numpy()
    per: dict[str, str] = {}
    for k, (i, h) in enumerate(zip(ids.to_numpy(), st)):
        if per.setdefault(i, h) != h:
            raise SchemaError(f"item {i!r} is in two strata ({per[i]!r} and {h!r}).", source=src, row=int(rows[k]),
                              column=strata_col)
    return items, np.array([per[i] for i in items], dtype=object)


def _draw(items: Any, inclusion_prob: Any, out: Any, seed: int, output: TableOrJson, *,
          strata: Any = None, plan: Any = None, inputs: Any = ()) -> None:
    from ..estimation import draw_human_sample
    from ..report import fmt_int, fmt_num

    from .._io import atomic_write
    from .._safe import csv_frame

    sample = draw_human_sample(items, inclusion_prob, rng=seed, strata=strata)
    with atomic_write(out, inputs=inputs) as fh:
        csv_frame(sample.assignments).to_csv(fh, index=False)
    summary = {"file": str(out), "n_items": sample.n_items, "n_selected": sample.n_selected,
               "expected_n": sample.expected_n, "seed": seed}
    if output == TableOrJson.json:
        emit_json({**(plan if isinstance(plan, dict) and "plan" in plan else {"allocation": plan}), "sample": summary})
        return
    console.print(f"Drew {fmt_int(sample.n_selected)} of {fmt_int(sample.n_items)} items for the humans (expected "
                  f"{fmt_num(sample.expected_n, 1)}; Poisson sampling, seed {seed}). Wrote {out}: keep its "
                  "inclusion_prob column, `voirdire estimate` needs it.", highlight=False, soft_wrap=True)


def _plan_allocation(strata_file: Path, budget: float | None, min_prob: float, output: TableOrJson | None) -> Any:
    import numpy as np
    from ..data import read_long_frame
    from ..estimation import plan_allocation
    from ..exceptions import SchemaError, VoirdireWarning

    if budget is None:
        fail("--strata needs --budget (the expected cost of the human labels; with unit costs, the number of labels).")
    df, rows, src = read_long_frame(strata_file)
    for col in ("n_items", "residual_sd"):
        if col not in df.columns:
            raise SchemaError(f"needs a column {col!r} (columns: stratum, n_items, residual_sd, optional cost and sd); "
                              f"found {[str(c) for c in df.columns]}.", source=src, column=col)
    for col in ("n_items", "residual_sd", "cost", "sd"):
        if col in df.columns:
            for k, v in enumerate(df[col]):
                try:
                    float(v)
                except (TypeError, ValueError):
                    raise SchemaError(f"{v!r} is not a number.", source=src, row=int(rows[k]), column=col) from None
            df[col] = df[col].astype(float)
    if "stratum" in df.columns:
        names = df["stratum"].astype(str).to_numpy()
        _, first, counts = np.unique(names, return_index=True, return_counts=True)
        if (counts > 1).any():
            k = int(first[counts > 1][0])
            again = int(np.flatnonzero(names == names[k])[1])
            raise SchemaError(f"stratum {names[k]!r} appears twice (rows {int(rows[k])} and {int(rows[again])}); "
                              "give each stratum one row.", source=src, row=int(rows[again]), column="stratum")
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", VoirdireWarning)
        res = plan_allocation(df, budget=float(budget), min_inclusion_prob=min_prob)
    for w in caught:  # one line each on stderr, never a raw Python warning with a source path
        if issubclass(w.category, VoirdireWarning):
            err_console.print(styled(("warning:", "yellow"), f" {w.message}"), highlight=False, soft_wrap=True)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if output is None:
        return res
    if output == TableOrJson.json:
        emit_json(res.to_dict())
        return res
    from rich.table import Table

    from ..report import fmt_num

    t = Table(title=f"Neyman allocation of a budget of {budget:g}", title_justify="left")
    for col in ("stratum", "items", "resid. sd", "cost", "pi", "labels", "prop. pi"):
        t.add_column(col, justify="left" if col == "stratum" else "right", no_wrap=True)
    for r in res.strata.itertuples(index=False):
        t.add_row(str(r.stratum), fmt_num(r.n_items, 0), fmt_num(r.residual_sd), fmt_num(r.cost, 2),
                  fmt_num(r.inclusion_prob, 4), fmt_num(r.expected_labels, 1), fmt_num(r.proportional_prob, 4))
    console.print(t)
    console.print("pi: inclusion probability of the allocation; labels: expected human labels; prop. pi: "
                  "proportional allocation at the same budget.", highlight=False, soft_wrap=True)
    what = "variance" if res.includes_human_variance else "residual penalty term of the variance"
    console.print(f"Predicted {what}: {fmt_num(res.variance, 6)} (proportional allocation: "
                  f"{fmt_num(res.variance_proportional, 6)}; relative efficiency {fmt_num(res.relative_efficiency, 2)}). "
                  f"Expected cost {fmt_num(res.spent, 1)}.", highlight=False, soft_wrap=True)
    return res
