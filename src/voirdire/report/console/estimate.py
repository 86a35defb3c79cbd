"""Terminal rendering of ``voirdire estimate`` and ``voirdire plan-estimate``
(:class:`~voirdire.workflows.FileEstimate`, :class:`~voirdire.workflows.EstimationPlan`): the estimators'
tables, the design tables and the lines under them; nothing is computed here."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from ..._safe import escape_control
from .._format import fmt_int, fmt_num
from ._lines import line as _styled

__all__ = ["render_estimate", "estimate_warnings", "render_plan_estimate", "plan_estimate_warnings"]


def _line(console: Console, text: Any) -> None:
    console.print(text, highlight=False, soft_wrap=True)


def _warning(err_console: Console, message: str) -> None:
    _line(err_console, _styled(("warning:", "yellow"), " ", message))


# ------------------------------------------------------------------------------------------------ estimate
def estimate_warnings(err_console: Console, res: Any) -> None:
    """The raters counted as humans only because no judge role named them (stderr, also with ``--format json``)."""
    for w in res.warnings:
        _warning(err_console, w)


def _estimators_table(console: Console, rows: list[tuple[str, Any]], *, title: str, notes: list[Any]) -> None:
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for col in ("estimator", "estimate", "SE", "interval", "n", "N"):
        t.add_column(col, justify="left" if col == "estimator" else "right", no_wrap=True)
    for name, r in rows:
        t.add_row(name, fmt_num(r.estimate), fmt_num(r.se, 4), f"[{fmt_num(r.ci.low)}, {fmt_num(r.ci.high)}]",
                  fmt_int(r.n_labeled), fmt_int(r.n_total))
    console.print(t)
    for n in notes:
        _line(console, n)


def _mean(console: Console, res: Any, *, confidence_level: float, compare: bool, title: str | None = None) -> None:
    """One :class:`~voirdire.workflows.MeanEstimate`: the estimators' table and the notes under it."""
    comp, design = res.comparison, res.design
    dr = comp.dr
    tuned = "" if dr.lam is None else f", power tuning lambda {fmt_num(dr.lam)} (0 = human-only)"
    interval_kind = (f"t interval with {fmt_num(dr.df, 1)} effective df" if dr.ci.method == "t"
                     else "normal interval")
    if dr.tail:
        interval_kind += f", its quantile grown by {fmt_num(dr.tail, 3)} for heavy-tailed residuals"
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
    notes += [_styled(("warning:", "yellow"), f" {m}") for m in comp.warnings]
    cl_pct = f"{confidence_level * 100:g}%"
    judges = list(res.judges)
    who = judges[0] if len(judges) == 1 else f"{len(judges)} judges"
    _estimators_table(console, list(res.estimates.items()),
                      title=title or f"Mean human score, {who} as the predictor ({cl_pct} intervals)", notes=notes)


def render_estimate(console: Console, err_console: Console, res: Any) -> None:
    """``voirdire estimate``: the warnings (stderr), then the estimate, or each group's and the pool's (``--by``)."""
    estimate_warnings(err_console, res)
    cl, compare = res.options["confidence_level"], res.options["compare"]
    if res.grouped is None:
        _mean(console, res.estimate, confidence_level=cl, compare=compare)
        return
    g_res = res.grouped
    pooled_name = "(pooled)"
    cl_pct = f"{cl * 100:g}%"
    judges = list(res.judges)
    who = judges[0] if len(judges) == 1 else f"{len(judges)} judges"
    for g, n, r, e in [*zip(g_res.groups, g_res.n_items, g_res.results, g_res.errors),
                       (pooled_name, res.n_items, g_res.pooled, g_res.pooled_error)]:
        head = f"{', '.join(g_res.by)} = {g}" if g != pooled_name else pooled_name
        if r is None:
            _line(console, _styled((head, "bold"), f" ({n} items): ", ("no estimate", "bold yellow"), f": {e}"))
        else:
            _mean(console, r, confidence_level=cl, compare=compare,
                  title=f"{head} ({n} items): mean human score, {who} as the predictor ({cl_pct} intervals)")
        console.print()
    _line(console, "Each interval is for its own group; nothing is corrected across groups. A group's numbers are "
                   "those of --where on it at the same seed.")


# ------------------------------------------------------------------------------------------------ plan-estimate
def plan_estimate_warnings(err_console: Console, plan: Any) -> None:
    """The planner's warnings and the strata-size mismatch (stderr), for ``--format json``."""
    for w in plan.warnings:
        _warning(err_console, w)
    if plan.strata_mismatch:
        _warning(err_console, plan.strata_mismatch)


