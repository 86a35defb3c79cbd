"""Is a judge's leave-one-out acceptance won against flagged annotators? (private)"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._results import Result
from ..data import AnnotationTable
from ..exceptions import InvalidParameterError
from ..validation import LeaveOneOutResult, leave_one_out
from ._raters import RaterDiagnosticsResult, rater_diagnostics

__all__ = ["LooSensitivityResult", "loo_sensitivity", "WON_AGAINST_FLAGGED"]

_FUNC = "loo_sensitivity"
#: machine-readable reason code for a verdict that rests on flagged annotators
WON_AGAINST_FLAGGED = "won_mainly_against_flagged_annotators"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class LooSensitivityResult(Result):
    """The leave-one-out decision with and without the excluded (flagged) annotators.

    ``full`` is the validation as run on every human; ``excluded`` the annotators set aside
    (flagged by :func:`rater_diagnostics`, or named by the user) and ``why`` how they were chosen;
    ``omega_others`` / ``decision_others`` count only the wins against the other humans (pool
    unchanged); ``without`` is the validation re-run with the excluded annotators removed from
    the table (from the pool and from the held-out humans), ``None`` when fewer than two humans
    would remain. ``won_mainly_against_excluded`` is True when the judge is accepted with
    everyone but not once the excluded annotators no longer count (either way); ``reasons``
    then holds :data:`WON_AGAINST_FLAGGED`. ``sentence`` says it in words.
    """

    judge: str
    excluded: tuple[str, ...]
    why: str
    full: LeaveOneOutResult
    wins_against_excluded: int
    omega_others: float
    n_evaluated_others: int
    decision_others: str
    without: LeaveOneOutResult | None
    won_mainly_against_excluded: bool
    reasons: tuple[str, ...]
    sentence: str

    def to_frame(self) -> pd.DataFrame:
        """One row per variant: everyone; others only (same pool); excluded removed (re-run)."""
        rows: list[dict[str, Any]] = [
            {"variant": "all humans", "omega": self.full.omega, "decision": self.full.decision,
             "stability": self.full.decision_stability, "n_evaluated": self.full.n_evaluated},
            {"variant": "wins against the others only", "omega": self.omega_others,
             "decision": self.decision_others, "stability": float("nan"), "n_evaluated": self.n_evaluated_others},
        ]
        if self.without is not None:
            rows.append({"variant": "excluded annotators removed", "omega": self.without.omega,
                         "decision": self.without.decision, "stability": self.without.decision_stability,
                         "n_evaluated": self.without.n_evaluated})
        return pd.DataFrame(rows).assign(judge=self.judge)


def loo_sensitivity(table: AnnotationTable, judge: str, *, exclude: Sequence[str] | None = None,
                    diagnostics: RaterDiagnosticsResult | None = None, loo: LeaveOneOutResult | None = None,
                    score: str = "agreement",
                    epsilon: float = 0.05, threshold: float = 0.5, min_items: int = 10, n_resamples: int = 2000,
                    rng: int | np.random.Generator | None = None) -> LooSensitivityResult:
    """Leave-one-human-out validation again without flagged annotators: a sensitivity line.

    The annotators set aside are ``exclude`` when given (the user's choice), else those
    flagged by ``diagnostics`` (or by :func:`rater_diagnostics` run here with the same
    ``score``). Nothing is dropped silently: the result keeps the full validation and shows the
    decision (a) counting only the wins against the other humans, with the pool unchanged,
    and (b) re-run with the excluded annotators removed from the table. An acceptance that
    fails in (a) or (b) was won mainly against the excluded annotators.

    Parameters
    ----------
    table : AnnotationTable
        Labels of the humans and of the judge.
    judge : str
        The judge under test.
    exclude : sequence of str, optional
        Humans to set aside (overrides the flags).
    diagnostics : RaterDiagnosticsResult, optional
        Flags already computed on this table.
    loo : LeaveOneOutResult, optional
        The validation already run on this table for ``judge`` (not run again; the re-run without
        the excluded annotators uses its options).
    score, epsilon, threshold, min_items, n_resamples, rng
        As in :func:`voirdire.validation.leave_one_out`.

    Returns
    -------
    LooSensitivityResult

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> r = loo_sensitivity(t, t.judges[0], exclude=[t.humans[0]], n_resamples=100, rng=0)
    >>> r.excluded == (t.humans[0],), r.without is not None
    (True, True)
    """
    if not isinstance(table, AnnotationTable):
        raise InvalidParameterError(
            f"The 'table' parameter of {_FUNC} must be an AnnotationTable. Got {type(table).__name__} instead.")
    gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    if loo is not None:
        if loo.judge != judge:
            raise InvalidParameterError(f"The 'loo' result given to {_FUNC} is for {loo.judge!r}, not {judge!r}.")
        score, epsilon, threshold, min_items = loo.score, loo.epsilon, loo.threshold, loo.min_items
        n_resamples = loo.n_resamples
    kw = dict(score=score, epsilon=epsilon, threshold=threshold, min_items=min_items, n_resamples=n_resamples)
    full = loo if loo is not None else leave_one_out(table, judge, rng=gen, **kw)  # type: ignore[arg-type]
    if exclude is not None:
        excl = tuple(str(h) for h in ([exclude] if isinstance(exclude, str) else exclude))
        for h in excl:
            if h not in table.humans:
                raise InvalidParameterError(
                    f"Cannot exclude {h!r}: it is not a human in {table.source}. Humans: {list(table.humans)[:12]}.")
        why = "excluded by the user"
    else:
        if diagnostics is None:
            diagnostics = rater_diagnostics(table, score=score, min_items=min_items, competence=False,
                                            n_resamples=max(n_resamples, 200) if n_resamples else 2000, rng=gen)
        excl = diagnostics.flagged_raters
        why = "flagged as outliers by rater_diagnostics"
    ex_mask = np.array([h in excl for h in full.humans])
    ev = np.array([r is None for r in full.reason])
    wins = int(np.nansum(np.where(ev & ex_mask, full.t, 0.0)))
    oth = ev & ~ex_mask
    n_oth = int(oth.sum())
    omega_o = float(np.nansum(full.t[oth]) / n_oth) if n_oth else float("nan")
    if n_oth < 2:
        dec_o = "inconclusive"
    else:
        dec_o = "accept" if omega_o >= threshold - 1e-12 else "reject"
    without = None
    rest = [h for h in table.humans if h not in excl]
    if excl and len(rest) >= 2:
        keep = rest + list(table.judges)
        try:
            without = leave_one_out(table.select(raters=keep), judge, rng=gen, **kw)  # type: ignore[arg-type]
        except InvalidParameterError:
            without = None  # no eligible item once the excluded annotators are gone
    won = bool(excl) and full.decision == "accept" and (
        dec_o != "accept" or (without is not None and without.decision != "accept") or
        (without is None and len(rest) < 2))
    if not excl:
        sentence = f"No annotator is {'excluded' if exclude is not None else 'flagged'}: nothing to set aside."
    else:
        names = ", ".join(excl)
        parts = [f"{judge}: {full.decision} with every human (omega {full.omega:.3f})"]
        parts.append(f"won {wins} of its comparisons against {names} ({why})")
        parts.append(f"counting only the other humans, omega {omega_o:.3f} -> {dec_o}"
                     if math.isfinite(omega_o) else "no other human is evaluated")
        if without is not None:
            parts.append(f"re-run without {names}: omega {without.omega:.3f} -> {without.decision} "
                         f"(stability {without.decision_stability:.3f})")
        else:
            parts.append(f"cannot be re-run without {names} (fewer than two humans, or no shared item, remain)")
        sentence = "; ".join(parts) + "." + (" The acceptance was won mainly against the excluded annotators."
                                             if won else "")
    return LooSensitivityResult(
        judge=full.judge, excluded=excl, why=why, full=full, wins_against_excluded=wins, omega_others=omega_o,
        n_evaluated_others=n_oth, decision_others=dec_o, without=without, won_mainly_against_excluded=won,
        reasons=(WON_AGAINST_FLAGGED,) if won else (), sentence=sentence)
