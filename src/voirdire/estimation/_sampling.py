"""Drawing the human subsample of a two-stage design (Poisson sampling; private)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._checks import as_generator
from ..exceptions import InvalidParameterError
from ._results import ActiveDesign, AllocationResult, HumanSample

__all__ = ["draw_human_sample"]


def draw_human_sample(items: Any, inclusion_prob: Any, rng: int | np.random.Generator | None = None, *,
                      strata: Any = None) -> HumanSample:
    """Poisson sampling: each item goes to humans independently with its probability ``pi_i``.

    Parameters
    ----------
    items : int, array-like of ids, or AnnotationTable
        The items the LLM scores (an int ``N`` means ids ``0..N-1``).
    inclusion_prob : float, array-like (one per item), mapping item -> prob, AllocationResult or ActiveDesign
        With an :class:`AllocationResult` (from :func:`plan_allocation`), pass ``strata`` (the
        stratum of every item) and each item gets its stratum's ``inclusion_prob``. With an
        :class:`ActiveDesign` (from :func:`plan_active`, items in the same order) each item gets
        its overall probability (``inclusion_prob``, recorded for the estimate) while the items
        not in the pilot are drawn with the second-phase ``draw_prob``; pilot items are always
        selected, and the ``uncertainty``, ``cost`` and ``pilot`` columns are recorded beside it.
    rng : int, numpy.random.Generator or None
        Randomness (an int seed reproduces the draw).
    strata : array-like, optional
        Stratum of every item (kept in the assignment table; needed with an AllocationResult).

    Returns
    -------
    HumanSample
        ``assignments`` with columns ``item, inclusion_prob, selected`` (and ``stratum``). Save it:
        :func:`dr_mean` needs the probabilities of the selected items.

    Notes
    -----
    The number of selected items is random (expected ``sum(pi)``); the estimators of this
    subpackage take that into account (Poisson-sampling variance).

    Examples
    --------
    >>> s = draw_human_sample(10, 0.3, rng=0)
    >>> s.n_items, s.n_selected, round(s.expected_n, 9)
    (10, 3, 3.0)
    >>> list(s.assignments.columns)
    ['item', 'inclusion_prob', 'selected']
    """
    func = "draw_human_sample"
    from ..data import AnnotationTable

    if isinstance(items, AnnotationTable):
        ids = np.asarray(items.items)
    elif isinstance(items, (int, np.integer)) and not isinstance(items, bool):
        if items < 1:
            raise InvalidParameterError(f"The 'items' parameter of {func} must be >= 1 when an int. Got {items}.")
        ids = np.arange(int(items))
    else:
        ids = np.asarray(items)
        if ids.ndim != 1 or ids.size == 0:
            raise InvalidParameterError(f"The 'items' parameter of {func} must be a non-empty 1-d array of ids.")
    n = ids.size
    st = None if strata is None else np.asarray(strata)
    if st is not None and st.shape != (n,):
        raise InvalidParameterError(f"The 'strata' parameter of {func} must have one value per item ({n}).")
    extra: dict[str, Any] = {}
    if isinstance(inclusion_prob, ActiveDesign):
        if inclusion_prob.inclusion_prob.size != n:
            raise InvalidParameterError(
                f"The ActiveDesign given to {func} has {inclusion_prob.inclusion_prob.size} items, not {n}.")
        pi = np.asarray(inclusion_prob.inclusion_prob, dtype=float).copy()
        draw_p = np.asarray(inclusion_prob.draw_prob, dtype=float)
        pilot = inclusion_prob.table["labelled"].to_numpy(bool)
        extra = {"uncertainty": inclusion_prob.table["uncertainty"].to_numpy(),
                 "cost": inclusion_prob.table["cost"].to_numpy(),
                 "pilot": inclusion_prob.table["labelled"].to_numpy()}
    elif isinstance(inclusion_prob, AllocationResult):
        if st is None:
            raise InvalidParameterError(
                f"{func} with an AllocationResult needs 'strata' (the stratum of every item).")
        lookup = dict(zip(inclusion_prob.strata["stratum"].tolist(), inclusion_prob.strata["inclusion_prob"]))
        miss = [s for s in pd.unique(st) if s not in lookup]
        if miss:
            raise InvalidParameterError(f"Stratum {miss[0]!r} is not in the allocation.")
        pi = np.asarray([lookup[s] for s in st], dtype=float)
    elif isinstance(inclusion_prob, (Mapping, pd.Series)):
        lk = {str(k): v for k, v in inclusion_prob.items()}
        miss = [i for i in ids if str(i) not in lk]
        if miss:
            raise InvalidParameterError(f"The 'inclusion_prob' of {func} has no value for item {miss[0]!r}.")
        pi = np.asarray([lk[str(i)] for i in ids], dtype=float)
    else:
        try:
            pi = np.broadcast_to(np.asarray(inclusion_prob, dtype=float), (n,)).copy()
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"The 'inclusion_prob' parameter of {func} must be a number in (0, 1], one per item, a mapping "
                f"or an AllocationResult. Got {type(inclusion_prob).__name__}.") from None
    bad = ~((pi > 0) & (pi <= 1))
    if bad.any():
        raise InvalidParameterError(
            f"The 'inclusion_prob' of {func} must be in (0, 1] for every item. Got {pi[bad][0]!r} for item "
            f"{ids[bad][0]!r}.")
    seed = str(rng) if isinstance(rng, (int, np.integer)) else ""
    gen = as_generator(rng)
    if extra:
        selected = pilot | (gen.random(n) < draw_p)
    else:
        selected = gen.random(n) < pi
    df = pd.DataFrame({"item": ids, "inclusion_prob": pi, "selected": selected})
    if st is not None:
        df["stratum"] = st
    for k, v in extra.items():
        df[k] = v
    return HumanSample(assignments=df, n_items=n, n_selected=int(selected.sum()), expected_n=float(pi.sum()),
                       seed_entropy=seed)
