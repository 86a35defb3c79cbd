"""Result objects of :mod:`voirdire.agreement` (frozen, slotted, keyword-only dataclasses)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from .._results import ConfidenceInterval, Result, to_jsonable

__all__ = ["AbstentionInfo", "AgreementResult", "AgreementTable", "BinaryAgreementResult",
           "PairwiseMatrixResult"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AbstentionInfo(Result):
    """How abstentions ("cannot assess") were handled, and how much of the data they touch.

    Attributes
    ----------
    policy : {"exclude", "category", "disagree"}
        ``exclude``: abstentions are dropped (agreement on the labels nobody abstained on);
        ``category``: an abstention is one more nominal category; ``disagree``: an abstention
        earns no agreement credit with any label (including another abstention).
    n_labels : int
        Labels of the selected raters (abstentions included).
    n_abstentions : int
        How many of them are abstentions.
    label_coverage : float
        Share of labels that are not abstentions (``1 - n_abstentions / n_labels``).
    item_coverage : float
        Share of items (with at least one label) on which no selected rater abstained.
    """

    policy: str
    n_labels: int
    n_abstentions: int
    label_coverage: float
    item_coverage: float


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AgreementResult(Result):
    """One agreement coefficient with its uncertainty.

    Attributes
    ----------
    coefficient : str
        Function name of the coefficient (``"krippendorff_alpha"``, ``"cohen_kappa"``, ...).
    estimate : float
        The point estimate (``nan`` when undefined on these data).
    ci : ConfidenceInterval
        Percentile bootstrap interval over items (or clusters); when ``n_resamples=0``, a Wald
        interval from ``analytic_se`` (clipped to ``[-1, 1]``), or ``(nan, nan)`` if there is none.
    confidence_level : float
        Level of ``ci``.
    se : float
        Bootstrap standard error (standard deviation of the resampled estimates), ``nan`` without
        a bootstrap.
    analytic_se : float or None
        Large-sample standard error from the literature where one exists (Gwet's linearisation
        for Fleiss, AC1/AC2, Brennan-Prediger/Bennett, Krippendorff (nominal, interval, ratio),
        Conger; Fleiss-Cohen-Everitt for Cohen's kappa). ``None`` where the literature gives none.
    method : str
        How the interval was obtained.
    level : str
        Metric used: ``nominal``, ``ordinal``, ``interval``, ``ratio`` or a weight name.
    observed, expected : float
        Observed and chance agreement (``pa``, ``pe``) for kappa-type coefficients; observed
        and expected disagreement (``D_o``, ``D_e``) for Krippendorff's alpha.
    n_items : int
        Items that enter the observed agreement (at least two labels, or both raters for a
        two-rater coefficient).
    n_pairs : int
        Ordered pairs of labels within those items, halved (``sum n_i (n_i - 1) / 2``).
    n_raters : int
        Raters in the selection.
    n_labels : int
        Labels used after the abstention policy.
    resampling_unit : {"item", "cluster"}
        The unit of the bootstrap and of the analytic variance.
    n_units : int
        Number of resampling units.
    n_resamples : int
        Bootstrap resamples requested.
    n_failed_resamples : int
        Resamples on which the coefficient was undefined (left out of the interval).
    abstention : AbstentionInfo
        Policy and coverage.
    raters : tuple of str
        Raters in the selection.
    """

    coefficient: str
    estimate: float
    ci: ConfidenceInterval
    confidence_level: float
    se: float
    analytic_se: float | None
    method: str
    level: str
    observed: float
    expected: float
    n_items: int
    n_pairs: int
    n_raters: int
    n_labels: int
    resampling_unit: str
    n_units: int
    n_resamples: int
    n_failed_resamples: int
    abstention: AbstentionInfo
    raters: tuple[str, ...]

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([_row(self)])


def _row(r: AgreementResult) -> dict[str, Any]:
    return {
        "coefficient": r.coefficient, "level": r.level, "estimate": r.estimate,
        "ci_low": r.ci.low, "ci_high": r.ci.high, "confidence_level": r.confidence_level,
        "se": r.se, "analytic_se": np.nan if r.analytic_se is None else r.analytic_se,
        "n_items": r.n_items, "n_pairs": r.n_pairs, "n_raters": r.n_raters,
        "resampling_unit": r.resampling_unit, "n_units": r.n_units,
        "abstain_policy": r.abstention.policy, "label_coverage": r.abstention.label_coverage,
        "item_coverage": r.abstention.item_coverage, "method": r.method,
    }


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AgreementTable(Result):
    """Several coefficients on one selection of raters (one row per coefficient).

    ``results`` holds the :class:`AgreementResult` objects in the order requested; index it by
    name with ``table["krippendorff_alpha"]``. Every coefficient used the same bootstrap
    resamples, so their intervals are jointly valid draws.
    """

    results: tuple[AgreementResult, ...]
    raters: tuple[str, ...]
    label: str = ""

    def __getitem__(self, name: str) -> AgreementResult:
        for r in self.results:
            if r.coefficient == name:
                return r
        from ..exceptions import InvalidParameterError

        raise InvalidParameterError(
            f"No coefficient {name!r} in this table. Coefficients: {[r.coefficient for r in self.results]}.")

    def __iter__(self) -> Any:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def to_frame(self) -> pd.DataFrame:
        df = pd.DataFrame([_row(r) for r in self.results])
        if self.label:
            df.insert(0, "group", self.label)
        return df

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "raters": list(self.raters),
                "results": [r.to_dict() for r in self.results]}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PairwiseMatrixResult(Result):
    """A rater-by-rater matrix of a two-rater coefficient.

    Attributes
    ----------
    coefficient : str
        The coefficient in each cell.
    raters : tuple of str
        Row and column order.
    estimate : numpy.ndarray
        ``(n_raters, n_raters)`` coefficient on the items both raters labelled; ``nan`` where
        undefined (no shared item, or a zero denominator); the diagonal is ``nan``.
    n_items : numpy.ndarray
        ``(n_raters, n_raters)`` number of items both raters labelled (the diagonal holds each
        rater's own count).
    level : str
        Metric or weights used.
    abstain_policy : str
    """

    coefficient: str
    raters: tuple[str, ...]
    estimate: np.ndarray
    n_items: np.ndarray
    level: str
    abstain_policy: str

    def to_frame(self) -> pd.DataFrame:
        """Long form: one row per unordered pair (rater_a, rater_b, estimate, n_items)."""
        rows = []
        k = len(self.raters)
        for a in range(k):
            for b in range(a + 1, k):
                rows.append({"rater_a": self.raters[a], "rater_b": self.raters[b],
                             "estimate": float(self.estimate[a, b]), "n_items": int(self.n_items[a, b])})
        return pd.DataFrame(rows, columns=["rater_a", "rater_b", "estimate", "n_items"])

    def to_dict(self) -> dict[str, Any]:
        return {"coefficient": self.coefficient, "raters": list(self.raters), "level": self.level,
                "abstain_policy": self.abstain_policy, "estimate": to_jsonable(self.estimate),
                "n_items": to_jsonable(self.n_items)}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class BinaryAgreementResult(Result):
    """The binary family for one judge against a reference (METHODS section 1).

    Attributes
    ----------
    judge, reference : str
        The judge and the reference (``"majority"`` or a rater name).
    positive : object
        The category counted as positive.
    labels : tuple
        Row/column labels of ``confusion_matrix`` (the categories, plus ``"<abstain>"`` under the
        ``category`` policy).
    confusion_matrix : numpy.ndarray
        Reference (rows) by judge (columns) counts over every label pair kept.
    tp, fn, fp, tn : int
        The 2x2 cells (reference positive and judge positive = TP, ...).
    n_items : int
        Items in the 2x2 table.
    accuracy, precision, recall, f1 : float
    phi : float
        ``(TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))``. On non-degenerate binary data
        it equals MCC, Pearson's r, Spearman's rho and Kendall's tau-b.
    mcc, pearson, spearman, kendall_tau_b : float
        Computed separately (so the equality is visible, not asserted).
    coincide : bool
        Whether phi, MCC, Pearson, Spearman and Kendall tau-b coincide here (to 1e-12).
    note : str
        The sentence to print with them.
    kappa : float
        Cohen's kappa of the 2x2 table.
    kappa_ci : ConfidenceInterval
        Percentile bootstrap interval of kappa (items or clusters).
    phi_ci : ConfidenceInterval
        Percentile bootstrap interval of phi.
    prevalence : float
        ``pi = (TP+FN)/N``, the reference positive rate.
    judge_rate : float
        ``pi_hat = (TP+FP)/N``, the judge's positive rate.
    kappa_phi_ratio : float
        ``kappa / phi = 2 sqrt(AB) / (A+B) <= 1``; equals 1 iff ``pi == pi_hat``.
    n_ties : int
        Items left out because the human majority was tied (``reference="majority"``).
    n_judge_labels, n_judge_abstentions : int
        The judge's labels, and how many of them are abstentions.
    judge_coverage : float
        Share of the judge's labels that are not abstentions.
    abstention : AbstentionInfo
        Policy and coverage over the judge and the reference raters.
    resampling_unit : str
    """

    judge: str
    reference: str
    positive: Any
    labels: tuple[Any, ...]
    confusion_matrix: np.ndarray
    tp: int
    fn: int
    fp: int
    tn: int
    n_items: int
    accuracy: float
    precision: float
    recall: float
    f1: float
    phi: float
    mcc: float
    pearson: float
    spearman: float
    kendall_tau_b: float
    coincide: bool
    note: str
    kappa: float
    kappa_ci: ConfidenceInterval
    phi_ci: ConfidenceInterval
    prevalence: float
    judge_rate: float
    kappa_phi_ratio: float
    n_ties: int
    n_judge_labels: int
    n_judge_abstentions: int
    judge_coverage: float
    abstention: AbstentionInfo
    resampling_unit: str

    def to_frame(self) -> pd.DataFrame:
        names = ["accuracy", "precision", "recall", "f1", "phi", "mcc", "pearson", "spearman",
                 "kendall_tau_b", "kappa", "prevalence", "judge_rate", "kappa_phi_ratio"]
        rows = [{"judge": self.judge, "reference": self.reference, "statistic": n,
                 "value": float(getattr(self, n))} for n in names]
        return pd.DataFrame(rows)
