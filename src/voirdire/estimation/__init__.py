"""Estimating the mean human score from a two-stage design: the LLM scores every item, humans a
designed subsample with known inclusion probabilities (METHODS §4).

- :func:`dr_mean`, :func:`dr_mean_table`: the doubly-robust estimator (valid whatever the
  prediction model, because the sampling probabilities are known).
- :func:`classical_mean` (humans only, Hajek) and :func:`ppi_mean` (PPI++), for comparison.
- :func:`required_sample_size`, :func:`plan_allocation`, :func:`plan_active`: how many human
  labels, and where (:func:`pilot_r2`: the judges' predictive R^2 on a pilot, the planners' input) (strata, or item by item from the judges' predicted residuals and costs).
- :func:`draw_human_sample`: the Poisson-sampled subsample, probabilities saved beside it.
- :func:`labelled_count`: is the human-scored count one the inclusion probabilities allow?
"""

from ._design_check import LabelledCount, labelled_count
from ._dr import classical_mean, dr_mean, dr_mean_table, item_scores, judge_matrix, ppi_mean
from ._active import plan_active
from ._planning import pilot_r2, plan_allocation, required_sample_size
from ._results import ActiveDesign, AllocationResult, EstimateResult, HumanSample, SampleSizeResult
from ._sampling import draw_human_sample
from ._workflow import EstimatorComparison, compare_estimators

__all__ = [
    "dr_mean",
    "compare_estimators",
    "EstimatorComparison",
    "dr_mean_table",
    "classical_mean",
    "ppi_mean",
    "item_scores",
    "judge_matrix",
    "required_sample_size",
    "plan_allocation",
    "plan_active",
    "pilot_r2",
    "draw_human_sample",
    "labelled_count",
    "LabelledCount",
    "EstimateResult",
    "SampleSizeResult",
    "AllocationResult",
    "HumanSample",
    "ActiveDesign",
]
