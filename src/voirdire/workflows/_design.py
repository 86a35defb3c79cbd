"""``design_overview``: who labelled what, and what the leave-one-out rule can use (private).

The one call behind ``voirdire overlap``/``plan``'s overlap tables and the report's "Design" section:
:func:`voirdire.design.overlap` with its small-sample warnings kept as notes.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any

from .._results import Result

__all__ = ["DesignOverview", "design_overview"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DesignOverview(Result):
    """The overlap (:class:`voirdire.design.OverlapResult`) and the warnings it raised, as notes."""

    overlap: Any
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"overlap": self.overlap.to_dict(), "notes": list(self.notes)}


def design_overview(table: Any, judges: Sequence[str] | None = None, *, primary: str | None = None,
                    min_eligible: int = 30) -> DesignOverview:
    """Per-rater coverage, items shared by every pair of raters and the eligible items per held-out human
    and judge (:func:`voirdire.design.overlap`), with its small-sample warnings as ``notes``."""
    from ..design import overlap
    from ..exceptions import SmallSampleWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SmallSampleWarning)
        res = overlap(table, judges=list(judges) if judges else None, primary=primary, min_eligible=min_eligible)
    notes = tuple(sorted({str(w.message) for w in caught if issubclass(w.category, SmallSampleWarning)}))
    for w in caught:  # anything else reaches the caller as it was
        if not issubclass(w.category, SmallSampleWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return DesignOverview(overlap=res, notes=notes)
