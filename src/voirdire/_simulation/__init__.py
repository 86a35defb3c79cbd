"""The simulation engine (private, shared): synthetic annotations with known truth, sparse designs
from full matrices, Krippendorff's alpha on dense codes, and the experiment-grid runner.

:mod:`voirdire.simulate` publishes it; :mod:`voirdire.design` plans with it
(:func:`voirdire.design.plan_by_simulation`), so neither of those packages imports the other.
"""

from .alpha import alpha_dense
from .generators import LatentClassModel, SimulatedAnnotations, simulate_annotations
from .runner import PAPER_COVERAGES, PAPER_DESIGNS, ExperimentResult, ExperimentSetting, run_experiment
from .subsample import budget_for, sparse_codes, subsample

__all__ = ["PAPER_COVERAGES", "PAPER_DESIGNS", "ExperimentResult", "ExperimentSetting", "LatentClassModel",
           "SimulatedAnnotations", "alpha_dense", "budget_for", "run_experiment", "simulate_annotations",
           "sparse_codes", "subsample"]
