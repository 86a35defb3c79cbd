"""The estimation workflow: the estimate with its comparisons and hints, for the CLI and the report."""

from __future__ import annotations

import dataclasses
import re
import warnings
from typing import Any, Literal

import numpy as np

from .._results import Result
from ..exceptions import DegenerateDataWarning, InvalidParameterError, SmallSampleWarning
from ._design_check import labelled_count
from ._dr import SMALL_SAMPLE, classical_mean, dr_mean, ppi_mean
from ._results import EstimateResult

__all__ = ["compare_estimators", "EstimatorComparison"]

_CLUSTER_ID = re.compile(r"^(.+?)(__|::)(.+)$")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class EstimatorComparison(Result):
    """The DR estimate of the mean human score beside human-only and PPI++, with hints.

    Attributes
    ----------
    dr : EstimateResult
        The doubly-robust estimate with the chosen model (default: calibrated, power-tuned).
    human_only : EstimateResult or None
        The design-weighted (Hajek) human-only estimate on the same labels.
    ppi : EstimateResult or None
        PPI++ (one judge, equal probabilities only; see ``ppi_note``).
    ppi_note : str
        Why PPI++ is not shown, when it is not.
    judges : list of str
    hints : list of dict
        ``{"code": ..., "message": ...}``: ``judges_not_helping`` (cross-fitted R^2 < 0; the
        message gives the human-only interval), ``cluster_ids`` (item ids like ``doc__part``
        without clusters: suggests ``--cluster-sep``), ``identity_wider`` (the identity model is
        wider than human-only), ``wider_than_human_only`` (another model's interval is wider than
        human-only's on the same labels, with both widths: the power-tuned default only below 100
        labelled units, where the bound does not hold).
    warnings : list of str
        Warnings raised on the way (small samples, constant judges), one line each.
    """

    dr: EstimateResult
    human_only: EstimateResult | None
    ppi: EstimateResult | None
    ppi_note: str
    judges: list[str]
    hints: list[dict[str, str]]
    warnings: list[str]


def _cluster_hint(items: Any) -> dict[str, str] | None:
    if items is None:
        return None
    ids = [str(i) for i in items]
    seps: dict[str, set[str]] = {}
    for i in ids:
        mt = _CLUSTER_ID.match(i)
        if mt is None:
            return None
        seps.setdefault(mt.group(2), set()).add(mt.group(1))
    if len(seps) != 1:
        return None
    sep, heads = next(iter(seps.items()))
    if len(heads) >= len(ids):
        return None
    return {"code": "cluster_ids",
            "message": f"item ids look like <group>{sep}<part> ({len(heads)} groups over {len(ids)} items): if items "
                       f"of one group are related (several summaries of one document), pass --cluster-sep {sep} for a "
                       "cluster-robust interval (items of a cluster also go to one cross-fitting fold)."}


def _wider_hint(dr: EstimateResult, human: EstimateResult | None, model: str, y: np.ndarray,
                clusters: np.ndarray | None) -> dict[str, str] | None:
    """``wider_than_human_only``: the model's interval is wider than human-only's on the same labels.

    Power tuning bounds the default's interval by human-only's from :data:`SMALL_SAMPLE` labelled units
    on (at ``lam = 0`` it *is* human-only, and the heavy-tail term is capped by human-only's own);
    below, its small-sample design term (the refitting jackknife) and t degrees of freedom are its
    own, and it can be wider (SummEval at 5%, 60 labels: 6-19% of draws). The identity model has
    its own hint (``identity_wider``)."""
    if model == "identity" or human is None:
        return None
    w_dr, w_h = dr.ci.high - dr.ci.low, human.ci.high - human.ci.low
    if not (np.isfinite(w_dr) and np.isfinite(w_h)) or w_dr <= w_h * (1 + 1e-9):
        return None
    lab = np.isfinite(y)
    n_units = int(lab.sum()) if clusters is None else int(np.unique(clusters[lab]).size)
    unit = "labelled items" if clusters is None else "labelled clusters"
    here = f"here {w_dr:.4g} vs {w_h:.4g} on {n_units} {unit}"
    if dr.lam is not None and n_units < SMALL_SAMPLE:
        msg = (f"below {SMALL_SAMPLE} {unit} the {model} model's interval may be wider than human-only's: {here} "
               f"(its small-sample variance and t quantile are its own; from {SMALL_SAMPLE} on it never is).")
    else:
        msg = f"the {model} model's interval is wider than human-only's on the same labels: {here}."
        if dr.lam is None and n_units >= SMALL_SAMPLE:  # advice that holds here (below, no model is bounded)
            msg += " It has no power tuning; --model calibrated is never wider than human-only on these labels."
    return {"code": "wider_than_human_only", "message": msg}


def _check_count(y: np.ndarray, inclusion_prob: Any, clusters: np.ndarray | None) -> None:
    """Refuse human scores the design could not have produced (:func:`labelled_count`): typically
    LLM judges counted as humans, so that every item looks human-scored."""
    try:
        pi = np.broadcast_to(np.asarray(inclusion_prob, dtype=float), y.shape)
        lab = np.isfinite(y)
    except (TypeError, ValueError):
        return  # malformed input: dr_mean's own checks name it
    count = labelled_count(lab, pi, None if clusters is None or len(clusters) != y.size else clusters)
    if count is not None and count.impossible:
        raise InvalidParameterError(
            f"The 'inclusion_prob' parameter of compare_estimators does not describe these human scores: "
            f"{count.sentence()}. Are LLM judges counted as humans (give every judge the judge role)? Otherwise the "
            "probabilities are not the ones the sample was drawn with, or whole groups of items were sent to humans "
            "together (pass them as clusters).")


