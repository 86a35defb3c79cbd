"""Terminal rendering of ``voirdire overlap`` and ``voirdire plan`` (:class:`~voirdire.workflows.DesignOverview`,
:class:`~voirdire.workflows.PlanningResult`): tables, lines and the JSON document; nothing is computed here."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console

from ...workflows import need_text
from .._format import fmt_int, fmt_num, fmt_pct
from .._terminal import _text, verdict_lines

__all__ = ["render_overlap", "overlap_json", "render_plan", "plan_json", "assign_options"]


def _warn(err_console: Console, notes: Any) -> None:
    for n in notes:  # warnings go to stderr, the tables to stdout
        err_console.print(_text(("warning:", "yellow"), " ", n), highlight=False, soft_wrap=True)


def overlap_json(overview: Any) -> dict[str, Any]:
    """``voirdire overlap --format json``."""
    res = overview.overlap
    return {**res.to_dict(), "pairs": res.to_frame().to_dict(orient="records"), "warnings": list(overview.notes)}


def render_overlap(console: Console, err_console: Console, overview: Any, *, matrix: bool = True) -> None:
    """Coverage, the humans' shared items (observed and expected), the eligible items per held-out human."""
    from rich.table import Table

    res = overview.overlap
    t = Table(title=f"Coverage ({fmt_int(res.n_items)} items)", title_justify="left")
    for c in ("rater", "kind", "labelled", "abstained", "coverage"):
        t.add_column(c, justify="left" if c in ("rater", "kind") else "right", no_wrap=True)
    for r in res.coverage_frame().itertuples():
        t.add_row(str(r.rater), str(r.kind), fmt_int(r.n_labelled), fmt_int(r.n_abstentions), fmt_pct(r.coverage))
    console.print(t)
    if matrix:
        hum = [i for i, role in enumerate(res.roles) if role == "human"]
        m = Table(title="Items shared by two humans: observed (expected with independent random subsets)",
                  title_justify="left")
        m.add_column("", no_wrap=True)
        for i in hum:
            m.add_column(res.raters[i], justify="right", no_wrap=True)
        for a in hum:
            m.add_row(res.raters[a], *[_text((fmt_int(res.observed[a, b]), "dim")) if a == b else
                                       f"{fmt_int(res.observed[a, b])} ({fmt_num(res.expected[a, b], 1)})" for b in hum])
        console.print(m)
    e = Table(title=f"Leave-one-out: eligible items per held-out human (warning below {res.min_eligible})",
              title_justify="left")
    for c in ("held-out human", "judge", "eligible items", "pairs"):
        e.add_column(c, justify="left" if c in ("held-out human", "judge") else "right", no_wrap=True)
    for r in res.eligible_frame().itertuples():
        e.add_row(str(r.human), str(r.judge), _text((fmt_int(r.eligible_items), "yellow" if r.below_min else "")),
                  fmt_int(r.n_pairs))
    if res.judges:
        console.print(e)
    console.print("no human labelled every item (no primary; a pooled first pass is assumed)." if res.primary is None
                  else f"primary (labelled every item): {res.primary}.", highlight=False)
    if res.shared_panel is not None:
        console.print(
            f"Secondaries {'share one panel' if res.shared_panel else 'do not share a panel'} "
            f"(mean overlap / smaller set = {fmt_num(res.panel_share, 2)}). Global pairwise overlap rate "
            f"{fmt_num(res.global_overlap_rate)}: a mean over pairs, not a per-rater coverage; do not turn it "
            "into an item count.", highlight=False, soft_wrap=True)
    _warn(err_console, overview.notes)


def plan_json(res: Any, file: str | None) -> dict[str, Any]:
    """``voirdire plan --format json``."""
    ov = None if res.overview is None else res.overview.overlap
    val = res.validation
    return {"file": file,
            "verdicts": None if val is None else [
                {"judge": j.judge, "verdict": j.verdict.to_dict(),
                 "advice": None if j.advice is None else j.advice.to_dict()} for j in val.judges],
            "answers": None if res.answers is None else res.answers.to_dict(),
            "certification": {k: v.to_dict() for k, v in res.certification.items()},
            "infeasible": dict(res.infeasible),
            "ranking": None if res.ranking is None else res.ranking.to_dict(),
            "simulation": None if res.simulation is None else res.simulation.to_dict(),
            "overlap": None if ov is None else {"eligible": ov.eligible_frame().to_dict(orient="records"),
                                                "primary": ov.primary},
            "next": None if res.next is None else res.next.to_dict(),
            "warnings": [] if res.overview is None else list(res.overview.notes)}


