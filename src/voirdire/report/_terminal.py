"""Terminal rendering (private): the rich tables and lines the ``voirdire`` commands print.

The HTML page (``_html``) and this module are the two places results become text; both read the
workflows' composite results (:func:`voirdire.workflows.compare_raters`,
:func:`voirdire.workflows.validate_judges`). Names from files are untrusted: plain strings go to the
command line's safe console (no markup, control characters escaped); styled pieces are built as
:class:`rich.text.Text` from :func:`voirdire._safe.escape_control`-ed strings, never from markup.
"""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .._scores import TERMINAL_NAMES
from ._format import fmt_ci, fmt_int, fmt_num, fmt_p
from .console._lines import line as _line

__all__ = ["render_comparison", "render_validation", "verdict_lines", "agreement_table", "binary_tables",
           "matrix_table", "binary_notes", "display_name", "DISPLAY"]


# ----------------------------------------------------------------------------- agreement
def _text(*parts: str | tuple[str, str]) -> Text:
    """A line from plain and ``(text, style)`` parts, every part shown literally (tabs escaped too)."""
    return _line(*parts, keep="\n")  # type: ignore[no-any-return]


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(v):
        return "nan"
    return f"{v:.{digits}f}"


def _ci(ci: Any) -> str:
    if ci is None or not (math.isfinite(ci.low) and math.isfinite(ci.high)):
        return "-"
    return f"[{_num(ci.low)}, {_num(ci.high)}]"


