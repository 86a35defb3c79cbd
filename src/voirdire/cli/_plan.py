"""The `voirdire plan` and `voirdire overlap` commands (registered on import).

``overlap`` shows who labelled what and what the leave-one-out rule can use; ``plan`` turns a pilot
(or given moments) into the overlap each comparison needs (m*_cert, m*_rank) and, with
``--budget``, simulates the decision's false-reject and false-accept rates at candidate budgets.
"""

from __future__ import annotations

import warnings
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from ._app import (
    ReaderOptions, app, console, emit_json, err_console, fail, format_options, handle_errors, reader_options,
)
from ._console import progress_bar, styled
from ._app import n_resamples_option


class TableOrJson(str, Enum):
    table = "table"
    json = "json"


class ScoreName(str, Enum):
    agreement = "agreement"
    alpha = "alpha"
    kappa = "kappa"
    ac1 = "ac1"


class DesignName(str, Enum):
    random = "random"
    strat = "strat"
    panel = "panel"
    seq_refined = "seq-refined"
    seq_coverage = "seq-coverage"


def _unique(names: list[str] | None) -> list[str] | None:
    """Names in order, each once (`-j X -j X` is one judge)."""
    return list(dict.fromkeys(names)) if names else names


def _overlap_quiet(table: Any, **kw: Any) -> tuple[Any, list[str]]:
    """The overlap and its small-sample warnings (``workflows.design_overview``, as the report's Design section)."""
    from ..workflows import design_overview

    res = design_overview(table, **kw)
    return res.overlap, list(res.notes)


def _render_overlap(res: Any, notes: list[str], *, matrix: bool = True) -> None:
    from rich.table import Table

    from ..report import fmt_int, fmt_num, fmt_pct

    cov = res.coverage_frame()
    t = Table(title=f"Coverage ({fmt_int(res.n_items)} items)", title_justify="left")
    for c in ("rater", "kind", "labelled", "abstained", "coverage"):
        t.add_column(c, justify="left" if c in ("rater", "kind") else "right", no_wrap=True)
    for r in cov.itertuples():
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
            cells: list[Any] = []
            for b in hum:
                if a == b:
                    cells.append(styled((fmt_int(res.observed[a, b]), "dim")))
                else:
                    cells.append(f"{fmt_int(res.observed[a, b])} ({fmt_num(res.expected[a, b], 1)})")
            m.add_row(res.raters[a], *cells)
        console.print(m)
    e = Table(title=f"Leave-one-out: eligible items per held-out human (warning below {res.min_eligible})",
              title_justify="left")
    for c in ("held-out human", "judge", "eligible items", "pairs"):
        e.add_column(c, justify="left" if c in ("held-out human", "judge") else "right", no_wrap=True)
    for r in res.eligible_frame().itertuples():
        e.add_row(str(r.human), str(r.judge), styled((fmt_int(r.eligible_items), "yellow" if r.below_min else "")),
                  fmt_int(r.n_pairs))
    if res.judges:
        console.print(e)
    if res.primary is None:
        panel = "no human labelled every item (no primary; a pooled first pass is assumed)."
    else:
        panel = f"primary (labelled every item): {res.primary}."
    console.print(panel, highlight=False)
    if res.shared_panel is not None:
        console.print(
            f"Secondaries {'share one panel' if res.shared_panel else 'do not share a panel'} "
            f"(mean overlap / smaller set = {fmt_num(res.panel_share, 2)}). Global pairwise overlap rate "
            f"{fmt_num(res.global_overlap_rate)}: a mean over pairs, not a per-rater coverage; do not turn it "
            "into an item count.", highlight=False, soft_wrap=True)
    for n in notes:  # warnings go to stderr, the tables to stdout
        err_console.print(styled(("warning:", "yellow"), " ", n), highlight=False, soft_wrap=True)


