"""Ready-made experiment grids (the sparse-overlap paper's shapes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..data import AnnotationTable
from ..exceptions import InvalidParameterError
from .._simulation import ExperimentSetting, simulate_annotations

__all__ = ["sparse_overlap_settings", "JUDGE_ACCURACY_GRID"]

#: Ten judge accuracies around the pass threshold of the synthetic setting (human accuracy 0.85,
#: epsilon 0.05: a judge passes the population rule from accuracy ~0.779 with L = 2, ~0.788 with L = 5).
JUDGE_ACCURACY_GRID: tuple[float, ...] = (0.60, 0.70, 0.74, 0.77, 0.79, 0.81, 0.83, 0.86, 0.90, 0.95)


def sparse_overlap_settings(
    *,
    n_items: int = 500,
    n_humans: Sequence[int] = (4, 5),
    n_categories: Sequence[int] = (2, 5),
    human_accuracy: float = 0.85,
    judge_accuracies: Sequence[float] = JUDGE_ACCURACY_GRID,
    n_clusters: int | None = None,
    cluster_sd: float = 1.0,
    real: Mapping[str, AnnotationTable] | None = None,
    n_matrices: int = 1,
    rng: int = 0,
) -> list[ExperimentSetting]:
    """The settings of the ``sparse-overlap`` preset: synthetic full matrices, plus real ones.

    Synthetic: one fully crossed matrix per (K, L) in ``n_humans x n_categories`` (default
    2 x 2 = 4 matrices of 500 items, each with the 10 judges of :data:`JUDGE_ACCURACY_GRID`,
    so 40 cells as in the paper's Table 3), group ``"synthetic"`` (``"synthetic-clustered"``
    with ``n_clusters``). Real: each table in ``real`` becomes a setting of group ``"real"``
    (fully crossed sets such as SummEval and Lesion; the primary is the most-covering human).

    Parameters
    ----------
    n_items, n_humans, n_categories, human_accuracy, judge_accuracies, n_clusters, cluster_sd
        The synthetic generator's parameters (see :func:`simulate_annotations`).
    real : mapping of str to AnnotationTable, optional
        Named full matrices to add.
    n_matrices : int >= 1, default 1
        Matrices drawn per (K, L), each from its own child seed (named ``..._m0``, ``..._m1``, ...
        when more than one). The reference decisions of one matrix depend on its draw (a judge near
        the threshold may pass on one matrix and fail on the next), so error rates read off a single
        matrix depend on the seed; averaging over several matrices removes that (``voirdire
        simulate`` uses 8).
    rng : int, default 0
        Seed of the synthetic matrices (each gets its own child seed).

    Returns
    -------
    list of ExperimentSetting

    Examples
    --------
    >>> from voirdire.simulate import sparse_overlap_settings
    >>> [s.name for s in sparse_overlap_settings(n_items=50)]
    ['syn_K4_L2', 'syn_K4_L5', 'syn_K5_L2', 'syn_K5_L5']
    """
    if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
        raise InvalidParameterError(f"The 'rng' parameter of sparse_overlap_settings must be an int >= 0. Got {rng!r}.")
    if isinstance(n_matrices, bool) or not isinstance(n_matrices, (int, np.integer)) or n_matrices < 1:
        raise InvalidParameterError(
            f"The 'n_matrices' parameter of sparse_overlap_settings must be an int >= 1. Got {n_matrices!r}.")
    combos = [(int(k), int(lv)) for k in n_humans for lv in n_categories]
    seeds = np.random.SeedSequence(int(rng)).spawn(len(combos))
    group = "synthetic" if n_clusters is None else "synthetic-clustered"
    out: list[ExperimentSetting] = []
    for (k, lv), ss in zip(combos, seeds):
        # the first matrix keeps the seed it always had, so n_matrices=1 reproduces earlier runs
        for m, mss in enumerate([ss, *ss.spawn(int(n_matrices) - 1)] if n_matrices > 1 else [ss]):
            sim = simulate_annotations(n_items=n_items, n_humans=k, n_categories=lv, human_accuracy=human_accuracy,
                                       judge_accuracies=judge_accuracies, n_clusters=n_clusters,
                                       cluster_sd=cluster_sd, rng=np.random.default_rng(mss))
            suffix = ("" if n_clusters is None else "_clustered") + (f"_m{m}" if n_matrices > 1 else "")
            out.append(ExperimentSetting(name=f"syn_K{k}_L{lv}{suffix}", table=sim.table, group=group))
    for name, table in (real or {}).items():
        out.append(ExperimentSetting(name=str(name), table=table, group="real"))
    return out
