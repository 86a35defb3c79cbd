"""The `voirdire simulate` command (registered on import): the sparse-overlap experiment grid."""

from __future__ import annotations

from pathlib import Path

from .._option_specs import DesignName, Preset, TableOrJson
from ._app import (
    ReaderOptions, app, console, emit_json, fail, format_options, handle_errors, option, reader_options,
)
from ..report.console.terminal import progress_bar


@app.command("simulate")
@handle_errors
@format_options
@reader_options(command="simulate", only=("item", "rater", "label", "duplicates", "missing"))
def simulate_command(
    preset: Preset = option("simulate.preset"),
    repetitions: int = option("simulate.repetitions"),
    matrices: int = option("simulate.matrices"),
    n_jobs: int = option("simulate.n_jobs"),
    scheduler: str | None = option("simulate.scheduler"),
    output: Path | None = option("simulate.output"),
    seed: int = option("simulate.seed"),
    full: list[Path] = option("simulate.full"),
    judge: list[str] = option("simulate.judge"),
    design: list[DesignName] = option("simulate.design"),
    coverage: list[float] = option("simulate.coverage"),
    n_items: int = option("simulate.n_items"),
    clustered: bool = option("simulate.clustered"),
    n_clusters: int | None = option("simulate.n_clusters"),
    cluster_sd: float = option("simulate.cluster_sd"),
    no_synthetic: bool = option("simulate.no_synthetic"),
    epsilon: float = option("simulate.epsilon"),
    fmt: TableOrJson = option("simulate.fmt"),
    *,
    reader: ReaderOptions,
) -> None:
    """Measure how often sparse designs give the wrong decision (the paper's Tables 1-3).

    Synthetic: --matrices fully crossed matrices per (K = 4, 5 humans; L = 2, 5 labels; 500 items;
    human accuracy 0.85), each with 10 judges (10 cells per matrix; 8 x 4 x 10 = 320 cells by
    default), so that the reference decisions do not hang on one draw. Real: each --full set. Each run keeps the
    primary and the judges complete and gives every other human coverage x n items.
    """
    from ..report.console.simulate import render_simulation, write_simulation
    from ..workflows import simulate_designs
    from .._checks import fraction_hint

    if not 0 <= epsilon < 1:  # checked again by run_experiment; here before any file is read
        fail(f"--epsilon must be in [0, 1). Got {epsilon:g}.{fraction_hint(epsilon, open_low=False)}")
    real = {}
    for p in full or []:
        t = reader.load(p, judges=judge)
        if not t.judges:
            fail(f"{p}: no judge to validate; name them with --judge.")
        real[p.name if p.name else str(p)] = t
    step = f"{preset.value}: sparse validations"
    with progress_bar(step, quiet=fmt != "table", count=True) as progress:
        sim = simulate_designs(real, synthetic=not no_synthetic, n_items=n_items, n_matrices=matrices,
                               clustered=clustered, n_clusters=n_clusters, cluster_sd=cluster_sd,
                               designs=[d.value for d in design] if design else None, coverages=coverage or None,
                               n_repetitions=repetitions, epsilon=epsilon, seed=seed, n_jobs=n_jobs,
                               scheduler=scheduler, progress=lambda d, n: progress(step, d, n))
    files = write_simulation(sim, output, list(full or [])) if output is not None else []
    if fmt == "json":
        emit_json(sim.experiment.to_dict() | {"files": [str(f) for f in files]})
        return
    render_simulation(console, sim, files, output)