@app.command("overlap")
@handle_errors
@format_options
@reader_options
def overlap_command(
    file: Path = typer.Argument(..., readable=False, help="Annotation file (long CSV/TSV/JSONL/Parquet, or an AltTest directory)."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="An LLM judge (repeatable)."),
    primary: str | None = typer.Option(None, "--primary", help="The first-pass human (default: who labelled every item)."),
    min_eligible: int = typer.Option(30, "--min-eligible", help="Warn below this many eligible items per comparison."),
    output: TableOrJson = typer.Option(TableOrJson.table, "--format", "-f", help="table or json."),
    judge_file: Path | None = typer.Option(None, "--judge-file", readable=False, help="Nested JSON of judge labels."),
    *,
    reader: ReaderOptions,
) -> None:
    """Who labelled what: per-rater coverage, shared items, and what the leave-one-out rule can use.

    Expected overlap assumes each partial rater's items were an independent random subset: with
    coverage rho that is rho*n items with the primary but only rho^2*n between two secondaries.
    """
    table = reader.load(file, judges=_unique(judge), judge_file=judge_file)
    if min_eligible < 0:
        fail(f"--min-eligible must be >= 0. Got {min_eligible}.")
    res, notes = _overlap_quiet(table, primary=primary, min_eligible=min_eligible)
    if output == TableOrJson.json:
        d = res.to_dict()
        d["pairs"] = res.to_frame().to_dict(orient="records")
        d["warnings"] = notes
        emit_json(d)
        return
    _render_overlap(res, notes)


def _budget_list(values: list[str] | None) -> list[int]:
    out: list[int] = []
    for v in values or []:
        for part in str(v).split(","):
            part = part.strip()
            if not part:
                continue
            try:
                b = int(part)
            except ValueError:
                fail(f"--budget takes whole numbers of items per secondary human. Got {part!r}.")
            if b < 1:
                fail(f"--budget values must be >= 1. Got {b}.")
            out.append(b)
    return out


