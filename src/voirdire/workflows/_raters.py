"""The annotator diagnostics family (private): each annotator against the pool, the contested items, and each
judge's leave-one-out decision without the flagged annotators.

One computation serves ``voirdire raters`` (:func:`diagnose_raters`), ``voirdire validate``'s annotator check
(:func:`check_raters`) and the report's "Annotators" section (:func:`diagnose_annotators`): the same
options and seed give the same numbers in all three (their streams are the annotator check's,
``stream(seed, "validation", "annotators")``, and each judge's leave-one-out is validate's own).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from .._results import Result
from .._scores import REFERENCE_COEFFICIENT
from ..exceptions import VoirdireError
from ._seeds import stream
from ._validate import default_score

__all__ = ["AnnotatorSummary", "RaterDiagnosis", "check_raters", "diagnose_annotators", "diagnose_raters",
           "rater_sensitivity"]

#: The random stream of the annotator check (validate, raters and the report read the same draws).
ANNOTATOR_STREAM = ("validation", "annotators")


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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RaterDiagnosis(Result):
    """The result of :func:`diagnose_raters` (``voirdire raters``).

    ``raters`` (:class:`~voirdire.diagnostics.RaterDiagnosticsResult`), ``items``
    (:class:`~voirdire.diagnostics.ItemDiagnosticsResult`, None when ``top`` is 0), ``top`` (contested
    items shown) and ``sensitivity`` (one :class:`~voirdire.diagnostics.LooSensitivityResult` per judge, when an
    annotator of the default pool is flagged).
    """

    raters: Any
    items: Any
    top: int
    sensitivity: tuple[Any, ...]

    def to_dict(self) -> dict[str, Any]:
        """``raters``, the ``top`` contested ``items`` (records) and each judge's ``sensitivity``."""
        from .._results import to_jsonable

        return to_jsonable({
            "raters": self.raters.to_dict(),
            "items": None if self.items is None else self.items.to_frame().head(self.top).to_dict(orient="records"),
            "sensitivity": [{"judge": x.judge, "excluded": list(x.excluded),
                             "won_mainly_against_excluded": x.won_mainly_against_excluded, "reasons": list(x.reasons),
                             "sentence": x.sentence, "variants": x.to_frame().to_dict(orient="records")}
                            for x in self.sensitivity]})

    def to_frame(self) -> Any:
        """One row per annotator (:meth:`~voirdire.diagnostics.RaterDiagnosticsResult.to_frame`)."""
        return self.raters.to_frame()


def check_raters(table: Any, *, raters: Sequence[str] | None = None, score: str | None = None,
                 coefficient: str = REFERENCE_COEFFICIENT, margin: float = 0.05, significance_level: float = 0.05,
                 min_items: int = 10, confidence_level: float = 0.95, n_resamples: int = 2000,
                 competence: bool = True, seed: int = 0) -> Any:
    """:func:`voirdire.diagnostics.rater_diagnostics` on the annotator check's stream of ``seed``; ``score``
    defaults to validate's (:func:`default_score`), so S(k;pool) is the bar validate's judges must clear."""
    from ..diagnostics import rater_diagnostics

    return rater_diagnostics(table, raters=raters, score=score or default_score(table), coefficient=coefficient,
                             margin=margin, significance_level=significance_level, min_items=min_items,
                             confidence_level=confidence_level, n_resamples=n_resamples, competence=competence,
                             rng=stream(seed, *ANNOTATOR_STREAM))


def rater_sensitivity(table: Any, judge: str, diagnostics: Any, *, loo: Any = None, score: str | None = None,
                      epsilon: float = 0.05, min_items: int = 10, n_resamples: int = 2000, seed: int = 0) -> Any:
    """A judge's leave-one-out decision again without the flagged annotators
    (:func:`voirdire.diagnostics.loo_sensitivity`), from validate's own leave-one-out of the judge (``loo``, or
    recomputed on validate's stream) and the annotator check's stream for the judge."""
    from ..diagnostics import loo_sensitivity
    from ..validation import leave_one_out

    if loo is None:
        loo = leave_one_out(table, judge, score=score or default_score(table),  # type: ignore[arg-type]
                            epsilon=epsilon, min_items=min_items,
                            n_resamples=n_resamples, rng=stream(seed, "validation", "leave_one_out", judge))
    return loo_sensitivity(table, judge, diagnostics=diagnostics, loo=loo,
                           rng=stream(seed, *ANNOTATOR_STREAM, judge))


def diagnose_raters(table: Any, *, raters: Sequence[str] | None = None, score: str | None = None,
                    coefficient: str = REFERENCE_COEFFICIENT, margin: float = 0.05, significance_level: float = 0.05,
                    min_items: int = 10, confidence_level: float = 0.95, n_resamples: int = 2000,
                    competence: bool = True, top: int = 10, sensitivity: bool = True, seed: int = 0) -> RaterDiagnosis:
    """Which annotators drag agreement down, and which items are contested (``voirdire raters``).

    Parameters
    ----------
    table : AnnotationTable
    raters : sequence of str, optional
        The pool (default: every human).
    score : {"agreement", "alpha", "kappa", "ac1"}, optional
        S(k;pool); default validate's (:func:`default_score`).
    coefficient, margin, significance_level, min_items, confidence_level, n_resamples, competence
        As :func:`voirdire.diagnostics.rater_diagnostics`.
    top : int, default 10
        Contested items to rank (0: none).
    sensitivity : bool, default True
        When an annotator of the default pool is flagged, each judge's leave-one-out decision without them.
    seed : int, default 0
        The annotator check's streams are derived from it (the numbers equal validate's and the report's).
    """
    from ..diagnostics import item_diagnostics
    from ..exceptions import InvalidParameterError

    if top < 0:
        raise InvalidParameterError(f"--top must be >= 0. Got {top}.")
    pool = list(raters) if raters else None
    d = check_raters(table, raters=pool, score=score, coefficient=coefficient, margin=margin,
                     significance_level=significance_level, min_items=min_items, confidence_level=confidence_level,
                     n_resamples=n_resamples, competence=competence, seed=seed)
    items = item_diagnostics(table, raters=pool) if top else None
    sens: tuple[Any, ...] = ()
    if sensitivity and d.flagged.any() and table.judges and pool is None:
        sens = tuple(rater_sensitivity(table, j, d, score=d.score, min_items=min_items, n_resamples=n_resamples,
                                       seed=seed) for j in table.judges)
    return RaterDiagnosis(raters=d, items=items, top=top, sensitivity=sens)


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
        used (one computation for both), else they are computed here on the same streams of ``seed``.
    confidence_level, n_resamples, seed, epsilon
        As the report's.
    """
    from ..diagnostics import item_diagnostics

    humans = [str(h) for h in table.humans]
    d = None if validation is None else validation.annotators
    if d is None:
        d = check_raters(table, raters=humans, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)
    sens: dict[str, Any] = {}
    errors: dict[str, str] = {}
    if d.flagged_raters and judges:
        computed = {} if validation is None else {e.judge: e.sensitivity for e in validation.judges}
        for j in judges:
            s = computed.get(j)
            if s is None:
                try:
                    s = rater_sensitivity(table, j, d, score=d.score, epsilon=epsilon, n_resamples=n_resamples,
                                          seed=seed)
                except VoirdireError as exc:
                    errors[j] = str(exc)
                    continue
            sens[j] = s
    items = item_diagnostics(table, raters=humans)
    return AnnotatorSummary(raters=d, sensitivity=sens, sensitivity_errors=errors, items=items)
