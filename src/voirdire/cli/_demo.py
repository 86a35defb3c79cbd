"""The `voirdire demo` command (registered on import): agreement on the bundled HANNA data, then
the validation report.

``run_demo`` prints the agreement part itself; its last step, :func:`demo_report`, builds the HTML
validation report with :mod:`voirdire.report` and prints where it is.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from ._app import app, console, err_console, handle_errors
from ._console import styled

DEMO_COEFFICIENTS = ("krippendorff_alpha",)


def demo_agreement(*, seed: int = 0, n_resamples: int = 1000, quiet: bool = False) -> dict[str, Any]:
    """Agreement on HANNA: the three humans, then the humans with each of the five LLM judges.

    Returns the results (for the report step) after printing them.
    """
    from ..datasets import load_hanna
    from ..report import agreement_table, fmt_num

    t0 = time.perf_counter()
    table = load_hanna()
    s = table.summary()
    if not quiet:
        console.print(
            f"HANNA (bundled, MIT): {s.n_items} items = 1,056 stories x 6 criteria, {s.n_humans} MTurk humans, "
            f"{s.n_judges} LLM judges, scores 1-5 (judges: means of several samples), clustered by story "
            f"({s.n_clusters} clusters).", highlight=False, soft_wrap=True)
    from ..workflows import compare_raters

    def compare(t: Any) -> Any:
        return compare_raters(t, coefficients=list(DEMO_COEFFICIENTS), level="interval", n_resamples=n_resamples,
                              seed=seed)

    comp = compare(table)
    groups = [(g.label, g.raters) for g in comp.groups]
    overall, notes = list(comp.groups), list(comp.notes)
    # interval alpha per criterion, same groups
    crit_rows: list[tuple[str, list[Any]]] = []
    import pandas as pd

    from ..datasets import hanna_path

    criteria = sorted(set(pd.read_csv(hanna_path(), usecols=["criterion"])["criterion"]))
    for c in criteria:
        cc = compare(load_hanna(criterion=c))
        crit_rows.append((c, [g["krippendorff_alpha"] for g in cc.groups]))
        notes += [f"{c}: {n}" for n in cc.notes]
    elapsed = time.perf_counter() - t0
    if not quiet:
        console.print(agreement_table(overall, title="All criteria pooled: the humans, then the humans with each judge"))
        r0 = overall[0].results[0]
        methods = ", ".join(sorted({str(r.ci.method) for g in overall for r in g.results}))
        console.print(f"95% intervals: {methods} over {r0.n_units} stories ({n_resamples} resamples, seed {seed}).",
                      highlight=False)
        ct = Table(title="Krippendorff's alpha (interval) per criterion; "
                         "rows: the humans, then the humans with each judge", title_justify="left")
        ct.add_column("raters", style="bold", no_wrap=True)
        for c, _ in crit_rows:
            ct.add_column(c[:6], justify="right", no_wrap=True)
        for k, (label, _) in enumerate(groups):
            ct.add_row(label.removeprefix("+ ")[:12], *[fmt_num(row[k].estimate, 2) for _, row in crit_rows])
        console.print(ct)
        halves = [(r.ci.high - r.ci.low) / 2 for _, row in crit_rows for r in row if r.ci.high == r.ci.high]
        if halves:
            console.print(f"Each value has a 95% interval of about +-{min(halves):.2f} to +-{max(halves):.2f} "
                          f"(bootstrap over stories; --format json in `voirdire agree` lists them).", highlight=False)
        console.print(
            "How to read it: the humans' alpha is the reference. A judge that behaves like one more human leaves "
            "alpha where the humans have it; a judge that disagrees with them pulls it down (Llama-13B here); a "
            "judge that raises it agrees with the humans more than they agree with each other (LLM scores here are "
            "means of several samples, which smooths them). Human alpha near 0 (Coherence, Surprise) means the "
            "reference itself is noise: no judge can be validated against it.",
            highlight=False, soft_wrap=True, style="italic")
        for n in notes:
            err_console.print(styled(("note:", "yellow"), " ", n), highlight=False, soft_wrap=True)
        console.print(f"Agreement part done in {elapsed:.1f} s.", highlight=False)
    return {"table": table, "groups": groups, "overall": overall, "per_criterion": crit_rows, "notes": notes,
            "elapsed_s": elapsed}


def run_demo(output_dir: Path | str | None = None, *, seed: int = 0, n_resamples: int = 1000,
             quiet: bool = False) -> dict[str, Any]:
    """Run the demo: agreement on the bundled HANNA data, then the HTML validation report.

    Parameters
    ----------
    output_dir : path, optional
        A folder (created when missing) for the demo's files: ``agreement.json``, ``report.html``
        and ``report.json``. Default: the report goes to ``voirdire-report/`` (no agreement.json).
        An existing file is refused.
    seed, n_resamples : int
        Bootstrap seed and resamples.
    quiet : bool
        Compute without printing.
    """
    from ..exceptions import InvalidParameterError

    out = None if output_dir is None else Path(output_dir)
    if out is not None and out.exists() and not out.is_dir():
        raise InvalidParameterError(f"--out {out} is not a folder. Give a folder (created when missing).")
    results = demo_agreement(seed=seed, n_resamples=n_resamples, quiet=quiet)
    if out is not None:
        import json

        from .._results import to_jsonable

        out.mkdir(parents=True, exist_ok=True)
        doc = {"data": "HANNA (bundled, MIT)", "seed": seed, "n_resamples": n_resamples,
               "overall": [g.to_dict() for g in results["overall"]],
               "per_criterion": {c: [r.to_dict() for r in row] for c, row in results["per_criterion"]}}
        path = out / "agreement.json"
        from .._io import write_text

        write_text(path, json.dumps(to_jsonable(doc), indent=2) + "\n")
        results["paths"] = {"agreement_json": path}
        if not quiet:
            console.print(f"Agreement results: {path}", highlight=False, soft_wrap=True)
    # --- report step: the validation report on the same table (one HTML page with plots + report.json)
    results.update(demo_report(results["table"], out if out is not None else Path(DEMO_REPORT_DIR),
                               seed=seed, n_resamples=n_resamples, quiet=quiet))
    return results


#: Where ``voirdire demo`` writes its report without ``--out`` (git-ignored).
DEMO_REPORT_DIR = "voirdire-report"


def demo_report(table: Any, out: Path, *, seed: int, n_resamples: int, quiet: bool) -> dict[str, Any]:
    """Build and write the validation report of the demo's table; print where it is."""
    from rich.progress import BarColumn, Progress, TimeElapsedColumn

    from ._console import description_column

    from ..datasets import hanna_path
    from ..report import build_report, write_report

    t0 = time.perf_counter()
    with Progress(description_column(), BarColumn(), TimeElapsedColumn(),
                  console=err_console, transient=True, disable=quiet) as bar:
        task = bar.add_task("Validation report", total=1)

        def progress(step: str, done: int, total: int) -> None:
            bar.update(task, description=f"Validation report: {step}", completed=done, total=total)

        rep = build_report(table, seed=seed, n_resamples=n_resamples, input_path=hanna_path(),
                           title="voirdire demo: HANNA story ratings, 3 humans and 5 LLM judges", progress=progress)
        paths = write_report(rep, out)
    elapsed = time.perf_counter() - t0
    if not quiet:
        console.print(f"Validation report written in {elapsed:.1f} s. Open it in a browser:", highlight=False)
        console.print(f"  {paths.html.resolve()}", highlight=False, soft_wrap=True, markup=False)
        console.print(f"  every number behind it: {paths.json.resolve()}", highlight=False, soft_wrap=True,
                      markup=False)
    return {"report": rep, "report_paths": paths, "report_elapsed_s": elapsed}


@app.command("demo")
@handle_errors
def demo_command(
    out: Path | None = typer.Option(None, "--out", "-o", readable=False, help="Folder for the demo's files (agreement.json, report)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    resamples: int = typer.Option(1000, "--resamples", help="Bootstrap resamples."),
) -> None:
    """Agreement on the bundled HANNA story ratings (3 humans, 5 LLM judges side by side), then the
    self-contained HTML validation report (default folder: voirdire-report/)."""
    run_demo(out, seed=seed, n_resamples=resamples)
