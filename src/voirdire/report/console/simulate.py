"""Terminal and Markdown rendering of ``voirdire simulate`` (:class:`~voirdire.workflows.DesignSimulation`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from .._format import fmt_int, fmt_num

__all__ = ["render_simulation", "simulation_markdown", "write_simulation", "OUTPUT_TABLES"]

#: the CSV files ``voirdire simulate -o`` writes, with the experiment's table each holds
OUTPUT_TABLES = ("runs", "tasks", "cells", "table1_alpha", "table2_ranking", "table3_decisions")

_T1_COLS = ["group", "setting", "coverage", "design", "alpha_full", "abs_bias", "std", "reliability"]


def _md(df: Any, *, digits: int = 3, ints: tuple[str, ...] = ()) -> str:
    """A Markdown table (numbers rounded here)."""
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        cells = []
        for c, v in zip(cols, row):
            if c in ints:
                cells.append(fmt_int(v))
            elif c == "coverage":
                cells.append(f"{v:g}")
            elif isinstance(v, float):
                cells.append(fmt_num(v, digits))
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def simulation_markdown(res: Any) -> str:
    """``tables.md`` of ``voirdire simulate -o``: Tables 1-3 of an :class:`ExperimentResult`."""
    t1, t2, t3 = res.table1(), res.table2(), res.table3()
    n_cells = res.cells.groupby("group").size().to_dict()
    kinds = res.cells.groupby(["group", "cell_type"]).size().to_dict()
    return "\n".join([
        "# Sparse-overlap simulation",
        "",
        f"{res.n_repetitions} repetitions per (setting, design, coverage); epsilon = {res.epsilon:g}; score = "
        f"{res.score}; seed = {res.seed}; {res.n_validations:,} sparse validations on {res.executor} "
        f"({res.n_workers} worker(s)) in {res.elapsed_s:.1f} s.",
        "",
        "Cells (judge x setting) per group: " + ", ".join(f"{g}: {n}" for g, n in n_cells.items()) + " ("
        + ", ".join(f"{g}/{k}: {n}" for (g, k), n in kinds.items()) + ").",
        "",
        "## Table 1: human-pool Krippendorff alpha on the sparse matrix",
        "",
        "abs_bias = |mean(alpha_sparse) - alpha_full|; reliability = share of runs with |alpha_sparse - alpha_full| <= 0.05.",
        "",
        _md(t1[_T1_COLS]),
        "## Table 2: ranking the judges",
        "",
        "top1_<setting> = share of runs that miss the full-matrix best judge; rank error = share of judge pairs "
        "ordered differently than on the full matrix (judges ranked by mean leave-one-out difference).",
        "",
        *[f"### {g}\n\n" + _md(d.dropna(axis=1, how="all")) for g, d in t2.groupby("group", sort=False)],
        "## Table 3: deployment decisions",
        "",
        "FR over strong-pass cells, FA over reject cells, WDR over all cells, boundary WDR over boundary-pass cells; "
        "the reference is the decision on the full matrix.",
        "",
        _md(t3, ints=("n_strong_pass", "n_boundary_pass", "n_reject")),
    ])


def render_simulation(console: Console, sim: Any, files: list[Path] | None = None, output: Path | None = None) -> None:
    """Per group: FR, FA, WDR, boundary WDR, rank and top-1 errors and the alpha's reliability; then the
    ``files`` :func:`write_simulation` wrote to ``output``."""
    from rich import box
    from rich.table import Table

    res = sim.experiment
    console.print(f"{res.n_validations:,} sparse validations ({res.n_repetitions} runs per cell, design and "
                  f"coverage) in {res.elapsed_s:.1f} s on {res.executor} ({res.n_workers} worker(s)); seed {res.seed}.",
                  highlight=False, soft_wrap=True)
    for g, n, rows in sim.groups:
        t = Table(title=f"{g}: {fmt_int(n['n_strong_pass'])} strong-pass, {fmt_int(n['n_boundary_pass'])} "
                        f"boundary-pass, {fmt_int(n['n_reject'])} reject cells", title_justify="left",
                  box=box.SIMPLE_HEAD)
        for c in ("rho", "design", "FR", "FA", "WDR", "bound.", "rank", "top-1", "alpha"):
            t.add_column(c, justify="left" if c == "design" else "right", no_wrap=True)
        for r in rows.itertuples():
            t.add_row(f"{r.coverage:g}", str(r.design), fmt_num(r.mean_fr), fmt_num(r.mean_fa), fmt_num(r.mean_wdr),
                      fmt_num(r.boundary_wdr), fmt_num(r.rank_error), fmt_num(r.top1_error),
                      fmt_num(r.alpha_reliability, 2))
        console.print(t)
    console.print("rho: per-secondary coverage. FR: share of runs rejecting a strong-pass cell; FA: accepting a "
                  "reject cell; WDR: any wrong decision; bound.: WDR on boundary-pass cells (means over cells). "
                  "rank / top-1: rank error and top-1 error against the full matrix; alpha: share of runs with the "
                  "human-pool alpha within 0.05 of the full matrix's.", style="dim", highlight=False, soft_wrap=True)
    if files:
        console.print(f"Wrote {len(files)} files to {output} (tables.md, table1_alpha.csv, table2_ranking.csv, "
                      "table3_decisions.csv, runs.csv, tasks.csv, cells.csv, experiment.json).",
                      highlight=False, soft_wrap=True)


def write_simulation(sim: Any, out: Path, inputs: Any = ()) -> list[Path]:
    """``voirdire simulate -o FOLDER``: the CSV tables, tables.md and experiment.json. Every file appears
    complete, or none changes; experiment.json is replaced last."""
    import json

    from ..._io import atomic_outputs
    from ..._safe import csv_frame
    from ...exceptions import InvalidParameterError

    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"--output {str(out)!r} exists and is not a folder. Choose a folder.")
    out.mkdir(parents=True, exist_ok=True)
    res = sim.experiment
    frames = (res.runs, res.tasks, res.cells, res.table1(), res.table2(), res.table3())
    files = [out / f"{name}.csv" for name in OUTPUT_TABLES] + [out / "tables.md", out / "experiment.json"]
    meta = json.dumps({k: v for k, v in res.to_dict().items() if not k.startswith("table")}, indent=2) + "\n"
    with atomic_outputs(inputs=inputs or ()) as group:
        for df, p in zip(frames, files):
            with group.open(p) as fh:
                csv_frame(df).to_csv(fh, index=False)
        with group.open(files[-2]) as fh:
            fh.write(simulation_markdown(res))
        with group.open(files[-1]) as fh:
            fh.write(meta)
    return files