@app.command("plan")
@handle_errors
@format_options
@reader_options
def plan_command(
    file: Path | None = typer.Argument(None, readable=False, help="Pilot annotation file (omit to plan from --mu-d/--sigma0)."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="An LLM judge to plan for (repeatable)."),
    epsilon: float = typer.Option(0.05, "--epsilon", help="Tolerance of the leave-one-out rule (d_k >= -epsilon)."),
    significance_level: float = typer.Option(0.05, "--significance-level",
                                             help="One comparison may falsely reject with probability a/2."),
    score: ScoreName = typer.Option(ScoreName.agreement, "--score",
                                    help="Score of the rule: agreement (closed form) or alpha/kappa/ac1 (bootstrap sigma0)."),
    mu_d: float | None = typer.Option(None, "--mu-d", help="Mean per-item difference judge - human (no pilot)."),
    sigma0: float | None = typer.Option(None, "--sigma0", help="Its per-item standard deviation (no pilot)."),
    delta_min: float | None = typer.Option(None, "--delta-min", help="Smallest gap between the best judge and a rival (no pilot)."),
    n_judges: int | None = typer.Option(None, "--n-judges", help="Number of judges to rank (no pilot)."),
    budget: list[str] = typer.Option(None, "--budget", "-b",
                                     help="Candidate items per secondary to simulate (repeatable or comma-separated)."),
    design: DesignName = typer.Option(DesignName.random, "--design", help="Allocation design for --budget."),
    repetitions: int = typer.Option(200, "--repetitions", help="Simulated runs per budget."),
    fr_target: float = typer.Option(0.10, "--fr-target", help="Largest acceptable false-reject rate."),
    fa_target: float = typer.Option(0.10, "--fa-target", help="Largest acceptable false-accept rate."),
    n_jobs: int = typer.Option(1, "--n-jobs", help="Worker processes for --budget."),
    seed: int = typer.Option(0, "--seed", help="Seed of the simulation and of the verdicts (as validate --seed)."),
    n_resamples: int = n_resamples_option(),
    output: TableOrJson = typer.Option(TableOrJson.table, "--format", "-f", help="table or json."),
    judge_file: Path | None = typer.Option(None, "--judge-file", readable=False, help="Nested JSON of judge labels."),
    *,
    reader: ReaderOptions,
) -> None:
    """How many overlapping human labels you need to certify a judge, or to rank several.

    m*_cert = ceil(z^2 sigma0^2 / (mu_d + epsilon)^2) eligible items per held-out human keeps one
    comparison's false-reject probability below a/2; m*_rank adds Bonferroni over the rivals.
    Asymptotic planning aids: --budget checks them by simulating the whole decision.
    """
    from ..design import plan_certification, plan_ranking

    budgets = _budget_list(budget)
    out: dict[str, Any] = {"answers": None, "certification": {}, "ranking": None, "simulation": None}
    notes: list[str] = []
    errors: dict[str, str] = {}

    if file is None:
        if mu_d is None and sigma0 is None and delta_min is None:
            fail("Give a pilot FILE, or the moments --mu-d and --sigma0 (and --delta-min --n-judges to rank).")
        if sigma0 is None:
            fail("--sigma0 is needed to plan without a pilot.")
        if mu_d is not None:
            out["certification"]["(given moments)"] = plan_certification(mu_d=mu_d, sigma0=sigma0, epsilon=epsilon,
                                                                         significance_level=significance_level)
        if delta_min is not None:
            if n_judges is None:
                fail("--delta-min needs --n-judges.")
            out["ranking"] = plan_ranking(sigma0=sigma0, delta_min=delta_min, n_judges=n_judges,
                                          significance_level=significance_level)
        if budgets:
            fail("--budget simulates from a pilot: give the pilot FILE.")
        ov = None
    else:
        table = reader.load(file, judges=_unique(judge), judge_file=judge_file)
        judges = _unique(list(judge)) if judge else list(table.judges)
        if not judges:
            fail(f"{file}: no judge. Name it with --judge.")
        if len(table.humans) < 2:
            fail(f"{file}: planning needs at least two human raters; found {len(table.humans)}.")
        from ..workflows import plan_validation

        kw = dict(epsilon=epsilon, significance_level=significance_level, score=score.value, seed=seed,
                  n_resamples=n_resamples, budgets=budgets, design=design.value, fr_target=fr_target,
                  fa_target=fa_target, n_repetitions=repetitions, n_jobs=n_jobs)
        if budgets:
            with progress_bar(output == TableOrJson.table) as p:
                task = p.add_task("simulating budgets", total=None)
                res = plan_validation(table, judges, progress=lambda done, total: p.update(
                    task, completed=done, total=total), **kw)  # type: ignore[arg-type]
        else:
            res = plan_validation(table, judges, **kw)  # type: ignore[arg-type]
        ov, notes = res.overview.overlap, list(res.overview.notes)
        out.update(validation=res.validation, answers=res.answers, certification=dict(res.certification),
                   ranking=res.ranking, simulation=res.simulation)
        errors.update(res.infeasible)
    val = out.get("validation")
    if output == TableOrJson.json:
        emit_json({"file": None if file is None else str(file),
                   "verdicts": None if val is None else [
                       {"judge": j.judge, "verdict": j.verdict.to_dict(),
                        "advice": None if j.advice is None else j.advice.to_dict()} for j in val.judges],
                   "answers": None if out["answers"] is None else out["answers"].to_dict(),
                   "certification": {k: v.to_dict() for k, v in out["certification"].items()},
                   "infeasible": errors,
                   "ranking": None if out["ranking"] is None else out["ranking"].to_dict(),
                   "simulation": None if out["simulation"] is None else out["simulation"].to_dict(),
                   "overlap": None if ov is None else {"eligible": ov.eligible_frame().to_dict(orient="records"),
                                                       "primary": ov.primary},
                   "warnings": notes})
        return
    _render_plan(out, errors, ov, notes, file=None if file is None else str(file))


def _need(x: float, limit: float) -> str:
    """A per-human size as plan prints it: the number when the items on hand can give it, else "> N"."""
    import math

    from ..report import fmt_int

    if not math.isfinite(x):
        return "none"
    return fmt_int(x) if x <= limit else f"> {fmt_int(limit)}"