def _pct(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{100 * x:.1f}%"


DISPLAY = TERMINAL_NAMES  # the registry's terminal spelling of each coefficient


def display_name(r: Any) -> str:
    """Short name of a result's coefficient, with its metric when it has one."""
    name = DISPLAY.get(r.coefficient, r.coefficient)
    return name if r.level in ("identity", "") else f"{name} ({r.level})"


def agreement_table(results: Any, *, title: str = "Agreement") -> Table:
    """Rich table: for each coefficient, the humans and each judge group side by side."""
    results = list(results)
    cl = results[0].results[0].confidence_level if results and results[0].results else 0.95
    t = Table(title=title, title_justify="left", show_lines=False)
    t.add_column("coefficient", style="bold")
    t.add_column("raters")
    t.add_column("estimate", justify="right")
    t.add_column(f"{round(100 * cl)}% CI", justify="right")
    t.add_column("n items", justify="right")
    t.add_column("n pairs", justify="right")
    order: list[str] = []
    for g in results:
        for r in g.results:
            if r.coefficient not in order:
                order.append(r.coefficient)
    for ci_, name in enumerate(order):
        first = True
        for g in results:
            for r in g.results:
                if r.coefficient != name:
                    continue
                t.add_row(display_name(r) if first else "", g.label, _num(r.estimate), _ci(r.ci),
                          str(r.n_items), str(r.n_pairs))
                first = False
        if ci_ < len(order) - 1:
            t.add_section()
    return t


def binary_tables(results: Any) -> list[Table]:
    """Two rich tables: the classification view, then phi, kappa and the marginals."""
    results = list(results)
    b0 = results[0]
    t1 = Table(title=f"Binary family: each judge against the human majority (positive = {b0.positive!r})",
               title_justify="left")
    for col in ("judge", "n items", "judge coverage", "accuracy", "precision", "recall", "F1"):
        t1.add_column(col, justify="left" if col == "judge" else "right")
    t2 = Table(title="phi (= MCC = Pearson = Spearman = Kendall tau-b), kappa and the positive rates",
               title_justify="left")
    for col in ("judge", "phi", "kappa", "kappa CI", "pi humans", "pi judge", "kappa/phi"):
        t2.add_column(col, justify="left" if col == "judge" else "right")
    for b in results:
        t1.add_row(b.judge, str(b.n_items), _pct(b.judge_coverage), _num(b.accuracy), _num(b.precision),
                   _num(b.recall), _num(b.f1))
        t2.add_row(b.judge, _num(b.phi), _num(b.kappa), _ci(b.kappa_ci), _num(b.prevalence),
                   _num(b.judge_rate), _num(b.kappa_phi_ratio))
    return [t1, t2]


def matrix_table(m: Any) -> Table:
    """Rich table of a pairwise matrix: the coefficient above the diagonal, shared items below."""
    t = Table(title=f"{DISPLAY.get(m.coefficient, m.coefficient)} for each pair of raters (upper) and items "
                    f"they share (lower)", title_justify="left")
    t.add_column("", style="bold")
    for r in m.raters:
        t.add_column(str(r), justify="right")
    k = len(m.raters)
    for a in range(k):
        cells = []
        for b in range(k):
            if a == b:
                cells.append(str(int(m.n_items[a, a])))
            elif a < b:
                cells.append(_num(m.estimate[a, b]))
            else:
                cells.append(f"({int(m.n_items[a, b])})")
        t.add_row(str(m.raters[a]), *cells)
    return t


def binary_notes(b: Any) -> list[str]:
    """Plain sentences on one judge's binary result: the kappa/phi gap and the judge's abstentions."""
    out = []
    if math.isfinite(b.kappa_phi_ratio) and b.kappa_phi_ratio < 0.995:
        more = "more" if b.judge_rate > b.prevalence else "less"
        out.append(f"{b.judge}: says {b.positive!r} {more} often than the humans (pi-hat {_num(b.judge_rate)} vs "
                   f"pi {_num(b.prevalence)}), so kappa is below phi (kappa/phi = {_num(b.kappa_phi_ratio)}).")
    if b.n_judge_abstentions:
        out.append(f"{b.judge}: {b.n_judge_abstentions} of {b.n_judge_labels} answers are abstentions (coverage "
                   f"{_pct(b.judge_coverage)}); policy {b.abstention.policy}.")
    return out


def _interval_methods(results: list[Any]) -> str:
    """The interval method(s) used, e.g. 'bootstrap-t, Fisher z scale (Fleiss' kappa, ...); BCa bootstrap (...)'."""
    by: dict[str, list[str]] = {}
    for g in results:
        for x in g.results:
            if x.ci.method != "none":
                names = by.setdefault(x.ci.method, [])
                if x.coefficient not in names:
                    names.append(x.coefficient)
    if len(by) <= 1:
        return next(iter(by), "none")
    return "; ".join(f"{m} ({', '.join(c)})" for m, c in by.items())


def render_comparison(console: Console, err_console: Console, table: Any, comp: Any, *,
                      title: str | None = None) -> None:
    """Print a :class:`~voirdire.workflows.RaterComparison` (``voirdire agree``)."""
    s = table.summary()
    head = (f"{s.source}: {s.n_items} items, {s.n_humans} humans, {s.n_judges} judges, {s.n_labels} labels, "
            f"scale {s.scale.level}" + (f", {s.n_clusters} clusters" if s.n_clusters else ""))
    console.print(head, highlight=False, soft_wrap=True)
    results = list(comp.groups)
    console.print(agreement_table(results, title=title or "Agreement: the humans, then the humans with each judge"))
    if results and results[0].results:
        r = results[0].results[0]
        unit = f"{r.n_units} {r.resampling_unit}s"
        console.print(f"Intervals: {_interval_methods(results)} over {unit}"
                      + (f", {r.n_resamples} resamples" if r.n_resamples else "") + ".", highlight=False, soft_wrap=True)
        parts = []
        for g in results:
            ab = g.results[0].abstention
            if ab.n_abstentions:
                parts.append(f"{g.label}: {ab.n_abstentions} abstentions, coverage {_pct(ab.label_coverage)} of labels, "
                             f"{_pct(ab.item_coverage)} of items")
        console.print(f"Abstention policy: {r.abstention.policy}; " + ("; ".join(parts) if parts else "no abstentions")
                      + ".", highlight=False, soft_wrap=True)
    binary = list(comp.binary)
    if binary:
        for bt in binary_tables(binary):
            console.print(bt)
        console.print(binary[0].note, highlight=False, soft_wrap=True, style="italic")
        for b in binary:
            for line in binary_notes(b):
                console.print(line, highlight=False, soft_wrap=True)
        if any(b.n_ties for b in binary):
            console.print(f"Items with a tied human majority were left out ({binary[0].n_ties}).", highlight=False)
    for n in comp.notes:
        err_console.print(_text(("note:", "yellow"), " ", n), highlight=False, soft_wrap=True)
    if comp.matrix is not None:
        console.print(matrix_table(comp.matrix))


# ----------------------------------------------------------------------------- validation
_WORD = {"accept": "ACCEPT", "reject": "REJECT", "inconclusive": "INCONCLUSIVE"}
_COLOUR = {"accept": "bold green", "reject": "bold red", "inconclusive": "bold yellow"}


def _decision(d: str) -> tuple[str, str]:
    return _WORD[d], _COLOUR[d]


def _stability(x: float, n: int, unit: str, method: str = "bootstrap") -> str:
    if n == 0:
        return "no bootstrap (--n-resamples 0)"
    if method != "bootstrap":  # large tables: draws from the statistics' joint normal law
        return f"the same decision in {fmt_num(100 * x, 1)}% of {fmt_int(n)} draws ({method}, {unit}s)"
    return f"the same decision in {fmt_num(100 * x, 1)}% of {fmt_int(n)} bootstrap resamples ({unit}s)"


def _add_column(t: Table, col: str, humans: tuple[str, ...]) -> None:
    """Numbers never wrap; long human ids (UUIDs) fold instead."""
    if col == "human":
        t.add_column(col, justify="left", overflow="fold", min_width=min(max(map(len, humans)), 8))
    else:
        t.add_column(col, justify="right", no_wrap=True)


def loo_table(r: Any) -> Table:
    lvl = f" at the {r.level} level" if r.score == "alpha" else ""
    t = Table(title=f"{r.judge}: leave-one-human-out ({r.score}{lvl}, epsilon = {fmt_num(r.epsilon, 3)})",
              title_justify="left",
              caption="S(J;P): judge vs the pool of the other humans; S(k;P): the held-out human vs the same pool; "
                      "d = S(J;P) - S(k;P); T: win when d >= -epsilon.", caption_justify="left")
    for col in ("human", "items", "pairs", "S(J;P)", "S(k;P)", "d",
                f"{fmt_num(100 * r.confidence_level, 0)}% CI", "T"):
        _add_column(t, col, r.humans)
    for k, h in enumerate(r.humans):
        if r.reason[k] is not None:
            t.add_row(_text((h, "dim")), fmt_int(r.n_items[k]), fmt_int(r.n_pairs[k]), fmt_num(r.s_judge[k]),
                      fmt_num(r.s_human[k]), fmt_num(r.d[k]), "—", _text(("n/a", "dim")))
            continue
        t.add_row(h, fmt_int(r.n_items[k]), fmt_int(r.n_pairs[k]), fmt_num(r.s_judge[k]),
                  fmt_num(r.s_human[k]), fmt_num(r.d[k]), fmt_ci(r.d_low[k], r.d_high[k], digits=2),
                  "win" if r.t[k] == 1 else "loss")
    return t


def loo_summary(r: Any) -> Text:
    out = Text()
    for h, reason in zip(r.humans, r.reason):
        if reason is not None:
            out.append_text(_text(f"  {h}: not evaluated ({reason})\n"))
    out.append_text(_text(f"  omega = {fmt_num(r.omega)} ({r.n_evaluated} of {len(r.humans)} humans evaluated; "
                          f"accept when >= {fmt_num(r.threshold, 2)}) -> ", _decision(r.decision)))
    if r.decision == "inconclusive":
        out.append(f"\n  Fewer than two humans share at least {r.min_items} items with the judge and another "
                   "human: the overlap is too thin to decide. Collect labels on shared items (see `voirdire plan`).")
    out.append(f"\n  Stability: "
               f"{_stability(r.decision_stability, r.n_resamples, r.resampling_unit, r.stability_method)}.")
    return out


def alt_table(r: Any) -> Table:
    t = Table(title=(f"{r.judge}: Alternative Annotator Test ({r.scoring}, epsilon = {fmt_num(r.epsilon, 3)}, "
                     f"{r.correction.upper()} at q = {fmt_num(r.q, 3)}, {r.test}-test)"), title_justify="left")
    for col in ("human", "items", "rho_f", "rho_h", "mean d", "statistic", "p-value", "rejected"):
        _add_column(t, col, r.humans)
    for k, h in enumerate(r.humans):
        if not r.tested[k]:
            # the reason goes below the table (alt_summary): in the cell it squeezed every other column
            t.add_row(_text((h, "dim")), fmt_int(r.n_items[k]), "—", "—", "—", "—", "—", _text(("skipped", "dim")))
            continue
        stat = fmt_num(r.statistic[k], 2) + (" (degenerate)" if r.degenerate[k] else "")
        t.add_row(h, fmt_int(r.n_items[k]), fmt_num(r.rho_f[k]), fmt_num(r.rho_h[k]), fmt_num(r.mean_d[k]),
                  stat, fmt_p(r.p_value[k]).replace("p = ", "").replace("p ", ""), "yes" if r.rejected[k] else "no")
    return t


def alt_summary(r: Any) -> Text:
    out = Text()
    for k, h in enumerate(r.humans):
        if not r.tested[k]:
            out.append_text(_text(f"  {h}: skipped ({r.reason[k]})\n"))
    out.append_text(_text(f"  omega = {fmt_num(r.omega)} ({r.n_rejected} of {r.n_tested} tested humans beaten"
                          + (f"; {len(r.humans) - r.n_tested} skipped" if r.n_tested < len(r.humans) else "")
                          + f"), rho = {fmt_num(r.rho)} -> ", _decision(r.decision)))
    if r.n_resamples:
        out.append(f"\n  Stability: "
               f"{_stability(r.decision_stability, r.n_resamples, r.resampling_unit, r.stability_method)}.")
    return out


def ranking_table(r: Any) -> Table:
    t = Table(title=f"Ranking by {r.by} ({fmt_int(r.n_resamples)} bootstrap resamples, {r.resampling_unit}s)",
              title_justify="left")
    from ..workflows import ranking_tiers, tier_ranks

    for col in ("rank", "judge", "P(best)", "P(above next)", r.by):
        t.add_column(col, justify="left" if col == "judge" else "right")
    tiers = ranking_tiers(r)  # the one order of judges: by P(best), ties in one tier without a rank
    idx = {str(j): k for k, j in enumerate(r.judges)}
    order = [idx[j] for tier in tiers for j in tier]
    rank_of = tier_ranks(tiers)
    for pos, j in enumerate(order):
        nxt = fmt_num(r.p_order[j, order[pos + 1]], 3) if pos + 1 < len(order) else "—"
        t.add_row(rank_of[str(r.judges[j])], r.judges[j], fmt_num(r.p_best[j]), nxt, fmt_num(r.statistic[j]))
    return t


def verdict_lines(res: Any) -> list[Text]:
    """One line per judge: the combined verdict, why, and each method's own verdict (``voirdire validate``'s
    head; the reference's sentence follows once, below)."""
    out = []
    names = {"leave_one_out": "leave-one-out", "alt_test": "alt-test"}
    for j in res.judges:
        v = j.verdict
        why = v.shown
        text = "; ".join(w.rstrip(".") for w in why)
        per = []
        for m in j.verdicts:
            block = [r.code for r in m.reasons if r.blocking and not r.code.startswith("test_")]
            per.append(f"{names.get(m.method, m.method)}: {m.decision}" + (f" ({', '.join(block)})" if block else ""))
        out.append(_text(f"{j.judge}: ", _decision(v.decision), (" - " + text + ".") if text else "",
                         (f"  [{'; '.join(per)}]", "dim")))
    return out


def render_validation(console: Console, err_console: Console, table: Any, res: Any) -> None:
    """Print a :class:`~voirdire.workflows.ValidationResult`: verdicts first, then the tables."""
    s = table.summary()
    console.print(_text((str(s.source), "bold"), f": {fmt_int(s.n_items)} items, {s.n_humans} humans, "
                        f"{s.n_judges} judges, {s.scale.level} labels, resampling unit: "
                        f"{'cluster' if table.clusters is not None else 'item'}."), highlight=False)
    console.print(_text(("Verdicts", "bold")), highlight=False)
    for line in verdict_lines(res):
        console.print(_text("  ") + line, highlight=False, soft_wrap=True)
    if res.reference is not None:
        console.print("  Reference: " + res.reference.sentence, highlight=False, soft_wrap=True)
    console.print()
    for e in res.judges:
        if e.leave_one_out is not None:
            console.print(loo_table(e.leave_one_out))
            console.print(loo_summary(e.leave_one_out), highlight=False)
        if e.alt_test is not None:
            console.print(alt_table(e.alt_test))
            console.print(alt_summary(e.alt_test), highlight=False)
        for method, msg in e.errors.items():
            name = "Alternative Annotator Test" if method == "alt_test" else "Leave-one-human-out rule"
            console.print(_text(f"  {name} for {e.judge}: ", _decision("inconclusive"), f" - {msg}"),
                          highlight=False)
        console.print()
    r = res.ranking
    if r is not None:
        from ..workflows import order_text, ranking_tiers

        console.print(ranking_table(r))
        console.print(f"  Order (by P(best); 'tie': the judge before ranks above it in fewer than "
                      f"{fmt_num(100 * r.confidence_level, 0)}% of resamples): {order_text(ranking_tiers(r))}.",
                      highlight=False, soft_wrap=True)
    for n in res.notes:
        err_console.print(_text(("note:", "yellow"), " ", n), highlight=False, soft_wrap=True)
