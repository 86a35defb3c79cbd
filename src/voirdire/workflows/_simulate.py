"""``simulate_designs``: the sparse-overlap experiment behind ``voirdire simulate``, in one result (private).

The synthetic settings (:func:`voirdire.simulate.sparse_overlap_settings`, optionally clustered) and any
fully crossed real tables, run through :func:`voirdire.simulate.run_experiment`, with the per-group
summary the terminal shows (decisions, ranking and the human-pool alpha's reliability per coverage and
design). The seed serves the settings and the runs, as ``voirdire simulate --seed``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._results import Result
from ..exceptions import InvalidParameterError

__all__ = ["DesignSimulation", "simulate_designs"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DesignSimulation(Result):
    """The composite result of :func:`simulate_designs`.

    Attributes
    ----------
    experiment : ExperimentResult
        Every run, task and cell, and its tables (``table1``-``table3``).
    groups : tuple of (str, dict, DataFrame)
        Per group of settings: its cell counts (``n_strong_pass``, ``n_boundary_pass``, ``n_reject``) and one
        row per (coverage, design): ``mean_fr``, ``mean_fa``, ``mean_wdr``, ``boundary_wdr``, ``rank_error``,
        ``top1_error``, ``alpha_reliability`` (``nan`` where a summary has no such row).
    """

    experiment: Any
    groups: tuple[tuple[str, dict[str, int], Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return self.experiment.to_dict()


def _summary(res: Any) -> tuple[tuple[str, dict[str, int], Any], ...]:
    import pandas as pd

    t3, t2, t1 = res.table3(), res.table2(), res.table1()
    a1 = t1.groupby(["group", "coverage", "design"], sort=False).agg(reliability=("reliability", "mean")).reset_index()
    out = []
    for g, d3 in t3.groupby("group", sort=False):
        d2 = t2[t2.group == g].set_index(["coverage", "design"])
        da = a1[a1.group == g].set_index(["coverage", "design"])

        def cell(df: Any, k: tuple[float, str], col: str) -> float:
            # a (coverage, design) row missing from a summary reads as undefined, never a KeyError
            return float(df.loc[k, col]) if k in df.index else float("nan")

        rows = [{"coverage": r.coverage, "design": r.design, "mean_fr": r.mean_fr, "mean_fa": r.mean_fa,
                 "mean_wdr": r.mean_wdr, "boundary_wdr": r.boundary_wdr,
                 "rank_error": cell(d2, (r.coverage, r.design), "mean_rank_error"),
                 "top1_error": cell(d2, (r.coverage, r.design), "mean_top1_error"),
                 "alpha_reliability": cell(da, (r.coverage, r.design), "reliability")} for r in d3.itertuples()]
        r0 = d3.iloc[0]
        counts = {k: int(r0[k]) for k in ("n_strong_pass", "n_boundary_pass", "n_reject")}
        out.append((str(g), counts, pd.DataFrame(rows)))
    return tuple(out)


def simulate_designs(real: Mapping[str, Any] | None = None, *, synthetic: bool = True, n_items: int = 500,
                     n_matrices: int = 8, clustered: bool = False, n_clusters: int | None = None,
                     cluster_sd: float = 1.0, designs: Sequence[str] | None = None,
                     coverages: Sequence[float] | None = None, n_repetitions: int = 50, epsilon: float = 0.05,
                     seed: int = 0, n_jobs: int = 1, scheduler: Any = None,
                     progress: Callable[[int, int], None] | None = None) -> DesignSimulation:
    """How often sparse designs give the wrong decision: the paper's Tables 1-3 on synthetic matrices
    (``n_matrices`` per (K, L), ``n_items`` items; with ``clustered`` also the clustered variant, ``n_clusters``
    default ``n_items // 10``) and on the fully crossed tables of ``real`` (name -> table)."""
    from ..simulate import (PAPER_COVERAGES, PAPER_DESIGNS, ExperimentSetting, run_experiment,
                            sparse_overlap_settings)

    real = dict(real or {})
    if not synthetic and not real:
        raise InvalidParameterError("--no-synthetic needs at least one --full data set.")
    settings: list[Any] = []
    if synthetic:
        settings += sparse_overlap_settings(n_items=n_items, n_matrices=n_matrices, rng=seed)
        if clustered:
            nc = n_clusters if n_clusters is not None else max(2, n_items // 10)
            if not 1 <= nc <= n_items:
                raise InvalidParameterError(f"--n-clusters must be between 1 and --n-items ({n_items}). Got {nc}.")
            settings += sparse_overlap_settings(n_items=n_items, n_clusters=nc, cluster_sd=cluster_sd,
                                                n_matrices=n_matrices, rng=seed)
    settings += [ExperimentSetting(name=k, table=v, group="real") for k, v in real.items()]
    res = run_experiment(settings, designs=list(designs or PAPER_DESIGNS), coverages=list(coverages or PAPER_COVERAGES),
                         n_repetitions=n_repetitions, epsilon=epsilon, rng=seed, n_jobs=n_jobs, scheduler=scheduler,
                         progress=progress)
    return DesignSimulation(experiment=res, groups=_summary(res))