def _render_plan(out: dict[str, Any], errors: dict[str, str], ov: Any, notes: list[str], *,
                 file: str | None = None) -> None:
    import numpy as np
    from rich import box
    from rich.table import Table

    from ..report import fmt_int, fmt_num, fmt_pct

    ans = out["answers"]
    val = out.get("validation")
    verdicts = {} if val is None else {j.judge: j for j in val.judges}
    settled = {j for j, e in verdicts.items() if e.verdict.decision in ("accept", "reject")}
    n_items = None if ov is None else int(ov.n_items)
    if ans is not None:
        a = Table(title="One answer per judge: the verdict (as voirdire validate), and beside it the running "
                        "anytime-valid leave-one-out rule", title_justify="left", box=box.SIMPLE_HEAD)
        for c in ("judge", "verdict", "anytime LOO", "more/human", "m*_cert", "eligible", "effect"):
            a.add_column(c, justify="left" if c in ("judge", "verdict", "anytime LOO") else "right",
                         no_wrap=True, overflow="fold")
        for p in ans.plans:
            e = verdicts.get(p.judge)
            adv = None if e is None else e.advice
            limit = float("inf") if n_items is None else n_items
            cap = limit if adv is None else (adv.capacity if adv.status in ("label_more", "needs_new_items")
                                             else n_items - p.eligible)
            if p.judge in settled or (adv is not None and adv.status == "not_labels"):
                more = "-"
            elif p.status == "settled":
                more = "0"
            elif not np.isfinite(p.more_per_human):
                more = "none"
            else:
                more = fmt_int(p.more_per_human) if p.more_per_human <= cap else "cannot be settled"
            running = f"{p.decision}" if p.status == "settled" else ("on the margin" if p.status == "boundary"
                                                                      else "continue")
            a.add_row(p.judge, "-" if e is None else e.verdict.decision.upper(), running, more,
                      _need(p.m_cert, limit), fmt_int(p.eligible), fmt_num(p.effect_size, 3))
        console.print(a)
        for p in ans.plans:
            e = verdicts.get(p.judge)
            if e is not None and e.advice is not None:
                console.print(styled((f"{p.judge}: {e.verdict.decision.upper()}", "bold"), " - ",
                                     e.advice.sentence + "."), highlight=False, soft_wrap=True)
            from ..workflows import running_text

            lim = float("inf") if n_items is None else n_items - p.eligible
            txt = running_text(p.decision if p.status == "settled" else "continue",
                               p.more_per_human if p.status == "open" else float("inf"), None, lim,
                               n_items or 0)
            console.print(styled((f"  beside it, {txt}", "dim")), highlight=False, soft_wrap=True)
        console.print("verdict: the one decision per judge, the same as voirdire validate, the report and study status "
                      "at this seed. anytime LOO: the sequential leave-one-out rule on every label so far (one "
                      "look), shown beside the verdict. more/human: further comparisons (items labelled by the "
                      "held-out human, the judge and another human) that rule expects at the current estimates; "
                      "'cannot be settled' when the items on hand cannot give them; '-' for a judge whose verdict more "
                      "labels will not change. m*_cert: the fixed-sample plug-in size per held-out human (one look, "
                      "no guarantee at the margin), larger or smaller than more/human; '> N' when it exceeds the N "
                      "items on hand. effect: (mu_d + epsilon) / sigma0. --budget simulates hypothetical judges at "
                      "d = 0 and d = -2 epsilon, not these judges.", style="dim", highlight=False, soft_wrap=True)

    for j, r in out["certification"].items():
        done = j in settled  # no top-up for a judge whose decision is settled
        m_txt = (_need(r.m_star, n_items) if n_items is not None and np.isfinite(r.m_star) else fmt_int(r.m_star))
        if m_txt.startswith(">"):
            m_txt += f" (cannot be settled with the {fmt_int(n_items)} items you have)"
        t = Table(title=f"Certify {j} (leave-one-out, fixed sample): m*_cert = {m_txt} eligible items per held-out "
                        "human" + (f" (verdict {verdicts[j].verdict.decision}: no top-up needed)" if done else ""),
                  title_justify="left", box=box.SIMPLE_HEAD)
        if r.humans:
            for c in ("held-out", "d_k", "sigma0", "eligible", "m*", "more", "P(FR) now"):
                t.add_column(c, justify="left" if c == "held-out" else "right", no_wrap=True)
            fr = r.to_frame()
            lim = float("inf") if n_items is None else n_items
            for row in fr.itertuples():
                need = "" if not np.isfinite(row.m_star) else _need(max(0, row.m_star - row.eligible_items),
                                                                     lim - row.eligible_items)
                need = "0" if done else need
                t.add_row(str(row.human), fmt_num(row.mu_d), fmt_num(row.sigma0), fmt_int(row.eligible_items),
                          _need(row.m_star, lim) if np.isfinite(row.m_star) else "infeasible", need,
                          fmt_pct(row.false_reject_now))
            console.print(t)
        else:
            console.print(t.title, highlight=False)
        console.print(
            f"pooled mu_d = {fmt_num(r.mu_d)}, sigma0 = {fmt_num(r.sigma0)}, margin mu_d + epsilon = {fmt_num(r.margin)}, "
            f"z = {fmt_num(r.z)} (a = {r.significance_level:g}); design effect from clusters "
            f"{fmt_num(r.design_effect, 2)}.", highlight=False, soft_wrap=True)
    for j, msg in errors.items():
        short = msg.split(": the judge")[0] if j != "ranking" else msg
        console.print(styled((f"{j}:", "red"), " ", short + (": no budget certifies it." if j != "ranking" else "")),
                      highlight=False, soft_wrap=True)
    if any(j != "ranking" for j in errors):
        console.print("mu_d + epsilon <= 0: under the leave-one-out rule the judge falls short of the human "
                      "baseline by more than the tolerance, and more overlap only makes that rule's rejection more "
                      "certain; the verdict above (both methods) is the decision.", style="dim", highlight=False,
                      soft_wrap=True)
    if out["certification"]:
        console.print("d_k: judge minus held-out human agreement with the other humans; eligible: items the "
                      "comparison uses now; m*: what this comparison needs; more: m* - eligible; P(FR) now: "
                      "approximate false-reject probability today.", style="dim", highlight=False, soft_wrap=True)
    rk = out["ranking"]
    if rk is not None:
        lim = float("inf") if n_items is None else n_items
        console.print(
            f"Rank {rk.n_judges} judges: m*_rank = {_need(rk.m_star, lim)} items (Delta_min = {fmt_num(rk.delta_min)}, "
            f"sigma0 = {fmt_num(rk.sigma0)}, z = {fmt_num(rk.z)}, Bonferroni over {rk.n_judges - 1} rivals)."
            + ("" if rk.m_star_paired is None else
               f" From the observed paired differences (covariance included): {_need(rk.m_star_paired, lim)} items; "
               f"mean correlation best vs rivals {fmt_num(rk.correlation, 2)}."), highlight=False, soft_wrap=True)
        if val is not None and val.ranking is not None:  # the one order of judges: validate's P(best) ranking
            from ..workflows import order_text, ranking_tiers

            console.print("Order (by P(best), as voirdire validate and the report): "
                          + order_text(ranking_tiers(val.ranking)) + ". m*_rank sizes the separation of the top "
                          "judge from its rivals; the planning means it uses are in the JSON.",
                          highlight=False, soft_wrap=True)
    sim = out["simulation"]
    if sim is not None:
        t = Table(title=f"Simulated decision ({sim.design} design, {sim.n_repetitions} runs per budget, "
                        f"{sim.n_humans} humans, {fmt_int(sim.n_items)} items)", title_justify="left", box=box.SIMPLE_HEAD)
        for c in ("per secondary", "coverage", "FR (d = 0)", f"FA (d = {sim.reject_d:.3f})", "meets targets"):
            t.add_column(c, justify="right", no_wrap=True)
        for row in sim.to_frame().itertuples():
            t.add_row(fmt_int(row.budget), fmt_pct(row.coverage), fmt_pct(row.false_reject), fmt_pct(row.false_accept),
                      "yes" if row.meets_targets else "no")
        console.print(t)
        rec = ("none of the candidates" if sim.recommended is None else f"{sim.recommended} items per secondary")
        console.print(f"Smallest budget with FR <= {fmt_pct(sim.fr_target)} and FA <= {fmt_pct(sim.fa_target)}: {rec}.",
                      highlight=False)
        for n in sim.notes:
            console.print(f"note: {n}", style="dim", highlight=False, soft_wrap=True)
    console.print("Planning aids, not error certificates: asymptotic, independent items (clusters inflate "
                  "sigma0), one comparison at a time.", style="dim", highlight=False, soft_wrap=True)
    if ov is not None and ans is not None:
        batches = [e.advice for e in verdicts.values() if e.advice is not None and e.advice.command() is not None]
        if batches:
            b = max(batches, key=lambda x: x.n_per_rater or 0)
            console.print(f"Next: {b.command(file or 'FILE')} (for {b.judge}, the open judge needing the most; "
                          f"this batch was drawn and gives every open held-out human at least {fmt_int(b.min_gain)} "
                          "new comparisons)", style="dim", highlight=False, soft_wrap=True)
        else:
            console.print("Next: no batch of the items on hand would settle an open judge: every judge is settled, "
                          "needs new items, or needs something other than labels (see above).", style="dim",
                          highlight=False, soft_wrap=True)
    for n in notes:  # warnings go to stderr, the tables to stdout
        err_console.print(styled(("warning:", "yellow"), " ", n), highlight=False, soft_wrap=True)
