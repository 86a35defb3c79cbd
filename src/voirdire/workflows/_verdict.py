"""Three-way verdicts with reasons (private): what a careful statistician would sign.

A :class:`Verdict` turns a test's decision into ``accept``, ``reject`` or ``inconclusive`` and
says why, with machine-readable reason codes. The rules (``docs/validation.md``, "Verdicts"):

* a test that could not decide (too few evaluated humans, too few items) is ``inconclusive``;
* a decision whose bootstrap stability is below ``stability_threshold`` (default 0.8) is
  ``inconclusive``: it would come out the other way in more than one resample in five;
* without bootstrap resamples the stability is unknown, and the decision is ``inconclusive``;
* the humans' own agreement (Krippendorff's alpha at the table's level) is the reference: when
  its interval reaches 0 (or it is undefined) the humans are indistinguishable from chance and
  nothing can be validated against them (``inconclusive`` whatever the test says); when its
  estimate is below ``reference_floor`` an ``accept`` becomes ``inconclusive`` (a ``reject``
  stands: a judge that trails weak humans is still worse than they are);
* the combined verdict accepts only when every method that ran accepts, rejects when a method
  rejects and none accepts, and is otherwise ``inconclusive``; when the methods disagree it says
  which and why; an inconclusive verdict that more labels could change carries ``what_would_settle``:
  the one planner's answer (:func:`voirdire.design.plan_judges`), the number ``voirdire plan`` and the
  report show.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal

from .._results import ConfidenceInterval, Result

__all__ = ["Reason", "Verdict", "ReferenceReliability", "REASON_CODES", "TENTATIVE_LINE"]

Decision = Literal["accept", "reject", "inconclusive"]

#: Krippendorff's (2004) line for tentative conclusions; between the floor and it an accept
#: carries the non-blocking reason ``reference_tentative``.
TENTATIVE_LINE = 2 / 3

#: Every reason code a verdict may carry, with what it means.
REASON_CODES: dict[str, str] = {
    "test_accepts": "the test's own decision is accept (omega reaches the threshold)",
    "test_rejects": "the test's own decision is reject",
    "too_few_humans": "fewer than two humans could be evaluated or tested",
    "too_few_items": "the humans share too few items with the judge for the test to run",
    "test_failed": "the test could not run on these data (the message says why)",
    "not_run": "the method was not asked for",
    "unstable": "the decision's bootstrap stability is below the threshold",
    "stability_unknown": "no bootstrap resamples, so the decision's stability is unknown",
    "reference_noise": "the humans' own alpha interval reaches 0: their labels are indistinguishable from chance",
    "reference_undefined": "the humans' own alpha is undefined",
    "reference_unreliable": "the humans' own alpha is below the reference floor",
    "reference_tentative": "the humans' own alpha is above the floor but below 0.667 (tentative)",
    "reference_reliable": "the humans' own alpha reaches 0.667 (a reliable reference; non-blocking, informs only)",
    "methods_disagree": "leave-one-out and the alt-test reach different decisions",
    "method_inconclusive": "one of the methods is inconclusive",
    "what_would_settle": "what would settle an inconclusive verdict (workflows.advise, the same advice in voirdire "
                         "plan, watch, study status and the report): not more labels, a checked batch of the items on "
                         "hand, or 'cannot be settled with the N items you have'; value = further comparisons per "
                         "open held-out human when labels can settle it (none otherwise)",
    "won_mainly_against_flagged_annotators": "the leave-one-out acceptance does not hold once the annotators flagged "
                                             "as outliers no longer count (non-blocking: a sensitivity line)",
    "group_too_small": "with --by: the group has too few items, or too few humans or judge labels, for the tests",
    "group_failed": "with --by: the tests could not run on this group (the message says why)",
    "group_multiplicity": "with --by: accepted in the group alone, but not once the alt-test's p-values are "
                          "corrected over every group (--group-error fwer or fdr)",
    "slice_below_pool": "with --by: the judge is accepted on the pool but rejected in this group, or its advantage "
                        "here is below the rest of the pool's (non-blocking: the worst-slice check)",
}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Reason(Result):
    """One reason behind a verdict.

    ``code`` is one of :data:`REASON_CODES`; ``method`` is ``"leave_one_out"``, ``"alt_test"``,
    ``"reference"`` or ``"combined"``; ``blocking`` is True when the reason decides (or keeps) the
    verdict's outcome and False when it only informs; ``value`` and ``threshold`` are the numbers
    compared (``None`` when there are none); ``message`` is a sentence.
    """

    code: str
    method: str
    blocking: bool
    message: str
    value: float | None = None
    threshold: float | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Verdict(Result):
    """A three-way verdict on one judge, for one method or combined.

    Attributes
    ----------
    judge : str
    method : {"leave_one_out", "alt_test", "combined"}
    decision : {"accept", "reject", "inconclusive"}
        What to act on.
    test_decision : str or None
        What the test alone said (``None`` when it did not run), before stability and reference.
    reasons : tuple of Reason
        Why, blocking reasons first.
    sentence : str
        The verdict in one sentence.
    """

    judge: str
    method: str
    decision: str
    test_decision: str | None
    reasons: tuple[Reason, ...]
    sentence: str

    @property
    def codes(self) -> tuple[str, ...]:
        """The reason codes, in order."""
        return tuple(r.code for r in self.reasons)

    @property
    def shown(self) -> list[str]:
        """The messages the sentence shows: the blocking reasons (else all) and what would settle it."""
        return shown_messages(self.reasons)

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "method": self.method, "decision": self.decision,
                "test_decision": self.test_decision, "reasons": [r.to_dict() for r in self.reasons],
                "sentence": self.sentence}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReferenceReliability(Result):
    """How far the humans agree among themselves: the reference a judge is validated against.

    ``estimate`` and ``ci`` are Krippendorff's alpha over the humans at ``level`` (the table's
    level of measurement), ``n_items``/``n_humans`` what it used; ``floor`` the reference floor;
    ``status`` is ``"noise"`` (interval reaches 0), ``"undefined"``, ``"unreliable"`` (below the
    floor), ``"tentative"`` (floor to 0.667) or ``"reliable"`` (0.667 and above).
    """

    coefficient: str
    level: str
    estimate: float
    ci: ConfidenceInterval
    n_items: int
    n_humans: int
    floor: float
    status: str
    sentence: str


def reference_status(estimate: float, low: float, floor: float) -> str:
    """``noise``, ``undefined``, ``unreliable``, ``tentative`` or ``reliable`` (see the module doc)."""
    if not math.isfinite(estimate):
        return "undefined"
    if not math.isfinite(low) or low <= 0:
        return "noise"
    if estimate < floor:
        return "unreliable"
    if estimate < TENTATIVE_LINE:
        return "tentative"
    return "reliable"


def reference_sentence(status: str, estimate: float, low: float, high: float, level: str, floor: float,
                       method: str | None = None) -> str:
    a = f"alpha ({level}) = {_f(estimate)} [{_f(low)}, {_f(high)}{', ' + method if method else ''}]"
    if status == "undefined":
        return f"The humans' own {a} is undefined: there is no reference to validate against."
    if status == "noise":
        return (f"The humans' own {a}: the interval reaches or lies below 0, so their labels cannot be told from "
                "chance and no judge can be validated against them.")
    if status == "unreliable":
        return (f"The humans do not agree enough to validate against: their own {a} is below the floor "
                f"{_f(floor)}; a judge may be reported, not accepted.")
    if status == "tentative":
        return (f"The humans' own {a} is above the floor {_f(floor)} but below 0.667: conclusions are tentative.")
    return f"The humans' own {a} is at least 0.667: a reliable reference."


def _f(x: float | None, digits: int = 3) -> str:
    """Numbers in verdict sentences (the only numbers formatted outside report/, for the sentence)."""
    if x is None or not math.isfinite(float(x)):
        return "nan"
    s = f"{float(x):.{digits}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else s


_METHOD_NAME = {"leave_one_out": "leave-one-out", "alt_test": "alt-test", "combined": "combined"}
_TEST_NAME = {"leave_one_out": "leave-one-out rule", "alt_test": "alt-test", "combined": "combined verdict"}


def method_outcome(method: str, result: Any, error: str | None, *, stability_threshold: float,
                 ran: bool = True) -> tuple[Decision, list[Reason]]:
    """The outcome of one test after the stability and too-few rules (no reference yet)."""
    name = _TEST_NAME[method]
    if not ran:
        return "inconclusive", [Reason(code="not_run", method=method, blocking=True,
                                       message=f"the {name} was not run")]
    if result is None:
        low = (error or "").lower()
        code = "too_few_items" if ("items" in low and ("fewer" in low or "no item" in low)) else "test_failed"
        return "inconclusive", [Reason(code=code, method=method, blocking=True,
                                       message=f"the {name} could not run: {error}")]
    reasons: list[Reason] = []
    if result.decision == "inconclusive":
        n_eval = getattr(result, "n_evaluated", None)
        return "inconclusive", [Reason(
            code="too_few_humans", method=method, blocking=True, value=None if n_eval is None else float(n_eval),
            threshold=2.0,
            message=(f"only {n_eval} human(s) share at least {getattr(result, 'min_items', '?')} eligible items with "
                     "the judge and another human; two are needed to decide"))]
    n_tested = getattr(result, "n_tested", None)
    if method == "alt_test" and n_tested is not None and n_tested < 2:
        return "inconclusive", [Reason(
            code="too_few_humans", method=method, blocking=True, value=float(n_tested), threshold=2.0,
            message=f"only {n_tested} human has at least {result.min_items_per_human} items to test; two are needed")]
    omega = float(result.omega)
    thr = float(getattr(result, "threshold", 0.5))
    if result.decision == "accept":
        reasons.append(Reason(code="test_accepts", method=method, blocking=False, value=omega, threshold=thr,
                              message=f"the {name} accepts (omega = {_f(omega)} >= {_f(thr, 2)})"))
    else:
        reasons.append(Reason(code="test_rejects", method=method, blocking=False, value=omega, threshold=thr,
                              message=f"the {name} rejects (omega = {_f(omega)} < {_f(thr, 2)})"))
    stab = float(result.decision_stability)
    if int(result.n_resamples) == 0 or not math.isfinite(stab):
        reasons.insert(0, Reason(code="stability_unknown", method=method, blocking=True,
                                 message=f"the {name} decision's stability is unknown (no bootstrap resamples); "
                                         "rerun with resamples > 0"))
        return "inconclusive", reasons
    if stab < stability_threshold:
        reasons.insert(0, Reason(
            code="unstable", method=method, blocking=True, value=stab, threshold=stability_threshold,
            message=(f"the {name} decision ({result.decision}) comes out the same in only {_f(100 * stab, 1)}% of "
                     f"bootstrap resamples (< {_f(100 * stability_threshold, 0)}%): too fragile to act on")))
        return "inconclusive", reasons
    return result.decision, [dataclasses.replace(r, blocking=True) for r in reasons]


def apply_reference(outcome: Decision, reasons: list[Reason],
                    reference: ReferenceReliability | None) -> tuple[Decision, list[Reason]]:
    """The reference rules on top of a test outcome."""
    if reference is None:
        return outcome, reasons
    st = reference.status
    r = Reason(code=f"reference_{st}", method="reference",
               blocking=False, value=reference.estimate, threshold=reference.floor, message=reference.sentence)
    if st in ("noise", "undefined"):
        r = dataclasses.replace(r, blocking=True, threshold=0.0 if st == "noise" else None)
        if outcome == "inconclusive":  # the test's own reasons (too few, unstable) still hold on their own
            return "inconclusive", [r] + reasons
        return "inconclusive", [r] + [dataclasses.replace(x, blocking=False) for x in reasons]
    if st == "unreliable":
        if outcome == "accept":
            return "inconclusive", [dataclasses.replace(r, blocking=True)] + [
                dataclasses.replace(x, blocking=False) for x in reasons]
        return outcome, reasons + [r]
    if st == "tentative":
        return outcome, reasons + [dataclasses.replace(r, threshold=TENTATIVE_LINE)]
    return outcome, reasons  # reliable: nothing to add


def make_verdict(judge: str, method: str, test_decision: str | None, outcome: Decision,
                 reasons: list[Reason]) -> Verdict:
    reasons = sorted(reasons, key=lambda r: not r.blocking)  # stable: blocking reasons first
    name = _METHOD_NAME[method]
    head = {"accept": "ACCEPT", "reject": "REJECT", "inconclusive": "INCONCLUSIVE"}[outcome]
    why = shown_messages(reasons)
    lead = f"{judge}: {head}" if method == "combined" else f"{judge} ({name}): {head}"
    sentence = lead + (" - " + "; ".join(w.rstrip(".") for w in why) if why else "") + "."
    return Verdict(judge=judge, method=method, decision=outcome, test_decision=test_decision,
                   reasons=tuple(reasons), sentence=sentence)


def shown_messages(reasons: Any) -> list[str]:
    """The reason messages a verdict's sentence shows: the blocking ones (else all), the humans' agreement when
    it is below the floor (for every judge), and what would settle it."""
    why = [r.message for r in reasons if r.blocking] or [r.message for r in reasons if r.code != "what_would_settle"]
    # humans below the reliability floor is said for every judge, whatever decided its verdict
    why += [r.message for r in reasons if r.code == "reference_unreliable" and r.message not in why]
    return why + [r.message for r in reasons if r.code == "what_would_settle"]


def combine(judge: str, outcomes: dict[str, tuple[Decision, list[Reason], Any]],
            reference: ReferenceReliability | None, settle: str | None = None,
            more: float | None = None) -> Verdict:
    """The combined verdict over the methods that ran (``outcomes``: method -> (outcome, reasons, result)).

    ``settle`` is the sentence saying what would settle an inconclusive verdict (from the planner)
    and ``more`` its number (further comparisons per open held-out human).
    """
    ran = {m: v for m, v in outcomes.items() if not any(r.code == "not_run" for r in v[1])}
    decs = {m: v[0] for m, v in ran.items()}
    reasons: list[Reason] = []
    if not ran:
        outcome: Decision = "inconclusive"
        reasons.append(Reason(code="not_run", method="combined", blocking=True, message="no test was run"))
    elif all(d == "accept" for d in decs.values()):
        outcome = "accept"
        reasons += [r for v in ran.values() for r in v[1]]
    elif "accept" in decs.values() and "reject" in decs.values():
        outcome = "inconclusive"
        reasons.append(_disagreement(ran))
        reasons += [dataclasses.replace(r, blocking=False) for v in ran.values() for r in v[1]]
    elif "reject" in decs.values():
        outcome = "reject"
        reasons += [r for m, v in ran.items() for r in v[1] if v[0] == "reject"]
        reasons += [dataclasses.replace(r, blocking=False) for m, v in ran.items() for r in v[1] if v[0] != "reject"]
    else:
        outcome = "inconclusive"
        for m, v in ran.items():
            if v[0] == "inconclusive":
                reasons += [r for r in v[1] if r.blocking]
        if len(ran) > 1 and "accept" in decs.values():
            inc = [_TEST_NAME[m] for m, d in decs.items() if d == "inconclusive"]
            acc = [_TEST_NAME[m] for m, d in decs.items() if d == "accept"]
            reasons.insert(0, Reason(code="method_inconclusive", method="combined", blocking=True,
                                     message=f"the {' and '.join(acc)} accepts but the {' and '.join(inc)} cannot "
                                             "confirm it"))
        reasons += [dataclasses.replace(r, blocking=False) for v in ran.values() for r in v[1]
                    if not r.blocking or v[0] != "inconclusive"]
    outcome, reasons = apply_reference(outcome, _dedupe(reasons), reference)
    if settle and outcome == "inconclusive":
        reasons.append(Reason(code="what_would_settle", method="combined", blocking=False, message=settle,
                              value=None if more is None or not math.isfinite(more) else float(more)))
    tests = {m: getattr(v[2], "decision", None) for m, v in ran.items()}
    td = None
    if tests:
        vals = [d for d in tests.values() if d is not None]
        td = vals[0] if vals and all(d == vals[0] for d in vals) else ("mixed" if vals else None)
    return make_verdict(judge, "combined", td, outcome, reasons)


def _dedupe(reasons: list[Reason]) -> list[Reason]:
    seen: dict[tuple[str, str], int] = {}
    out: list[Reason] = []
    for r in reasons:
        key = (r.code, r.method)
        if key in seen:
            k = seen[key]
            if r.blocking and not out[k].blocking:
                out[k] = r
            continue
        seen[key] = len(out)
        out.append(r)
    return out


def _disagreement(ran: dict[str, tuple[Decision, list[Reason], Any]]) -> Reason:
    loo = ran.get("leave_one_out")
    alt = ran.get("alt_test")
    acc = "leave-one-out rule" if loo is not None and loo[0] == "accept" else "alt-test"
    rej = "alt-test" if acc == "leave-one-out rule" else "leave-one-out rule"
    why = ""
    if loo is not None and alt is not None:
        lr, ar = loo[2], alt[2]
        why = (f" The leave-one-out rule compares pooled agreement (S = {lr.score}) within epsilon = "
               f"{_f(lr.epsilon, 2)} of each held-out human (omega = {_f(lr.omega)}); the alt-test asks, item by "
               f"item, whether the judge's advantage probability trails each human's by less than epsilon = "
               f"{_f(ar.epsilon, 2)}, with a multiplicity-corrected test (omega = {_f(ar.omega)}). "
               + ("The alt-test's margin is the more lenient one here."
                  if acc == "alt-test" else "The leave-one-out margin is the more lenient one here."))
    msg = f"the methods disagree: the {acc} accepts, the {rej} rejects.{why}"
    return Reason(code="methods_disagree", method="combined", blocking=True, message=msg)
