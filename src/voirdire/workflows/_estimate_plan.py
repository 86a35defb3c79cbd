"""``plan_estimation``: ``voirdire plan-estimate``'s plans (private).

Three designs, one result (:class:`EstimationPlan`): the sample sizes of a two-stage study
(:func:`voirdire.estimation.required_sample_size`, R² given or from a pilot), a Neyman
allocation over strata (:func:`~voirdire.estimation.plan_allocation`), and the active design's
item-level probabilities (:func:`~voirdire.estimation.plan_active`); each optionally with the
human sample drawn (:func:`~voirdire.estimation.draw_human_sample`). The caller writes the sample
(``EstimationPlan.sample.assignments``) where it wants it, with :func:`write_plan_sample` as CSV.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._results import Result, to_jsonable
from ..exceptions import InfeasiblePlanError, InvalidParameterError, SchemaError, VoirdireWarning
from ._estimate import _per_item_column, inclusion_prob_from_file
from ._seeds import check_seed

__all__ = ["EstimationPlan", "plan_estimation", "write_plan_sample"]

#: the seed of the pilot's cross-fitting folds (the pilot's R² does not depend on --seed, the draw's seed)
PILOT_SEED = 0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class EstimationPlan(Result):
    """The result of :func:`plan_estimation`: one plan, and the human sample when one was drawn.

    ``kind`` is ``"sample_size"`` (``sample_size``, with ``pilot`` and ``sources`` saying where R²
    and sd came from), ``"allocation"`` (``allocation``, the Neyman allocation over strata) or
    ``"active"`` (``active``, item-level probabilities). ``sample`` is the drawn
    :class:`~voirdire.estimation.HumanSample` (written to ``sample_file`` by the caller).
    ``warnings`` are the planner's warnings, one line each; ``strata_mismatch`` says when the
    strata file's sizes differ from the drawn file's. ``streams`` names the seed of each random
    stream (the integers passed as ``rng``: ``draw`` and the active design's ``cross_fit`` are
    ``seed`` itself, the pilot's R² is cross-fitted at seed 0), so a recorded seed keeps its sample.
    """

    kind: str
    sample_size: Any = None
    pilot: dict[str, Any] | None = None
    sources: dict[str, str] = dataclasses.field(default_factory=dict)
    allocation: Any = None
    active: Any = None
    sample: Any = None
    sample_file: str | None = None
    model: str = "calibrated"
    judges: tuple[str, ...] = ()
    seed: int = 0
    warnings: tuple[str, ...] = ()
    strata_mismatch: str | None = None
    streams: dict[str, int] = dataclasses.field(default_factory=dict)

    def _sample_dict(self) -> dict[str, Any]:
        s = self.sample
        out: dict[str, Any] = {"file": self.sample_file, "n_items": s.n_items, "n_selected": s.n_selected}
        if self.kind != "active":
            return {**out, "expected_n": s.expected_n, "seed": self.seed}
        a = self.active
        return {**out, "n_pilot": a.n_pilot, "expected_new_labels": a.expected_new_labels,
                "expected_cost": a.expected_cost, "uncertainty": a.uncertainty_source, "floor": a.floor,
                "predicted_variance_ratio": a.variance_ratio, "model": self.model, "judges": list(self.judges),
                "seed": self.seed}

    def to_dict(self) -> dict[str, Any]:
        """``voirdire plan-estimate --format json``."""
        if self.kind == "active":
            out = {"design": "active", "sample": self._sample_dict(), "note": self.active.note}
        elif self.kind == "allocation":
            out = self.allocation.to_dict() if self.sample is None else {"allocation": self.allocation.to_dict(),
                                                                         "sample": self._sample_dict()}
        else:
            out = {"plan": self.sample_size.to_dict(), "pilot": self.pilot}
            if self.sample is not None:
                out["sample"] = self._sample_dict()
        return to_jsonable(out)

    def to_frame(self) -> Any:
        """The plan as a table: the strata (allocation), the items (active), else the sample sizes' row."""
        if self.kind == "allocation":
            return self.allocation.to_frame()
        if self.kind == "active":
            return self.active.to_frame()
        return self.sample_size.to_frame()


# ------------------------------------------------------------------------------------------------ reading
def _read_items(file: Any, item_col: str, strata_col: str | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Unique item ids of a long file (first-seen order) and, optionally, each item's stratum."""
    from ..data import read_long_frame

    df, rows, src = read_long_frame(file)
    for col in (item_col, strata_col):
        if col is not None and col not in df.columns:
            raise SchemaError(f"no column {col!r}; found {[str(c) for c in df.columns]}.", source=src, column=col)
    ids = df[item_col].astype(str).str.strip()
    if (ids == "").any():
        k = int(np.flatnonzero((ids == "").to_numpy())[0])
        raise SchemaError("empty item id.", source=src, row=int(rows[k]), column=item_col)
    first = ~ids.duplicated().to_numpy()
    items = ids.to_numpy()[first]
    if strata_col is None:
        return items, None
    st = df[strata_col].astype(str).str.strip().to_numpy()
    per: dict[str, str] = {}
    for k, (i, h) in enumerate(zip(ids.to_numpy(), st)):
        if per.setdefault(i, h) != h:
            raise SchemaError(f"item {i!r} is in two strata ({per[i]!r} and {h!r}).", source=src, row=int(rows[k]),
                              column=strata_col)
    return items, np.array([per[i] for i in items], dtype=object)


def _allocation(strata_file: Any, budget: float | None, min_prob: float) -> tuple[Any, list[str]]:
    """The Neyman allocation of a strata file's rows, and the planner's warnings (one line each)."""
    from ..data import read_long_frame
    from ..estimation import plan_allocation

    if budget is None:
        raise InvalidParameterError("--strata needs --budget (the expected cost of the human labels; with unit costs, "
                                    "the number of labels).")
    df, rows, src = read_long_frame(strata_file)
    for col in ("n_items", "residual_sd"):
        if col not in df.columns:
            raise SchemaError(f"needs a column {col!r} (columns: stratum, n_items, residual_sd, optional cost and sd); "
                              f"found {[str(c) for c in df.columns]}.", source=src, column=col)
    for col in ("n_items", "residual_sd", "cost", "sd"):
        if col in df.columns:
            for k, v in enumerate(df[col]):
                try:
                    float(v)
                except (TypeError, ValueError):
                    raise SchemaError(f"{v!r} is not a number.", source=src, row=int(rows[k]), column=col) from None
            df[col] = df[col].astype(float)
    if "stratum" in df.columns:
        names = df["stratum"].astype(str).to_numpy()
        _, first, counts = np.unique(names, return_index=True, return_counts=True)
        if (counts > 1).any():
            k = int(first[counts > 1][0])
            again = int(np.flatnonzero(names == names[k])[1])
            raise SchemaError(f"stratum {names[k]!r} appears twice (rows {int(rows[k])} and {int(rows[again])}); "
                              "give each stratum one row.", source=src, row=int(rows[again]), column="stratum")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", VoirdireWarning)
        res = plan_allocation(df, budget=float(budget), min_inclusion_prob=min_prob)
    lines = []
    for w in caught:  # ours become lines for the caller; any other warning goes on as it came
        if issubclass(w.category, VoirdireWarning):
            lines.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return res, lines


def _strata_mismatch(alloc: Any, draw_strata: np.ndarray, strata_file: Any, draw: Any) -> str | None:
    """The warning when the strata file's sizes differ from the items of each stratum in the drawn file."""
    planned = dict(zip(alloc.strata["stratum"].astype(str), alloc.strata["n_items"]))
    found = {str(k): int(v) for k, v in zip(*np.unique(draw_strata.astype(str), return_counts=True))}
    off = [f"{h!r}: {int(planned[h])} planned, {found.get(h, 0)} in the file"
           for h in planned if int(planned[h]) != found.get(h, 0)]
    if not off:
        return None
    return (f"the strata sizes of {strata_file} differ from {draw} ({'; '.join(off[:3])}): the expected number of "
            "labels will differ from the budget.")


# ------------------------------------------------------------------------------------------------ the pilot
def _pilot_r2(table: Any, judges: list[str], model: str, file: Any) -> dict[str, Any]:
    """R² and sd of the human scores from a pilot (cross-fitted), refused when they cannot plan anything."""
    from ..estimation import judge_matrix, pilot_r2

    X, y, _ = judge_matrix(table, judges)
    r2_p, sd_p, n_p = pilot_r2(X if X.shape[1] > 1 else X[:, 0], y, model=model, rng=PILOT_SEED)
    if not np.isfinite(r2_p) and not sd_p > 0:
        raise InfeasiblePlanError(
            f"the pilot's R\u00b2 is undefined: the human scores in {file} do not vary (sd {sd_p:.3g} over "
            f"{n_p} item(s)), so there is nothing to predict and nothing to plan. Use a pilot whose human "
            "scores vary, or give --r2 and --sd.")
    if not np.isfinite(r2_p) or r2_p < 0:
        other = "isotonic" if model == "linear" else "linear"
        raise InfeasiblePlanError(
            f"the pilot's R\u00b2 for model {model!r} is {r2_p:.3g}: the judge predicts the human scores "
            f"no better than a constant, so LLM scores cannot replace human labels. Try --model {other} or plan "
            "a human-only study.")
    return {"file": str(file), "judge": judges[0], "judges": list(judges), "model": model, "r2": r2_p, "sd": sd_p,
            "n_pairs": n_p}


def _beyond_the_items(n_items: int, file: Any, target: dict[str, Any], r2: float, sd: float | None) -> str | None:
    """With the items on hand fixed (``--draw``): the sentence when the target needs more precision than
    humans scoring every one of them would give (None when that is not why the plan failed)."""
    from ..estimation import required_sample_size

    try:  # the target in human-only labels (pi = 1: every item human-scored)
        every = required_sample_size(**target, r2=r2, sd=sd, inclusion_prob=1.0)
    except (InfeasiblePlanError, InvalidParameterError):
        return None
    if every.n_star <= n_items:
        return None
    best = required_sample_size(n_total=n_items, n_labeled=n_items, r2=r2, sd=sd)
    se = f" (predicted SE {best.predicted_se:.4g} at best)" if np.isfinite(best.predicted_se) else ""
    return (f"Infeasible: the target cannot be settled with the {n_items:,} items you have in {file}: even with every "
            f"one of them scored by humans, the estimate would be less precise than the target asks{se}. Ask for "
            "less precision (a wider --target-halfwidth, a larger --effect-size or a smaller --n-star), or list more "
            "items in the file.")


# ------------------------------------------------------------------------------------------------ the designs
def _active(pilot: Any, table: Any, judges: list[str], budget: float, cost_column: str | None,
            pilot_prob: str | None, floor: float | None, model: str, seed: int, item: str, rater: str) -> Any:
    """``--design active``: item-level probabilities from the judges' predicted residuals and the costs."""
    from ..estimation import judge_matrix, plan_active

    X, y, _ = judge_matrix(table, judges)
    items = np.asarray(table.items)
    miss = ~np.isfinite(X).all(axis=1)
    if miss.any():
        k = int(np.flatnonzero(~np.isfinite(X).all(axis=0))[0])
        bad = items[~np.isfinite(X[:, k])]
        raise SchemaError(f"judge {judges[k]!r} has no score for {bad.size} item(s) (e.g. {str(bad[0])!r}); --design "
                          "active needs every judge's score on every item of the study.", source=str(pilot))
    costs = None
    if cost_column is not None:
        per, src = _per_item_column(pilot, cost_column, table, item, rater, numeric=False, option="--cost-column")
        costs = np.full(items.size, np.nan)
        for k, i in enumerate(items):
            v = per.get(str(i))
            try:
                costs[k] = float(v) if v is not None else np.nan
            except ValueError:
                raise SchemaError(f"cost {v!r} of item {str(i)!r} is not a number.", source=src,
                                  column=cost_column) from None
        bad_c = ~(np.isfinite(costs) & (costs > 0))
        if bad_c.any():
            k = int(np.flatnonzero(bad_c)[0])
            raise SchemaError(f"item {str(items[k])!r} has cost {costs[k]!r}; every item needs a positive cost of a "
                              "human label.", source=src, column=cost_column)
    p1: Any = None
    if np.isfinite(y).any():
        if pilot_prob is None:
            raise InvalidParameterError(
                "the --pilot file has human scores: give --pilot-prob (the probability with which those items were "
                "drawn, a number or a column), so that their labels can enter the estimate.")
        p1 = inclusion_prob_from_file(pilot_prob, pilot, table, item=item, rater=rater, human=y)
    return plan_active(X if X.shape[1] > 1 else X[:, 0], budget=float(budget), costs=costs,
                       human_scores=y if p1 is not None else None, pilot_prob=p1,
                       floor="auto" if floor is None else floor, model=model, rng=seed)


def plan_estimation(*, design: str = "standard", target_halfwidth: float | None = None, n_star: float | None = None,
                    effect_size: float | None = None, power: float = 0.8, significance_level: float = 0.05,
                    confidence_level: float = 0.95, sd: float | None = None, r2: float | None = None,
                    pilot: Any = None, read_pilot: Callable[[list[str]], Any] | None = None,
                    judges: Sequence[str] = (), model: str = "calibrated", n_total: int | None = None,
                    n_labeled: int | None = None, inclusion_prob: float | None = None, strata: Any = None,
                    budget: float | None = None, min_prob: float = 0.0, draw: Any = None,
                    strata_column: str | None = None, out: Any = None, cost_column: str | None = None,
                    pilot_prob: str | None = None, floor: float | None = None, item: str = "item",
                    rater: str = "rater", seed: int = 0) -> EstimationPlan:
    r"""``voirdire plan-estimate``: how many items the LLM and the humans must score, or where to put the
    human labels, and (with ``draw``) the human sample drawn with the planned probabilities.

    Solves :math:`1/n^* = R^2/N + (1 - R^2)/n` for the missing one of ``n*`` (from
    ``target_halfwidth``, ``effect_size`` or ``n_star``), ``N`` and ``n`` (or ``pi``), with R²
    given or cross-fitted on a ``pilot``; with ``strata`` (a file with columns ``stratum``, ``n_items``,
    ``residual_sd`` and optionally ``cost`` and ``sd``) and ``budget``, the Neyman allocation; with ``design="active"``, item-level
    probabilities from the judges' predicted residuals on the ``pilot`` (every item of the study).

    Parameters
    ----------
    design : {"standard", "active"}, default "standard"
        ``"active"``: item-level probabilities (needs ``pilot``, ``judges``, ``budget`` and ``out``).
    target_halfwidth, n_star, effect_size, power, significance_level, confidence_level : float, optional
        The target, as in :func:`voirdire.estimation.required_sample_size`.
    sd, r2, n_total, n_labeled, inclusion_prob : float or int, optional
        What is known of the design, as in :func:`voirdire.estimation.required_sample_size`.
    pilot : path, optional
        The pilot file (judges and humans on the same items; the active design's study items).
    read_pilot : callable, optional
        ``read_pilot(judges)`` reads ``pilot`` into an AnnotationTable (the command passes its
        reader options); default :func:`voirdire.data.read_annotations` with ``item`` and ``rater``.
        Called only when the plan needs the pilot.
    judges : sequence of str
        The pilot's judges (several are combined, as in ``voirdire estimate``).
    model : str, default "calibrated"
        The prediction model (the pilot's R², the active design's residuals).
    strata : path, optional
        The strata file of a Neyman allocation (with ``budget``, ``min_prob``).
    draw : path, optional
        A file listing the study's items: the human sample is drawn with the planned probabilities
        (``strata_column``: each item's stratum, with ``strata``); N defaults to its number of items.
    out : path, optional
        Where the caller writes the sample (recorded in the result).
    cost_column, pilot_prob, floor
        The active design's cost column and pilot probability (a number or a column) of ``pilot``,
        and its floor (:func:`voirdire.estimation.plan_active`).
    item, rater : str
        The item and rater columns of the files.
    seed : int, default 0
        The draw (and the active design's cross-fitting folds).

    Returns
    -------
    EstimationPlan

    Raises
    ------
    InvalidParameterError
        Options that do not make a plan (``--budget`` without ``--strata``, no R², ...).
    InfeasiblePlanError
        A target no design reaches: a pilot whose R² is undefined or negative, a target beyond the
        items on hand ("cannot be settled with the N items you have"), and the planners' own.
    SchemaError
        A file whose columns or values do not fit.
    """
    from ..estimation import draw_human_sample, required_sample_size

    seed = check_seed(seed, "plan_estimation")
    judges = list(dict.fromkeys(str(j) for j in judges))
    file_out = None if out is None else str(out)

    def load() -> Any:
        if read_pilot is not None:
            return read_pilot(judges)
        from ..data import read_annotations

        return read_annotations(pilot, judges=judges, item=item, rater=rater, scale="interval")

    if design == "active":
        if pilot is None or not judges:
            raise InvalidParameterError(
                "--design active needs --pilot FILE (every judge's score on every item of the study, and the humans' "
                "scores on the pilot items, if any) and --judge NAME (one or more).")
        if budget is None:
            raise InvalidParameterError("--design active needs --budget (the expected cost of the new human labels; "
                                        "with unit costs, their number).")
        if out is None:
            raise InvalidParameterError("--design active needs --out FILE (where to write the assignments with their "
                                        "probabilities).")
        table = load()
        act = _active(pilot, table, judges, budget, cost_column, pilot_prob, floor, model, seed, item, rater)
        drawn = draw_human_sample(np.asarray(table.items), act, rng=seed)
        return EstimationPlan(kind="active", active=act, sample=drawn, sample_file=file_out, model=model, judges=tuple(judges), seed=seed,
                              streams={"cross_fit": seed, "draw": seed})
    if design != "standard":
        raise InvalidParameterError(f"The 'design' parameter of plan_estimation must be 'standard' or 'active'. "
                                    f"Got {design!r}.")
    draw_items = draw_strata = None
    if draw is not None:
        draw_items, draw_strata = _read_items(draw, item, strata_column)
    if strata is not None:
        alloc, lines = _allocation(strata, budget, min_prob)
        if draw_items is None:
            return EstimationPlan(kind="allocation", allocation=alloc, warnings=tuple(lines), seed=seed)
        if draw_strata is None:
            raise InvalidParameterError("--draw with --strata needs --strata-column (the column of the --draw file "
                                        "with each item's stratum).")
        return EstimationPlan(kind="allocation", allocation=alloc, warnings=tuple(lines),
                              sample=draw_human_sample(draw_items, alloc, rng=seed, strata=draw_strata),
                              sample_file=file_out, seed=seed, strata_mismatch=_strata_mismatch(
                                  alloc, draw_strata, strata, draw), streams={"draw": seed})
    if budget is not None:
        raise InvalidParameterError("--budget goes with --strata FILE (a Neyman allocation over strata).")
    on_hand = None if draw_items is None else int(draw_items.size)  # the items the study has
    if draw_items is not None and n_total is None and not (n_labeled is not None and inclusion_prob is not None):
        n_total = on_hand
    elif draw_items is not None and n_total is not None and n_total != draw_items.size:
        raise InvalidParameterError(f"--N {n_total} differs from the {draw_items.size} items in {draw}; drop --N to "
                                    "plan for the file's items.")
    pilot_info: dict[str, Any] | None = None
    if pilot is not None:
        if r2 is not None:
            raise InvalidParameterError("give --r2 or --pilot, not both.")
        if not judges:
            raise InvalidParameterError("--pilot needs --judge NAME (the judge whose scores predict the humans).")
        pilot_info = _pilot_r2(load(), judges, model, pilot)
        r2 = min(pilot_info["r2"], 1 - 1e-12)
        if sd is None:
            sd = pilot_info["sd"]
    elif r2 is None:
        raise InvalidParameterError("give --r2 (share of the human variance the judge explains) or --pilot FILE "
                                    "--judge NAME.")
    target = dict(n_star=n_star, target_halfwidth=target_halfwidth, effect_size=effect_size, power=power,
                  significance_level=significance_level, confidence_level=confidence_level)
    try:
        res = required_sample_size(n_total=n_total, n_labeled=n_labeled, inclusion_prob=inclusion_prob, r2=r2, sd=sd,
                                   **target)  # type: ignore[arg-type]
    except InfeasiblePlanError:
        why = None if on_hand is None or n_labeled is not None or inclusion_prob is not None else (
            _beyond_the_items(on_hand, draw, target, r2, sd))  # type: ignore[arg-type]
        if why is None:
            raise
        raise InfeasiblePlanError(why) from None
    sample = None
    if draw_items is not None:
        if res.n_total != draw_items.size:
            raise InvalidParameterError(
                f"the plan needs N = {res.n_total} items but {draw} lists {draw_items.size}; plan for the file's items "
                "(give two of --n-star/--target-halfwidth/--effect-size and --n/--inclusion-prob, or leave N free).")
        sample = draw_human_sample(draw_items, res.inclusion_prob, rng=seed)
    sources = {"r2": "pilot" if pilot_info else "given",
               "sd": "pilot" if pilot_info and sd == pilot_info["sd"] else "given"}
    streams = {"pilot_cross_fit": PILOT_SEED} if pilot_info else {}
    return EstimationPlan(kind="sample_size", sample_size=res, pilot=pilot_info, sources=sources, sample=sample,
                          sample_file=file_out, model=model, judges=tuple(judges), seed=seed,
                          streams={**streams, **({"draw": seed} if sample is not None else {})})


def write_plan_sample(plan: EstimationPlan, out: Path, *, inputs: Sequence[Path | None] = ()) -> None:
    """Write ``plan``'s drawn human sample (item, inclusion_prob, selected[, stratum]: the probabilities the
    estimate needs beside the items) to ``out`` as CSV, atomically, never over one of ``inputs``; nothing
    when no sample was drawn."""
    from .._io import atomic_write
    from .._safe import csv_frame

    if plan.sample is None:
        return
    with atomic_write(out, inputs=inputs) as fh:
        csv_frame(plan.sample.assignments).to_csv(fh, index=False)
