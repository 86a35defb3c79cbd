"""What to do next for one judge, from its verdict (private): advice that can be acted on.

Every view of a judge (``validate``, ``plan``, ``watch``, ``study status`` and the report) shows the
one verdict of :func:`voirdire.workflows.validate_judges` and, beside it, this advice. The rules:

* a judge whose verdict is accept or reject is **settled**: no more labels, no "Next:" command;
* an inconclusive verdict that more labels cannot change says so and why (``not_labels``): the
  humans' own agreement is the limit, the two methods are both stable and disagree (their margins
  differ), or the judge sits on the margin (no finite budget);
* otherwise the planner's number of further comparisons per held-out human (a comparison is an item
  labelled by the judge, the held-out human and another human) is turned into items: when the items
  on hand can still give that many comparisons (``label_more``) the advice is a batch design
  (``voirdire assign``) that was drawn and checked to create them; when they cannot
  (``needs_new_items``) it says "cannot be settled with the N items you have" and how many new items,
  each labelled by the judge and every human, would be needed. A planning number larger than the
  items on hand is never printed as a per-human count.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._results import Result

__all__ = ["Advice", "advise", "comparison_capacity", "need_text", "running_text", "judge_verdicts", "ADVICE_STATUSES"]

#: Every advice status, with what it means.
ADVICE_STATUSES: dict[str, str] = {
    "settled": "the verdict is accept or reject: no more labels are needed for this judge",
    "not_labels": "the verdict is inconclusive for a reason more labels of this judge cannot change",
    "label_more": "label more of the items on hand; the design given was drawn and checked to create the overlap",
    "needs_new_items": "the items on hand cannot give the comparisons needed: new items are needed",
}

#: the designs tried, in order, for the next batch (both give every assigned item another human's label
#: when one exists: strat through the primary or, without one, through overlap-first drawing; panel by
#: sharing one set of items among all assignees)
NEXT_DESIGNS = ("strat", "panel")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Advice(Result):
    """What would settle one judge's verdict, in terms the user can act on.

    Attributes
    ----------
    judge : str
    status : {"settled", "not_labels", "label_more", "needs_new_items"}
        See :data:`ADVICE_STATUSES`.
    decision : str
        The verdict's decision (accept, reject, inconclusive): the advice never replaces it.
    more_comparisons : float
        Further comparisons per held-out human the planner expects (``nan`` when none applies).
    by : str or None
        Which rule the number comes from (``"anytime-valid leave-one-out"``, ``"anytime-valid alt-test"``,
        ``"alt-test minimum"``).
    n_items : int
        Items on hand that the judge labelled.
    capacity : int
        Further comparisons the items on hand can still give the open held-out human with the fewest
        (items the judge labelled that are not yet a comparison for that human; every human when the
        rule does not say which are open).
    more_items : int
        New items needed beyond those on hand, each labelled by the judge and ``n_humans`` humans
        (0 unless ``needs_new_items``).
    n_humans : int
    design, n_per_rater, seed : the checked next batch (``voirdire assign FILE --design D --n-per-rater N
        --seed S``), or ``None``.
    min_gain : int or None
        The fewest new comparisons (mean over the simulated runs, rounded down) a held-out human gets from
        that batch.
    sentence : str
    check : BatchCheck or None
        What simulating the batch found (:func:`voirdire.workflows.check_batch`); a batch whose check
        falls short is never suggested.
    """

    judge: str
    status: str
    decision: str
    more_comparisons: float
    by: str | None
    n_items: int
    capacity: int
    more_items: int
    n_humans: int
    design: str | None
    n_per_rater: int | None
    seed: int | None
    min_gain: int | None
    sentence: str
    check: Any = None

    def command(self, file: str = "FILE") -> str | None:
        """The ``voirdire assign`` command of the checked batch (``None`` when there is none)."""
        if self.design is None or self.n_per_rater is None:
            return None
        return (f"voirdire assign {file} --design {self.design} --n-per-rater {self.n_per_rater} "
                f"--seed {self.seed} -o next_batch.csv")


def _masks(table: Any, judge: str) -> tuple[np.ndarray, np.ndarray]:
    """(judge labelled, items x humans labelled): substantive labels only (abstentions do not compare)."""
    d = table.dense()
    lab = (d >= 0) & (d < table.n_categories)
    return lab[:, table.rater_index(judge)], lab[:, np.asarray(table.human_idx, dtype=np.int64)]


def _eligible(j: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Comparisons per held-out human: items labelled by the judge, that human and another human."""
    return (h & (h.sum(axis=1) >= 2)[:, None] & j[:, None]).sum(axis=0)


def comparison_capacity(table: Any, judge: str) -> tuple[int, np.ndarray, np.ndarray]:
    """``(items the judge labelled, comparisons per human now, further comparisons the items on hand can
    still give each human)``."""
    j, h = _masks(table, judge)
    el = _eligible(j, h)
    return int(j.sum()), el, int(j.sum()) - el


