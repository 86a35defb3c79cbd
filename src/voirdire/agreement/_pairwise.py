"""Rater-by-rater matrix of a two-rater coefficient."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._checks import check_choice, check_on_undefined, undefined
from ..data import AnnotationTable
from . import _core
from ._coefficients import _level, _make_spec
from ._prepare import ABSTAIN_POLICIES, check_raters, prepare
from ._results import PairwiseMatrixResult
from .._scores import PAIRWISE_COEFFICIENTS  # the one registry of coefficient names



def pairwise_matrix(table: AnnotationTable, *, coefficient: str = "cohen_kappa",
                    raters: Sequence[str] | None = None, level: str | None = None, weights: Any = None,
                    on_undefined: str = "warn", abstain_policy: str = "exclude") -> PairwiseMatrixResult:
    """A rater-by-rater matrix of a coefficient computed on each pair's shared items.

    Parameters
    ----------
    table : AnnotationTable
    coefficient : str, default "cohen_kappa"
        One of ``"cohen_kappa"``, ``"scott_pi"``, ``"observed_agreement"``,
        ``"krippendorff_alpha"``, ``"fleiss_kappa"``, ``"gwet_ac1"``, ``"gwet_ac2"``, ``"bennett_s"``.
    raters : sequence of str, optional
        Rows and columns (default every rater).
    level : str, optional
        Metric of Krippendorff's alpha.
    weights : str or array, optional
        Weights of the weighted coefficients.
    on_undefined : {"warn", "raise", "nan"}, default "warn"
        Policy for cells where the coefficient is undefined (no shared item, one category);
        ``"warn"`` issues one warning listing how many cells are ``nan``.
    abstain_policy : {"exclude", "category", "disagree"}, default "exclude"

    Returns
    -------
    PairwiseMatrixResult
        ``estimate`` and ``n_items`` (items both raters labelled) matrices; point estimates only.

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> m = pairwise_matrix(t, coefficient="krippendorff_alpha", raters=t.humans)
    >>> m.estimate.shape, int(m.n_items[0, 1])
    ((3, 3), 1056)
    """
    func = "pairwise_matrix"
    check_choice(coefficient, "coefficient", func, PAIRWISE_COEFFICIENTS)
    check_on_undefined(on_undefined, func)
    check_choice(abstain_policy, "abstain_policy", func, ABSTAIN_POLICIES)
    names = check_raters(table, raters, func) or tuple(str(r) for r in table.raters)
    k = len(names)
    est = np.full((k, k), np.nan)
    n_items = np.zeros((k, k), dtype=np.int64)
    full = prepare(table, raters=names, policy=abstain_policy, func=func)
    lvl = ""
    if coefficient == "krippendorff_alpha":
        lvl = _level(level, full, func)
    present = np.zeros((k, table.n_items), dtype=bool)
    for j, rid in enumerate(full.rater_ids):
        present[j, full.item[full.rater == rid]] = True
    opts = _core.Options(confidence_level=0.95, n_resamples=0, rng=None, on_undefined="nan")
    n_bad = 0
    for a in range(k):
        n_items[a, a] = int(present[a].sum())
        for b in range(a + 1, k):
            shared = int(np.count_nonzero(present[a] & present[b]))
            n_items[a, b] = n_items[b, a] = shared
            prep = prepare(table, raters=[names[a], names[b]], policy=abstain_policy, func=func)
            spec = _make_spec(coefficient, prep, level=lvl or None, weights=weights)
            if not lvl:
                lvl = spec.level
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                r = _core.run([spec], prep, opts, func=func)[0]
            est[a, b] = est[b, a] = r.estimate
            if not np.isfinite(r.estimate):
                n_bad += 1
    if n_bad:
        undefined(f"pairwise_matrix: {coefficient} is undefined for {n_bad} of {k * (k - 1) // 2} rater pairs "
                  f"(no shared item or a single category); those cells are nan", on_undefined)
    return PairwiseMatrixResult(coefficient=coefficient, raters=names, estimate=est, n_items=n_items,
                                level=lvl, abstain_policy=abstain_policy)
