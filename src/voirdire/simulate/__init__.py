"""Simulation: synthetic annotations with known truth, sparse designs from full matrices, and the
experiment-grid runner (local processes or Dask) behind the sparse-overlap paper's Tables 1-3.

This package never prints; long runs report progress through a ``progress(done, total)`` callback.
"""

from ._generators import LatentClassModel, SimulatedAnnotations, simulate_annotations
from ._presets import sparse_overlap_settings
from ._runner import PAPER_COVERAGES, PAPER_DESIGNS, ExperimentResult, ExperimentSetting, run_experiment
from ._subsample import subsample

__all__ = ["SimulatedAnnotations", "LatentClassModel", "simulate_annotations", "subsample", "ExperimentSetting",
           "ExperimentResult", "run_experiment", "sparse_overlap_settings", "PAPER_DESIGNS",
           "PAPER_COVERAGES"]