def need_text(more: float, capacity: float, n_items: int, n_humans: int, unit: str = "comparisons") -> str:
    """A planning number as it may be printed: itself when the items on hand can give it, else
    "cannot be settled with the N items you have: needs about M more items labelled by K humans"."""
    if not math.isfinite(more):
        return "no finite number"
    more = math.ceil(more)
    if more <= capacity:
        return f"{more:,}"
    extra = math.ceil(more - max(capacity, 0))
    return (f"cannot be settled with the {n_items:,} items you have: needs about {extra:,} more items labelled "
            f"by {n_humans} humans")


def _check_batch(table: Any, judge: str, n: int, seed: int, served: list[int]) -> Any:
    """The first design of :data:`NEXT_DESIGNS` whose batch, checked by simulation
    (:func:`voirdire.workflows.check_batch`: drawn as ``assign`` draws it, each human labelling at their observed
    rate), gives every held-out human in ``served`` (positions among the humans) about ``n`` new comparisons;
    when humans abstain, a larger batch of that design is tried too. Else the first check that fell short
    (``enough`` false), or ``None`` when no design could be drawn."""
    from ._planning import check_batch

    humans = [str(x) for x in table.humans]
    names = [humans[k] for k in served]
    short = None
    for design in NEXT_DESIGNS:
        c = check_batch(table, judge, design=design, n_per_rater=n, seed=seed, need=n, served=names)
        if c is not None and not c.enough and c.fewest > 0:  # abstentions: ask for more items per assignee
            bigger = check_batch(table, judge, design=design, n_per_rater=math.ceil(n * n / c.fewest), seed=seed,
                                 need=n, served=names)
            c = bigger if bigger is not None and bigger.enough else c
        if c is not None and c.enough:
            return c
        short = short or c
    return short


