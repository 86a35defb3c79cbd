"""Annotator diagnostics: who drags agreement down, which items are contested.

:func:`rater_diagnostics` sets each rater against the rest of the pool (leave-one-out agreement,
the pool's coefficient without the rater, latent-class competence, an outlier flag with a
stated, multiplicity-controlled rule); :func:`item_diagnostics` ranks the items by observed
disagreement beyond what chance predicts, for adjudication. See ``docs/diagnostics.md``.
"""

from ._items import ItemDiagnosticsResult, item_diagnostics
from ._raters import POOL_COEFFICIENTS, RaterDiagnosticsResult, rater_diagnostics

__all__ = ["POOL_COEFFICIENTS", "ItemDiagnosticsResult", "RaterDiagnosticsResult", "item_diagnostics",
           "rater_diagnostics"]
