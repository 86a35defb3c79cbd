"""Draw a sparse design from a full (item x rater) matrix."""

from __future__ import annotations

import numpy as np

from .._checks import as_generator, check_choice, fraction_hint
from ..data import AnnotationTable
from .._designs import DESIGNS, draw_design
from ..exceptions import InfeasiblePlanError, InvalidParameterError

__all__ = ["subsample", "sparse_codes", "budget_for"]


def budget_for(coverage: float, n_items: int) -> int:
    """Items per secondary for a per-secondary coverage: ``round(coverage * n_items)``, at least 1."""
    return max(1, int(np.floor(coverage * n_items + 0.5)))


def sparse_codes(codes: np.ndarray, *, primary_col: int, secondary_cols: np.ndarray, design: str, m: int,
                 n_categories: int, rng: np.random.Generator) -> np.ndarray:
    """Copy of ``codes`` where each secondary keeps only ``m`` labels chosen by ``design``.

    The primary and every other column (judges) keep all their labels. A secondary is only
    assigned items it labelled in the full matrix (so it keeps exactly ``m`` labels); the
    sequential designs see each secondary's labels before the next is assigned.
    """
    n = codes.shape[0]
    strata = codes[:, primary_col].astype(np.int64)
    strata = np.where((strata >= 0) & (strata < n_categories), strata, -1)
    sec = np.asarray(secondary_cols, dtype=np.intp)
    missing = codes[:, sec].T < 0
    exclude = missing if missing.any() else None
    known = codes[:, [primary_col]]

    def reveal(t: int, items: np.ndarray) -> np.ndarray:
        return codes[items, sec[t]]

    chosen = draw_design(design, n_items=n, sizes=[m] * sec.size, strata=strata, known=known,
                         n_categories=n_categories, exclude=exclude, reveal=reveal, rng=rng)
    out = codes.copy()
    for t, items in enumerate(chosen):
        col = np.full(n, -1, dtype=codes.dtype)
        col[items] = codes[items, sec[t]]
        out[:, sec[t]] = col
    return out


def subsample(full_table: AnnotationTable, design: str, coverage: float, *, primary: str | None = None,
              rng: int | np.random.Generator | None = None) -> AnnotationTable:
    """A sparse design drawn from a full matrix: the primary and judges keep everything.

    Every human but the primary (the *secondaries*) keeps ``m = round(coverage * n_items)``
    of its labels, on the items the design picks (METHODS §2: ``random``, ``strat``, ``panel``,
    ``seq-refined``, ``seq-coverage``; strata are the primary's labels, and the sequential designs
    see each secondary's labels before the next secondary is assigned).

    Parameters
    ----------
    full_table : AnnotationTable
        A (nearly) fully crossed table, such as SummEval (6,400 x 3) or Lesion (500 x 6).
    design : {"random", "strat", "panel", "seq-refined", "seq-coverage"}
    coverage : float
        Per-secondary coverage rho in (0, 1].
    primary : str, optional
        The first-pass human (default: the human with the most labels).
    rng : int, numpy.random.Generator or None

    Returns
    -------
    AnnotationTable
        Same items, raters and scale; the secondaries' other labels removed.

    Raises
    ------
    InfeasiblePlanError
        A secondary has fewer than ``m`` labels in the full table.

    Examples
    --------
    >>> from voirdire.simulate import simulate_annotations, subsample
    >>> full = simulate_annotations(n_items=200, n_humans=3, rng=0).table
    >>> sparse = subsample(full, "strat", 0.1, rng=1)
    >>> (sparse.dense()[:, :3] >= 0).sum(axis=0).tolist()
    [200, 20, 20]
    """
    func = "subsample"
    if not isinstance(full_table, AnnotationTable):
        raise InvalidParameterError(
            f"The 'full_table' parameter of {func} must be an AnnotationTable. Got {type(full_table).__name__} instead.")
    design = check_choice(design, "design", func, DESIGNS)
    if isinstance(coverage, bool) or not isinstance(coverage, (int, float, np.floating)) or not (0 < coverage <= 1):
        hint = fraction_hint(coverage, open_high=False)
        raise InvalidParameterError(f"The 'coverage' parameter of {func} must be a float in (0, 1]. Got {coverage!r} instead.{hint}")
    gen = as_generator(rng)
    codes = full_table.dense()
    L = full_table.n_categories
    hidx = full_table.human_idx
    if hidx.size < 2:
        raise InvalidParameterError(f"{func} needs at least two humans; {full_table.source} has {hidx.size}.")
    if primary is None:
        cov = ((codes[:, hidx] >= 0) & (codes[:, hidx] < L)).sum(axis=0)
        pcol = int(hidx[int(np.argmax(cov))])
    else:
        pcol = full_table.rater_index(primary)
        if full_table.roles[pcol] != "human":
            raise InvalidParameterError(f"The primary {primary!r} must be a human rater; it is a judge.")
    sec = np.array([h for h in hidx if h != pcol], dtype=np.intp)
    m = budget_for(float(coverage), full_table.n_items)
    have = (codes[:, sec] >= 0).sum(axis=0)
    if (have < m).any():
        bad = [str(full_table.raters[s]) for s, h in zip(sec, have) if h < m]
        raise InfeasiblePlanError(f"{func}: secondaries {bad} have fewer than m = {m} labels in the full table.")
    out = sparse_codes(codes, primary_col=pcol, secondary_cols=sec, design=design, m=m, n_categories=L, rng=gen)
    keep = out[full_table.label_item, full_table.rater_idx] >= 0
    return full_table.select(label_mask=keep)
