"""Terminal view of the annotator diagnostics (``voirdire raters``, and the flagged-annotator lines of
``voirdire validate``): each annotator against the pool, the outlier rule, the contested items.

Renders :class:`voirdire.workflows.RaterDiagnosis` and :class:`~voirdire.workflows.GroupedRaters`; computes
nothing.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["raters_table", "items_table", "sensitivity_lines", "render_raters", "render_raters_by"]

from ._lines import line as _line

_LEGEND = ("S(k;pool): the annotator vs the other annotators on the same items (the bar a judge must clear in "
           "validate --method loo); gap: S minus the others' median; p: bootstrap p-value of gap >= -margin; "
           "delta pool: the pool's coefficient without the annotator minus with; DS: Dawid-Skene accuracy; "
           "MACE: 1 - spamming probability.")


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


def raters_table(d: Any) -> Any:
    """The per-annotator table of a :class:`~voirdire.diagnostics.RaterDiagnosticsResult`."""
    from rich.table import Table

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


def items_table(r: Any, k: int) -> Any:
    """The ``k`` most contested items of an :class:`~voirdire.diagnostics.ItemDiagnosticsResult`."""
    from rich.table import Table

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


def sensitivity_lines(console: Any, d: Any, sens: Any) -> None:
    """Print the flagged annotators and each judge's sensitivity line (``raters`` and ``validate``)."""
    sens = list(sens)
    if d is None or not sens:
        return
    console.print(_line(("Flagged annotators", "bold yellow"), f": {', '.join(d.flagged_raters)} (voirdire raters "
                        "FILE says why). Leave-one-out without them, a sensitivity line; the decision is yours "
                        "(--exclude-rater NAME):"))
    for x in sens:
        console.print(_line(("  " + x.sentence, "yellow" if x.won_mainly_against_excluded else "")))


def render_raters(console: Any, err_console: Any, table: Any, res: Any, *, written: Any = None) -> None:
    """Print a :class:`~voirdire.workflows.RaterDiagnosis` of ``table`` (``voirdire raters``); ``written``: the
    adjudication file and its manifest, when one was written."""
    d, items, k = res.raters, res.items, res.top
    s = table.summary()
    console.print(f"{s.source}: {s.n_items:,} items, {len(d.raters)} annotators in the pool, "
                  f"pool {d.coefficient} ({d.coefficient_level}) = {_f(d.pool_estimate)} "
                  f"{_iv(d.pool.low, d.pool.high)}; resampling unit: {d.resampling_unit}.")
    console.print(raters_table(d))
    console.print(_LEGEND, style="dim")
    console.print(f"Rule: {d.rule}", style="dim")
    if d.flagged.any():
        for r, why in zip(d.raters, d.reason):
            if why is not None and r in d.flagged_raters:
                console.print(_line(("Outlier", "bold yellow"), f" {r}: {why}."))
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
    sensitivity_lines(console, d, res.sensitivity)
    if written is not None and items is not None:
        console.print(f"Adjudication: {written[0]} ({min(k, items.n_ranked)} {items.unit}s) and {written[1]}.")


def render_raters_by(console: Any, err_console: Any, res: Any, n_pooled: int) -> None:
    """Print a :class:`~voirdire.workflows.GroupedRaters`: each group's annotator table, then the pool's."""
    pooled = "(pooled)"
    for g, n, d, e in [*zip(res.groups, res.n_items, res.results, res.errors), (pooled, n_pooled, res.pooled, None)]:
        console.print(_line((f"{', '.join(res.by)} = {g}" if g != pooled else pooled, "bold"), f" ({n} items)"),
                      highlight=False, soft_wrap=True)
        if d is None:
            console.print(_line("  ", ("not computed", "bold yellow"), f": {e}"), highlight=False, soft_wrap=True)
        else:
            console.print(raters_table(d))
        console.print()
    console.print("Outlier flags are Holm-controlled within each group (not across groups).", highlight=False)
