"""Annotator diagnostics: who drags agreement down, which items are contested.

:func:`rater_diagnostics` sets each rater against the rest of the pool (leave-one-out agreement,
the pool's coefficient without the rater, latent-class competence, an outlier flag with a
stated, multiplicity-controlled rule). See ``docs/diagnostics.md``.
"""

from ._raters import POOL_COEFFICIENTS, RaterDiagnosticsResult, rater_diagnostics

__all__ = ["POOL_COEFFICIENTS", "RaterDiagnosticsResult", "rater_diagnostics"]
