"""By-group workflows (private): one result per group (criterion, language, domain) and the pooled one.

``validate_judges_by`` runs :func:`validate_judges` on every group of a
:class:`~voirdire.data.GroupedTables` and on the pool, with the same options and seed (so a group's
numbers are those of ``--where`` on it), then adds what only the groups together can say:

* **Multiplicity across groups** (``group_error``): a judge accepted in a group must still be
  accepted by the alt-test when its per-human p-values are corrected over every (group, human)
  pair of that judge: Holm (family-wise error, ``"fwer"``) or Benjamini-Hochberg (false discovery
  rate, ``"fdr"``) at the alt-test's ``q``. Otherwise the group's verdict is ``inconclusive`` with
  the reason ``group_multiplicity``. With every group exactly on the margin, the chance that the
  judge is accepted in any group is then at most ``q`` (tested by simulation).
* **The worst slice** (:func:`voirdire.validation.slice_advantage`): for a judge the pool does not
  reject (accepted, or inconclusive), a group is flagged when its advantage there is below the rest
  of the pool's (one-sided, Holm over the groups at ``q``). A group's own ``reject`` is shown in its
  cell but is not a flag: the per-group rules do not bound the chance of a false reject (a small
  group often fails to show what the pool shows), and a flag must keep its stated error rate.
* **Simpson's case**, in words: accepted on the pool but rejected in most groups, or the reverse.
* **Too small**: a group with fewer than ``min_group_items`` items, or where the tests cannot run
  (no two humans), gets that reason and no number.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

import numpy as np

from .. import _options
from .._checks import check_choice, check_positive_int
from .._stats.resampling import shared_draws
from .._results import Result, to_jsonable
from ..exceptions import InvalidParameterError, VoirdireError
from ._verdict import Reason, Verdict, make_verdict

__all__ = ["GROUP_ERRORS", "PerGroup", "GroupCell", "GroupedValidation", "validate_judges_by", "GroupedComparison",
           "compare_raters_by", "GroupedRaters", "diagnose_raters_by", "GroupedEstimate", "estimate_mean_by",
           "GroupedWatch", "watch_judges_by"]

#: ``group_error`` / ``--group-error``: the error rate controlled across groups.
GROUP_ERRORS = _options.GROUP_ERRORS  # the one registry of option values
_CORRECTION = {"fwer": "holm", "fdr": "bh"}
_RULE = {"fwer": "Holm (family-wise error rate)", "fdr": "Benjamini-Hochberg (false discovery rate)"}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupCell(Result):
    """One (judge, group): its verdict after the rules across groups, and where it came from.

    ``verdict`` is what to act on; ``group_verdict`` the group's own verdict (``None`` when the group
    did not run, ``error`` then says why). ``omega_family`` is the alt-test's omega with the p-values
    corrected across groups (``None`` without it); ``slice_flag`` is True when the worst-slice check
    flags the group (``slice_reason`` says why).
    """

    judge: str
    group: str
    key: tuple[str, ...]
    n_items: int
    verdict: Verdict
    group_verdict: Verdict | None
    error: str | None = None
    omega_family: float | None = None
    slice_flag: bool = False
    slice_reason: str | None = None
    advantage: float | None = None
    advantage_low: float | None = None
    advantage_high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "group": self.group, "key": list(self.key), "n_items": self.n_items,
                "verdict": self.verdict.to_dict(),
                "group_verdict": None if self.group_verdict is None else self.group_verdict.decision,
                "error": self.error, "omega_family": to_jsonable(self.omega_family), "slice_flag": self.slice_flag,
                "slice_reason": self.slice_reason, "advantage": to_jsonable(self.advantage),
                "advantage_low": to_jsonable(self.advantage_low), "advantage_high": to_jsonable(self.advantage_high)}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupedValidation(Result):
    """The result of :func:`validate_judges_by`.

    Attributes
    ----------
    by : tuple of str
    group_error : {"fwer", "fdr", "none"}
    rule : str
        The rules across groups in words (multiplicity, worst slice), with their error rates.
    groups : tuple of str
        The groups' names, in order.
    results : tuple of (ValidationResult or None)
        One per group (``None``: the group did not run; ``errors`` says why).
    errors : tuple of (str or None)
    pooled : ValidationResult
        Every group together.
    cells : tuple of GroupCell
        One per (judge, group), judges outer.
    slices : dict
        Judge -> :class:`~voirdire.validation.SliceAdvantage` (judges the pool does not reject).
    simpson : dict
        Judge -> the sentence when the pool and most groups disagree (absent otherwise).
    notes : tuple of str
    """

    by: tuple[str, ...]
    group_error: str
    rule: str
    groups: tuple[str, ...]
    keys: tuple[tuple[str, ...], ...]
    n_items: tuple[int, ...]
    results: tuple[Any, ...]
    errors: tuple[str | None, ...]
    pooled: Any
    cells: tuple[GroupCell, ...]
    slices: dict[str, Any]
    simpson: dict[str, str]
    notes: tuple[str, ...]

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.judge for c in self.cells))

    def cell(self, judge: str, group: str) -> GroupCell:
        for c in self.cells:
            if c.judge == judge and c.group == group:
                return c
        raise KeyError((judge, group))

    def failing(self, decisions: Sequence[str]) -> list[GroupCell]:
        """The cells whose verdict is one of ``decisions`` (the ``--fail-on`` gate over groups)."""
        return [c for c in self.cells if c.verdict.decision in decisions]

    def to_dict(self) -> dict[str, Any]:
        return {"by": list(self.by), "group_error": self.group_error, "rule": self.rule,
                "groups": [{"group": g, "key": list(k), "n_items": n, "error": e,
                            "result": None if r is None else r.to_dict()}
                           for g, k, n, e, r in zip(self.groups, self.keys, self.n_items, self.errors, self.results)],
                "pooled": self.pooled.to_dict(), "cells": [c.to_dict() for c in self.cells],
                "slices": {j: s.to_dict() for j, s in self.slices.items()}, "simpson": dict(self.simpson),
                "notes": list(self.notes)}

    def to_frame(self) -> Any:
        """One row per (judge, group): verdicts, reason codes, family omega and the slice flag."""
        import pandas as pd

        return pd.DataFrame([{"judge": c.judge, "group": c.group, "n_items": c.n_items,
                              "verdict": c.verdict.decision, "reasons": ",".join(c.verdict.codes),
                              "group_verdict": None if c.group_verdict is None else c.group_verdict.decision,
                              "omega_family": c.omega_family, "slice_flag": c.slice_flag,
                              "advantage": c.advantage, "advantage_low": c.advantage_low,
                              "advantage_high": c.advantage_high} for c in self.cells])


def _present(judges: Sequence[str] | None, table: Any) -> list[str] | None:
    """The judges (in their order) that rate in ``table``; ``None`` when no judge was named."""
    if not judges:
        return None
    raters = set(map(str, table.raters))
    return [j for j in judges if j in raters]


def _each_group(grouped: Any, run: Callable[[Any, list[str] | None], Any], min_group_items: int,
                judges: Sequence[str] | None = None) -> tuple[list[Any], list[str | None]]:
    """``run(table, judges present in it)`` on every group: a result, or ``None`` and the reason (too
    small, no judge labelled the group, or the analysis's own error) — the one loop every ``*_by`` shares."""
    _, results, errors = _pool_and_groups(grouped, run, min_group_items, judges)
    return results, errors


def _pool_and_groups(grouped: Any, run: Callable[[Any, list[str] | None], Any], min_group_items: int,
                     judges: Sequence[str] | None = None, *, pool: Callable[[], Any] | None = None,
                     workers: int = 1) -> tuple[Any, list[Any], list[str | None]]:
    """:func:`_each_group`, with ``pool()`` (the pooled analysis) run first, and the runs on up to
    ``workers`` threads (:func:`voirdire._stats.parallel.in_threads`: the same results as one after
    the other; an error of ``pool()`` is raised before any group's)."""
    from .._stats.parallel import in_threads

    def attempt(table: Any, present: list[str] | None) -> tuple[Any, str | None]:
        try:
            return run(table, present), None
        except VoirdireError as exc:
            return None, str(exc)

    slots: list[tuple[Any, str | None] | None] = []   # a group's reason not to run, or None: it runs
    calls: list[Callable[[], Any]] = [] if pool is None else [pool]
    for g, table in enumerate(grouped.tables):
        if table is None:  # its table could not be read (one rater, every label an abstention)
            slots.append((None, grouped.error(g) or "the group's table could not be read"))
            continue
        present = _present(judges, table)
        if table.n_items < min_group_items:
            slots.append((None, f"too small: {table.n_items} items < min_group_items={min_group_items}"))
        elif judges and not present:
            slots.append((None, "no judge labelled this group"))
        else:
            slots.append(None)
            calls.append(functools.partial(attempt, table, present))
    outs = iter(in_threads(calls, workers))
    pooled = next(outs) if pool is not None else None
    results: list[Any] = []
    errors: list[str | None] = []
    for slot in slots:
        res, err = next(outs) if slot is None else slot
        results.append(res)
        errors.append(err)
    return pooled, results, errors


def validate_judges_by(
    grouped: Any,
    judges: Sequence[str] | None = None,
    *,
    group_error: Literal["fwer", "fdr", "none"] = "fwer",
    min_group_items: int = 10,
    slice_check: bool = True,
    n_jobs: int | None = None,
    **options: Any,
) -> GroupedValidation:
    """:func:`validate_judges` per group and on the pool, with the rules across groups (module docstring).

    Parameters
    ----------
    grouped : GroupedTables
        From :func:`voirdire.data.read_annotation_groups` (``--by``).
    judges : sequence of str, optional
        Default: every judge of the pooled table.
    group_error : {"fwer", "fdr", "none"}, default "fwer"
        The error rate controlled across groups (``"none"``: each group on its own).
    min_group_items : int, default 10
        A group with fewer items is not validated (reason ``group_too_small``).
    slice_check : bool, default True
        Run the worst-slice check for the judges the pool does not reject.
    n_jobs : int, optional
        Threads that run the pool and the groups side by side (default: the cores this process may
        use, at most 8; 1: one after the other). The results do not depend on it.
    **options
        Passed to :func:`validate_judges` for every group and the pool (same ``seed``, so a group's
        numbers equal a ``--where`` run on it).

    Returns
    -------
    GroupedValidation

    Examples
    --------
    >>> from voirdire.data import read_annotation_groups
    >>> from voirdire.datasets import hanna_path
    >>> g = read_annotation_groups(hanna_path(), by="criterion", label="score", role="role", scale="interval",
    ...                            abstain=[-1], cluster="story", where=["criterion=Coherence", "criterion=Empathy"])
    >>> res = validate_judges_by(g, ["ChatGPT"], n_resamples=50, check_raters=False)
    >>> [(c.group, c.verdict.decision) for c in res.cells]
    [('Coherence', 'inconclusive'), ('Empathy', 'inconclusive')]
    """
    from .._stats._poisson import _blas_single
    from .._stats.parallel import n_threads
    from ._validate import _capturing, validate_judges

    func = "validate_judges_by"
    group_error = check_choice(group_error, "group_error", func, GROUP_ERRORS)  # type: ignore[assignment]
    min_group_items = check_positive_int(min_group_items, "min_group_items", func)
    if n_jobs is not None:
        n_jobs = check_positive_int(n_jobs, "n_jobs", func)
    pooled_table = grouped.pooled
    names = [str(j) for j in (dict.fromkeys(judges) if judges else pooled_table.judges)]
    notes: list[str] = []

    def run(table: Any, present: list[str] | None) -> Any:
        own = dict(options)
        if options.get("exclude_raters"):  # a human excluded by the user but absent from this group
            here = set(map(str, table.humans))
            own["exclude_raters"] = [h for h in options["exclude_raters"] if str(h) in here] or None
        return validate_judges(table, present, **own)

    # groups over the same units (a rubric's criteria) draw each seed stream's resamples once; the pool
    # and the groups run on the cores this process may use (threads: NumPy and SciPy release the GIL in
    # the products), each with the numbers it has alone. The warnings capture and the one-thread BLAS
    # are held here, around them all: each run's own open and close then neither ends the capture nor
    # restores BLAS's threads while another still runs.
    workers = n_threads() if n_jobs is None else n_jobs
    with shared_draws(), _capturing(), _blas_single():
        # the pool first: it checks every option (a bad option is the user's error, not a group's)
        pooled, results, errors = _pool_and_groups(grouped, run, min_group_items, names, workers=workers,
                                                   pool=lambda: validate_judges(pooled_table, names, **options))
    opts = pooled.options
    gnames = tuple(grouped.names)
    family = _family_omegas(names, results, group_error, opts)
    slices: dict[str, Any] = {}
    if slice_check and len(gnames) >= 2:
        slices = _slice_checks(grouped, pooled, names, opts, notes)
    cells: list[GroupCell] = []
    for j in names:
        for g, (key, n, res, err) in enumerate(zip(grouped.keys, grouped.n_items, results, errors)):
            cells.append(_cell(j, gnames[g], key, n, res, err, family.get((j, g)), group_error, opts,
                               slices.get(j), g))
    simpson = {j: s for j in names if (s := _simpson(j, pooled, [c for c in cells if c.judge == j])) is not None}
    rule = _rule_sentence(group_error, opts, slice_check)
    return GroupedValidation(by=tuple(grouped.by), group_error=group_error, rule=rule, groups=gnames,
                             keys=tuple(grouped.keys), n_items=tuple(grouped.n_items),
                             results=tuple(results), errors=tuple(errors), pooled=pooled, cells=tuple(cells),
                             slices=slices, simpson=simpson, notes=tuple(notes))


def _family_omegas(names: Sequence[str], results: Sequence[Any], group_error: str,
                   opts: dict[str, Any]) -> dict[tuple[str, int], float]:
    """Per (judge, group index): the alt-test omega with every (group, human) p-value of the judge
    corrected together (Holm or BH at the alt-test's q)."""
    from ..validation import rejected_flags

    out: dict[tuple[str, int], float] = {}
    if group_error == "none" or opts.get("alt_test_epsilon") is None:
        return out
    for j in names:
        ps, owner = [], []
        for g, res in enumerate(results):
            alt = _alt(res, j)
            if alt is None:
                continue
            t = np.asarray(alt.tested, dtype=bool)
            ps.append(np.asarray(alt.p_value, dtype=float)[t])
            owner.append(np.full(int(t.sum()), g))
        if not ps:
            continue
        p, own = np.concatenate(ps), np.concatenate(owner)
        rej = rejected_flags(p, float(opts["q"]), correction=_CORRECTION[group_error])
        for g in np.unique(own):
            m = own == g
            out[(j, int(g))] = float(rej[m].sum() / m.sum())
    return out


def _alt(res: Any, judge: str) -> Any:
    if res is None:
        return None
    for e in res.judges:
        if e.judge == judge:
            return e.alt_test
    return None


def _entry(res: Any, judge: str) -> Any:
    if res is None:
        return None
    for e in res.judges:
        if e.judge == judge:
            return e
    return None


def _cell(judge: str, group: str, key: tuple[str, ...], n_items: int, res: Any, err: str | None,
          omega_family: float | None, group_error: str, opts: dict[str, Any], sl: Any, g: int) -> GroupCell:
    entry = _entry(res, judge)
    adv = lo = hi = None
    flag, why = False, None
    if sl is not None and g < len(sl.slices):
        adv = float(sl.difference[g]) if np.isfinite(sl.difference[g]) else None
        lo = float(sl.low[g]) if np.isfinite(sl.low[g]) else None
        hi = float(sl.high[g]) if np.isfinite(sl.high[g]) else None
    if entry is None:
        why_not = err or "the judge has no label in this group"
        code = "group_too_small" if err is None or err.startswith("too small") or "fewer" in err.lower() \
            or "at least two" in err.lower() or "no judge" in err else "group_failed"
        r = Reason(code=code, method="combined", blocking=True, message=f"group {group}: {why_not}")
        return GroupCell(judge=judge, group=group, key=key, n_items=n_items, group_verdict=None, error=why_not,
                         verdict=make_verdict(judge, "combined", None, "inconclusive", [r]),
                         advantage=adv, advantage_low=lo, advantage_high=hi)
    v = entry.verdict
    reasons = list(v.reasons)
    decision = v.decision
    thr = 0.5
    if decision == "accept" and omega_family is not None and omega_family < thr:
        decision = "inconclusive"
        reasons = [Reason(code="group_multiplicity", method="combined", blocking=True, value=omega_family,
                          threshold=thr, message=(
                              f"accepted in group {group} alone, but not once the alt-test's p-values over every "
                              f"group are corrected ({_RULE[group_error]} at q = {opts['q']}): omega = "
                              f"{omega_family:.3f} < {thr}"))] + [dataclasses.replace(x, blocking=False) for x in reasons]
    if sl is not None and g < len(sl.slices) and bool(sl.below[g]):
        flag, why = True, (f"the judge's advantage in group {group} is below the rest of the pool's by "
                           f"{-sl.difference[g]:.3f} (one-sided p = {sl.p_value[g]:.2g}, Holm over "
                           f"{len(sl.slices)} groups at q = {sl.q})"
                           + (f"; the group's own verdict is {v.decision}" if v.decision != "accept" else ""))
        if flag:
            reasons.append(Reason(code="slice_below_pool", method="combined", blocking=False, message=why,
                                  value=adv, threshold=0.0))
    verdict = v if (decision == v.decision and len(reasons) == len(v.reasons)) else \
        make_verdict(judge, "combined", v.test_decision, decision, reasons)  # type: ignore[arg-type]
    return GroupCell(judge=judge, group=group, key=key, n_items=n_items, verdict=verdict, group_verdict=v,
                     omega_family=omega_family, slice_flag=flag, slice_reason=why, advantage=adv,
                     advantage_low=lo, advantage_high=hi)


def _slice_checks(grouped: Any, pooled: Any, names: Sequence[str], opts: dict[str, Any],
                  notes: list[str]) -> dict[str, Any]:
    """The worst-slice check of every judge the pool does not reject (accepted, or inconclusive: a
    slice may be why)."""
    from ..validation import slice_advantage

    out: dict[str, Any] = {}
    scoring = opts.get("scoring") or ("neg_rmse" if grouped.pooled.scale.level in ("ordinal", "interval", "ratio")
                                      and grouped.pooled.scale.is_numeric else "accuracy")
    for j in names:
        if pooled.verdicts.get(j) is None or pooled.verdicts[j].decision == "reject":
            continue
        try:
            out[j] = slice_advantage(grouped.pooled, j, grouped.item_group, slices=grouped.names, scoring=scoring,
                                     min_humans_per_item=int(opts["min_humans_per_item"]), q=float(opts["q"]),
                                     confidence_level=float(opts["confidence_level"]))
        except VoirdireError as exc:
            notes.append(f"Worst-slice check of {j} skipped: {exc}")
    return out


def _simpson(judge: str, pooled: Any, cells: Sequence[GroupCell]) -> str | None:
    """The sentence when the pooled verdict and most groups' verdicts point opposite ways."""
    pv = pooled.verdicts.get(judge)
    if pv is None:
        return None
    decided = [c for c in cells if c.group_verdict is not None and c.group_verdict.decision in ("accept", "reject")]
    if len(decided) < 2:
        return None
    rej = [c.group for c in decided if c.group_verdict.decision == "reject"]  # type: ignore[union-attr]
    acc = [c.group for c in decided if c.group_verdict.decision == "accept"]  # type: ignore[union-attr]
    if pv.decision == "accept" and len(rej) > len(decided) / 2:
        return (f"Simpson's case: {judge} is accepted on the pool but rejected in {len(rej)} of {len(decided)} "
                f"groups that reached a decision ({', '.join(rej)}): the pooled verdict hides where it fails; "
                "trust the groups.")
    if pv.decision == "reject" and len(acc) > len(decided) / 2:
        return (f"Simpson's case: {judge} is rejected on the pool but accepted in {len(acc)} of {len(decided)} "
                f"groups that reached a decision ({', '.join(acc)}): the groups differ (in their mix of items or "
                "humans), so the pooled comparison mixes unlike things; read the groups.")
    return None


def _rule_sentence(group_error: str, opts: dict[str, Any], slice_check: bool) -> str:
    q = opts["q"]
    if group_error == "none" or opts.get("alt_test_epsilon") is None:
        head = ("Each group is validated on its own (no correction across groups): the chance that some group "
                "accepts a judge that is only at the margin grows with the number of groups.")
        if group_error != "none":
            head = ("No correction across groups: the leave-one-out rule has no p-value to correct (run the "
                    "alt-test, --method both or alt-test, for the rule across groups).")
    else:
        head = (f"Across groups: an accept in a group stands only if the alt-test still accepts there with its "
                f"p-values corrected over every (group, human) pair of the judge by {_RULE[group_error]} at q = {q}"
                + ("; the chance of accepting a judge at the margin in any group is at most q." if group_error == "fwer"
                   else "; the expected share of false accepts among the (group, human) wins is at most q."))
    if slice_check:
        head += (f" Worst slice: for a judge the pool does not reject, a group is flagged when the judge's mean "
                 f"per-item advantage there is below the rest of the pool's (one-sided normal test, cluster-robust, "
                 f"Holm over the groups at q = {q}: at most q chance of flagging any group when none differs); a "
                 "group's own reject shows in its cell.")
    return head


# ------------------------------------------------------------------------------------------------ agreement
def _groups_frame(groups: Any, results: Any, pooled: Any) -> Any:
    """The groups' ``to_frame()`` stacked with a ``group`` column, the pool last as ``(pooled)``."""
    import pandas as pd

    frames = [r.to_frame().assign(group=g) for g, r in zip(groups, results) if r is not None]
    frames.append(pooled.to_frame().assign(group="(pooled)"))
    return pd.concat(frames, ignore_index=True)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PerGroup(Result):
    """What every by-group result holds: the grouping columns, the groups' names and sizes, one result per
    group (``None`` and the reason in ``errors`` where it could not run) and the pooled result.

    Subclasses name each group's result in JSON (``_RESULT``) and may add the groups' keys and an error
    for the pool (``keys``, ``pooled_error``)."""

    by: tuple[str, ...]
    groups: tuple[str, ...]
    n_items: tuple[int, ...]
    results: tuple[Any, ...]
    errors: tuple[str | None, ...]
    pooled: Any
    _RESULT: ClassVar[str] = "result"

    def _serialise(self, result: Any) -> Any:
        """One group's (or the pool's) result in JSON; ``None`` stays ``None``."""
        return None if result is None else result.to_dict()

    def _record(self, k: int) -> dict[str, Any]:
        return {"group": self.groups[k], "n_items": self.n_items[k], "error": self.errors[k],
                self._RESULT: self._serialise(self.results[k])}

    def to_dict(self) -> dict[str, Any]:
        return {"by": list(self.by), "groups": [self._record(k) for k in range(len(self.groups))],
                "pooled": self._serialise(self.pooled)}

    def to_frame(self) -> Any:
        return _groups_frame(self.groups, self.results, self.pooled)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _KeyedPerGroup(PerGroup):
    """A by-group result whose records carry each group's key values, and whose pool may fail alone."""

    keys: tuple[tuple[str, ...], ...]
    pooled_error: str | None = None

    def _record(self, k: int) -> dict[str, Any]:
        return {"group": self.groups[k], "key": list(self.keys[k]), "n_items": self.n_items[k],
                "error": self.errors[k], self._RESULT: self._serialise(self.results[k])}

    def to_dict(self) -> dict[str, Any]:
        return {**PerGroup.to_dict(self), "pooled_error": self.pooled_error}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupedComparison(PerGroup):
    """The result of :func:`compare_raters_by`: one :class:`RaterComparison` per group and the pooled one
    (``None`` and an error for a group where it could not run)."""


def compare_raters_by(grouped: Any, judges: Sequence[str] | None = None, *, min_group_items: int = 2,
                      **options: Any) -> GroupedComparison:
    """:func:`compare_raters` per group and on the pool, same options and seed (a group's numbers are
    those of ``--where`` on it); a group too small or without two raters gets its reason, not a number."""
    from ._compare import compare_raters

    min_group_items = check_positive_int(min_group_items, "min_group_items", "compare_raters_by")

    def run(table: Any, _: Any) -> Any:
        # a group's judges are those of the call present in it (none: the humans alone, or the table's own)
        return compare_raters(table, _present(judges, table), **options)

    with shared_draws():
        pooled = compare_raters(grouped.pooled, judges, **options)
        results, errors = _each_group(grouped, run, min_group_items)
    return GroupedComparison(by=tuple(grouped.by), groups=tuple(grouped.names),
                             n_items=tuple(grouped.n_items), results=tuple(results),
                             errors=tuple(errors), pooled=pooled)


# ------------------------------------------------------------------------------------------------ annotators
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupedRaters(PerGroup):
    """The result of :func:`diagnose_raters_by`: one
    :class:`~voirdire.diagnostics.RaterDiagnosticsResult` per group and the pooled one (``None`` and an
    error for a group where it could not run). The outlier flags are Holm-controlled within each
    group, not across groups."""

    _RESULT: ClassVar[str] = "raters"


def diagnose_raters_by(grouped: Any, *, min_group_items: int = 2, **options: Any) -> GroupedRaters:
    """:func:`voirdire.workflows.check_raters` (the annotator check of ``voirdire raters``) per group and on the
    pool, same options and ``seed`` (a group's numbers are those of ``--where`` on it); a group too small, or
    without two raters sharing items, gets its reason, not a number."""
    from ._raters import check_raters as rater_diagnostics

    min_group_items = check_positive_int(min_group_items, "min_group_items", "diagnose_raters_by")
    with shared_draws():
        pooled = rater_diagnostics(grouped.pooled, **options)
        results, errors = _each_group(grouped, lambda table, _: rater_diagnostics(table, **options), min_group_items)
    return GroupedRaters(by=tuple(grouped.by), groups=tuple(grouped.names),
                         n_items=tuple(grouped.n_items), results=tuple(results),
                         errors=tuple(errors), pooled=pooled)


# ------------------------------------------------------------------------------------------------ estimation
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupedEstimate(_KeyedPerGroup):
    """The result of :func:`estimate_mean_by`: one :class:`~voirdire.workflows.MeanEstimate` per group and
    the pooled one (``None`` and an error for a group, or the pool, where it could not run: too few
    items, no human score, an unscored item, a probability missing). Each interval is for its own
    group; nothing is corrected across groups (an estimate is not a test)."""

    def to_frame(self) -> Any:
        """One row per (group, estimator), the pool last (``group`` ``(pooled)``)."""
        import pandas as pd

        rows = []
        for g, r, e in [*zip(self.groups, self.results, self.errors), ("(pooled)", self.pooled, self.pooled_error)]:
            if r is None:
                rows.append({"group": g, "estimator": None, "estimate": np.nan, "se": np.nan, "ci_low": np.nan,
                             "ci_high": np.nan, "n_labeled": np.nan, "n_total": np.nan, "error": e})
                continue
            for name, est in r.estimates.items():
                rows.append({"group": g, "estimator": name, "estimate": est.estimate, "se": est.se,
                             "ci_low": est.ci.low, "ci_high": est.ci.high, "n_labeled": est.n_labeled,
                             "n_total": est.n_total, "error": None})
        return pd.DataFrame(rows)


def estimate_mean_by(grouped: Any, judges: Sequence[str], inclusion_prob: Any, *, strata: Any = None,
                     min_group_items: int = 2, **options: Any) -> GroupedEstimate:
    """:func:`estimate_mean` per group and on the pool, with the same options and seed (a group's numbers
    are those of ``--where`` on it); a group too small, or where the estimate cannot run, gets its
    reason, not a number.

    ``inclusion_prob`` and ``strata`` are as in :func:`estimate_mean` (a float, or item id -> value);
    the pool of groups that share items (a rubric) looks each pooled item up by its own item id.
    """
    from ._estimate import estimate_mean

    min_group_items = check_positive_int(min_group_items, "min_group_items", "estimate_mean_by")
    pooled, pooled_error = None, None
    try:
        pooled = estimate_mean(grouped.pooled, judges, inclusion_prob, item_ids=grouped.source_items, strata=strata,
                               **options)
    except InvalidParameterError:  # a bad option is the caller's error, not the pool's
        raise
    except VoirdireError as exc:
        pooled_error = str(exc)
    results, errors = _each_group(
        grouped, lambda table, _: estimate_mean(table, judges, inclusion_prob, strata=strata, **options),
        min_group_items)
    return GroupedEstimate(by=tuple(grouped.by), groups=tuple(grouped.names), keys=tuple(grouped.keys),
                           n_items=tuple(grouped.n_items), results=tuple(results),
                           errors=tuple(errors), pooled=pooled, pooled_error=pooled_error)


# ------------------------------------------------------------------------------------------------ sequential
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class GroupedWatch(_KeyedPerGroup):
    """The result of :func:`watch_judges_by`: one running anytime-valid decision per (judge, group), and per
    judge on the pool (``None`` and an error for a group, or the pool, where the rule could not run). The
    e-BH level ``q`` holds within each group; nothing is corrected across groups."""

    _RESULT: ClassVar[str] = "judges"

    def _serialise(self, result: Any) -> Any:
        return None if result is None else [x.to_dict() for x in result]

    def to_frame(self) -> Any:
        """One row per (judge, group), the pool last: the running decision and the look it was reached at."""
        import pandas as pd

        rows = []
        for g, r, e in [*zip(self.groups, self.results, self.errors), ("(pooled)", self.pooled, self.pooled_error)]:
            for x in r or []:
                rows.append({"group": g, "judge": x.judge, "decision": x.decision, "decided_at": x.decided_at,
                             "n_looks": len(x.looks), "error": None})
            if r is None:
                rows.append({"group": g, "judge": None, "decision": None, "decided_at": None, "n_looks": 0,
                             "error": e})
        return pd.DataFrame(rows)


def watch_judges_by(grouped: Any, rounds: Any, judges: Sequence[str] | None = None, *, min_group_items: int = 2,
                    **options: Any) -> GroupedWatch:
    """:func:`watch_judges` per group and on the pool, same options and seed (a group's decisions are
    those of ``--where`` on it); a group too small, without the judge, or where the rule cannot run
    gets its reason, not a decision.

    ``rounds`` is the round of every label of the file (``item``, ``rater``, ``round``; a row repeated
    whole is one arrival); the pool of groups that share items (a rubric) gives each pooled
    ``item | group`` its item's round.
    """
    import pandas as pd

    from ..data import id_str
    from ._sequential import watch_judges

    min_group_items = check_positive_int(min_group_items, "min_group_items", "watch_judges_by")
    names = [str(j) for j in (dict.fromkeys(judges) if judges else grouped.pooled.judges)]
    # one row per (item, rater, round): a rubric repeats an item's row once per criterion, in the same round
    rounds = pd.DataFrame({"item": pd.Series(rounds["item"]).map(id_str).to_numpy(),
                           "rater": pd.Series(rounds["rater"]).map(id_str).to_numpy(),
                           "round": pd.Series(rounds["round"]).to_numpy()}).drop_duplicates(ignore_index=True)
    pooled_rounds = rounds
    if grouped.shared_items:
        ids = rounds["item"]
        pooled_rounds = pd.concat([rounds.assign(item=ids + grouped.pooled_suffix(g)) for g in grouped.names],
                                  ignore_index=True)
    pooled, pooled_error = None, None
    try:
        pooled = watch_judges(grouped.pooled, pooled_rounds, names, **options)
    except InvalidParameterError:  # a bad option (or no judge at all) is the caller's error
        raise
    except VoirdireError as exc:
        pooled_error = str(exc)
    results, errors = _each_group(grouped, lambda table, present: watch_judges(table, rounds, present, **options),
                                  min_group_items, names)
    return GroupedWatch(by=tuple(grouped.by), groups=tuple(grouped.names), keys=tuple(grouped.keys),
                        n_items=tuple(grouped.n_items), results=tuple(results),
                        errors=tuple(errors), pooled=pooled, pooled_error=pooled_error)
