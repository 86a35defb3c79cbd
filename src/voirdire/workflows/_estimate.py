"""``estimate_judges``: the mean human score per judge, three ways (private).

For each judge, over the items it scored: the doubly-robust estimate with m(X) = X (the paper's choice)
and calibrated (``voirdire estimate``'s default), human-only and PPI++, from
:func:`voirdire.estimation.compare_estimators` with its defaults and the seed given: the numbers of
``voirdire estimate --drop-unscored --seed``. The report's "Estimation" section renders this result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._checks import check_probability
from .._results import Result
from ..exceptions import VoirdireError
from ._seeds import check_seed

__all__ = ["JudgeEstimate", "EstimationSummary", "estimate_judges"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class JudgeEstimate(Result):
    """One judge's estimates (``error`` says why there are none)."""

    judge: str
    n_items_scored: int
    dr: Any = None
    dr_calibrated: Any = None
    human_only: Any = None
    ppi: Any = None
    ppi_note: str | None = None
    hints: tuple[dict[str, Any], ...] = ()
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"judge": self.judge, "n_items_scored": self.n_items_scored}
        if self.error is not None:
            d["error"] = self.error
            return d
        d["dr"] = self.dr.to_dict()
        d["dr_calibrated"] = self.dr_calibrated.to_dict()
        if self.human_only is not None:
            d["human_only"] = self.human_only.to_dict()
        if self.ppi is not None:
            d["ppi"] = self.ppi.to_dict()
        d["ppi_note"] = self.ppi_note
        d["hints"] = [dict(h) for h in self.hints]
        return d


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class EstimationSummary(Result):
    """The composite result of :func:`estimate_judges`: one :class:`JudgeEstimate` per judge, and the human
    labels left out because their item has no inclusion probability (``unsampled="omit"``)."""

    judges: tuple[JudgeEstimate, ...]
    n_human_labels_left_out: int
    n_items_left_out: int
    options: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"judges": [j.to_dict() for j in self.judges], "n_human_labels_left_out": self.n_human_labels_left_out,
                "n_items_left_out": self.n_items_left_out, "options": dict(self.options)}


def estimate_judges(table: Any, judges: Sequence[str], inclusion_prob: Any, *, unsampled: str | None = None,
                    confidence_level: float = 0.95, seed: int = 0,
                    progress: Callable[[str, int, int], None] | None = None) -> EstimationSummary:
    """The mean human score over all items, per judge: DR (m(X) = X and calibrated), human-only, PPI++.

    Parameters
    ----------
    table : AnnotationTable
        Numeric labels; the humans' items are a design sample with known probabilities.
    judges : sequence of str
    inclusion_prob : float or array of float (one per item)
        The probability that each item went to the humans (``nan``: outside the probability sample).
    unsampled : {"omit"} or None
        ``"omit"``: human labels on items without a probability are left out (and counted).
    confidence_level : float, default 0.95
    seed : int, default 0
        As ``voirdire estimate --seed``.
    progress : callable, optional
        ``progress(judge, k, n)``.

    Returns
    -------
    EstimationSummary
    """
    from ..estimation import compare_estimators, item_scores

    func = "estimate_judges"
    confidence_level = check_probability(confidence_level, "confidence_level", func)
    seed = check_seed(seed, func)
    t = table
    pi_all = np.broadcast_to(np.asarray(inclusion_prob, dtype=float), (t.n_items,))
    items_all = np.asarray(t.items)
    left_out = n_items_out = 0
    if unsampled == "omit":  # items with no probability are outside the probability sample
        is_h = (t.roles[t.rater_idx] == "human") & ~t.is_abstention
        outside = np.isnan(pi_all)[t.label_item] & is_h
        left_out = int(outside.sum())
        n_items_out = int(np.unique(t.label_item[outside]).size)
    out: list[JudgeEstimate] = []
    for jn, judge in enumerate(judges):
        if progress is not None:
            progress(judge, jn, len(judges))
        x, y, _ = item_scores(t, judge)
        if left_out:
            y = np.where(np.isnan(pi_all), np.nan, y)
        keep = np.isfinite(x)
        cl = None if t.clusters is None else t.clusters[keep]
        same = dict(judges=[judge], items=items_all[keep], clusters=cl, confidence_level=confidence_level, rng=seed)
        try:
            comp = compare_estimators(x[keep], y[keep], pi_all[keep].copy(), **same)
            paper = compare_estimators(x[keep], y[keep], pi_all[keep].copy(), model="identity", compare=False,
                                       **same)
        except VoirdireError as exc:
            out.append(JudgeEstimate(judge=judge, n_items_scored=int(keep.sum()), error=str(exc)))
            continue
        out.append(JudgeEstimate(judge=judge, n_items_scored=int(keep.sum()), dr=paper.dr, dr_calibrated=comp.dr,
                                 human_only=comp.human_only, ppi=comp.ppi, ppi_note=comp.ppi_note,
                                 hints=tuple(comp.hints)))
    return EstimationSummary(judges=tuple(out), n_human_labels_left_out=left_out, n_items_left_out=n_items_out,
                             options={"confidence_level": confidence_level, "seed": seed, "unsampled": unsampled})
