"""``summarise_pairwise``: the pairwise model and the judges' bias diagnostics in one result (private).

The one call behind the report's "Pairwise" and "Judge biases" sections and its pairwise-only "At a
glance": the Bayesian pairwise model and the held-out choice of the forecaster from
:func:`voirdire.workflows.fit_pairwise` (as ``voirdire pairwise --seed``, so the numbers are the command's),
which judges were asked in both orders, and :func:`voirdire.pairwise.bias_report` (as ``voirdire bias``).
Nothing is computed where it is shown.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .._checks import check_probability
from .._results import Result, to_jsonable
from ..exceptions import VoirdireError
from ._seeds import check_seed

__all__ = ["PairwiseSummary", "summarise_pairwise"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PairwiseSummary(Result):
    """The composite result of :func:`summarise_pairwise`.

    Attributes
    ----------
    source : str
    options : dict
        ``seed``, ``confidence_level``, ``choose``, ``choice_folds``.
    posterior : PairwisePosterior or None
        The model's posterior at ``confidence_level`` (``None`` when the model was not asked for).
    both_orders : dict of str to bool
        Per judge of the posterior: asked in both orders (only then is its position bias identified).
    bias : BiasReport or None
        The bias diagnostics (``None`` when not asked for, or when the table has no judge: ``bias_error``).
    bias_error : str or None
    choice : dict or None
        The held-out choice of the forecaster as ``voirdire pairwise --format json``'s ``choice``
        (:meth:`PairwiseFit.choice_dict`; ``None`` when the model was not asked for).
    forecaster : str or None
        The method whose per-pair forecasts ``forecasts`` holds: ``"BayesJudge"`` unless the held-out choice
        picked a baseline (``None`` when the model was not asked for).
    forecasts : DataFrame or None
        Per pair (stream order): ``pair, p_A, p_T, p_B, entropy`` and the model's ``theta, tau`` or a chosen
        baseline's ``forecaster`` (``voirdire pairwise --format json``'s ``pairs``).
    fit : PairwiseFit or None
        The whole fit (:func:`fit_pairwise`), not in :meth:`to_dict`.
    """

    source: str
    options: dict[str, Any]
    posterior: Any
    both_orders: dict[str, bool]
    bias: Any
    bias_error: str | None = None
    choice: dict[str, Any] | None = None
    forecaster: str | None = None
    forecasts: Any = None
    fit: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "options": to_jsonable(self.options),
                "posterior": None if self.posterior is None else self.posterior.to_dict(),
                "both_orders": dict(self.both_orders),
                "bias": None if self.bias is None else self.bias.to_dict(), "bias_error": self.bias_error,
                "choice": to_jsonable(self.choice), "forecaster": self.forecaster,
                "forecasts": None if self.forecasts is None else to_jsonable(self.forecasts.to_dict("records"))}


def summarise_pairwise(table: Any, *, covariates: Any = None, confidence_level: float = 0.95, seed: int = 0,
                       model: bool = True, bias: bool = True, families: Any = None,
                       fdr: float = 0.05, choose: bool = True, choice_folds: int = 5) -> PairwiseSummary:
    """The pairwise model's posterior, the held-out choice of the forecaster and the judges' bias diagnostics
    for one pairwise table.

    The model is :func:`voirdire.workflows.fit_pairwise`'s (its default options, seed streams and held-out
    choice), so its posterior, choice and per-pair forecasts equal ``voirdire pairwise --format json`` at the
    same seed.

    Parameters
    ----------
    table : PairwiseTable
    covariates : DataFrame, optional
        Per-pair covariates for the length and self-preference effects
        (:func:`voirdire.pairwise.pair_covariates`).
    confidence_level : float, default 0.95
        Of the credible intervals and the bias intervals.
    seed : int, default 0
        The model's seed (``voirdire pairwise --seed``).
    model, bias : bool, default True
        Which of the two to compute.
    families, fdr :
        The bias report's ``NAME -> family`` additions and false discovery rate (``voirdire bias --family
        --fdr``; :func:`voirdire.pairwise.bias_report`).
    choose : bool, default True
        Make the held-out choice of the forecaster (``voirdire pairwise --choice/--no-choice``).
    choice_folds : int, default 5
        Folds of humans for the held-out choice (``voirdire pairwise --choice-folds``).

    Returns
    -------
    PairwiseSummary
    """
    import numpy as np

    from ..pairwise import bias_report
    from ._pairwise_fit import fit_pairwise

    func = "summarise_pairwise"
    confidence_level = check_probability(confidence_level, "confidence_level", func)
    seed = check_seed(seed, func)
    fit = post = None
    both: dict[str, bool] = {}
    if model:
        fit = fit_pairwise(table, seed=seed, credible_level=confidence_level, choose=choose,
                           choice_folds=choice_folds, top=0)
        post = fit.posterior
        for j in post.judges:
            o = table.orders[table.rater_idx == table.rater_index(j)]
            both[str(j)] = bool(np.isin(0, o) and np.isin(1, o))
    rep = None
    err = None
    if bias:
        if not table.judges:
            err = "the pairwise file has no LLM judge."
        else:
            try:
                rep = bias_report(table, covariates=covariates, families=families, fdr=fdr, level=confidence_level)
            except VoirdireError as exc:
                err = str(exc)
    return PairwiseSummary(source=str(getattr(table, "source", "") or ""),
                           options={"seed": seed, "confidence_level": confidence_level, "choose": choose,
                                    "choice_folds": choice_folds}, posterior=post,
                           both_orders=both, bias=rep, bias_error=err,
                           choice=None if fit is None else fit.choice_dict(),
                           forecaster=None if fit is None else fit.forecaster,
                           forecasts=None if fit is None else fit.forecasts, fit=fit)
