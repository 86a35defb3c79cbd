"""The `voirdire simulate` command (registered on import): the sparse-overlap experiment grid."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from ._app import (
    Duplicates, Missing, app, console, duplicates_option, emit_json, err_console, fail, handle_errors, load_table,
    missing_option, format_options,
)
from ._plan import DesignName, TableOrJson


class Preset(str, Enum):
    sparse_overlap = "sparse-overlap"


def _md(df: Any, *, digits: int = 3, ints: tuple[str, ...] = ()) -> str:
    """A Markdown table (numbers rounded here, in the CLI)."""
    from ..report import fmt_int, fmt_num

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


_T1_COLS = ["group", "setting", "coverage", "design", "alpha_full", "abs_bias", "std", "reliability"]


def _write_outputs(res: Any, out: Path, inputs: list[Path] | None = None) -> list[Path]:
    """Every file of the run appears complete, or none changes; experiment.json is replaced last."""
    from .._io import atomic_outputs
    from .._safe import csv_frame

    if out.exists() and not out.is_dir():
        fail(f"--output {str(out)!r} exists and is not a folder. Choose a folder.")
    out.mkdir(parents=True, exist_ok=True)
    t1, t2, t3 = res.table1(), res.table2(), res.table3()
    tables = [("runs", res.runs), ("tasks", res.tasks), ("cells", res.cells),
              ("table1_alpha", t1), ("table2_ranking", t2), ("table3_decisions", t3)]
    n_cells = res.cells.groupby("group").size().to_dict()
    kinds = res.cells.groupby(["group", "cell_type"]).size().to_dict()
    md = [
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
    ]
    files = [out / f"{name}.csv" for name, _ in tables] + [out / "tables.md", out / "experiment.json"]
    meta = json.dumps({k: v for k, v in res.to_dict().items() if not k.startswith("table")}, indent=2) + "\n"
    with atomic_outputs(inputs=inputs or ()) as group:
        for (name, df), p in zip(tables, files):
            with group.open(p) as fh:
                csv_frame(df).to_csv(fh, index=False)
        with group.open(files[-2]) as fh:
            fh.write("\n".join(md))
        with group.open(files[-1]) as fh:
            fh.write(meta)
    return files


@app.command("simulate")
@handle_errors
@format_options
def simulate_command(
    preset: Preset = typer.Option(Preset.sparse_overlap, "--preset", help="The experiment to run."),
    repetitions: int = typer.Option(50, "--repetitions", "-r", help="Repetitions per setting (matrix), design and coverage."),
    matrices: int = typer.Option(8, "--matrices", help="Synthetic matrices drawn per (K, L), each from its own seed: "
                                                       "reference decisions are averaged over them."),
    n_jobs: int = typer.Option(1, "--n-jobs", help="Local worker processes (-1: all cores)."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Dask scheduler address, e.g. tcp://host:8786 (only one you trust: Dask unpickles what "
                                     "it sends)."),
    output: Path | None = typer.Option(None, "--output", "-o", readable=False, help="Directory for the CSV and Markdown tables."),
    seed: int = typer.Option(0, "--seed", help="Seed (results are identical for a seed on any executor)."),
    full: list[Path] = typer.Option(None, "--full", readable=False, help="A fully crossed real data set to subsample as well "
                                                          "(repeatable; e.g. an AltTest directory)."),
    judge: list[str] = typer.Option(None, "--judge", "-j", help="Judges in --full long files (repeatable)."),
    item: str = typer.Option("item", "--item", help="Item id column of --full long files."),
    rater: str = typer.Option("rater", "--rater", help="Rater column of --full long files."),
    label: str = typer.Option("label", "--label", help="Label column of --full long files."),
    duplicates: Duplicates = duplicates_option(),
    missing: Missing = missing_option(),
    design: list[DesignName] = typer.Option(None, "--design", help="Designs (default: random, strat, seq-refined, seq-coverage)."),
    coverage: list[float] = typer.Option(None, "--coverage", help="Per-secondary coverages (default 0.05, 0.25, 0.5)."),
    n_items: int = typer.Option(500, "--n-items", help="Items of the synthetic matrices."),
    clustered: bool = typer.Option(False, "--clustered", help="Also run the clustered synthetic variant."),
    n_clusters: int | None = typer.Option(None, "--n-clusters", help="Clusters of the clustered variant (default n/10)."),
    cluster_sd: float = typer.Option(1.0, "--cluster-sd", help="Cluster difficulty sd (logit scale) of the clustered variant."),
    no_synthetic: bool = typer.Option(False, "--no-synthetic", help="Only the --full real data sets."),
    epsilon: float = typer.Option(0.05, "--epsilon", help="Tolerance of the leave-one-out rule."),
    fmt: TableOrJson = typer.Option(TableOrJson.table, "--format", "-f", help="table or json (the summaries)."),
) -> None:
    """Measure how often sparse designs give the wrong decision (the paper's Tables 1-3).

    Synthetic: --matrices fully crossed matrices per (K = 4, 5 humans; L = 2, 5 labels; 500 items;
    human accuracy 0.85), each with 10 judges (10 cells per matrix; 8 x 4 x 10 = 320 cells by
    default), so that the reference decisions do not hang on one draw. Real: each --full set. Each run keeps the
    primary and the judges complete and gives every other human coverage x n items.
    """
    from ..simulate import PAPER_COVERAGES, PAPER_DESIGNS, run_experiment, sparse_overlap_settings

    from .._checks import fraction_hint

    if repetitions < 1:
        fail(f"--repetitions must be >= 1. Got {repetitions}.")
    if matrices < 1:
        fail(f"--matrices must be >= 1. Got {matrices}.")
    if not 0 <= epsilon < 1:  # checked again by run_experiment; here before any file is read
        fail(f"--epsilon must be in [0, 1). Got {epsilon:g}.{fraction_hint(epsilon, open_low=False)}")
    real = {}
    for p in full or []:
        t = load_table(p, judges=judge, item=item, rater=rater, label=label, duplicates=duplicates, missing=missing)
        name = p.name if p.name else str(p)
        if not t.judges:
            fail(f"{p}: no judge to validate; name them with --judge.")
        real[name] = t
    if no_synthetic and not real:
        fail("--no-synthetic needs at least one --full data set.")
    settings = [] if no_synthetic else sparse_overlap_settings(n_items=n_items, n_matrices=matrices, rng=seed)
    if clustered and not no_synthetic:
        nc = n_clusters if n_clusters is not None else max(2, n_items // 10)
        if not 1 <= nc <= n_items:
            fail(f"--n-clusters must be between 1 and --n-items ({n_items}). Got {nc}.")
        settings += sparse_overlap_settings(n_items=n_items, n_clusters=nc, cluster_sd=cluster_sd,
                                            n_matrices=matrices, rng=seed)
    from ..simulate import ExperimentSetting

    settings += [ExperimentSetting(name=k, table=v, group="real") for k, v in real.items()]
    designs = [d.value for d in design] if design else list(PAPER_DESIGNS)
    covs = list(coverage) if coverage else list(PAPER_COVERAGES)
    show = fmt == TableOrJson.table
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    from ._console import description_column

    with Progress(description_column(), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=err_console, transient=True, disable=not show) as prog:
        task = prog.add_task(f"{preset.value}: sparse validations", total=None)

        def cb(done: int, total: int) -> None:
            prog.update(task, completed=done, total=total)

        res = run_experiment(settings, designs=designs, coverages=covs, n_repetitions=repetitions, epsilon=epsilon,
                             rng=seed, n_jobs=n_jobs, scheduler=scheduler, progress=cb)
    files = _write_outputs(res, output, list(full or [])) if output is not None else []
    if fmt == TableOrJson.json:
        emit_json(res.to_dict() | {"files": [str(f) for f in files]})
        return
    _render(res)
    if files:
        console.print(f"Wrote {len(files)} files to {output} (tables.md, table1_alpha.csv, table2_ranking.csv, "
                      "table3_decisions.csv, runs.csv, tasks.csv, cells.csv, experiment.json).",
                      highlight=False, soft_wrap=True)


def _render(res: Any) -> None:
    from rich import box
    from rich.table import Table

    from ..report import fmt_int, fmt_num

    console.print(f"{res.n_validations:,} sparse validations ({res.n_repetitions} runs per cell, design and "
                  f"coverage) in {res.elapsed_s:.1f} s on {res.executor} ({res.n_workers} worker(s)); seed {res.seed}.",
                  highlight=False, soft_wrap=True)
    t3, t2, t1 = res.table3(), res.table2(), res.table1()
    a1 = t1.groupby(["group", "coverage", "design"], sort=False).agg(
        abs_bias=("abs_bias", "mean"), std=("std", "mean"), reliability=("reliability", "mean")).reset_index()
    for g, d3 in t3.groupby("group", sort=False):
        d2 = t2[t2.group == g].set_index(["coverage", "design"])
        da = a1[a1.group == g].set_index(["coverage", "design"])
        r0 = d3.iloc[0]
        t = Table(title=f"{g}: {fmt_int(r0.n_strong_pass)} strong-pass, {fmt_int(r0.n_boundary_pass)} boundary-pass, "
                        f"{fmt_int(r0.n_reject)} reject cells", title_justify="left", box=box.SIMPLE_HEAD)
        for c in ("rho", "design", "FR", "FA", "WDR", "bound.", "rank", "top-1", "alpha"):
            t.add_column(c, justify="left" if c == "design" else "right", no_wrap=True)
        def cell(df: Any, k: tuple[float, str], col: str) -> float:
            # a (coverage, design) row missing from a summary reads as undefined, never a KeyError
            return float(df.loc[k, col]) if k in df.index else float("nan")

        for r in d3.itertuples():
            k = (r.coverage, r.design)
            t.add_row(f"{r.coverage:g}", str(r.design), fmt_num(r.mean_fr), fmt_num(r.mean_fa), fmt_num(r.mean_wdr),
                      fmt_num(r.boundary_wdr), fmt_num(cell(d2, k, "mean_rank_error")),
                      fmt_num(cell(d2, k, "mean_top1_error")), fmt_num(cell(da, k, "reliability"), 2))
        console.print(t)
    console.print("rho: per-secondary coverage. FR: share of runs rejecting a strong-pass cell; FA: accepting a "
                  "reject cell; WDR: any wrong decision; bound.: WDR on boundary-pass cells (means over cells). "
                  "rank / top-1: rank error and top-1 error against the full matrix; alpha: share of runs with the "
                  "human-pool alpha within 0.05 of the full matrix's.", style="dim", highlight=False, soft_wrap=True)
