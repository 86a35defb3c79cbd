"""Workflows: one function per analysis family, returning one composite result with verdicts.

``compare_raters`` (the humans, then the humans with each judge) and ``validate_judges``
(leave-one-out, alt-test, the humans' own reliability and a ranking, each judge with a three-way
:class:`Verdict`) own their defaults and derive every random stream from one seed through
:class:`numpy.random.SeedSequence`. The ``voirdire`` commands and the HTML report both call them,
so the same file, options and seed print the same numbers everywhere. See ``docs/validation.md``.
"""

from ._advice import ADVICE_STATUSES, Advice, advise, comparison_capacity, judge_verdicts, need_text, running_text
from ._design import DesignOverview, design_overview
from ._gate import gate_failures
from ._sequential import (
    GroupedSequentialValidation, RunningDecision, SequentialValidation, follow_file, label_rounds, not_ready,
    read_sequential, sequential_validation, sequential_validation_by, watch_judges, with_verdicts,
)
from ._planning import (
    BatchCheck, BatchDraw, PlanRow, PlanningResult, check_batch, draw_batch, plan_from_moments, plan_validation,
)
from ._raters import AnnotatorSummary, RaterDiagnosis, check_raters, diagnose_annotators, diagnose_raters, rater_sensitivity
from ._reading import (
    numeric_nominal_note, overlap_problem, read_inclusion_prob, read_pairwise_votes, read_table, read_table_groups,
    verdict_spellings,
)
from ._estimate import (
    EstimationSummary, FileEstimate, JudgeEstimate, MeanEstimate, estimate_from_file, estimate_judges, estimate_mean,
    inclusion_prob_from_file,
)
from ._estimate_plan import EstimationPlan, plan_estimation, write_plan_sample
from ._pairwise import PairwiseSummary, summarise_pairwise
from ._pairwise_fit import PairwiseFit, evaluation_notes, fit_pairwise, human_groups
from ._simulate import DesignSimulation, simulate_designs
from ._demo import DemoAgreement, check_demo_folder, hanna_agreement, write_demo_agreement
from ._compare import RaterComparison, compare_raters, compare_raters_stream
from ._groups import (
    GROUP_ERRORS, GroupCell, GroupedComparison, GroupedEstimate, GroupedRaters, GroupedValidation, compare_raters_by,
    GroupedWatch, diagnose_raters_by, estimate_mean_by, validate_judges_by, watch_judges_by,
)
from ._seeds import seed_sequence, stream
from ._validate import (
    DEFAULT_N_RESAMPLES, JudgeValidation, ValidationResult, check_table_fits, default_score, default_scoring,
    judges_to_validate, method_margins, order_text, ranking_tiers, tier_ranks, top_tier_note, validate_judges,
    validated_table,
)
from ._verdict import REASON_CODES, TENTATIVE_LINE, Reason, ReferenceReliability, Verdict

__all__ = [
    "ADVICE_STATUSES",
    "Advice",
    "advise",
    "comparison_capacity",
    "judge_verdicts",
    "order_text",
    "check_table_fits",
    "ranking_tiers",
    "tier_ranks",
    "top_tier_note",
    "need_text",
    "running_text",
    "PairwiseSummary",
    "EstimationSummary",
    "DesignOverview",
    "watch_judges",
    "GroupedSequentialValidation",
    "RunningDecision",
    "SequentialValidation",
    "label_rounds",
    "sequential_validation",
    "sequential_validation_by",
    "with_verdicts",
    "read_sequential",
    "follow_file",
    "not_ready",
    "PlanningResult",
    "plan_validation",
    "BatchCheck",
    "PlanRow",
    "check_batch",
    "plan_from_moments",
    "BatchDraw",
    "draw_batch",
    "AnnotatorSummary",
    "diagnose_annotators",
    "RaterDiagnosis",
    "check_raters",
    "diagnose_raters",
    "rater_sensitivity",
    "numeric_nominal_note",
    "read_pairwise_votes",
    "verdict_spellings",
    "read_table",
    "read_table_groups",
    "read_inclusion_prob",
    "overlap_problem",
    "design_overview",
    "JudgeEstimate",
    "estimate_judges",
    "MeanEstimate",
    "estimate_mean",
    "FileEstimate",
    "estimate_from_file",
    "inclusion_prob_from_file",
    "EstimationPlan",
    "plan_estimation",
    "write_plan_sample",
    "GroupedEstimate",
    "estimate_mean_by",
    "GroupedWatch",
    "watch_judges_by",
    "summarise_pairwise",
    "PairwiseFit",
    "evaluation_notes",
    "fit_pairwise",
    "human_groups",
    "DesignSimulation",
    "simulate_designs",
    "DemoAgreement",
    "hanna_agreement",
    "check_demo_folder",
    "write_demo_agreement",
    "DEFAULT_N_RESAMPLES",
    "GROUP_ERRORS",
    "GroupCell",
    "GroupedComparison",
    "GroupedRaters",
    "diagnose_raters_by",
    "GroupedValidation",
    "compare_raters_by",
    "validate_judges_by",
    "REASON_CODES",
    "TENTATIVE_LINE",
    "JudgeValidation",
    "RaterComparison",
    "Reason",
    "ReferenceReliability",
    "ValidationResult",
    "Verdict",
    "compare_raters",
    "compare_raters_stream",
    "default_score",
    "default_scoring",
    "gate_failures",
    "judges_to_validate",
    "method_margins",
    "validated_table",
    "seed_sequence",
    "stream",
    "validate_judges",
]