def compare_estimators(judge_scores: Any, human_scores: Any, inclusion_prob: Any, *, judges: list[str] | None = None,
                       items: Any = None, model: str = "calibrated", cross_fit: int | str = "auto",
                       strata: Any = None,
                       clusters: Any = None, confidence_level: float = 0.95,
                       target: Literal["superpopulation", "finite"] = "superpopulation",
                       interval: Literal["auto", "t", "normal"] = "auto", compare: bool = True,
                       rng: int | np.random.Generator | None = 0) -> EstimatorComparison:
    """The DR estimate (``model``, default calibrated) with human-only and PPI++ beside it, and hints.

    One function for ``voirdire estimate`` and the report: same defaults, same numbers.

    Parameters
    ----------
    judge_scores : array-like, shape (N,) or (N, p)
    human_scores : array-like, shape (N,)
        ``nan`` where not scored.
    inclusion_prob : float or array-like
    judges : list of str, optional
        Names of the judge columns (for messages).
    items : array-like of ids, optional
        Item ids (for the ``--cluster-sep`` hint).
    clusters : array-like, optional
        A cluster label per item (any labels; coded here).
    model, cross_fit, strata, confidence_level, target, interval, rng
        As in :func:`dr_mean`.
    compare : bool, default True
        Also compute human-only and (when valid) PPI++.

    Returns
    -------
    EstimatorComparison
    """
    X = np.asarray(judge_scores, dtype=float)
    if clusters is not None:  # codes 0..G-1 of the clusters present (a subset of items leaves gaps)
        clusters = np.unique(np.asarray(clusters), return_inverse=True)[1].ravel()
    names = judges or [f"judge {k}" for k in range(1 if X.ndim == 1 else X.shape[1])]
    y = np.asarray(human_scores, dtype=float)
    _check_count(y, inclusion_prob, clusters)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SmallSampleWarning)
        warnings.simplefilter("always", DegenerateDataWarning)
        dr = dr_mean(X, y, inclusion_prob, model=model, cross_fit=cross_fit, strata=strata,  # type: ignore[arg-type]
                     clusters=clusters, confidence_level=confidence_level, target=target, interval=interval,
                     rng=rng, on_undefined="raise")
        human = ppi = None
        note = ""
        if compare:
            human = classical_mean(y, inclusion_prob, strata=strata, clusters=clusters,
                                   confidence_level=confidence_level, target=target, interval=interval,
                                   on_undefined="warn")
            lab = np.isfinite(y)
            pi = np.broadcast_to(np.asarray(inclusion_prob, dtype=float), y.shape)
            uniform = bool(np.nanmax(pi[lab]) == np.nanmin(pi[lab]))
            if len(names) != 1:
                note = "PPI++ not shown: it takes one judge (the DR row combines them)."
            elif not uniform:
                note = "PPI++ not shown: it assumes a uniform random human subsample, and the probabilities differ."
            elif lab.sum() < 2:
                note = "PPI++ not shown: it needs at least two human-scored items."
            elif lab.all():
                note = "PPI++ not shown: every item is human-scored, so there is nothing for the judge to add."
            else:
                ppi = ppi_mean(X.reshape(y.size, -1)[:, 0], y, confidence_level=confidence_level, on_undefined="nan")
    hints: list[dict[str, str]] = []
    if np.isfinite(dr.r2) and dr.r2 < 0:
        h = "" if human is None or not np.isfinite(human.se) else (
            f" The human-only estimate is {human.estimate:.4g} [{human.ci.low:.4g}, {human.ci.high:.4g}].")
        if model == "identity":
            msg = (f"R\u00b2 {dr.r2:.3g} < 0: the judge's raw scores predict the human scores worse than a constant "
                   "(another scale, or a bias); the estimate stays valid but is imprecise. --model calibrated "
                   f"calibrates them and is never wider than human-only from {SMALL_SAMPLE} labelled items on." + h)
        else:
            msg = (f"R\u00b2 {dr.r2:.3g} < 0 (cross-fitted): the {model} model of the judges' scores predicts the "
                   "human scores worse than a constant: the judges are not helping here." + h)
        hints.append({"code": "judges_not_helping", "message": msg})
    if model == "identity" and human is not None and np.isfinite(human.se) and 0 < human.se < dr.se:
        hints.append({"code": "identity_wider",
                      "message": f"the identity model's interval is {dr.se / human.se:.2f}x as wide as human-only; "
                                 f"--model calibrated would not be wider from {SMALL_SAMPLE} labelled items on."})
    wider = _wider_hint(dr, human, model, y, clusters)
    if wider is not None:
        hints.append(wider)
    if clusters is None:
        ch = _cluster_hint(items)
        if ch is not None:
            hints.append(ch)
    msgs = sorted({str(w.message) for w in caught})
    return EstimatorComparison(dr=dr, human_only=human, ppi=ppi, ppi_note=note, judges=list(names), hints=hints,
                               warnings=msgs)
