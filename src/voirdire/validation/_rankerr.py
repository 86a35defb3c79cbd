"""Rank error and top-1 error of a judge ranking against a reference ranking (METHODS §2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..exceptions import InvalidParameterError

__all__ = ["rank_error", "top1_error"]


def _as_scores(x: Any, name: str, func: str, names: Sequence[str] | None) -> tuple[np.ndarray, Sequence[str] | None]:
    """Scores (higher = better) from a numeric array ``(..., J)`` or a best-first list of names."""
    if isinstance(x, (list, tuple)) and x and all(isinstance(v, str) for v in x):
        order = [str(v) for v in x]
        if len(set(order)) != len(order):
            raise InvalidParameterError(f"The '{name}' parameter of {func} repeats a judge: {order}.")
        if names is None:
            names = sorted(order)
        if sorted(order) != sorted(names):
            raise InvalidParameterError(
                f"The rankings given to {func} do not name the same judges: {sorted(order)} vs {sorted(names)}.")
        pos = {n: i for i, n in enumerate(order)}
        return -np.array([pos[n] for n in names], dtype=float), names
    arr = np.asarray(x, dtype=float) if not isinstance(x, np.ndarray) else x.astype(float)
    if arr.ndim < 1 or arr.shape[-1] < 2:
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must hold scores of at least two judges (last axis). Got shape {arr.shape}.")
    return arr, names


def rank_error(ranking: Any, reference: Any) -> float | np.ndarray:
    """Share of judge pairs ordered differently than in the reference ranking.

    Parameters
    ----------
    ranking : array-like, shape (..., J), or list of str
        Scores of J judges (higher is better), possibly for many runs along leading axes, or
        the judge names best first.
    reference : array-like, shape (J,), or list of str
        The reference (full-matrix) scores or names best first.

    Returns
    -------
    float or ndarray
        For each run, the number of judge pairs whose order (``sign`` of the score difference)
        differs from the reference, over the number of pairs the reference orders strictly.
        A tie in the run where the reference is strict counts as a different order; pairs tied
        in the reference are left out. ``nan`` when the reference ties every pair.

    Notes
    -----
    This is the paper's *rank error* (sparse-overlap paper, Table 2); averaged over simulation
    runs it is the expected share of misordered pairs. nan scores (an undefined judge score)
    count as differently ordered from any strict reference order.

    Examples
    --------
    >>> rank_error([0.9, 0.8, 0.7], [0.9, 0.7, 0.8])   # one of three pairs swapped
    0.3333333333333333
    >>> rank_error(["b", "a", "c"], ["a", "b", "c"])
    0.3333333333333333
    """
    names: Sequence[str] | None = None
    ref, names = _as_scores(reference, "reference", "rank_error", names)
    run, names = _as_scores(ranking, "ranking", "rank_error", names)
    if ref.ndim != 1 or run.shape[-1] != ref.shape[0]:
        raise InvalidParameterError(
            f"rank_error needs a reference of shape (J,) and rankings of shape (..., J). Got {run.shape} and {ref.shape}.")
    iu = np.triu_indices(ref.shape[0], k=1)
    sref = np.sign(ref[iu[0]] - ref[iu[1]])
    strict = sref != 0
    if not strict.any():
        return float("nan")
    srun = np.sign(run[..., iu[0]] - run[..., iu[1]])
    wrong = (srun != sref) & strict
    out = wrong.sum(axis=-1) / strict.sum()
    return float(out) if np.ndim(out) == 0 else out


def top1_error(ranking: Any, reference: Any) -> float:
    """Share of runs whose best judge is not the reference's best judge.

    Parameters
    ----------
    ranking : array-like, shape (J,) or (n_runs, J), or list of str
        Scores (higher is better) of each run, or one run's names best first.
    reference : array-like, shape (J,), or list of str
        The reference scores or names best first.

    Returns
    -------
    float
        Mean over runs of ``1 - hit`` where ``hit`` is the share of the run's top-tied judges
        that are among the reference's top-tied judges (a run that ties two judges at the top,
        one of them right, scores a half hit). A run with every score nan misses.

    Examples
    --------
    >>> top1_error([[0.9, 0.8], [0.7, 0.8], [0.9, 0.9]], [1.0, 0.5])
    0.5
    """
    names: Sequence[str] | None = None
    ref, names = _as_scores(reference, "reference", "top1_error", names)
    run, names = _as_scores(ranking, "ranking", "top1_error", names)
    if ref.ndim != 1 or run.shape[-1] != ref.shape[0]:
        raise InvalidParameterError(
            f"top1_error needs a reference of shape (J,) and rankings of shape (..., J). Got {run.shape} and {ref.shape}.")
    run2 = run.reshape(-1, ref.shape[0])
    best_ref = ref == np.nanmax(ref)
    with np.errstate(invalid="ignore"):
        mx = np.nanmax(np.where(np.isnan(run2), -np.inf, run2), axis=1)
        top = (run2 == mx[:, None]) & np.isfinite(mx)[:, None]
    n_top = top.sum(axis=1)
    hits = np.where(n_top > 0, (top & best_ref).sum(axis=1) / np.maximum(n_top, 1), 0.0)
    return float(1.0 - hits.mean())
