"""Result objects of the estimation subpackage (private; re-exported by ``voirdire.estimation``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from .._results import ConfidenceInterval, Result, to_jsonable

__all__ = ["EstimateResult", "SampleSizeResult", "AllocationResult", "HumanSample", "ActiveDesign"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class EstimateResult(Result):
    """An estimate of the mean human score with its standard error and confidence interval.

    Attributes
    ----------
    estimate : float
        The estimated mean human score over all ``n_total`` items.
    se : float
        Standard error (``sqrt(var_human + var_residual)`` for ``target="superpopulation"``,
        ``sqrt(var_residual)`` for ``target="finite"``).
    ci : ConfidenceInterval
        ``estimate + (skew -+ q) * se`` with ``q`` a t quantile (``df`` degrees of freedom, small
        samples) or the normal one (``ci.method`` says which; with ``interval="auto"`` grown by
        Hall's second-order term for skewed, heavy-tailed residuals), and ``skew`` the
        correction for skewness (0 for a symmetric interval).
    confidence_level : float
    n_labeled, n_total : int
        Items with a human score, and all items (the LLM scores every item).
    var_human : float
        The human-variance term of the variance of the estimate, ``Var(Y) / N`` (what the variance
        would be if humans had scored all ``N`` items). For ``method="ppi++"`` it is PPI's
        "imputed" term ``lam^2 Var(Yhat_unlabeled) / N_unlabeled``.
    var_residual : float
        The residual penalty term ``(1/N^2) sum (1 - pi_i) / pi_i^2 (Y_i - m(X_i))^2`` over the
        labelled items: the price of scoring only a subsample, small when the prediction model
        predicts the humans well. With ``interval="auto"`` below 100 labelled units it is that
        term moved a third of the way to the jackknife over the labelled units (the estimator
        refitted without each), which carries the model's own estimation noise (human-only: the
        jackknife of the Hajek mean). For ``method="ppi++"`` it is PPI's "rectifier" term
        ``Var(Y - lam Yhat) / n``.
    model : str
        Prediction model ``m``: ``"identity"``, ``"linear"``, ``"isotonic"``, ``"constant"``
        (human-only) or ``"ppi++"``.
    method : str
        ``"dr"``, ``"classical (hajek)"`` or ``"ppi++"``.
    target : str
        ``"superpopulation"`` (the items are a sample from a larger population) or ``"finite"``
        (the mean over exactly these ``N`` items).
    cross_fit : int
        Number of cross-fitting folds used to fit the model (1: no cross-fitting, 0: no fitting;
        leave-one-out: the number of labelled units, one fold each).
    n_clusters : int or None
        Number of clusters the standard error treats as independent units (None: items).
    n_strata : int or None
    r2 : float
        ``1 - sigma_e^2 / sigma^2`` on the labelled items (design-weighted): the share of the human
        variance the prediction model explains. This is the ``R^2`` of the planning relation; it
        can be negative when the model predicts worse than a constant (e.g. an identity model on a
        judge that is biased).
    sd_human : float
        Design-weighted standard deviation of the human scores on the labelled items.
    lam : float or None
        Power-tuning parameter: PPI++'s ``lambda`` (``method="ppi++"``), or the shrinkage of a
        power-tuned DR model towards the human-only estimate (0: human-only, 1: the model).
    df : float
        Degrees of freedom of the t interval (``inf``: a normal interval).
    n_judges : int
        Judge columns used as predictors (0 for human-only).
    skew : float
        Hall's Edgeworth correction for skewness (``interval="auto"``): both interval ends moved by
        ``skew`` standard errors (negative: downwards, for residuals with a long lower tail). 0 for
        the plain ``"t"`` and ``"normal"`` intervals, PPI++ and clustered designs.
    tail : float
        How much the normal quantile grew for skewed, heavy-tailed residuals (``interval="auto"``
        from 100 labelled units: the shape part of Hall's second-order term, never above
        human-only's on the same labels); the interval is ``estimate + (skew -+ (z + tail)) * se``.
        0 for t intervals, ``"t"``/``"normal"``, PPI++ and clustered designs.
    """

    estimate: float
    se: float
    ci: ConfidenceInterval
    confidence_level: float
    n_labeled: int
    n_total: int
    var_human: float
    var_residual: float
    model: str
    method: str
    target: str = "superpopulation"
    cross_fit: int = 0
    n_clusters: int | None = None
    n_strata: int | None = None
    r2: float = float("nan")
    sd_human: float = float("nan")
    lam: float | None = None
    df: float = float("inf")
    n_judges: int = 1
    skew: float = 0.0
    tail: float = 0.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SampleSizeResult(Result):
    """A solved two-stage design: how many items the LLM and the humans must score.

    The relation solved is ``1/n_star = r2/n_total + (1 - r2)/n_labeled``, i.e.
    ``sigma^2/n_star = (1/N) [sigma^2 + ((1 - pi)/pi) sigma_e^2]`` with ``pi = n/N`` and
    ``sigma_e^2 = sigma^2 (1 - r2)``.

    Attributes
    ----------
    solved_for : str
        ``"n_star"``, ``"n_total"``, ``"n_labeled"`` or ``"none"`` (humans alone already reach the
        target; see ``note``).
    n_star : float
        Human-only sample size whose variance ``sigma^2/n_star`` the design matches (exact, not
        rounded, when it is derived from a half-width or a power target).
    n_total, n_labeled : int
        LLM-scored items ``N`` and expected human-scored items ``n`` (rounded up when solved).
    inclusion_prob : float
        ``n_labeled / n_total``: the constant inclusion probability to draw humans with.
    r2 : float
    sd : float
        Standard deviation of the human scores (nan when not given and not needed).
    predicted_se : float
        ``sd * sqrt(r2/N + (1 - r2)/n)`` for the rounded design (nan without ``sd``).
    target_halfwidth, effect_size, power, significance_level, confidence_level : float
        The targets the ``n_star`` came from (nan when not used).
    note : str
    """

    solved_for: str
    n_star: float
    n_total: int
    n_labeled: int
    inclusion_prob: float
    r2: float
    sd: float = float("nan")
    predicted_se: float = float("nan")
    target_halfwidth: float = float("nan")
    effect_size: float = float("nan")
    power: float = float("nan")
    significance_level: float = float("nan")
    confidence_level: float = float("nan")
    note: str = ""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AllocationResult(Result):
    """Neyman-type allocation of human labels over strata, against proportional allocation.

    Attributes
    ----------
    strata : pandas.DataFrame
        One row per stratum: ``stratum, n_items, residual_sd, cost, inclusion_prob,
        expected_labels, expected_cost, proportional_prob``.
    budget, spent : float
        The budget and the expected cost of the allocation (equal unless every item is labelled).
    variance, variance_proportional : float
        Predicted residual penalty term ``(1/N^2) sum_h N_h (1/pi_h - 1) sigma_e,h^2`` of the
        allocation and of proportional allocation (one ``pi`` for all, same budget). When human
        standard deviations are given, ``sigma^2/N`` is added to both (the full variance of the
        estimate).
    relative_efficiency : float
        ``variance_proportional / variance`` (> 1: the allocation is better).
    n_iter : int
        Passes of the capping loop (strata pinned at ``pi = 1`` or at the floor).
    """

    strata: pd.DataFrame
    budget: float
    spent: float
    variance: float
    variance_proportional: float
    relative_efficiency: float
    n_iter: int
    includes_human_variance: bool = False

    def to_frame(self) -> pd.DataFrame:
        return self.strata.copy()

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: to_jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return out


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HumanSample(Result):
    """A Poisson-sampled set of items for humans to score, with each item's inclusion probability.

    Keep ``assignments`` (or ``to_frame()``): the probabilities are needed by :func:`dr_mean`.

    Attributes
    ----------
    assignments : pandas.DataFrame
        One row per item: ``item, inclusion_prob, selected`` (and ``stratum`` when given).
    n_items, n_selected : int
    expected_n : float
        ``sum(inclusion_prob)``.
    seed_entropy : str
        The entropy of the generator used (reproduces the draw), or ``""`` when a Generator was
        passed in.
    """

    assignments: pd.DataFrame
    n_items: int
    n_selected: int
    expected_n: float
    seed_entropy: str = ""

    def to_frame(self) -> pd.DataFrame:
        return self.assignments.copy()

    @property
    def selected_items(self) -> np.ndarray:
        """Ids of the items drawn for human scoring."""
        return self.assignments.loc[self.assignments["selected"], "item"].to_numpy()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ActiveDesign(Result):
    """Active, cost-aware inclusion probabilities (:func:`plan_active`).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per item: ``inclusion_prob, draw_prob, uncertainty, cost, labelled``.
    inclusion_prob : numpy.ndarray
        Per item: the probability of ending up human-scored (pilot and second phase together);
        what :func:`dr_mean` needs.
    draw_prob : numpy.ndarray
        Second-phase probability of each item not in the pilot (0 for pilot items).
    budget, expected_cost : float
        The budget for new labels and the design's expected cost (equal unless everything fits).
    expected_new_labels : float
        ``sum pi`` over the items not yet labelled.
    n_pilot : int
        Items already labelled (pilot).
    uncertainty_source : str
        ``"residual"``, ``"disagreement"`` or ``"uniform"``.
    floor : float
        Share of the uniform design mixed in.
    variance_ratio : float
        Predicted residual variance against the uniform design at the same budget (< 1: better),
        computed with the predicted uncertainties (an estimate, not a guarantee).
    n_judges : int
    n_iter : int
        Passes of the capping loop (items pinned at ``pi = 1``).
    note : str
    """

    table: pd.DataFrame
    inclusion_prob: np.ndarray
    draw_prob: np.ndarray
    budget: float
    expected_cost: float
    expected_new_labels: float
    n_pilot: int
    uncertainty_source: str
    floor: float
    variance_ratio: float
    n_judges: int
    n_iter: int
    note: str = ""

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()
