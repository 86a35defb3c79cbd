"""``diagnose_annotators``: each annotator against the pool, contested items, and each judge's leave-one-out
decision without the flagged annotators (private). The report's "Annotators" section renders it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from .._results import Result
from ..exceptions import VoirdireError
from ._validate import default_score

__all__ = ["AnnotatorSummary", "diagnose_annotators"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class AnnotatorSummary(Result):
    """The composite result of :func:`diagnose_annotators`.

    ``raters`` (:func:`voirdire.diagnostics.rater_diagnostics`: the validation workflow's own check when
    one is given, so both show the same flags), ``sensitivity`` (judge -> its
    :func:`~voirdire.diagnostics.loo_sensitivity`, only when an annotator is flagged), ``sensitivity_errors``
    (judge -> why it could not run) and ``items`` (:func:`~voirdire.diagnostics.item_diagnostics`).
    """

    raters: Any
    sensitivity: dict[str, Any]
    sensitivity_errors: dict[str, str]
    items: Any


def diagnose_annotators(table: Any, judges: Sequence[str] = (), *, validation: Any = None,
                        confidence_level: float = 0.95, n_resamples: int = 2000, seed: int = 0,
                        epsilon: float = 0.05) -> AnnotatorSummary:
    """Per-annotator diagnostics, contested items, and the judges' sensitivity to flagged annotators.

    Parameters
    ----------
    table : AnnotationTable
    judges : sequence of str
        Judges whose leave-one-out decision is shown again without the flagged annotators.
    validation : ValidationResult, optional
        A :func:`validate_judges` result of the same table: its annotator check and sensitivity lines are
        used (one computation for both), else they are computed here with ``seed``.
    confidence_level, n_resamples, seed, epsilon
        As the report's.
    """
    from ..diagnostics import item_diagnostics, loo_sensitivity, rater_diagnostics

    humans = [str(h) for h in table.humans]
    score = default_score(table)  # the validation workflow's score, so both read the same S
    d = None if validation is None else validation.annotators
    if d is None:
        d = rater_diagnostics(table, raters=humans, score=score, confidence_level=confidence_level,
                              n_resamples=n_resamples, rng=seed)
    sens: dict[str, Any] = {}
    errors: dict[str, str] = {}
    if d.flagged_raters and judges:
        computed = {} if validation is None else {e.judge: e.sensitivity for e in validation.judges}
        for j in judges:
            s = computed.get(j)
            if s is None:
                try:
                    s = loo_sensitivity(table, j, diagnostics=d, score=score, epsilon=epsilon,
                                        n_resamples=n_resamples, rng=seed)
                except VoirdireError as exc:
                    errors[j] = str(exc)
                    continue
            sens[j] = s
    items = item_diagnostics(table, raters=humans)
    return AnnotatorSummary(raters=d, sensitivity=sens, sensitivity_errors=errors, items=items)
