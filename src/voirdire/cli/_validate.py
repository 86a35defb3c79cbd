"""The `voirdire validate` command (registered on import): leave-one-human-out rule, Alternative
Annotator Test and judge ranking, one table per judge."""

from __future__ import annotations

import sys
import warnings
from enum import Enum
from pathlib import Path
from typing import Any

import pandas as pd
import typer
from rich.table import Table

from ..exceptions import VoirdireError
from ..report._format import fmt_ci, fmt_int, fmt_num, fmt_p
from ._app import (
    Duplicates, Level, Missing, OutputFormat, app, console, duplicates_option, emit_json, err_console,
    handle_errors, load_table, missing_option, role_option, format_options,
)
from ._console import styled, with_styled_words
from ._raters import annotator_sensitivity, exclude_humans, sensitivity_lines


class Method(str, Enum):
    loo = "loo"
    alt_test = "alt-test"
    both = "both"


class ScoreName(str, Enum):
    agreement = "agreement"
    alpha = "alpha"
    kappa = "kappa"
    ac1 = "ac1"


class Scoring(str, Enum):
    accuracy = "accuracy"
    neg_rmse = "neg_rmse"


class Correction(str, Enum):
    by = "by"
    bh = "bh"
    holm = "holm"
    bonferroni = "bonferroni"


class PerHumanTest(str, Enum):
    t = "t"
    wilcoxon = "wilcoxon"


class RankBy(str, Enum):
    rho = "rho"
    omega = "omega"
    mean_d = "mean_d"
    score = "score"


def default_scoring(table: Any) -> str:
    """neg_rmse for numeric ordinal/interval/ratio labels (the authors' choice), else accuracy."""
    if table.scale.level in ("ordinal", "interval", "ratio") and table.scale.is_numeric:
        return "neg_rmse"
    return "accuracy"


