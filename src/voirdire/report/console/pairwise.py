"""Terminal rendering of ``voirdire pairwise`` (:class:`~voirdire.workflows.PairwiseFit`) and ``voirdire bias``
(:class:`~voirdire.workflows.PairwiseSummary`'s bias report): tables, lines and the JSON documents."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console

from ..._safe import escape_control
from .._format import choice_sentence
from .._terminal import _text

__all__ = ["render_pairwise", "pairwise_json", "render_bias", "bias_json"]


def _num(x: Any, digits: int = 3, nan: str = "nan") -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    return nan if not math.isfinite(v) else f"{v:.{digits}f}"


def _pct(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{100 * x:.1f}%"


def _choice_json(fit: Any) -> dict[str, Any]:
    """The held-out choice in ``voirdire pairwise --format json`` (:meth:`~voirdire.workflows.PairwiseFit.choice_dict`,
    as the report's ``choice``)."""
    return fit.choice_dict()


def pairwise_json(fit: Any, file: str) -> dict[str, Any]:
    """``voirdire pairwise --format json``."""
    model, post, loho = fit.model, fit.posterior, fit.evaluation
    return {
        "file": file, "table": fit.summary.to_dict(),
        "model": {"n_particles": model.n_particles, "update": model.update, "laplace": model.laplace,
                  "judge_ties": model.judge_ties, "judge_reliability": model.judge_reliability,
                  "particles": model.particles, "batch_move": model.batch_move, "quadrature": model.quadrature,
                  "n_items_seen": post.n_items_seen, "n_resamples": post.n_resamples, "final_ess": fit.final_ess,
                  "seed": fit.seed, "resumed_from": fit.resumed_from,
                  "system_prior": model.system_prior,
                  "system_strengths": None if model.system_strengths_ is None else model.system_strengths_.to_dict()},
        "judges": post.to_frame("judges").to_dict("records"),
        "humans": [{"human": h, "confusion": post.confusion[k], "dirichlet_counts": post.dirichlet_counts[k]}
                   for k, h in enumerate(post.humans)],
        "choice": _choice_json(fit), "forecaster": fit.forecaster,
        "most_uncertain": fit.uncertain.to_dict("records"),
        "pairs": fit.forecasts.to_dict("records"),
        "evaluation": None if loho is None else {
            "target": loho.target, "n_folds": loho.n_folds, "n_labels_unscored": loho.n_labels_unscored,
            "table": loho.table.to_dict("records"), "per_human": loho.per_human.to_dict("records"),
            "notes": list(fit.notes), "choice": None if fit.choice is None else fit.choice.to_dict()},
    }


def _judges(console: Console, fit: Any) -> None:
    from rich.table import Table

    model, post = fit.model, fit.posterior
    lvl = f"{100 * post.credible_level:.0f}%"
    jt = Table(title="Judges' position bias beta (> 0: favours the response shown first)", title_justify="left")
    cols = ["judge", "beta", "sd", f"{lvl} interval", "orders seen"]
    cols += ["tie offset (sd)"] if model.judge_ties else []
    cols += [f"reliability [{lvl}]"] if model.judge_reliability else []
    for c in cols:
        jt.add_column(c, justify="left" if c == "judge" else "right")
    for k, jn in enumerate(post.judges):
        extra = [f"{_num(post.tie_offset_mean[k])} ({_num(post.tie_offset_sd[k])})"] if model.judge_ties else []
        if model.judge_reliability:
            extra.append(f"{_num(post.reliability_mean[k], 2)} [{_num(post.reliability_low[k], 2)}, "
                         f"{_num(post.reliability_high[k], 2)}]")
        opt = "*" if k < len(post.bias_interval_optimistic) and post.bias_interval_optimistic[k] else ""
        jt.add_row(jn, _num(post.bias_mean[k]), _num(post.bias_sd[k]),
                   f"[{_num(post.bias_low[k])}, {_num(post.bias_high[k])}]{opt}", fit.orders_seen[str(jn)], *extra)
    console.print(jt)
    if post.bias_interval_optimistic.any():
        console.print("* optimistic: the particle filter's interval (a resumed state does not hold the stream's "
                      "earlier pairs, so the judges' batch posterior cannot be computed); under the default judge "
                      "model such 95% intervals covered the planted bias in only 80-90% of simulated streams of "
                      "300-2,000 pairs, the batch posterior's in 93-96% (docs/pairwise.md, 'Are the bias intervals "
                      "honest?'). Fit the whole stream at once (without --resume) for the latter.",
                      highlight=False, markup=False)
    if model.judge_reliability:
        nil = [jn for k, jn in enumerate(post.judges) if post.reliability_low[k] < 0.05]
        console.print("reliability: 1 = the judge answers from the pair's own verdict distribution, 0 = its "
                      "verdicts carry no information about the pair"
                      + (f"; lower end below 0.05 (the model gives it ~no weight): {', '.join(nil)}" if nil else ""),
                      highlight=False, markup=False)
    if fit.summary.n_judges and fit.summary.n_swapped_judge_pairs == 0:
        console.print(_text(("note:", "yellow"), " no judge was asked in both orders: its bias is confounded with the "
                            "pairs' quality (only the prior mean 0 of theta separates them)."), highlight=False)


def _humans(console: Console, fit: Any, max_humans: int) -> None:
    from rich.table import Table

    post = fit.posterior
    shown = post.humans[:max_humans]
    ht = Table(title="Humans' confusion matrices C[true, said] (rows: true A / T / B)", title_justify="left")
    ht.add_column("human")
    ht.add_column("true")
    for s in ("said A", "said T", "said B"):
        ht.add_column(s, justify="right")
    ht.add_column("labels", justify="right")
    for k, h in enumerate(shown):
        for r, tv in enumerate("ATB"):
            ht.add_row(h if r == 0 else "", tv, *(_num(v) for v in post.confusion[k, r]),
                       _num(fit.human_labels[k], 0) if r == 0 else "", end_section=(r == 2))
    console.print(ht)
    if len(post.humans) > len(shown):
        console.print(f"({len(post.humans) - len(shown)} more humans; --max-humans or --format json shows all)")


def _evaluation(console: Console, err_console: Console, fit: Any) -> None:
    from rich.table import Table

    loho = fit.evaluation
    lt = Table(title=f"Leave-one-human-out: predicting each held-out human's verdict ({loho.n_folds} folds)",
               title_justify="left")
    for c in ("method", "group", "labels", "accuracy", "NLL", "Brier", "ECE"):
        lt.add_column(c, justify="left" if c in ("method", "group") else "right")
    rec: Any  # itertuples rows; pandas-stubs types their fields as any Scalar
    for rec in fit.evaluation_rows.itertuples(index=False):
        lt.add_row(rec.method, rec.group, str(rec.n_labels), _pct(rec.accuracy), _num(rec.nll), _num(rec.brier),
                   _num(rec.ece))
    console.print(lt)
    for line in fit.notes:
        console.print(line, highlight=False, markup=False)
    if loho.n_labels_unscored:
        err_console.print(f"note: {loho.n_labels_unscored} held-out labels were on pairs no one else labelled "
                          "and could not be predicted.", highlight=False)


def _choice_lines(console: Console, fit: Any) -> None:
    """The held-out choice, before the posteriors: which method forecasts best, by how much, by which rule."""
    ch = fit.choice
    line = choice_sentence(fit.choice_dict())
    if line:
        console.print(_text(("held-out choice:", "bold"), " " + line), highlight=False, markup=False)
    if ch is None:
        return
    if fit.forecaster != ch.model:
        console.print(f"The per-pair forecasts below (most uncertain pairs; JSON and CSV 'pairs') are "
                      f"{fit.forecaster}'s, fitted on the whole file; the judges' biases and the humans' confusion "
                      f"matrices are {ch.model}'s (--no-choice shows {ch.model}'s forecasts).",
                      highlight=False, markup=False)
    elif fit.choice_note:
        console.print(fit.choice_note + ".", highlight=False, markup=False)


def _systems_phrase(strengths: Any) -> str:
    """The system-strength prior in the model line (empty when the file names no systems)."""
    if strengths is None:
        return ""
    return (f", system-strength prior ({len(strengths.systems)} systems on {strengths.n_pairs} pairs, "
            f"strength sd {_num(strengths.sigma, 2)})")


def render_pairwise(console: Console, err_console: Console, fit: Any, *, file: str, max_humans: int = 8,
                    save_state: str | None = None) -> None:
    """Print a :class:`~voirdire.workflows.PairwiseFit`."""
    from rich.table import Table

    summ, model, post = fit.summary, fit.model, fit.posterior
    console.print(_text((file, "bold"), f": {summ.n_pairs} pairs, {summ.n_humans} humans, {summ.n_judges} judges, "
                        f"{summ.n_labels} verdicts ({summ.n_swapped_judge_pairs} pairs with a judge in both orders)"),
                  highlight=False)
    console.print(f"BayesJudge: {model.n_particles} particles, {post.n_items_seen} pairs seen, "
                  f"{post.n_resamples} resamplings, final ESS {_num(fit.final_ess, 1)}; update={model.update}, "
                  f"{'Laplace' if model.laplace else 'profile'} weights"
                  f"{', judge tie offsets' if model.judge_ties else ''}"
                  f"{', judge reliabilities' if model.judge_reliability else ''}"
                  f"{', particles per judge' if model.particles == 'per_judge' else ''}"
                  f"{_systems_phrase(model.system_strengths_)}, seed {fit.seed}",
                  highlight=False)
    _choice_lines(console, fit)
    if post.judges:
        _judges(console, fit)
    if post.humans:
        _humans(console, fit, max_humans)
    if len(fit.uncertain):  # --top 0 lists none
        by = "" if fit.forecaster == "BayesJudge" else f" by {fit.forecaster}'s forecasts (the held-out choice)"
        ut = Table(title=f"Most uncertain pairs{by} (entropy in nats; max {math.log(3):.3f})", title_justify="left")
        for c in ("pair", "P(A)", "P(tie)", "P(B)", "entropy"):
            ut.add_column(c, justify="left" if c == "pair" else "right")
        rec: Any
        for rec in fit.uncertain.itertuples(index=False):
            ut.add_row(str(rec.pair), _num(rec.p_A), _num(rec.p_T), _num(rec.p_B), _num(rec.entropy))
        console.print(ut)
    if fit.evaluation is not None:
        _evaluation(console, err_console, fit)
    if save_state is not None:
        console.print(f"state saved to {save_state} (resume with --resume {save_state})", highlight=False)


def bias_json(rep: Any, file: str) -> dict[str, Any]:
    """``voirdire bias --format json``."""
    return {"file": file, "n_pairs": rep.n_pairs, "fdr": rep.fdr, "level": rep.level, "power": rep.power,
            "effects": rep.effects.to_dict("records")}


def render_bias(console: Console, rep: Any) -> None:
    """Print a :class:`~voirdire.pairwise.BiasReport` (as ``voirdire bias``)."""
    from rich.table import Table

    t = Table(title=f"Judge biases ({100 * rep.level:.0f}% intervals; flagged: Benjamini-Hochberg at "
                    f"{rep.fdr:g})", title_justify="left")
    for c in ("judge", "effect", "estimate", "interval", "q", "flag", "MDE", "pairs", "detail"):
        t.add_column(c, justify="left" if c in ("judge", "effect", "detail") else "right")
    for rec in rep.effects.to_dict("records"):
        r: dict[Any, Any] = rec
        t.add_row(escape_control(r["judge"]), str(r["effect"]), _num(r["estimate"], nan="-"),
                  "-" if not math.isfinite(float(r["low"])) else f"[{_num(r['low'], nan='-')}, {_num(r['high'], nan='-')}]",
                  _num(r["q_value"], nan="-"), "yes" if r["flagged"] else "", _num(r["mde"], nan="-"),
                  str(r["n_pairs"]), escape_control(r["detail"]))
    console.print(t)
    console.print("estimate units: position = share of first-shown wins minus second-shown wins; length = "
                  "log-odds of A per doubling of len_a/len_b; self-preference = judge minus humans win rate "
                  "of the own-family response. MDE: smallest effect detected with 80% power.", highlight=False)
