"""Annotator diagnostics: who drags agreement down, which items are contested.

:func:`rater_diagnostics` sets each rater against the rest of the pool (leave-one-out agreement,
the pool's coefficient without the rater, latent-class competence, an outlier flag with a
stated, multiplicity-controlled rule); :func:`item_diagnostics` ranks the items by observed
disagreement beyond what chance predicts, for adjudication; :func:`loo_sensitivity` shows a judge's leave-one-out decision again without
flagged annotators. See ``docs/diagnostics.md``.
"""

from ._items import ItemDiagnosticsResult, item_diagnostics
from ._raters import POOL_COEFFICIENTS, RaterDiagnosticsResult, rater_diagnostics
from ._sensitivity import WON_AGAINST_FLAGGED, LooSensitivityResult, loo_sensitivity

__all__ = ["POOL_COEFFICIENTS", "WON_AGAINST_FLAGGED", "ItemDiagnosticsResult", "LooSensitivityResult",
           "RaterDiagnosticsResult", "item_diagnostics", "loo_sensitivity", "rater_diagnostics"]