def _drawn(console: Console, plan: Any) -> None:
    s = plan.sample
    _line(console, f"Drew {fmt_int(s.n_selected)} of {fmt_int(s.n_items)} items for the humans (expected "
                   f"{fmt_num(s.expected_n, 1)}; Poisson sampling, seed {plan.seed}). Wrote {plan.sample_file}: keep "
                   "its inclusion_prob column, `voirdire estimate` needs it.")


def _allocation(console: Console, alloc: Any) -> None:
    from rich.table import Table

    t = Table(title=f"Neyman allocation of a budget of {alloc.budget:g}", title_justify="left")
    for col in ("stratum", "items", "resid. sd", "cost", "pi", "labels", "prop. pi"):
        t.add_column(col, justify="left" if col == "stratum" else "right", no_wrap=True)
    for r in alloc.strata.itertuples(index=False):
        t.add_row(str(r.stratum), fmt_num(r.n_items, 0), fmt_num(r.residual_sd), fmt_num(r.cost, 2),
                  fmt_num(r.inclusion_prob, 4), fmt_num(r.expected_labels, 1), fmt_num(r.proportional_prob, 4))
    console.print(t)
    _line(console, "pi: inclusion probability of the allocation; labels: expected human labels; prop. pi: "
                   "proportional allocation at the same budget.")
    what = "variance" if alloc.includes_human_variance else "residual penalty term of the variance"
    _line(console, f"Predicted {what}: {fmt_num(alloc.variance, 6)} (proportional allocation: "
                   f"{fmt_num(alloc.variance_proportional, 6)}; relative efficiency "
                   f"{fmt_num(alloc.relative_efficiency, 2)}). Expected cost {fmt_num(alloc.spent, 1)}.")


def _sample_size(console: Console, plan: Any) -> None:
    import math

    from rich.table import Table

    res, src = plan.sample_size, plan.sources
    t = Table(title="Two-stage design", title_justify="left")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_column("")
    solved = res.solved_for
    t.add_row("n* (human-only equivalent)", fmt_num(res.n_star, 1), "solved" if solved == "n_star" else "target")
    t.add_row("N (items the LLM scores)", fmt_int(res.n_total), "solved" if solved == "n_total" else "given")
    t.add_row("n (items humans score)", fmt_int(res.n_labeled), "solved" if solved == "n_labeled" else "given")
    t.add_row("inclusion probability n/N", fmt_num(res.inclusion_prob, 4), "")
    t.add_row("R\u00b2", fmt_num(res.r2), src["r2"])
    if math.isfinite(res.sd):
        t.add_row("sd of human scores", fmt_num(res.sd), src["sd"])
        t.add_row("predicted SE", fmt_num(res.predicted_se, 4), "")
    console.print(t)
    if plan.pilot:
        _line(console, f"Pilot: {plan.pilot['n_pairs']} items scored by both; R\u00b2 of the {plan.pilot['model']} "
                       f"model {fmt_num(plan.pilot['r2'])} (cross-fitted).")
    if res.note:
        _line(console, res.note)


def _active(console: Console, plan: Any) -> None:
    a, s, model = plan.active, plan.sample, plan.model
    _line(console,
          f"Active design ({a.uncertainty_source} uncertainty, model {model}, floor {fmt_num(a.floor, 2)}): drew "
          f"{fmt_int(s.n_selected - a.n_pilot)} new item(s) for the humans (expected "
          f"{fmt_num(a.expected_new_labels, 1)}, expected cost {fmt_num(a.expected_cost, 1)}) beside "
          f"{fmt_int(a.n_pilot)} pilot item(s); predicted residual variance {fmt_num(a.variance_ratio, 2)}x the "
          f"uniform design's at the same budget. Wrote {plan.sample_file}: its inclusion_prob column is what "
          f"`voirdire estimate --model {model}` needs (seed {plan.seed}).")
    if a.note:
        _line(console, a.note)


def render_plan_estimate(console: Console, err_console: Console, plan: Any) -> None:
    """``voirdire plan-estimate``: the plan's table and lines, the drawn sample's line; warnings on stderr."""
    for w in plan.warnings:
        _warning(err_console, w)
    if plan.kind == "active":
        _active(console, plan)
        return
    if plan.kind == "allocation":
        _allocation(console, plan.allocation)
        if plan.strata_mismatch:
            _warning(err_console, plan.strata_mismatch)
        if plan.sample is not None:
            _drawn(console, plan)
        return
    _sample_size(console, plan)
    if plan.sample is not None:
        _drawn(console, plan)
    else:
        _line(console, "Draw the human sample with these probabilities and keep them: the estimate needs them "
                       "(--draw ITEMS --out FILE does it).")
