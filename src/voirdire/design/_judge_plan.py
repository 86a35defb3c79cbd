"""One planning answer per judge: settled, how many more comparisons, or no finite budget (and why)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri  # the normal cdf / quantile scipy.stats.norm calls (no scipy.stats import: ~1 s)

from .._results import Result
from ..data import AnnotationTable
from ..exceptions import InfeasiblePlanError, InvalidParameterError
from ..validation import validate_sequential
from ._planning import plan_certification

__all__ = ["JudgePlan", "JudgePlanResult", "plan_judges"]

#: A closed-form size above this many times the items in the table counts as "no finite budget".
BOUNDARY_FACTOR = 100


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class JudgePlan(Result):
    """The planning answer for one judge.

    ``status``: ``settled`` (the anytime-valid rule has decided: no more labels are needed),
    ``open`` (more comparisons will settle it) or ``boundary`` (the judge sits on the epsilon
    margin: no finite budget is expected to settle it). ``more_per_human``: further comparisons
    (items labelled by the held-out human, the judge and another human) per open human, 0 when
    settled, ``inf`` on the boundary; ``method`` says which rule produced it. ``m_cert`` /
    ``eligible``: the closed-form fixed-sample size and the eligible items per held-out human now
    (median over humans). ``effect_size``: ``(mu_d + epsilon) / sigma0``. ``open_humans``: the held-out
    humans the anytime-valid rule has neither won nor lost against yet (whom more comparisons serve).
    """

    judge: str
    status: str
    decision: str
    more_per_human: float
    method: str
    m_cert: float
    eligible: float
    margin: float
    effect_size: float
    reason: str
    open_humans: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class JudgePlanResult(Result):
    """:func:`plan_judges`: one :class:`JudgePlan` per judge."""

    epsilon: float
    significance_level: float
    q: float
    plans: tuple[JudgePlan, ...]

    def to_frame(self) -> pd.DataFrame:
        """One row per judge."""
        return pd.DataFrame([{f.name: getattr(p, f.name) for f in dataclasses.fields(p)} for p in self.plans])

    def plan(self, judge: str) -> JudgePlan:
        """The plan of one judge."""
        for p in self.plans:
            if p.judge == judge:
                return p
        raise InvalidParameterError(f"No plan for judge {judge!r}; planned: {[p.judge for p in self.plans]}.")


def plan_judges(table: AnnotationTable, judges: Sequence[str] | None = None, *, epsilon: float = 0.05,
                significance_level: float = 0.05, q: float = 0.05, rounds: Any = None,
                rng: int | np.random.Generator | None = 0) -> JudgePlanResult:
    r"""How many more overlapping labels each judge needs, one answer per judge (leave-one-out rule).

    For each judge, in this order:

    1. **Settled**: if the anytime-valid sequential rule (:func:`voirdire.validation.validate_sequential`,
       leave-one-out, e-BH at ``q``) has already accepted or rejected on the labels so far, no more
       labels are needed, whatever the closed form says.
    2. **Boundary**: if the judge's estimated margin ``mu_d + epsilon`` is so close to 0 that the
       closed-form size exceeds ``BOUNDARY_FACTOR`` times the items in the table (or is undefined),
       no finite budget is expected to settle it; the effect size ``(mu_d + epsilon) / sigma0`` says
       how close.
    3. **Open**: the number is the sequential rule's expected further comparisons per open human at
       the current estimates (``method = "sequential expectation"``). The closed form
       ``m*_cert = z^2 sigma0^2 / (mu_d + epsilon)^2`` (sized to reject when the margin is
       negative) is reported next to it as ``m_cert``; it is smaller because it is the size at which
       the plug-in rule errs with probability a/2 against this one estimate, with no guarantee at the
       margin and none under repeated looks. The number is a forecast at the current estimates, not a
       bound: for judges clearly off the margin the rule then took about the forecast (median 0.92x),
       for judges within a few hundredths of it 3-6x more (``bench/sequential.md``).

    ``voirdire plan --budget`` (simulation) answers another question: the false-reject and false-accept
    rates of a design for hypothetical judges at ``d = 0`` and ``d = -2 epsilon``, not for this judge.

    Parameters
    ----------
    table : AnnotationTable
        The labels so far.
    judges : sequence of str, optional
        Default: every judge of the table.
    epsilon, significance_level, q : float
        The rule's tolerance, the closed form's a, the sequential rule's e-BH level.
    rounds : optional
        The round of each label (see :func:`validate_sequential`); default: all labels in one look.
    rng : int, Generator or None

    Returns
    -------
    JudgePlanResult

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> r = plan_judges(t, t.judges[:2])
    >>> [p.status in ("settled", "open", "boundary") for p in r.plans]
    [True, True]
    """
    names = list(table.judges) if judges is None else list(dict.fromkeys(judges))
    if not names:
        raise InvalidParameterError(f"plan_judges: {table.source} has no judge; name one.")
    rnd = np.zeros(table.n_labels) if rounds is None else rounds
    z = float(ndtri(1 - significance_level / 2))
    plans = []
    for j in names:
        # the decision, the e-values and the expected further comparisons only: not the confidence sequences
        # (a grid of 401 bettors per human, most of the planner's time on a large table, read by nothing here)
        seq = validate_sequential(table, j, rounds=rnd, method="loo", epsilon=epsilon, q=q, rng=rng,
                                  confidence_sequences=False)
        try:
            pc = plan_certification(table, judge=j, epsilon=epsilon, significance_level=significance_level, rng=rng)
            margin, s0, m_cert = pc.margin, pc.sigma0, float(pc.m_star)
            eligible = float(np.nanmedian(pc.eligible_by_human))
        except InfeasiblePlanError:
            # outside the margin: the same moments (mu_d and sigma0 do not depend on epsilon), sized to reject
            pc = plan_certification(table, judge=j, epsilon=0.999, significance_level=significance_level, rng=rng)
            margin, s0 = pc.mu_d + epsilon, pc.sigma0
            m_cert = float(math.ceil(z * z * s0 * s0 / (margin * margin))) if margin != 0 else math.inf
            eligible = float(np.nanmedian(pc.eligible_by_human))
        except InvalidParameterError as exc:
            plans.append(JudgePlan(judge=j, status="open", decision="continue", more_per_human=math.inf,
                                   method="none", m_cert=math.nan, eligible=0.0, margin=math.nan,
                                   effect_size=math.nan, reason=str(exc)))
            continue
        eff = margin / s0 if s0 > 0 else math.nan
        if seq.decision in ("accept", "reject"):
            plans.append(JudgePlan(
                judge=j, status="settled", decision=seq.decision, more_per_human=0.0,
                method="anytime-valid rule", m_cert=m_cert, eligible=eligible, margin=margin, effect_size=eff,
                reason=f"settled: the anytime-valid rule already says {seq.decision} ({seq.reasons[-1]}); no more "
                       f"labels are needed"))
            continue
        more = float(seq.more_items[-1])
        open_h = tuple(str(h) for h, st in zip(seq.humans, seq.status[-1]) if st == "open")
        if not np.isfinite(m_cert) or m_cert > BOUNDARY_FACTOR * table.n_items or not np.isfinite(more):
            plans.append(JudgePlan(
                judge=j, status="boundary", decision="continue", more_per_human=math.inf, method="none",
                m_cert=m_cert, eligible=eligible, margin=margin, effect_size=eff, open_humans=open_h,
                reason=f"no finite budget is expected to settle it: the judge sits on the epsilon margin "
                       f"(mu_d + epsilon = {margin:+.4f}, effect size {eff:+.3f} sigma0; the closed form would need "
                       f"{m_cert:,.0f} items per held-out human). Decide on another ground (a different epsilon, "
                       f"or accept that this judge is as good as the humans within noise)."))
            continue
        plans.append(JudgePlan(
            judge=j, status="open", decision="continue", more_per_human=more, method="sequential expectation",
            m_cert=m_cert, eligible=eligible, margin=margin, effect_size=eff, open_humans=open_h,
            reason=f"about {more:,.0f} more comparisons per open human, at the current estimates, for the anytime-"
                   f"valid rule to {seq.more_direction[-1] or 'decide'} (fixed-sample plug-in m*_cert = {m_cert:,.0f} "
                   f"per human, {eligible:,.0f} eligible now)"))
    return JudgePlanResult(epsilon=epsilon, significance_level=significance_level, q=q, plans=tuple(plans))