def _need(x: float, limit: float) -> str:
    """A per-human size as plan prints it: the number when the items on hand can give it, else "> N"."""
    if not math.isfinite(x):
        return "none"
    return fmt_int(x) if x <= limit else f"> {fmt_int(limit)}"


def _dim(console: Console, text: str) -> None:
    console.print(text, style="dim", highlight=False, soft_wrap=True)


_MORE = {"-": "-", "settled": "0", "none": "none", "cannot": "cannot be settled"}
_LEGEND = ("verdict: the one decision per judge, the same as voirdire validate, the report and study status at this "
           "seed. anytime LOO: the sequential leave-one-out rule on every label so far (one look), shown beside the "
           "verdict. more/human: further comparisons (items labelled by the held-out human, the judge and another "
           "human) that rule expects at the current estimates; 'cannot be settled' when the items on hand cannot "
           "give them; '-' for a judge whose verdict more labels will not change. m*_cert: the fixed-sample plug-in "
           "size per held-out human (one look, no guarantee at the margin), larger or smaller than more/human; "
           "'> N' when it exceeds the N items on hand. effect: (mu_d + epsilon) / sigma0. --budget simulates "
           "hypothetical judges at d = 0 and d = -2 epsilon, not these judges.")


def _answers(console: Console, res: Any, n_items: int) -> None:
    from rich import box
    from rich.table import Table

    a = Table(title="One answer per judge: the verdict (as voirdire validate), and beside it the running "
                    "anytime-valid leave-one-out rule", title_justify="left", box=box.SIMPLE_HEAD)
    for c in ("judge", "verdict", "anytime LOO", "more/human", "m*_cert", "eligible", "effect"):
        a.add_column(c, justify="left" if c in ("judge", "verdict", "anytime LOO") else "right", no_wrap=True,
                     overflow="fold")
    for r in res.rows:
        a.add_row(r.judge, "-" if r.decision is None else r.decision.upper(), r.running,
                  fmt_int(r.more) if r.more_state == "number" else _MORE[r.more_state], _need(r.m_cert, n_items),
                  fmt_int(r.eligible), fmt_num(r.effect_size, 3))
    console.print(a)
    lines = {} if res.validation is None else dict(zip([j.judge for j in res.validation.judges],
                                                       verdict_lines(res.validation)))
    settled = {} if res.validation is None else {j.judge: j.advice for j in res.validation.judges
                                                 if j.advice is not None and j.advice.status == "settled"}
    for r in res.rows:
        if r.judge in lines:  # validate's own line: the same verdict and reasons, word for word
            console.print(lines[r.judge], highlight=False, soft_wrap=True)
        if r.judge in settled:
            _dim(console, f"  {settled[r.judge].sentence}.")
        _dim(console, f"  beside it, {r.beside}")
    _dim(console, _LEGEND)


