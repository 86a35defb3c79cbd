"""Simulation: synthetic annotations with known truth, sparse designs from full matrices, and the
experiment-grid runner (local processes or Dask) behind the sparse-overlap paper's Tables 1-3.

The engine lives in the shared private layer ``voirdire._simulation`` (the design planner runs it
too); this package publishes it. It never prints; long runs report progress through a ``progress(done, total)`` callback.
"""

from .._simulation import (
    PAPER_COVERAGES,
    PAPER_DESIGNS,
    ExperimentResult,
    ExperimentSetting,
    LatentClassModel,
    SimulatedAnnotations,
    run_experiment,
    simulate_annotations,
    subsample,
)
from ._presets import sparse_overlap_settings

__all__ = ["SimulatedAnnotations", "LatentClassModel", "simulate_annotations", "subsample", "ExperimentSetting",
           "ExperimentResult", "run_experiment", "sparse_overlap_settings", "PAPER_DESIGNS",
           "PAPER_COVERAGES"]
