"""The `voirdire demo` command (registered on import): agreement on the bundled HANNA data, then
the validation report.

``run_demo`` prints the agreement part (:func:`voirdire.workflows.hanna_agreement`); its last step,
:func:`demo_report`, builds the HTML validation report with :mod:`voirdire.report` and prints where it is.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ._app import app, console, err_console, handle_errors, option

#: Where ``voirdire demo`` writes its report without ``--out`` (git-ignored).
DEMO_REPORT_DIR = "voirdire-report"


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
    from ..report.console.demo import render_demo
    from ..workflows import check_demo_folder, hanna_agreement, write_demo_agreement

    out = None if output_dir is None else Path(output_dir)
    check_demo_folder(out)
    res = hanna_agreement(seed=seed, n_resamples=n_resamples)
    if not quiet:
        render_demo(console, err_console, res)
    results: dict[str, Any] = {"table": res.table, "groups": res.groups, "overall": list(res.overall),
                               "per_criterion": [(c, list(row)) for c, row in res.per_criterion],
                               "notes": list(res.notes), "elapsed_s": res.elapsed_s, "agreement": res}
    if out is not None:
        path = write_demo_agreement(res, out)
        results["paths"] = {"agreement_json": path}
        if not quiet:
            console.print(f"Agreement results: {path}", highlight=False, soft_wrap=True)
    # --- report step: the validation report on the same table (one HTML page with plots + report.json)
    results.update(demo_report(res.table, out if out is not None else Path(DEMO_REPORT_DIR), seed=seed,
                               n_resamples=n_resamples, quiet=quiet))
    return results


def demo_report(table: Any, out: Path, *, seed: int, n_resamples: int, quiet: bool) -> dict[str, Any]:
    """Build and write the validation report of the demo's table; print where it is."""
    from ..datasets import hanna_path
    from ..report import build_report, write_report
    from ..report.console.demo import render_demo_report
    from ..report.console.terminal import progress_bar

    t0 = time.perf_counter()
    with progress_bar("Validation report", quiet=quiet, prefix="Validation report: ") as progress:
        rep = build_report(table, seed=seed, n_resamples=n_resamples, input_path=hanna_path(),
                           title="voirdire demo: HANNA story ratings, 3 humans and 5 LLM judges", progress=progress)
        paths = write_report(rep, out)
    elapsed = time.perf_counter() - t0
    if not quiet:
        render_demo_report(console, paths, elapsed)
    return {"report": rep, "report_paths": paths, "report_elapsed_s": elapsed}


@app.command("demo")
@handle_errors
def demo_command(
    out: Path | None = option("demo.out"),
    seed: int = option("demo.seed"),
    resamples: int = option("demo.resamples"),
) -> None:
    """Agreement on the bundled HANNA story ratings (3 humans, 5 LLM judges side by side), then the
    self-contained HTML validation report (default folder: voirdire-report/)."""
    run_demo(out, seed=seed, n_resamples=resamples)