def _certification(console: Console, res: Any, n_items: int | None, settled: set[str]) -> None:
    from rich import box
    from rich.table import Table

    k = None if res.overview is None else sum(1 for role in res.overview.overlap.roles if role == "human")
    for j, r in res.certification.items():
        done = j in settled  # no top-up for a judge whose decision is settled
        if n_items is not None and math.isfinite(r.m_star) and r.m_star > n_items:
            m_txt = f"> {fmt_int(n_items)} ({need_text(r.m_star, n_items, n_items, k or 0, 'items')})"
        else:
            m_txt = fmt_int(r.m_star)
        verdict = res.validation and {e.judge: e.verdict.decision for e in res.validation.judges}.get(j)
        t = Table(title=f"Certify {j} (leave-one-out, fixed sample): m*_cert = {m_txt} eligible items per held-out "
                        "human" + (f" (verdict {verdict}: no top-up needed)" if done else ""),
                  title_justify="left", box=box.SIMPLE_HEAD)
        if r.humans:
            for c in ("held-out", "d_k", "sigma0", "eligible", "m*", "more", "P(FR) now"):
                t.add_column(c, justify="left" if c == "held-out" else "right", no_wrap=True)
            lim = math.inf if n_items is None else n_items
            for row in r.to_frame().itertuples():
                need = "" if not math.isfinite(row.m_star) else _need(max(0, row.m_star - row.eligible_items),
                                                                      lim - row.eligible_items)
                t.add_row(str(row.human), fmt_num(row.mu_d), fmt_num(row.sigma0), fmt_int(row.eligible_items),
                          _need(row.m_star, lim) if math.isfinite(row.m_star) else "infeasible",
                          "0" if done else need, fmt_pct(row.false_reject_now))
            console.print(t)
        else:
            console.print(t.title, highlight=False)
        console.print(
            f"pooled mu_d = {fmt_num(r.mu_d)}, sigma0 = {fmt_num(r.sigma0)}, margin mu_d + epsilon = {fmt_num(r.margin)}, "
            f"z = {fmt_num(r.z)} (a = {r.significance_level:g}); design effect from clusters "
            f"{fmt_num(r.design_effect, 2)}.", highlight=False, soft_wrap=True)
    for j, msg in res.infeasible.items():
        short = msg.split(": the judge")[0] if j != "ranking" else msg
        console.print(_text((f"{j}:", "red"), " ", short + (": no budget certifies it." if j != "ranking" else "")),
                      highlight=False, soft_wrap=True)
    if any(j != "ranking" for j in res.infeasible):
        _dim(console, "mu_d + epsilon <= 0: under the leave-one-out rule the judge falls short of the human baseline "
                      "by more than the tolerance, and more overlap only makes that rule's rejection more certain; "
                      "the verdict above (both methods) is the decision.")
    if res.certification:
        _dim(console, "d_k: judge minus held-out human agreement with the other humans; eligible: items the "
                      "comparison uses now; m*: what this comparison needs; more: m* - eligible; P(FR) now: "
                      "approximate false-reject probability today.")


def _items(x: float, n_items: int | None, n_humans: int) -> str:
    """A size in items: itself, or "> N (cannot be settled with the N items you have: needs about M more ...)"."""
    if n_items is None or not math.isfinite(x) or x <= n_items:
        return _need(x, math.inf) + " items"
    return f"> {fmt_int(n_items)} items ({need_text(x, n_items, n_items, n_humans, 'items')})"


def _ranking(console: Console, res: Any, n_items: int | None) -> None:
    rk = res.ranking
    k = 0 if res.overview is None else sum(1 for role in res.overview.overlap.roles if role == "human")
    console.print(
        f"Rank {rk.n_judges} judges: m*_rank = {_items(rk.m_star, n_items, k)} (Delta_min = {fmt_num(rk.delta_min)}, "
        f"sigma0 = {fmt_num(rk.sigma0)}, z = {fmt_num(rk.z)}, Bonferroni over {rk.n_judges - 1} rivals)."
        + ("" if rk.m_star_paired is None else
           f" From the observed paired differences (covariance included): {_items(rk.m_star_paired, n_items, k)}; "
           f"mean correlation best vs rivals {fmt_num(rk.correlation, 2)}."), highlight=False, soft_wrap=True)
    if res.validation is not None and res.validation.ranking is not None:  # the one order: validate's P(best)
        from ...workflows import order_text, ranking_tiers

        console.print("Order (by P(best), as voirdire validate and the report): "
                      + order_text(ranking_tiers(res.validation.ranking)) + ". m*_rank sizes the separation of the "
                      "top judge from its rivals; the planning means it uses are in the JSON.",
                      highlight=False, soft_wrap=True)


