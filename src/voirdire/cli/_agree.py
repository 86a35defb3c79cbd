"""The `voirdire agree` command (registered on import): agreement coefficients with intervals,
humans among themselves and each judge with the humans side by side, and the binary family."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ._app import (
    Duplicates, Level, Missing, OutputFormat, app, console, duplicates_option, emit_json, err_console,
    handle_errors, load_table, missing_option, role_option, format_options,
)
from ._console import styled


class AbstainPolicy(str, Enum):
    exclude = "exclude"
    category = "category"
    disagree = "disagree"


# ----------------------------------------------------------------------------- formatting (CLI only)
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


DISPLAY = {"observed_agreement": "agreement", "cohen_kappa": "Cohen kappa", "scott_pi": "Scott pi",
           "fleiss_kappa": "Fleiss kappa", "conger_kappa": "Conger kappa", "krippendorff_alpha": "Kripp. alpha",
           "gwet_ac1": "Gwet AC1", "gwet_ac2": "Gwet AC2", "bennett_s": "Bennett S"}


def display_name(r: Any) -> str:
    """Short name of a result's coefficient, with its metric when it has one."""
    name = DISPLAY.get(r.coefficient, r.coefficient)
    return name if r.level in ("identity", "") else f"{name} ({r.level})"


def _pct(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{100 * x:.1f}%"


# ----------------------------------------------------------------------------- computation
def rater_groups(table: Any, judges: Sequence[str] | None = None) -> list[tuple[str, tuple[str, ...]]]:
    """(label, raters) pairs: the humans among themselves, then the humans plus each judge."""
    humans = tuple(table.humans)
    js = list(judges) if judges else list(table.judges)
    groups: list[tuple[str, tuple[str, ...]]] = []
    if not js:
        return [("all raters", tuple(str(r) for r in table.raters))]
    if len(humans) >= 2:
        groups.append(("humans", humans))
    for j in js:
        groups.append((f"+ {j}", humans + (j,)))
    return groups


def isolated_judges(table: Any, raters: Sequence[str], abstain_policy: str) -> list[str]:
    """Judges among ``raters`` that share no labelled item with any other rater of the selection.

    Under the ``exclude`` policy an abstention is no label. Such a judge adds nothing to the
    group's coefficients, which then equal those of the other raters alone.
    """
    dense = table.dense()
    L = table.n_categories
    has = (dense >= 0) & (dense < L) if abstain_policy == "exclude" else dense >= 0
    cols = [table.rater_index(r) for r in raters]
    out = []
    for r, c in zip(raters, cols):
        if table.roles[c] != "judge":
            continue
        others = [o for o in cols if o != c]
        if not others or not (has[:, c] & has[:, others].any(axis=1)).any():
            out.append(str(r))
    return out


def _undefined(res: Any) -> Any:
    """The same AgreementTable with every estimate, interval and standard error set to nan."""
    import dataclasses

    from .._results import ConfidenceInterval

    nan = float("nan")
    rows = tuple(dataclasses.replace(
        r, estimate=nan, se=nan, analytic_se=None if r.analytic_se is None else nan, observed=nan, expected=nan,
        ci=ConfidenceInterval(low=nan, high=nan, confidence_level=r.ci.confidence_level, method=r.ci.method))
        for r in res.results)
    return dataclasses.replace(res, results=rows)


def compute_groups(table: Any, groups: list[tuple[str, tuple[str, ...]]], *, coefficients: Sequence[str] | None,
                   level: str | None, weights: str | None, confidence_level: float, n_resamples: int, seed: int,
                   abstain_policy: str, progress: Any = None) -> tuple[list[Any], list[str]]:
    """One AgreementTable per group (same seed for each group), and the warnings raised.

    A group with a judge that shares no item with the other raters gets nan throughout and a
    note: its figures would be the other raters' own, not the judge's.
    """
    from ..agreement import agreement

    out, notes = [], []
    for k, (label, raters) in enumerate(groups):
        if progress is not None:
            progress(label, k, len(groups))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = agreement(table, coefficients=coefficients, raters=list(raters), level=level, weights=weights,
                            confidence_level=confidence_level, n_resamples=n_resamples, rng=seed,
                            abstain_policy=abstain_policy, label=label)
        alone = isolated_judges(table, raters, abstain_policy) if len(raters) >= 2 else []
        if alone:
            res = _undefined(res)
            who = ", ".join(alone)
            notes.append(f"{label}: {who} share{'s' if len(alone) == 1 else ''} no item with the humans, so "
                         f"this row is undefined (nan); it would only repeat the humans' own figures.")
        else:
            for w in caught:
                msg = f"{label}: {w.message}"
                if msg not in notes:
                    notes.append(msg)
        out.append(res)
    return out, notes


def compute_binary(table: Any, judges: Sequence[str], *, confidence_level: float, n_resamples: int, seed: int,
                   abstain_policy: str, positive: str | None) -> tuple[list[Any], list[str]]:
    from ..agreement import binary_agreement

    out, notes = [], []
    for j in judges:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out.append(binary_agreement(table, j, reference="majority", positive=positive,
                                        confidence_level=confidence_level, n_resamples=n_resamples, rng=seed,
                                        abstain_policy=abstain_policy))
        notes += [f"{j}: {w.message}" for w in caught]
    return out, notes


# ----------------------------------------------------------------------------- rendering
def agreement_table(results: list[Any], *, title: str = "Agreement") -> Table:
    """Rich table: for each coefficient, the humans and each judge group side by side."""
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


def binary_tables(results: list[Any]) -> list[Table]:
    """Two rich tables: the classification view, then phi, kappa and the marginals."""
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
        t2.add_row(b.judge, _num(b.phi), _num(b.kappa), _ci(b.kappa_ci), _num(b.prevalence), _num(b.judge_rate),
                   _num(b.kappa_phi_ratio))
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


def render(table: Any, results: list[Any], binary: list[Any], notes: list[str], *, title: str | None = None) -> None:
    s = table.summary()
    head = (f"{s.source}: {s.n_items} items, {s.n_humans} humans, {s.n_judges} judges, {s.n_labels} labels, "
            f"scale {s.scale.level}" + (f", {s.n_clusters} clusters" if s.n_clusters else ""))
    console.print(head, highlight=False, soft_wrap=True)
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
    if binary:
        for bt in binary_tables(binary):
            console.print(bt)
        console.print(binary[0].note, highlight=False, soft_wrap=True, style="italic")
        for b in binary:
            for line in binary_notes(b):
                console.print(line, highlight=False, soft_wrap=True)
        if any(b.n_ties for b in binary):
            console.print(f"Items with a tied human majority were left out ({binary[0].n_ties}).", highlight=False)
    for n in notes:
        err_console.print(styled(("note:", "yellow"), " ", n), highlight=False, soft_wrap=True)


def _is_binary(table: Any) -> bool:
    return table.n_categories == 2


@app.command("agree")
@handle_errors
@format_options
def agree_command(
    file: Path = typer.Argument(..., help="Annotation file (CSV/TSV/JSONL/Parquet/JSON) or AltTest-style folder."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="An LLM judge (repeat for several)."),
    coefficient: list[str] = typer.Option(
        None, "--coefficient", "-c",
        help="observed_agreement, cohen_kappa, scott_pi, fleiss_kappa, conger_kappa, krippendorff_alpha, "
             "gwet_ac1, gwet_ac2, bennett_s (repeatable; default: a sensible set)."),
    scale: Level | None = typer.Option(None, "--scale", help="Level of measurement of the labels."),
    level: Level | None = typer.Option(None, "--level", help="Metric of Krippendorff's alpha (default: the scale)."),
    weights: str | None = typer.Option(None, "--weights", help="Weights of the weighted coefficients (linear, quadratic, ...)."),
    categories: list[str] = typer.Option(None, "--categories", help="Categories in order (comma-separated or repeated)."),
    abstain: list[str] = typer.Option(None, "--abstain", help="A label value meaning 'cannot assess' (repeatable)."),
    abstain_policy: AbstainPolicy = typer.Option(AbstainPolicy.exclude, "--abstain-policy",
                                                 help="exclude, category (its own label) or disagree (a penalty)."),
    positive: str | None = typer.Option(None, "--positive", help="Positive category of the binary family."),
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
    resamples: int = typer.Option(2000, "--resamples", "--n-resamples",
                                  help="Bootstrap resamples (0 = analytic intervals only)."),
    confidence_level: float = typer.Option(0.95, "--confidence-level", help="Level of the intervals."),
    matrix: bool = typer.Option(False, "--matrix", help="Also print the rater-by-rater Cohen's kappa matrix."),
) -> None:
    """Agreement coefficients with bootstrap intervals: humans among themselves and each judge with them."""
    judge = list(dict.fromkeys(judge)) if judge else judge  # `-j X -j X` is one judge
    table = load_table(file, judges=judge, scale=scale, categories=categories, abstain=abstain, item=item,
                       rater=rater, label=label, role=role, cluster=cluster, cluster_sep=cluster_sep,
                       duplicates=duplicates, missing=missing)
    from ..agreement import COEFFICIENTS
    from ..exceptions import InvalidParameterError

    coefs = list(coefficient) if coefficient else None
    for c in coefs or []:
        if c not in COEFFICIENTS:
            raise InvalidParameterError(f"--coefficient {c!r} is not one of {list(COEFFICIENTS)}.")
    groups = rater_groups(table, judge or None)
    quiet = output_format != OutputFormat.table
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TimeRemainingColumn

    from ._console import description_column

    with Progress(description_column(), BarColumn(), TaskProgressColumn(), TimeRemainingColumn(),
                  console=err_console, transient=True, disable=quiet) as bar:
        task = bar.add_task("agreement", total=len(groups))

        def progress(step: str, done: int, total: int) -> None:
            bar.update(task, description=step, completed=done, total=total)

        results, notes = compute_groups(
            table, groups, coefficients=coefs, level=level.value if level else None, weights=weights,
            confidence_level=confidence_level, n_resamples=resamples, seed=seed,
            abstain_policy=abstain_policy.value, progress=progress)
    binary: list[Any] = []
    if table.judges and table.humans and (_is_binary(table) or positive is not None):
        binary, bnotes = compute_binary(table, list(judge or table.judges), confidence_level=confidence_level,
                                        n_resamples=resamples, seed=seed, abstain_policy=abstain_policy.value,
                                        positive=positive)
        notes += bnotes
    mat = None
    if matrix:
        from ..agreement import pairwise_matrix

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            who = list(table.humans) + [j for j in (judge or table.judges) if j not in table.humans]
            mat = pairwise_matrix(table, coefficient="cohen_kappa", raters=who, weights=weights,
                                  abstain_policy=abstain_policy.value)
        notes += [str(w.message) for w in caught]
    if output_format == OutputFormat.json:
        doc = {"table": table.summary(), "groups": [g.to_dict() for g in results],
               "binary": [b.to_dict() for b in binary], "notes": notes}
        if mat is not None:
            doc["matrix"] = mat.to_dict()
        emit_json(doc)
        return
    if output_format == OutputFormat.csv:
        import pandas as pd

        frames = [g.to_frame() for g in results]
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        typer.echo(df.to_csv(index=False), nl=False)
        return
    render(table, results, binary, notes)
    if mat is not None:
        console.print(matrix_table(mat))
