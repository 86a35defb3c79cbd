"""``plan_validation``: everything ``voirdire plan`` shows for a pilot, in one result (private).

Per judge: the verdict and advice of :func:`validate_judges` (the one decision), the running anytime-valid
planner (:func:`voirdire.design.plan_judges`), the fixed-sample certification size
(:func:`~voirdire.design.plan_certification`, or why no budget certifies it); with several judges the
ranking size (:func:`~voirdire.design.plan_ranking`); with budgets, the simulated decision
(:func:`~voirdire.design.plan_by_simulation`); and the overlap they rest on (:func:`design_overview`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from .._results import Result
from ..exceptions import InfeasiblePlanError
from ._advice import judge_verdicts
from ._design import design_overview

__all__ = ["PlanningResult", "plan_validation"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PlanningResult(Result):
    """The composite result of :func:`plan_validation` (``None`` for what was not computed)."""

    overview: Any
    validation: Any
    answers: Any
    certification: dict[str, Any]
    infeasible: dict[str, str]
    ranking: Any
    simulation: Any


def plan_validation(table: Any, judges: Sequence[str], *, epsilon: float = 0.05, significance_level: float = 0.05,
                    score: str = "agreement", seed: int = 0, n_resamples: int = 2000,
                    budgets: Sequence[int] = (), design: str = "random", fr_target: float = 0.10,
                    fa_target: float = 0.10, n_repetitions: int = 200, n_jobs: int = 1,
                    progress: Callable[[int, int], None] | None = None) -> PlanningResult:
    """The verdicts, the planners' answers and (with ``budgets``) the simulated decision for a pilot table.

    ``score`` is the certification's score (the anytime-valid planner runs on observed agreement only, so
    ``answers`` is ``None`` for another score). ``seed`` serves the verdicts (as ``validate --seed``), the
    planners and the simulation.
    """
    from ..design import plan_by_simulation, plan_certification, plan_judges, plan_ranking

    judges = list(dict.fromkeys(judges))
    overview = design_overview(table, judges)
    validation = judge_verdicts(table, judges, seed=seed, epsilon=epsilon, n_resamples=n_resamples)
    answers = (plan_judges(table, judges, epsilon=epsilon, significance_level=significance_level, rng=seed)
               if score == "agreement" else None)
    cert: dict[str, Any] = {}
    infeasible: dict[str, str] = {}
    for j in judges:
        try:
            cert[j] = plan_certification(table, judge=j, epsilon=epsilon, significance_level=significance_level,
                                         score=score, rng=seed)
        except InfeasiblePlanError as exc:
            infeasible[j] = str(exc)
    ranking = None
    if len(judges) >= 2:
        try:
            ranking = plan_ranking(table, judges=judges, significance_level=significance_level)
        except InfeasiblePlanError as exc:
            infeasible["ranking"] = str(exc)
    simulation = None
    if budgets:
        simulation = plan_by_simulation(table, budgets=list(budgets), judges=judges, epsilon=epsilon, design=design,
                                        fr_target=fr_target, fa_target=fa_target, n_repetitions=n_repetitions,
                                        rng=seed, n_jobs=n_jobs, progress=progress)
    return PlanningResult(overview=overview, validation=validation, answers=answers, certification=cert,
                          infeasible=infeasible, ranking=ranking, simulation=simulation)