def _simulation(console: Console, sim: Any) -> None:
    from rich import box
    from rich.table import Table

    t = Table(title=f"Simulated decision ({sim.design} design, {sim.n_repetitions} runs per budget, "
                    f"{sim.n_humans} humans, {fmt_int(sim.n_items)} items)", title_justify="left", box=box.SIMPLE_HEAD)
    for c in ("per secondary", "coverage", "FR (d = 0)", f"FA (d = {sim.reject_d:.3f})", "meets targets"):
        t.add_column(c, justify="right", no_wrap=True)
    for row in sim.to_frame().itertuples():
        t.add_row(fmt_int(row.budget), fmt_pct(row.coverage), fmt_pct(row.false_reject), fmt_pct(row.false_accept),
                  "yes" if row.meets_targets else "no")
    console.print(t)
    rec = "none of the candidates" if sim.recommended is None else f"{sim.recommended} items per secondary"
    console.print(f"Smallest budget with FR <= {fmt_pct(sim.fr_target)} and FA <= {fmt_pct(sim.fa_target)}: {rec}.",
                  highlight=False)
    for n in sim.notes:
        _dim(console, f"note: {n}")


def _checked(c: Any) -> str:
    """What the simulation check of a batch found, in words."""
    return (f"checked by simulation ({c.n_runs} runs of this {c.design} batch of {fmt_int(c.n_per_rater)} items per "
            "assignee, each human labelling at their observed rate): it gives about "
            f"{fmt_int(math.floor(c.fewest))} new comparisons per open held-out human, {fmt_int(c.need)} needed: "
            + ("enough" if c.enough else "not enough"))


def assign_options(read: dict[str, Any], judges: list[str] | None, judge_file: Any = None) -> str:
    """The reading options ``read`` (:meth:`voirdire.cli._app.ReaderOptions.read_kwargs`), the judges and the
    judge file as ``voirdire assign`` spells them, so that the "Next:" command reads FILE as plan did."""
    import shlex

    pairs = [("--scale", read["scale"]), ("--categories", ",".join(read["categories"] or []) or None),
             *[("--abstain", a) for a in read["abstain"]], ("--role", read["role"]), ("--judge-file", judge_file),
             *[("--item", read["item"]), ("--rater-column", read["rater"]), ("--label", read["label"])],
             ("--duplicates", read["duplicates"]), ("--missing", read["missing"]),
             *[("--judge", j) for j in judges or []]]
    default = {"--item": "item", "--rater-column": "rater", "--label": "label", "--duplicates": "error",
               "--missing": "error"}
    return "".join(f" {k} {shlex.quote(str(v))}" for k, v in pairs if v is not None and default.get(k) != v)


def _next(console: Console, res: Any, file: str, options: str) -> None:
    b = res.next
    if b is not None:
        _dim(console, f"Next: {b.command(file)}{options} (for {b.judge}, the open judge needing the most; "
                      f"{_checked(b.check)})")
        return
    for a in res.short:  # a batch the check found short is never suggested: what would settle it instead
        _dim(console, f"{a.judge}: {_checked(a.check)}; instead, {a.sentence.split(' (checked by')[0]}.")
    _dim(console, "Next: no batch of the items on hand passed the simulation check for an open judge: every judge is "
                  "settled, needs new items, needs something other than labels, or needs the labels said above."
         if res.short else "Next: no batch of the items on hand would settle an open judge: every judge is settled, "
                           "needs new items, or needs something other than labels (see above).")


def render_plan(console: Console, err_console: Console, res: Any, *, file: str | None = None,
                options: str = "") -> None:
    """Print a :class:`~voirdire.workflows.PlanningResult`: the answers, the sizes, the simulation, "Next:"
    (``options``: the reading options the "Next:" command needs to read ``file`` as plan did)."""
    n_items = res.n_items
    if res.answers is not None:
        _answers(console, res, n_items)
    settled = set() if res.validation is None else {
        j.judge for j in res.validation.judges if j.verdict.decision in ("accept", "reject")}
    _certification(console, res, n_items, settled)
    if res.ranking is not None:
        _ranking(console, res, n_items)
    if res.simulation is not None:
        _simulation(console, res.simulation)
    _dim(console, "Planning aids, not error certificates: asymptotic, independent items (clusters inflate sigma0), "
                  "one comparison at a time.")
    if res.overview is not None and res.answers is not None:
        _next(console, res, file or "FILE", options)
    if res.overview is not None:
        _warn(err_console, res.overview.notes)