def _run(func: Any, notes: list[str], *args: Any, **kwargs: Any) -> Any:
    """Call a library function, turning its warnings into notes for the reader."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func(*args, **kwargs)
    for w in caught:
        msg = str(w.message)
        if msg not in notes:
            notes.append(msg)
    return out


_DECISION_STYLE = {"accept": "ACCEPT", "reject": "REJECT", "inconclusive": "INCONCLUSIVE"}
_DECISION_COLOURS = {"ACCEPT": "bold green", "REJECT": "bold red", "INCONCLUSIVE": "bold yellow"}


def _stability(x: float, n: int, unit: str) -> str:
    if n == 0:
        return "no bootstrap (--resamples 0)"
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
            t.add_row(styled((h, "dim")), fmt_int(r.n_items[k]), fmt_int(r.n_pairs[k]), fmt_num(r.s_judge[k]),
                      fmt_num(r.s_human[k]), fmt_num(r.d[k]), "—", styled(("n/a", "dim")))
            continue
        t.add_row(h, fmt_int(r.n_items[k]), fmt_int(r.n_pairs[k]), fmt_num(r.s_judge[k]), fmt_num(r.s_human[k]),
                  fmt_num(r.d[k]), fmt_ci(r.d_low[k], r.d_high[k], digits=2), "win" if r.t[k] == 1 else "loss")
    return t


def loo_summary(r: Any) -> str:
    skipped = [f"  {h}: not evaluated ({reason})" for h, reason in zip(r.humans, r.reason) if reason is not None]
    head = "\n".join(skipped) + ("\n" if skipped else "")
    head += (f"  omega = {fmt_num(r.omega)} ({r.n_evaluated} of {len(r.humans)} humans evaluated; "
            f"accept when >= {fmt_num(r.threshold, 2)}) -> {_DECISION_STYLE[r.decision]}")
    if r.decision == "inconclusive":
        head += (f"\n  Fewer than two humans share at least {r.min_items} items with the judge and another "
                 "human: the overlap is too thin to decide. Collect labels on shared items (see `voirdire plan`).")
    return head + f"\n  Stability: {_stability(r.decision_stability, r.n_resamples, r.resampling_unit)}."


def alt_table(r: Any) -> Table:
    t = Table(title=(f"{r.judge}: Alternative Annotator Test ({r.scoring}, epsilon = {fmt_num(r.epsilon, 3)}, "
                     f"{r.correction.upper()} at q = {fmt_num(r.q, 3)}, {r.test}-test)"), title_justify="left")
    for col in ("human", "items", "rho_f", "rho_h", "mean d", "statistic", "p-value", "rejected"):
        _add_column(t, col, r.humans)
    for k, h in enumerate(r.humans):
        if not r.tested[k]:
            # the reason goes below the table (alt_summary): in the cell it squeezed every other column
            t.add_row(styled((h, "dim")), fmt_int(r.n_items[k]), "—", "—", "—", "—", "—", styled(("skipped", "dim")))
            continue
        stat = fmt_num(r.statistic[k], 2) + (" (degenerate)" if r.degenerate[k] else "")
        t.add_row(h, fmt_int(r.n_items[k]), fmt_num(r.rho_f[k]), fmt_num(r.rho_h[k]), fmt_num(r.mean_d[k]), stat,
                  fmt_p(r.p_value[k]).replace("p = ", "").replace("p ", ""), "yes" if r.rejected[k] else "no")
    return t


def alt_summary(r: Any) -> str:
    s = "".join(f"  {h}: skipped ({r.reason[k]})\n" for k, h in enumerate(r.humans) if not r.tested[k])
    s += (f"  omega = {fmt_num(r.omega)} ({r.n_rejected} of {r.n_tested} tested humans beaten"
         + (f"; {len(r.humans) - r.n_tested} skipped" if r.n_tested < len(r.humans) else "")
         + f"), rho = {fmt_num(r.rho)} -> {_DECISION_STYLE[r.decision]}")
    if r.n_resamples:
        s += f"\n  Stability: {_stability(r.decision_stability, r.n_resamples, r.resampling_unit)}."
    return s


def ranking_table(r: Any) -> Table:
    t = Table(title=f"Ranking by {r.by} ({fmt_int(r.n_resamples)} bootstrap resamples, {r.resampling_unit}s)",
              title_justify="left")
    for col in ("rank", "judge", r.by, "P(best)", "P(above next)"):
        t.add_column(col, justify="left" if col == "judge" else "right")
    order = sorted(range(len(r.judges)), key=lambda j: int(r.rank[j]))
    for pos, j in enumerate(order):
        nxt = fmt_num(r.p_order[j, order[pos + 1]], 3) if pos + 1 < len(order) else "—"
        t.add_row(str(int(r.rank[j])), r.judges[j], fmt_num(r.statistic[j]), fmt_num(r.p_best[j]), nxt)
    return t


def _check_alt_options(table: Any, epsilon: float, q: float, scoring: str, min_items_per_human: int,
                       min_humans_per_item: int) -> None:
    """Raise InvalidParameterError for alt-test options no data could make valid."""
    from .._checks import check_probability
    from ..validation._alt_test import _check_min, _check_scoring
    from ..validation._common import check_epsilon

    check_epsilon(epsilon, "alt_test")
    check_probability(q, "q", "alt_test")
    _check_min(min_humans_per_item, "min_humans_per_item", "alt_test")
    _check_min(min_items_per_human, "min_items_per_human", "alt_test")
    _check_scoring(scoring, table, "alt_test")


@app.command("validate")
@handle_errors
@format_options
def validate_command(
    file: Path = typer.Argument(..., help="Annotation file (CSV/TSV/JSONL/Parquet/JSON) or AltTest-style folder."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="The LLM judge to validate (repeat for several; "
                                    "default: every judge in the file)."),
    method: Method = typer.Option(Method.both, "--method", "-m", help="loo, alt-test or both."),
    epsilon: float | None = typer.Option(
        None, "--epsilon", "-e", help="Tolerance of the chosen method (loo default 0.05; alt-test default 0.2). "
        "With --method both it is the leave-one-out tolerance; use --alt-epsilon for the alt-test."),
    alt_epsilon: float | None = typer.Option(
        None, "--alt-epsilon", help="Alt-test margin: 0.2 expert, 0.15 skilled, 0.1 crowd annotators (default 0.2)."),
    score: ScoreName = typer.Option(ScoreName.agreement, "--score", help="Leave-one-out agreement score."),
    scoring: Scoring | None = typer.Option(None, "--scoring", help="Alt-test scoring (default: neg_rmse for "
                                           "numeric ordinal/interval labels, else accuracy)."),
    threshold: float = typer.Option(0.5, "--threshold", help="Leave-one-out: accept when omega reaches it."),
    min_items: int = typer.Option(10, "--min-items", help="Leave-one-out: humans with fewer eligible items are "
                                  "reported but not evaluated (1 = the plain rule)."),
    correction: Correction = typer.Option(Correction.by, "--correction", help="Alt-test multiplicity correction."),
    test: PerHumanTest = typer.Option(PerHumanTest.t, "--test", help="Alt-test per-human test: t or wilcoxon."),
    q: float = typer.Option(0.05, "--q", help="Alt-test level of the correction (FDR for by/bh)."),
    min_items_per_human: int = typer.Option(30, "--min-items-per-human", help="Alt-test: skip humans with fewer items."),
    min_humans_per_item: int = typer.Option(2, "--min-humans-per-item", help="Alt-test: keep items with this many humans."),
    rank_by: RankBy | None = typer.Option(None, "--rank-by", help="Ranking statistic with several judges "
                                          "(default rho with the alt-test, else mean_d)."),
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
    resamples: int = typer.Option(2000, "--resamples", help="Bootstrap resamples (0 = none)."),
    confidence_level: float = typer.Option(0.95, "--confidence-level", help="Level of the intervals of d."),
    exclude_rater: list[str] = typer.Option(None, "--exclude-rater", help="Leave this human out of the validation "
                                            "(repeatable); said in the output, never silent."),
    check_raters: bool = typer.Option(True, "--check-raters/--no-check-raters", help="Flag outlier annotators and "
                                      "show the leave-one-out decision again without them."),
) -> None:
    """May this LLM judge stand in for the humans? Leave-one-human-out rule and Alternative Annotator Test."""
    from ..validation import alt_test, leave_one_out, rank_judges

    table = load_table(file, judges=judge, scale=scale, categories=categories, abstain=abstain, item=item,
                       rater=rater, label=label, role=role, cluster=cluster, cluster_sep=cluster_sep,
                       duplicates=duplicates, missing=missing)
    table, excluded_note = exclude_humans(table, exclude_rater)
    judges = list(dict.fromkeys(judge)) if judge else list(table.judges)  # -j X -j X: once
    if not judges:
        raise VoirdireError(f"{table.source} marks no rater as a judge. Name the judge with --judge NAME.")
    run_loo = method in (Method.loo, Method.both)
    run_alt = method in (Method.alt_test, Method.both)
    loo_eps = 0.05 if epsilon is None or not run_loo else epsilon
    alt_eps = alt_epsilon if alt_epsilon is not None else (epsilon if epsilon is not None and not run_loo else 0.2)
    alt_scoring = scoring.value if scoring is not None else default_scoring(table)
    if run_alt:
        # A bad alt-test option is the user's error (exit 1), not an inconclusive test: check the
        # options before the loop below turns the alt-test's errors into "INCONCLUSIVE" notes.
        _check_alt_options(table, alt_eps, q, alt_scoring, min_items_per_human, min_humans_per_item)
    notes: list[str] = []
    entries: list[dict[str, Any]] = []
    for i, name in enumerate(judges):
        entry: dict[str, Any] = {"judge": name}
        if run_loo:
            entry["leave_one_out"] = _run(leave_one_out, notes, table, name, score=score.value, epsilon=loo_eps,
                                          threshold=threshold, min_items=min_items,
                                          confidence_level=confidence_level,
                                          n_resamples=resamples, rng=seed + i)
        if run_alt:
            try:
                entry["alt_test"] = _run(alt_test, notes, table, name, scoring=alt_scoring, epsilon=alt_eps, q=q,
                                         correction=correction.value, test=test.value,
                                         min_humans_per_item=min_humans_per_item,
                                         min_items_per_human=min_items_per_human, n_resamples=resamples,
                                         rng=seed + 1000 + i)
            except VoirdireError as exc:
                if not run_loo:
                    raise
                entry["alt_test_inconclusive"] = str(exc)
        entries.append(entry)
    ranking = None
    if len(judges) >= 2 and resamples == 0:
        notes.append("No ranking: ranking several judges needs bootstrap resamples (--resamples > 0).")
    if len(judges) >= 2 and resamples > 0:
        by = rank_by.value if rank_by is not None else ("rho" if run_alt else "mean_d")
        try:
            ranking = _run(rank_judges, notes, table, judges, by=by, score=score.value, scoring=alt_scoring,
                           epsilon=loo_eps, min_items=min_items, min_humans_per_item=min_humans_per_item,
                           min_items_per_human=min_items_per_human, confidence_level=confidence_level,
                           n_resamples=resamples, rng=seed + 2000)
        except VoirdireError as exc:
            notes.append(f"No ranking: {exc}")
    loos = {e["judge"]: e["leave_one_out"] for e in entries if e.get("leave_one_out") is not None}
    flags, sens = annotator_sensitivity(table, loos, seed=seed) if check_raters and run_loo else (None, [])
    if excluded_note:
        notes.insert(0, excluded_note)
    if output_format == OutputFormat.json:
        emit_json({"table": table.summary(), "judges": [{k: (v.to_dict() if hasattr(v, "to_dict") else v)
                                                          for k, v in e.items()} for e in entries],
                   "ranking": None if ranking is None else ranking.to_dict(), "notes": notes,
                   "excluded_raters": list(dict.fromkeys(exclude_rater or [])),
                   "flagged_raters": [] if flags is None else list(flags.flagged_raters),
                   "sensitivity": [{"judge": x.judge, "won_mainly_against_excluded": x.won_mainly_against_excluded,
                                    "reasons": list(x.reasons), "sentence": x.sentence} for x in sens]})
        return
    if output_format == OutputFormat.csv:
        frames = []
        for e in entries:
            for key in ("leave_one_out", "alt_test"):
                if key in e:
                    frames.append(e[key].to_frame().assign(method=key))
        pd.concat(frames, ignore_index=True).to_csv(sys.stdout, index=False)
        return
    s = table.summary()
    console.print(styled((s.source, "bold"), f": {fmt_int(s.n_items)} items, {s.n_humans} humans, "
                  f"{s.n_judges} judges, {s.scale.level} labels, resampling unit: "
                  f"{'cluster' if table.clusters is not None else 'item'}."), highlight=False)
    for e in entries:
        if "leave_one_out" in e:
            console.print(loo_table(e["leave_one_out"]))
            console.print(with_styled_words(loo_summary(e["leave_one_out"]), _DECISION_COLOURS), highlight=False)
        if "alt_test" in e:
            console.print(alt_table(e["alt_test"]))
            console.print(with_styled_words(alt_summary(e["alt_test"]), _DECISION_COLOURS), highlight=False)
        if "alt_test_inconclusive" in e:
            console.print(styled(f"  Alternative Annotator Test for {e['judge']}: ", ("INCONCLUSIVE", "bold yellow"),
                                 f" - {e['alt_test_inconclusive']}"), highlight=False)
        console.print()
    if ranking is not None:
        console.print(ranking_table(ranking))
        if not ranking.separable:
            console.print(f"  The top two ({ranking.order[0]}, {ranking.order[1]}) cannot be told apart at "
                          f"{fmt_num(100 * ranking.confidence_level, 0)}%.", highlight=False)
    sensitivity_lines(flags, sens)
    for n in notes:
        err_console.print(styled(("note:", "yellow"), " ", n), highlight=False, soft_wrap=True)