def advise(table: Any, judge: str, verdict: Any, *, plan: Any = None, alt_more: float | None = None,
           min_items_per_human: int = 30, epsilon: float | None = None, alt_test_epsilon: float | None = None,
           seed: int = 0) -> Advice:
    """The advice for one judge from its combined verdict (see the module doc).

    ``plan`` is the planner's answer (:class:`voirdire.design.JudgePlan`, leave-one-out, anytime-valid)
    and ``alt_more`` the anytime-valid alt-test's expected further comparisons, each used only when
    that method is what keeps the verdict open.
    """
    n_items, _, cap = comparison_capacity(table, judge)
    capacity = int(cap.min()) if cap.size else 0
    k = len(table.humans)
    base = dict(judge=judge, decision=verdict.decision, n_items=n_items, capacity=capacity, n_humans=k,
                more_items=0, design=None, n_per_rater=None, seed=None, min_gain=None)
    if verdict.decision in ("accept", "reject"):
        return Advice(status="settled", more_comparisons=0.0, by=None,
                      sentence=f"settled: the verdict is {verdict.decision}; no more labels are needed for this judge",
                      **base)  # type: ignore[arg-type]
    codes = {r.code for r in verdict.reasons if r.blocking}
    ref = [r for r in verdict.reasons if r.blocking and r.method == "reference"]
    if ref:
        return Advice(status="not_labels", more_comparisons=math.nan, by=None, **base,  # type: ignore[arg-type]
                      sentence="more labels of this judge will not settle it: the humans' own agreement is the limit; "
                               "revise the guidelines or adjudicate the contested items first (voirdire raters)")
    if "methods_disagree" in codes:
        margins = ""
        if epsilon is not None and alt_test_epsilon is not None:
            margins = (f" (leave-one-out: pooled agreement within {epsilon:g} of each human; alt-test: item by item "
                       f"within {alt_test_epsilon:g})")
        weak = any(r.code == "reference_unreliable" for r in verdict.reasons)
        return Advice(status="not_labels", more_comparisons=math.nan, by=None, **base,  # type: ignore[arg-type]
                      sentence="more labels will not settle it: both methods are stable and disagree because their "
                               f"margins differ{margins}; choose the margin that fits how the judge will be used "
                               "and read that method's decision"
                               + ("; the humans' own agreement is below the floor, so only a reject can stand"
                                  if weak else ""))
    ran = {r.method for r in verdict.reasons if r.method in ("leave_one_out", "alt_test")}
    if any(r.code == "reference_unreliable" for r in verdict.reasons) and ran and ran <= {
            r.method for r in verdict.reasons if r.code == "test_accepts"}:
        # every test accepts and the humans' agreement caps an accept at inconclusive: labels of this judge
        # can only make the accept more certain, which still cannot stand
        return Advice(status="not_labels", more_comparisons=math.nan, by=None, **base,  # type: ignore[arg-type]
                      sentence="more labels of this judge will not settle it: every test accepts it, but the humans' "
                               "own agreement is below the floor, so an accept cannot stand; revise the guidelines "
                               "or adjudicate the contested items first (voirdire raters)")
    loo_open = any(r.method == "leave_one_out" and r.blocking for r in verdict.reasons) or "method_inconclusive" in codes
    alt_open = any(r.method == "alt_test" and r.blocking for r in verdict.reasons)
    needs: list[tuple[float, str]] = []
    if loo_open and plan is not None:
        if plan.status == "boundary":
            return Advice(status="not_labels", more_comparisons=math.inf, by="anytime-valid leave-one-out",
                          sentence=plan.reason, **base)  # type: ignore[arg-type]
        if plan.status == "open" and math.isfinite(plan.more_per_human):
            needs.append((float(plan.more_per_human), "anytime-valid leave-one-out"))
    if alt_open:
        if alt_more is not None and math.isfinite(alt_more) and alt_more > 0:
            needs.append((float(alt_more), "anytime-valid alt-test"))
        elif any(r.code in ("too_few_humans", "too_few_items") and r.method == "alt_test" for r in verdict.reasons):
            _, el, _ = comparison_capacity(table, judge)
            second = int(np.sort(el)[-2]) if el.size >= 2 else 0
            needs.append((float(max(1, min_items_per_human - second)), "alt-test minimum"))
    if not needs:
        return Advice(status="not_labels", more_comparisons=math.nan, by=None, **base,  # type: ignore[arg-type]
                      sentence="no labelling plan applies: "
                               + ("the anytime-valid leave-one-out rule already says "
                                  f"{plan.decision}, and " if plan is not None and plan.status == "settled" else "")
                               + "the verdict stays open for the reasons above; rerun with more resamples or "
                                 "review them")
    more, by = max(needs)
    need = math.ceil(more)
    humans = [str(x) for x in table.humans]
    served = [humans.index(h) for h in (plan.open_humans if plan is not None and by == "anytime-valid leave-one-out"
                                        else ()) if h in humans] or list(range(len(humans)))
    capacity = int(cap[served].min()) if cap.size else 0
    base["capacity"] = capacity
    if need > capacity:
        extra = need - capacity
        return Advice(status="needs_new_items", more_comparisons=more, by=by,
                      sentence=(f"cannot be settled with the {n_items:,} items you have: needs about {extra:,} more "
                                f"items labelled by the judge and {k} humans (by the {by} rule; the items on hand "
                                f"can give each open held-out human {capacity:,} more comparisons)"),
                      **{**base, "more_items": extra})  # type: ignore[arg-type]
    check = _check_batch(table, judge, need, seed, served)
    if check is None or not check.enough:  # never a suggestion the simulation check fails
        found = ("no assign design drawn here created that overlap" if check is None else
                 f"checked by simulation, a {check.design} batch of {check.n_per_rater:,} items per assignee gives "
                 f"about {math.floor(check.fewest):,} new comparisons per held-out human: not enough")
        return Advice(status="label_more", more_comparisons=more, by=by, check=check,
                      sentence=(f"about {need:,} more comparisons per held-out human (the {by} rule): have each human "
                                f"label about {need:,} of the {n_items:,} items on hand that the judge and another "
                                f"human labelled ({found})"), **base)  # type: ignore[arg-type]
    design, n, gain = check.design, check.n_per_rater, math.floor(check.fewest)
    return Advice(status="label_more", more_comparisons=more, by=by, check=check,
                  sentence=(f"about {need:,} more comparisons per held-out human (the {by} rule): a {design} batch of "
                            f"{n:,} items per assignee (voirdire assign --design {design} --n-per-rater {n} --seed "
                            f"{seed}); checked by simulation, it gives about {gain:,} new comparisons per held-out "
                            "human: enough"),
                  **{**base, "design": design, "n_per_rater": n, "seed": int(seed), "min_gain": gain})


def running_text(decision: str, more: float, direction: str | None, capacity: float, n_items: int,
                 rule: str = "leave-one-out") -> str:
    """The running anytime-valid decision as every view prints it beside the verdict (never instead of it):
    ``"already says reject"``, ``"continue: about 40 more comparisons per open human to accept"``, or
    ``"continue: cannot be settled with the N items you have"`` when the items on hand cannot give them."""
    head = f"the running anytime-valid {rule} rule"
    if decision in ("accept", "reject"):
        return f"{head} already says {decision}"
    if not math.isfinite(more):
        return f"{head} says continue (no finite number of comparisons is expected to settle it)"
    if math.ceil(more) <= capacity:
        return (f"{head} says continue: about {math.ceil(more):,} more comparisons per open human"
                + (f" to {direction}" if direction else ""))
    return f"{head} says continue: it cannot be settled with the {n_items:,} items you have"


def judge_verdicts(table: Any, judges: Any = None, *, seed: int = 0, **options: Any) -> Any:
    """The verdicts of :func:`voirdire.workflows.validate_judges` (its defaults, this seed) for a view that
    shows them beside its own numbers (``plan``, ``watch``, ``study status``): the one decision per judge.

    The analyses' warnings stay in the result's ``notes`` (the view is not the place to repeat them);
    ``None`` when validation cannot run on this table (fewer than two humans, no judge).
    """
    import warnings

    from ..exceptions import VoirdireError
    from ._validate import validate_judges

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return validate_judges(table, judges, seed=seed, **options)
    except VoirdireError:
        return None
