"""``plan_validation``: everything ``voirdire plan`` shows for a pilot, in one result (private).

Per judge: the verdict and advice of :func:`validate_judges` (the one decision), the running anytime-valid
planner (:func:`voirdire.design.plan_judges`), the fixed-sample certification size
(:func:`~voirdire.design.plan_certification`, or why no budget certifies it); with several judges the
ranking size (:func:`~voirdire.design.plan_ranking`); with budgets, the simulated decision
(:func:`~voirdire.design.plan_by_simulation`); and the overlap they rest on (:func:`design_overview`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from .._results import Result
from ..exceptions import InfeasiblePlanError
from ._advice import judge_verdicts
from ._design import design_overview

__all__ = ["BatchCheck", "BatchDraw", "PlanRow", "PlanningResult", "check_batch", "draw_batch", "plan_from_moments",
           "plan_validation"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PlanRow(Result):
    """One judge's line of ``voirdire plan``'s answer table, decided here (the renderer only formats it).

    ``running``: the anytime-valid rule's state (``accept``/``reject``, ``on the margin``, ``continue``);
    ``more_state``: what the "more/human" cell says (``"-"`` a verdict more labels will not change,
    ``"settled"`` 0, ``"none"`` no finite number, ``"number"`` ``more`` itself, ``"cannot"`` the items on
    hand cannot give it); ``beside``: the running rule in words (:func:`running_text`).
    """

    judge: str
    decision: str | None
    running: str
    more_state: str
    more: float
    m_cert: float
    eligible: float
    effect_size: float
    beside: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PlanningResult(Result):
    """The composite result of :func:`plan_validation` (``None`` for what was not computed).

    ``n_items``: items on hand (``None`` when planning from given moments); ``rows``: the answer table;
    ``next``: the advice whose batch the "Next:" line suggests (the open judge needing the most; its
    batch passed :func:`check_batch`), ``None`` when no batch passed; ``short``: the advice of open judges
    whose suggested batch the simulation check found short (never suggested).
    """

    overview: Any
    validation: Any
    answers: Any
    certification: dict[str, Any]
    infeasible: dict[str, str]
    ranking: Any
    simulation: Any
    n_items: int | None = None
    rows: tuple[PlanRow, ...] = ()
    next: Any = None
    short: tuple[Any, ...] = ()


def _rows(answers: Any, validation: Any, n_items: int) -> tuple[PlanRow, ...]:
    """The answer table: the verdict, the running rule, and the further comparisons only when the items on
    hand can give them."""
    import math

    from ._advice import running_text

    verdicts = {} if validation is None else {j.judge: j for j in validation.judges}
    out = []
    for p in answers.plans:
        e = verdicts.get(p.judge)
        adv = None if e is None else e.advice
        if adv is None:
            cap = float(n_items)
        elif adv.status in ("label_more", "needs_new_items"):
            cap = float(adv.capacity)
        else:
            cap = float(n_items - p.eligible)
        if (e is not None and e.verdict.decision in ("accept", "reject")) or (adv is not None
                                                                              and adv.status == "not_labels"):
            state = "-"
        elif p.status == "settled":
            state = "settled"
        elif not math.isfinite(p.more_per_human):
            state = "none"
        else:
            state = "number" if p.more_per_human <= cap else "cannot"
        running = p.decision if p.status == "settled" else ("on the margin" if p.status == "boundary" else "continue")
        beside = running_text(p.decision if p.status == "settled" else "continue",
                              p.more_per_human if p.status == "open" else float("inf"), None,
                              n_items - p.eligible, n_items)
        out.append(PlanRow(judge=p.judge, decision=None if e is None else e.verdict.decision, running=running,
                           more_state=state, more=float(p.more_per_human), m_cert=float(p.m_cert),
                           eligible=float(p.eligible), effect_size=float(p.effect_size), beside=beside))
    return tuple(out)


def plan_from_moments(*, sigma0: float, mu_d: float | None = None, delta_min: float | None = None,
                      n_judges: int | None = None, epsilon: float = 0.05,
                      significance_level: float = 0.05) -> PlanningResult:
    """``voirdire plan`` without a pilot: the certification size from given moments (``mu_d``, ``sigma0``)
    and, with ``delta_min`` and ``n_judges``, the ranking size."""
    from ..design import plan_certification, plan_ranking

    cert = {} if mu_d is None else {"(given moments)": plan_certification(
        mu_d=mu_d, sigma0=sigma0, epsilon=epsilon, significance_level=significance_level)}
    ranking = None if delta_min is None else plan_ranking(sigma0=sigma0, delta_min=delta_min, n_judges=n_judges,
                                                          significance_level=significance_level)
    return PlanningResult(overview=None, validation=None, answers=None, certification=cert, infeasible={},
                          ranking=ranking, simulation=None)


def plan_validation(table: Any, judges: Sequence[str], *, epsilon: float = 0.05, significance_level: float = 0.05,
                    score: str = "agreement", seed: int = 0, n_resamples: int = 2000,
                    budgets: Sequence[int] = (), design: str = "random", fr_target: float = 0.10,
                    fa_target: float = 0.10, n_repetitions: int = 200, n_jobs: int = 1,
                    progress: Callable[[int, int], None] | None = None) -> PlanningResult:
    """The verdicts, the planners' answers and (with ``budgets``) the simulated decision for a pilot table.

    ``score`` is the certification's score (the anytime-valid planner runs on observed agreement only, so
    ``answers`` is ``None`` for another score). ``seed`` serves the verdicts (as ``validate --seed``), the
    planners and the simulation.
    """
    from ..design import plan_by_simulation, plan_certification, plan_judges, plan_ranking

    judges = list(dict.fromkeys(judges))
    overview = design_overview(table, judges)
    validation = judge_verdicts(table, judges, seed=seed, epsilon=epsilon, n_resamples=n_resamples)
    answers = (plan_judges(table, judges, epsilon=epsilon, significance_level=significance_level, rng=seed)
               if score == "agreement" else None)
    cert: dict[str, Any] = {}
    infeasible: dict[str, str] = {}
    for j in judges:
        try:
            cert[j] = plan_certification(table, judge=j, epsilon=epsilon, significance_level=significance_level,
                                         score=score, rng=seed)
        except InfeasiblePlanError as exc:
            infeasible[j] = str(exc)
    ranking = None
    if len(judges) >= 2:
        try:
            ranking = plan_ranking(table, judges=judges, significance_level=significance_level)
        except InfeasiblePlanError as exc:
            infeasible["ranking"] = str(exc)
    simulation = None
    if budgets:
        simulation = plan_by_simulation(table, budgets=list(budgets), judges=judges, epsilon=epsilon, design=design,
                                        fr_target=fr_target, fa_target=fa_target, n_repetitions=n_repetitions,
                                        rng=seed, n_jobs=n_jobs, progress=progress)
    n_items = int(overview.overlap.n_items)
    advices = [] if validation is None else [e.advice for e in validation.judges if e.advice is not None]
    batches = [a for a in advices if a.command() is not None]  # each passed check_batch (see advise)
    short = tuple(a for a in advices if a.command() is None and a.check is not None and not a.check.enough)
    nxt = max(batches, key=lambda a: a.n_per_rater or 0) if batches else None
    return PlanningResult(overview=overview, validation=validation, answers=answers, certification=cert,
                          infeasible=infeasible, ranking=ranking, simulation=simulation, n_items=n_items,
                          rows=() if answers is None else _rows(answers, validation, n_items), next=nxt,
                          short=short)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class BatchCheck(Result):
    """What simulating a suggested batch on the table's structure found (:func:`check_batch`).

    Attributes
    ----------
    judge, design : str
    n_per_rater, seed : int
        The batch: ``voirdire assign FILE --design DESIGN --n-per-rater N --seed S`` draws exactly it.
    need : int
        New comparisons per open held-out human the rule needs (a comparison: an item labelled by the
        judge, the held-out human and another human).
    humans : tuple of str
        The open held-out humans the batch must serve.
    mean_gain : tuple of float
        Per served human, the new comparisons over the simulated runs (mean).
    fewest : float
        The smallest of ``mean_gain``: "about N comparisons per human".
    share_enough : float
        Share of runs in which every served human gets at least ``need``.
    n_runs : int
        Simulated runs: the drawn batch, each assigned (human, item) labelled with that human's observed
        rate of substantive labels (an abstention makes no comparison).
    enough : bool
        ``fewest >= need``.
    """

    judge: str
    design: str
    n_per_rater: int
    seed: int
    need: int
    humans: tuple[str, ...]
    mean_gain: tuple[float, ...]
    fewest: float
    share_enough: float
    n_runs: int
    enough: bool


def check_batch(table: Any, judge: str, *, design: str, n_per_rater: int, seed: int, need: int,
                served: Sequence[str] | None = None, n_runs: int = 200) -> BatchCheck | None:
    """Simulate the batch ``voirdire assign --design D --n-per-rater N --seed S`` would write on ``table``.

    The batch is drawn exactly as ``assign`` draws it (:func:`voirdire.design.allocate`, same seed); each
    run then lets every assigned human label each of their items with that human's observed rate of
    substantive labels (seeded stream ``("planning", "batch_check", judge, design)``), and counts the new
    comparisons each held-out human in ``served`` (default: every human) gets. ``None`` when the design
    cannot be drawn on this table (too few open items).

    Examples
    --------
    >>> from voirdire.datasets import load_hanna
    >>> t = load_hanna(criterion="Coherence")
    >>> c = check_batch(t, t.judges[0], design="strat", n_per_rater=5, seed=0, need=5)
    >>> c is None or c.n_runs == 200
    True
    """
    import numpy as np

    from ..design import allocate
    from ..exceptions import InfeasiblePlanError, InvalidParameterError
    from ._seeds import stream

    try:
        a = allocate(table, design=design, n_per_rater=int(n_per_rater), rng=int(seed))
    except (InfeasiblePlanError, InvalidParameterError):
        return None
    d = table.dense()
    labelled = (d >= 0) & (d < table.n_categories)
    hidx = np.asarray(table.human_idx, dtype=np.int64)
    h, j = labelled[:, hidx], labelled[:, table.rater_index(judge)]
    rows = (d[:, hidx] >= 0).sum(axis=0)
    rate = np.where(rows > 0, h.sum(axis=0) / np.maximum(rows, 1), 1.0)  # a human's share of substantive labels
    humans = [str(x) for x in table.humans]
    hpos = {x: k for k, x in enumerate(humans)}
    ipos = {str(x): k for k, x in enumerate(table.items)}
    pairs = [(ipos[str(it)], hpos[str(r)]) for r, it in zip(a.rater, a.item) if str(r) in hpos and str(it) in ipos]
    served_pos = [hpos[s] for s in (served or humans) if s in hpos] or list(range(len(humans)))
    touched = sorted({i for i, _ in pairs})
    rng = stream(seed, "planning", "batch_check", judge, design)
    if not pairs:
        gains = np.zeros((n_runs, len(humans)))
    else:
        sub = h[touched]                                           # items x humans before the batch
        where = {i: k for k, i in enumerate(touched)}
        ii = np.array([where[i] for i, _ in pairs])
        hh = np.array([k for _, k in pairs])
        done = rng.random((n_runs, len(pairs))) < rate[hh]       # which assigned labels come back substantive
        after = np.repeat(sub[None], n_runs, axis=0)
        runs = np.repeat(np.arange(n_runs)[:, None], len(pairs), axis=1)
        after[runs[done], ii[None, :].repeat(n_runs, 0)[done], hh[None, :].repeat(n_runs, 0)[done]] = True
        jt = j[touched]

        def eligible(m: Any) -> Any:  # comparisons per held-out human on the touched items
            return (m & (m.sum(axis=-1, keepdims=True) >= 2) & jt[..., None]).sum(axis=-2)

        gains = eligible(after) - eligible(sub)[None, :]
    g = gains[:, served_pos].astype(float)
    mean = g.mean(axis=0)
    fewest = float(mean.min()) if mean.size else 0.0
    return BatchCheck(judge=str(judge), design=design, n_per_rater=int(n_per_rater), seed=int(seed), need=int(need),
                      humans=tuple(humans[k] for k in served_pos), mean_gain=tuple(float(x) for x in mean),
                      fewest=fewest, share_enough=float((g >= need).all(axis=1).mean()), n_runs=int(n_runs),
                      enough=bool(fewest >= need))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class BatchDraw(Result):
    """The composite result of :func:`draw_batch`: the assignments (:class:`voirdire.design.AssignmentResult`),
    the items they name and how many of them carry the content an annotation tool shows (``None`` without
    ``item_data``)."""

    assignment: Any
    n_items: int
    n_with_content: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"assignment": self.assignment.manifest(), "n_items": self.n_items,
                "n_with_content": self.n_with_content}


def draw_batch(table: Any, *, design: str = "strat", n_per_rater: int, raters: Sequence[str] | None = None,
               primary: str | None = None, seed: int | None = None,
               item_data: dict[str, Any] | None = None) -> BatchDraw:
    """The next round's assignments, as ``voirdire assign`` draws them (:func:`voirdire.design.allocate`; a
    ``None`` seed is drawn and recorded), with the count of assigned items whose content ``item_data``
    holds (the text a Label Studio or Argilla task shows)."""
    from ..design import allocate

    res = allocate(table, design=design, n_per_rater=n_per_rater, raters=list(raters) if raters else None,
                   primary=primary, rng=seed)
    items = list(dict.fromkeys(str(i) for i in res.item))
    with_content = None if item_data is None else sum(1 for i in items if item_data.get(i))
    return BatchDraw(assignment=res, n_items=len(items), n_with_content=with_content)
