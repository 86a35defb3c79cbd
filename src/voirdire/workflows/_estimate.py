"""``estimate_judges``: the mean human score per judge, three ways (private).

For each judge, over the items it scored: the doubly-robust estimate with m(X) = X (the paper's choice)
and calibrated (``voirdire estimate``'s default), human-only and PPI++, from
:func:`voirdire.estimation.compare_estimators` with its defaults and the seed given: the numbers of
``voirdire estimate --drop-unscored --seed``. The report's "Estimation" section renders this result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._checks import check_probability
from .._results import Result
from ..exceptions import VoirdireError
from ._seeds import check_seed

__all__ = ["JudgeEstimate", "EstimationSummary", "estimate_judges", "MeanEstimate", "estimate_mean"]


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


# ------------------------------------------------------------------------------------------------ voirdire estimate
_JSON_KEYS = {"DR": "doubly_robust", "human-only": "human_only", "PPI++": "ppi"}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class MeanEstimate(Result):
    """The result of :func:`estimate_mean`: ``voirdire estimate``'s numbers on one table.

    ``comparison`` is the :class:`~voirdire.estimation.EstimatorComparison` (DR, human-only, PPI++,
    hints, warnings); ``design`` the inclusion probabilities in brief (``min``, ``max``,
    ``n_distinct``, ``n_items_with_prob``, ``expected_n_labeled``: their sum when every item has one).
    """

    judges: tuple[str, ...]
    comparison: Any
    design: dict[str, Any]
    n_items: int
    n_labeled: int

    @property
    def estimates(self) -> dict[str, Any]:
        """``{"DR": ..., "human-only": ..., "PPI++": ...}``: the estimators computed, in that order."""
        c = self.comparison
        out: dict[str, Any] = {"DR": c.dr}
        if c.human_only is not None:
            out["human-only"] = c.human_only
        if c.ppi is not None:
            out["PPI++"] = c.ppi
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judges[0], "judges": list(self.judges), "model": self.comparison.dr.model,
                "design": dict(self.design), "n_items": self.n_items, "n_labeled": self.n_labeled,
                "estimates": {_JSON_KEYS[k]: v.to_dict() for k, v in self.estimates.items()},
                "hints": [dict(h) for h in self.comparison.hints], "warnings": list(self.comparison.warnings)}


def estimate_mean(table: Any, judges: Sequence[str], inclusion_prob: float | Mapping[str, float], *,
                  item_ids: Sequence[str] | None = None, strata: Mapping[str, str] | None = None,
                  model: str = "calibrated", cross_fit: int | str = "auto", target: str = "superpopulation",
                  confidence_level: float = 0.95, compare: bool = True, drop_unscored: bool = False, seed: int = 0,
                  source: str | None = None, prob_column: str | None = None, strata_column: str | None = None,
                  unnamed: Sequence[str] = ()) -> MeanEstimate:
    """``voirdire estimate`` on one table: the mean human score from the judges' scores on every item
    and the humans' on a design sample, by :func:`voirdire.estimation.compare_estimators`.

    Parameters
    ----------
    table : AnnotationTable
        Numeric scores.
    judges : sequence of str
        The predictors (several are combined by the model).
    inclusion_prob : float or mapping
        One probability for every item, or item id -> probability (an item missing from it has none).
    item_ids : sequence of str, optional
        The id of each item of ``table`` in the mappings (default: the table's ids; a ``--by`` pool
        whose groups share items gives each pooled item its own id).
    strata : mapping, optional
        Item id -> design stratum (every item needs one).
    model, cross_fit, target, confidence_level, compare
        As :func:`~voirdire.estimation.compare_estimators`.
    drop_unscored : bool, default False
        Leave out the items a judge did not score (else an error).
    seed : int, default 0
        The cross-fitting folds (``--seed``).
    source, prob_column, strata_column, unnamed
        For messages: the file, the probability and strata columns, the raters counted as humans
        only because no judge role named them.

    Returns
    -------
    MeanEstimate

    Raises
    ------
    SchemaError
        A human-scored item without a probability, an item without a stratum, an unscored item (without
        ``drop_unscored``), no human score, or a human-scored count the probabilities make impossible.
    """
    from ..estimation import compare_estimators, judge_matrix, labelled_count
    from ..exceptions import SchemaError

    src = str(table.source if source is None else source)
    judges = list(dict.fromkeys(str(j) for j in judges))
    ids = [str(i) for i in table.items] if item_ids is None else [str(i) for i in item_ids]
    X, y, _ = judge_matrix(table, judges)
    if isinstance(inclusion_prob, Mapping):
        pi = np.array([inclusion_prob.get(i, np.nan) for i in ids], dtype=float)
        miss = np.flatnonzero(np.isnan(pi) & np.isfinite(y))
        if miss.size:
            raise SchemaError(f"item {ids[miss[0]]!r} was scored by humans but has no inclusion probability in column "
                              f"{prob_column!r} ({miss.size} such item(s)). Put the item's design probability on its "
                              "rows.", source=src, column=prob_column)
    else:
        pi = np.full(len(ids), float(inclusion_prob))
    st = None
    if strata is not None:
        st_list = [strata.get(i) for i in ids]
        gaps = [ids[k] for k, v in enumerate(st_list) if v is None]
        if gaps:
            raise SchemaError(f"item {gaps[0]!r} has no stratum in column {strata_column!r}; every item needs one.",
                              source=src, column=strata_column)
        st = np.array(st_list, dtype=object).astype(str)
    cl = table.clusters
    items = np.asarray(table.items)
    keep = np.isfinite(X).all(axis=1)
    if not keep.all():
        if not drop_unscored:
            k = int(np.flatnonzero(~np.isfinite(X).all(axis=0))[0])
            bad = table.items[~np.isfinite(X[:, k])]
            raise SchemaError(f"{src}: judge {judges[k]!r} has no score for {bad.size} of {table.n_items} item(s) (e.g. "
                              f"{', '.join(repr(str(b)) for b in bad[:3])}). The estimator needs every judge's score on "
                              "every item; pass --drop-unscored to estimate over the items they all scored.")
        X, y, pi, items = X[keep], y[keep], pi[keep], items[keep]
        st = None if st is None else st[keep]
        cl = None if cl is None else cl[keep]
    n_lab = int(np.isfinite(y).sum())
    if n_lab == 0:
        raise SchemaError(f"{src}: no item has a human score, so there is nothing to estimate the human mean from. "
                          "Check the judge name and the role of the raters.")
    count = labelled_count(np.isfinite(y), pi, cl)
    if count is not None and count.impossible:
        where = f"column '{prob_column}'" if prob_column is not None else f"--inclusion-prob {inclusion_prob}"
        from .._safe import escape_control

        who = (" Raters not named by --judge were counted as humans: "
               + ", ".join(repr(escape_control(r)) for r in unnamed[:8]) + (" ..." if len(unnamed) > 8 else "")
               + "; name every LLM judge with --judge (or give a --role column).") if unnamed else (
            " Are LLM judges marked as humans in the role column?")
        raise SchemaError(f"{src}, {where}: {count.sentence()}: these are not the designed human sample.{who} "
                          "Otherwise the probabilities are not the ones the sample was drawn with, or whole groups of "
                          "items were sent to humans together (declare them with --cluster or --cluster-sep).")
    comp = compare_estimators(X if X.shape[1] > 1 else X[:, 0], y, pi, judges=judges, items=items, model=model,
                              cross_fit=cross_fit, strata=st, clusters=cl, confidence_level=confidence_level,
                              target=target, compare=compare, rng=seed)  # type: ignore[arg-type]
    known = pi[np.isfinite(pi)]
    design = {"inclusion_prob": str(inclusion_prob) if prob_column is None else prob_column,
              "min": float(known.min()), "max": float(known.max()),
              "n_distinct": int(np.unique(known).size), "n_items_with_prob": int(known.size),
              "expected_n_labeled": float(known.sum()) if known.size == pi.size else None}
    return MeanEstimate(judges=tuple(judges), comparison=comp, design=design, n_items=int(y.size), n_labeled=n_lab)
