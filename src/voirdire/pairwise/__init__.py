"""Bayesian meta-evaluation of pairwise verdicts (A better, tie, B better) from humans and LLM judges.

:class:`PairwiseBayesModel` is the streaming BayesJudge model (Rao-Blackwellised SMC over the
judges' position biases, Dawid-Skene humans); the baselines (majority vote, per-pair
Bradley-Terry-Davidson, Dawid-Skene, MACE, GLAD) share its ``fit``/``predict_proba`` interface;
:func:`leave_one_human_out` compares them on held-out human verdicts; :func:`bias_report` measures
each judge's position, length and self-preference biases.
"""

from ._bias import BiasReport, bias_report, model_family, pair_covariates
from ._baselines import (
    GLAD,
    MACE,
    BradleyTerryDavidson,
    DawidSkene,
    MajorityVote,
    SystemBradleyTerryDavidson,
    crowd_arrays,
    dawid_skene_arrays,
    mace_arrays,
)
from ._evaluate import (
    FORECAST_RULES,
    ForecastChoice,
    HeldOutChoice,
    LOHOResult,
    choose_forecaster,
    default_methods,
    leave_one_human_out,
    score_predictions,
)
from ._model import MAX_JOINT_JUDGES, PairwiseBayesModel, PairwisePosterior, entropy
from ._simulate import DEFAULT_CONFUSIONS, PairwiseTruth, simulate_pairwise, simulate_sparse_pairwise
from ._systems import SystemStrengths, fit_system_strengths

__all__ = ["PairwiseBayesModel", "PairwisePosterior", "PairwiseTruth", "simulate_pairwise",
           "DEFAULT_CONFUSIONS", "entropy", "MajorityVote", "BradleyTerryDavidson", "DawidSkene", "MACE",
           "GLAD", "crowd_arrays", "leave_one_human_out", "LOHOResult", "score_predictions", "default_methods",
           "bias_report", "BiasReport", "pair_covariates", "model_family", "dawid_skene_arrays", "mace_arrays",
           "MAX_JOINT_JUDGES", "choose_forecaster", "ForecastChoice", "HeldOutChoice", "FORECAST_RULES",
           "simulate_sparse_pairwise", "SystemBradleyTerryDavidson", "SystemStrengths", "fit_system_strengths"]
