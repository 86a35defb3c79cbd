"""Planning a two-stage design: sample sizes and Neyman-type allocation of human labels (private)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import ndtri  # the normal quantile scipy.stats.norm calls (no scipy.stats import: ~1 s)

from .._checks import check_choice, check_confidence_level, check_probability
from ..exceptions import DegenerateDataWarning, InfeasiblePlanError, InvalidParameterError, SmallSampleWarning
from ._results import AllocationResult, EstimateResult, SampleSizeResult

__all__ = ["required_sample_size", "plan_allocation", "pilot_r2"]

_ALTERNATIVES = ("two-sided", "less", "greater")


def _pos_float(value: Any, name: str, func: str) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or float(value) <= 0:
        raise InvalidParameterError(f"The '{name}' parameter of {func} must be a positive number. Got {value!r} instead.")
    return float(value)


#: the largest count a plan may hold (items or labels); beyond it every figure is an overflow, not a plan
_MAX_COUNT = 1e12


def _pos_count(value: Any, name: str, func: str) -> float:
    v = _pos_float(value, name, func)
    if v > _MAX_COUNT:
        raise InvalidParameterError(f"The '{name}' parameter of {func} must be at most {_MAX_COUNT:g}. Got {value!r} instead.")
    return v


def _plannable(n: float, what: str) -> float:
    """``n`` if it is a count a design can hold, else an :class:`InfeasiblePlanError` saying why."""
    if not (math.isfinite(n) and n <= _MAX_COUNT):
        raise InfeasiblePlanError(
            f"Infeasible: the target needs {what} = {n:.3g}, more than {_MAX_COUNT:g} (a half-width or effect size "
            "this small, or a standard deviation this large, has no practical design). Check the inputs.")
    return n


def pilot_r2(judge_scores: Any, human_scores: Any, *, model: str = "calibrated",
             rng: int | np.random.Generator | None = 0) -> tuple[float, float, int]:
    """``(r2, sd_human, n_pairs)`` from a pilot where both scores are known on some items.

    ``judge_scores`` is one judge's scores ``(n,)`` or several judges' ``(n, p)``. ``r2 = 1 -
    sigma_e^2 / sigma^2`` for the chosen model, with cross-fitted (out-of-fold) predictions so
    that a flexible model does not flatter itself: the same model and the same fit as
    :func:`~voirdire.estimation.dr_mean`. For ``"calibrated"`` (power-tuned) the planning value
    is ``max(r2, 0)``: power tuning falls back to the human-only estimate when the judges do not
    help, so the plan is then a human-only plan.
    """
    import warnings

    from ._dr import dr_mean

    x = np.asarray(judge_scores, dtype=float)
    y = np.asarray(human_scores, dtype=float)
    X = x.reshape(-1, 1) if x.ndim == 1 else x
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.size:
        raise InvalidParameterError("The pilot must be judge scores (one column per judge) and human scores on the "
                                    "same items.")
    both = np.isfinite(X).all(axis=1) & np.isfinite(y)
    n = int(both.sum())
    if n < 10:
        raise InfeasiblePlanError(
            f"The pilot has {n} item(s) scored by both the judge and humans; at least 10 are needed to "
            "estimate R^2. Give r2= instead.")
    with warnings.catch_warnings():
        # a constant judge or a small pilot: the R^2 below says what matters for the plan
        warnings.simplefilter("ignore", DegenerateDataWarning)
        warnings.simplefilter("ignore", SmallSampleWarning)
        res = dr_mean(X[both] if X.shape[1] > 1 else X[both, 0], y[both], 1.0, model=model,  # type: ignore[arg-type]
                      cross_fit="auto" if model != "identity" else 1, rng=rng)
    r2 = float(res.r2)
    if model == "calibrated" and np.isfinite(r2):
        r2 = max(r2, 0.0)
    return r2, float(res.sd_human), n


def required_sample_size(*, n_star: float | None = None, n_total: int | None = None,
                         n_labeled: int | None = None, inclusion_prob: float | None = None,
                         r2: float | None = None, pilot: Any = None, model: str = "calibrated",
                         sd: float | None = None, target_halfwidth: float | None = None,
                         effect_size: float | None = None, power: float = 0.8,
                         significance_level: float = 0.05, confidence_level: float = 0.95,
                         alternative: Literal["two-sided", "less", "greater"] = "two-sided") -> SampleSizeResult:
    r"""Solve the two-stage design relation for the missing sample size.

    With the human variance ``sigma^2``, the residual variance ``sigma_e^2 = sigma^2 (1 - R^2)``
    and a constant inclusion probability ``pi = n/N``, the doubly-robust estimate on ``N``
    LLM-scored items of which ``n`` are human-scored has the variance of a human-only mean on
    ``n*`` items when

    .. math:: \frac{\sigma^2}{n^*} = \frac1N\Big[\sigma^2 + \frac{1-\pi}{\pi}\sigma_e^2\Big]
              \iff \frac{1}{n^*} = \frac{R^2}{N} + \frac{1-R^2}{n}.

    Give any two of ``n*`` (directly, or through ``target_halfwidth`` or ``effect_size``),
    ``n_total`` and ``n_labeled`` (or ``inclusion_prob``), plus ``r2`` (or a ``pilot``); the third
    is solved for.

    Parameters
    ----------
    n_star : float, optional
        Human-only sample size whose precision the design must match.
    n_total : int, optional
        ``N``, the items the LLM scores.
    n_labeled : int, optional
        ``n``, the expected number of human-scored items.
    inclusion_prob : float, optional
        ``pi = n/N`` (instead of ``n_labeled``).
    r2 : float, optional
        ``R^2`` in [0, 1): share of the human variance the prediction model explains (for a
        calibrated model, the squared correlation of judge and human scores).
    pilot : EstimateResult or (judge_scores, human_scores), optional
        Estimate ``r2`` (and ``sd`` when not given) from pilot data instead; with arrays,
        ``model`` says which prediction model the study will use (default ``"calibrated"``, as in :func:`dr_mean`).
    sd : float, optional
        Standard deviation of the human scores (needed for ``target_halfwidth``/``effect_size``).
    target_halfwidth : float, optional
        Wanted half-width ``h`` of the confidence interval: ``n* = (z sd / h)^2``.
    effect_size : float, optional
        Difference ``Delta`` (in score units) from a reference value to detect with ``power`` at
        ``significance_level``: ``n* = ((z_{1-a/2} + z_{power}) sd / Delta)^2`` (``z_{1-a}``
        one-sided).
    power, significance_level, confidence_level, alternative
        Targets for ``effect_size`` / ``target_halfwidth``.

    Returns
    -------
    SampleSizeResult
        ``solved_for``, ``n_star``, ``n_total``, ``n_labeled`` (rounded up when solved),
        ``inclusion_prob`` and, with ``sd``, the ``predicted_se``.

    Raises
    ------
    InfeasiblePlanError
        When no design meets the target: e.g. ``N < n*`` (even scoring every item by humans
        is not enough), or too few human labels to reach ``n*`` however many items the LLM scores
        (``n <= (1 - R^2) n*``). The message says which and by how much.
    InvalidParameterError
        When not exactly two of the three quantities are given, or a value is out of range.

    Notes
    -----
    The relation assumes a constant ``pi``; for strata use :func:`plan_allocation`. It is a
    large-sample approximation: the realised variance matches it within a few percent in the
    simulation tests (``tests/estimation/test_planning.py``).

    Examples
    --------
    Humans alone would need 400 items; the judge explains half the human variance and scores
    2,000 items. How many human labels?

    >>> res = required_sample_size(n_star=400, n_total=2000, r2=0.5)
    >>> res.solved_for, res.n_labeled, round(res.inclusion_prob, 4)
    ('n_labeled', 223, 0.1115)

    A CI half-width of 0.1 on a 1-5 scale with sd 0.9, with 10% of the items human-scored:

    >>> res = required_sample_size(target_halfwidth=0.1, sd=0.9, inclusion_prob=0.1, r2=0.6)
    >>> round(res.n_star, 1), res.n_total, res.n_labeled
    (311.2, 1432, 144)
    """
    func = "required_sample_size"
    check_choice(alternative, "alternative", func, _ALTERNATIVES)
    # ---- R^2 (and sd) ------------------------------------------------------------------------
    if (r2 is None) == (pilot is None):
        raise InvalidParameterError(
            f"{func} needs exactly one of 'r2' (a number in [0, 1)) or 'pilot' (an EstimateResult or "
            "a pair (judge_scores, human_scores)).")
    if pilot is not None:
        if isinstance(pilot, EstimateResult):
            r2v, sd_p = float(pilot.r2), float(pilot.sd_human)
        elif isinstance(pilot, (tuple, list)) and len(pilot) == 2:
            r2v, sd_p, _ = pilot_r2(pilot[0], pilot[1], model=model)
        else:
            raise InvalidParameterError(
                f"The 'pilot' parameter of {func} must be an EstimateResult or a pair "
                f"(judge_scores, human_scores). Got {type(pilot).__name__}.")
        if not math.isfinite(r2v):
            raise InfeasiblePlanError("The pilot's R^2 is undefined (the human scores do not vary).")
        if r2v < 0:
            raise InfeasiblePlanError(
                f"The pilot's R^2 for this prediction model is {r2v:.3g} < 0: the judge's scores predict the "
                "human scores worse than a constant, so LLM scores cannot reduce the number of human "
                "labels. Calibrate the judge (model='linear') or plan a human-only study.")
        if r2v >= 1:
            r2v = 1.0 - 1e-12
        if sd is None and math.isfinite(sd_p) and sd_p > 0:
            sd = sd_p
    else:
        ok = isinstance(r2, (int, float, np.integer, np.floating)) and not isinstance(r2, bool)
        if not ok or not (0 <= float(r2) < 1):  # type: ignore[arg-type]
            raise InvalidParameterError(
                f"The 'r2' parameter of {func} must be a float in [0, 1). Got {r2!r} instead.")
        r2v = float(r2)  # type: ignore[arg-type]
    sdv = float("nan") if sd is None else _pos_float(sd, "sd", func)
    # ---- n* from a target ----------------------------------------------------------------------
    targets = [v is not None for v in (n_star, target_halfwidth, effect_size)]
    if sum(targets) > 1:
        raise InvalidParameterError(
            f"Give at most one of 'n_star', 'target_halfwidth' and 'effect_size' to {func}.")
    hw = es = pw = sl = cl = float("nan")
    nstar: float | None = None
    if n_star is not None:
        nstar = _pos_count(n_star, "n_star", func)
    elif target_halfwidth is not None or effect_size is not None:
        if sd is None:
            raise InvalidParameterError(
                f"{func} needs 'sd' (the standard deviation of the human scores) or a pilot to turn a "
                "half-width or an effect size into a sample size.")
        if target_halfwidth is not None:
            hw = _pos_float(target_halfwidth, "target_halfwidth", func)
            cl = check_confidence_level(confidence_level, func)
            z = float(ndtri(0.5 + cl / 2)) if alternative == "two-sided" else float(ndtri(cl))
            nstar = (z * sdv / hw) ** 2
        else:
            es = _pos_float(abs(effect_size) if isinstance(effect_size, (int, float)) else effect_size,  # type: ignore[arg-type]
                            "effect_size", func)
            pw = check_probability(power, "power", func)
            sl = check_probability(significance_level, "significance_level", func)
            za = float(ndtri(1 - sl / 2)) if alternative == "two-sided" else float(ndtri(1 - sl))
            nstar = ((za + float(ndtri(pw))) * sdv / es) ** 2
        nstar = _plannable(nstar, "an effective sample size n*")
        # n* below one label (a huge half-width or effect size) underflows to 0: one label meets the target
        nstar = max(nstar, 1e-6)
    # ---- the design ----------------------------------------------------------------------------
    big_n = None if n_total is None else _pos_count(n_total, "n_total", func)
    small_n = None if n_labeled is None else _pos_count(n_labeled, "n_labeled", func)
    pi = None if inclusion_prob is None else check_probability(inclusion_prob, "inclusion_prob", func, open_high=False)
    if small_n is not None and pi is not None:
        if big_n is not None:
            raise InvalidParameterError(f"{func}: give 'n_labeled' or 'inclusion_prob' with 'n_total', not all three.")
        big_n = small_n / pi
        pi = None
    known = sum(v is not None for v in (nstar, big_n, small_n if pi is None else pi))
    if known != 2:
        raise InvalidParameterError(
            f"{func} solves for one of n_star, n_total and n_labeled: give exactly two of n_star "
            "(or target_halfwidth / effect_size), n_total and n_labeled (or inclusion_prob). "
            f"Got {known}.")
    if big_n is not None and small_n is not None and small_n > big_n:
        raise InvalidParameterError(
            f"{func}: n_labeled ({small_n:g}) cannot exceed n_total ({big_n:g}): humans score a subsample "
            "of the items the LLM scores.")
    note = ""
    solved = ""
    if nstar is None:
        assert big_n is not None
        n_lab = small_n if small_n is not None else pi * big_n  # type: ignore[operator]
        nstar = 1.0 / (r2v / big_n + (1.0 - r2v) / n_lab)
        N_out, n_out, solved = int(math.ceil(big_n - 1e-9)), int(math.ceil(n_lab - 1e-9)), "n_star"
    elif big_n is not None and small_n is None and pi is None:
        if big_n < nstar * (1 - 1e-12):
            raise InfeasiblePlanError(
                f"Infeasible: the LLM scores N={big_n:g} items but the target needs n*={nstar:.1f}; even if "
                f"humans scored every item the variance would be sigma^2/{big_n:g}, above sigma^2/n*. "
                f"Score at least {math.ceil(nstar)} items.")
        n_lab = (1.0 - r2v) / (1.0 / nstar - r2v / big_n)
        n_lab = min(n_lab, big_n)
        n_lab = _plannable(n_lab, "a number of human labels n")
        N_out, n_out, solved = int(math.ceil(big_n - 1e-9)), int(math.ceil(n_lab - 1e-9)), "n_labeled"
    elif small_n is not None:
        if small_n >= nstar:
            note = (f"n_labeled={small_n:g} >= n*={nstar:.1f}: humans alone reach the target; "
                    "no LLM-scored items are needed beyond those.")
            N_out = n_out = int(math.ceil(small_n - 1e-9))
            solved = "none"
        else:
            need = (1.0 - r2v) * nstar
            if small_n <= need * (1 + 1e-12):
                raise InfeasiblePlanError(
                    f"Infeasible: with R^2={r2v:.3g}, n={small_n:g} human labels reach at most an effective "
                    f"sample size of n/(1-R^2)={small_n / (1 - r2v):.1f} < n*={nstar:.1f}, however many items "
                    f"the LLM scores. Need more than {need:.1f} human labels (or a better-calibrated judge).")
            big = _plannable(r2v / (1.0 / nstar - (1.0 - r2v) / small_n), "a number of LLM-scored items N")
            N_out, n_out, solved = int(math.ceil(big - 1e-9)), int(math.ceil(small_n - 1e-9)), "n_total"
    else:
        assert pi is not None
        big = _plannable(nstar * (1.0 + (1.0 / pi - 1.0) * (1.0 - r2v)), "a number of LLM-scored items N")
        N_out = int(math.ceil(big - 1e-9))
        n_out = int(math.ceil(pi * N_out - 1e-9))
        solved = "n_total"
    pred_se = float("nan")
    if math.isfinite(sdv):
        pred_se = sdv * math.sqrt(r2v / N_out + (1.0 - r2v) / n_out)
    return SampleSizeResult(
        solved_for=solved, n_star=float(nstar), n_total=N_out, n_labeled=n_out, inclusion_prob=n_out / N_out,
        r2=r2v, sd=sdv, predicted_se=pred_se, target_halfwidth=hw, effect_size=es, power=pw,
        significance_level=sl, confidence_level=cl, note=note)


# ------------------------------------------------------------------------------------ allocation
def _strata_frame(strata: Any, costs: Any, func: str) -> pd.DataFrame:
    if isinstance(strata, pd.DataFrame):
        df = strata.copy()
        if "stratum" not in df.columns:
            df = df.reset_index().rename(columns={df.index.name or "index": "stratum"})
    elif isinstance(strata, Mapping):
        rows = []
        for k, v in strata.items():
            if not isinstance(v, Mapping):
                raise InvalidParameterError(
                    f"The 'strata' parameter of {func} maps each stratum to a dict like "
                    "{'n_items': 500, 'residual_sd': 0.8}. Got " + f"{type(v).__name__} for {k!r}.")
            rows.append({"stratum": k, **v})
        df = pd.DataFrame(rows)
    else:
        try:
            df = pd.DataFrame(list(strata))
        except TypeError:
            raise InvalidParameterError(
                f"The 'strata' parameter of {func} must be a DataFrame, a mapping or a list of dicts with "
                f"n_items and residual_sd. Got {type(strata).__name__}.") from None
        if "stratum" not in df.columns:
            df.insert(0, "stratum", np.arange(len(df)))
    if df.empty:
        raise InvalidParameterError(f"The 'strata' parameter of {func} holds no stratum.")
    for col in ("n_items", "residual_sd"):
        if col not in df.columns:
            raise InvalidParameterError(
                f"The 'strata' parameter of {func} needs a column '{col}'. Got columns {list(df.columns)}.")
    if costs is not None:
        if isinstance(costs, Mapping):
            miss = [s for s in df["stratum"] if s not in costs]
            if miss:
                raise InvalidParameterError(f"The 'costs' parameter of {func} has no cost for stratum {miss[0]!r}.")
            df["cost"] = [costs[s] for s in df["stratum"]]
        else:
            df["cost"] = costs
    elif "cost" not in df.columns:
        df["cost"] = 1.0
    for col in ("n_items", "residual_sd", "cost") + (("sd",) if "sd" in df.columns else ()):
        try:
            vals = pd.to_numeric(df[col]).to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameterError(f"The '{col}' values given to {func} must be numbers.") from None
        low_ok = vals > 0 if col in ("n_items", "cost") else vals >= 0
        if not np.all(np.isfinite(vals) & low_ok):
            bad = df["stratum"].iloc[int(np.flatnonzero(~(np.isfinite(vals) & low_ok))[0])]
            need = "positive" if col in ("n_items", "cost") else "non-negative"
            raise InvalidParameterError(f"The '{col}' of stratum {bad!r} given to {func} must be {need}.")
        df[col] = vals
    return df


def plan_allocation(strata: Any, *, budget: float, costs: Any = None,
                    min_inclusion_prob: float = 0.0) -> AllocationResult:
    r"""Neyman-type inclusion probabilities: more human labels where the judge predicts worse.

    Minimises the residual penalty ``sum_h N_h (1/pi_h - 1) sigma_e,h^2`` subject to the
    expected cost ``sum_h N_h pi_h c_h = budget``; the solution is

    .. math:: \pi_h = k\, \sigma_{e,h} / \sqrt{c_h}, \quad 0 < \pi_h \le 1,

    with ``k`` set so the budget is spent exactly. Strata whose ``pi_h`` would exceed 1 are
    labelled completely and the rest of the budget is re-spread over the others (repeated until no
    stratum exceeds 1); likewise for the floor ``min_inclusion_prob``.

    Parameters
    ----------
    strata : DataFrame, mapping or list of dicts
        One entry per stratum with ``n_items`` (``N_h``), ``residual_sd`` (``sigma_e,h``, the sd of
        human minus predicted score, e.g. from a pilot), optionally ``cost`` (per human label)
        and ``sd`` (sd of the human scores, to report the full variance).
    budget : float
        Expected total cost of human labels (with unit costs: the expected number of labels).
    costs : float or mapping stratum -> cost, optional
        Overrides a ``cost`` column (default 1 per label).
    min_inclusion_prob : float, default 0
        Floor for every ``pi_h``. Unbiasedness needs ``pi > 0`` everywhere; a stratum with
        ``residual_sd = 0`` would otherwise get ``pi = 0`` (a warning says so).

    Returns
    -------
    AllocationResult
        The per-stratum table (``inclusion_prob``, ``expected_labels``, ``proportional_prob``),
        the predicted variance against proportional allocation at the same budget and their ratio.

    Raises
    ------
    InfeasiblePlanError
        When the budget cannot pay for the floor probabilities.

    Examples
    --------
    >>> res = plan_allocation({"easy": {"n_items": 800, "residual_sd": 0.3},
    ...                        "hard": {"n_items": 200, "residual_sd": 1.2}}, budget=200)
    >>> res.strata[["stratum", "inclusion_prob"]].round(3).to_dict("records")
    [{'stratum': 'easy', 'inclusion_prob': 0.125}, {'stratum': 'hard', 'inclusion_prob': 0.5}]
    >>> round(res.relative_efficiency, 2)   # (288 + 1152) / (504 + 288)
    1.82
    """
    func = "plan_allocation"
    budget = _pos_float(budget, "budget", func)
    floor = float(min_inclusion_prob)
    if not (0 <= floor <= 1):
        raise InvalidParameterError(
            f"The 'min_inclusion_prob' parameter of {func} must be in [0, 1]. Got {min_inclusion_prob!r}.")
    df = _strata_frame(strata, costs, func)
    n_h = df["n_items"].to_numpy(float)
    s_h = df["residual_sd"].to_numpy(float)
    c_h = df["cost"].to_numpy(float)
    full_cost = float(np.sum(n_h * c_h))
    floor_cost = float(np.sum(n_h * c_h * floor))
    if budget < floor_cost * (1 - 1e-12):
        raise InfeasiblePlanError(
            f"Infeasible: the budget {budget:g} cannot pay for min_inclusion_prob={floor:g} in every stratum "
            f"(that costs {floor_cost:g}). Raise the budget or lower the floor.")
    pi = np.zeros(n_h.size)
    fixed = np.zeros(n_h.size, dtype=bool)
    n_iter = 0
    if budget >= full_cost:
        pi[:] = 1.0
        fixed[:] = True
    while not fixed.all():
        n_iter += 1
        free = ~fixed
        left = budget - float(np.sum(n_h[fixed] * c_h[fixed] * pi[fixed]))
        denom = float(np.sum(n_h[free] * s_h[free] * np.sqrt(c_h[free])))
        if denom <= 0:  # every free stratum is predicted perfectly: spend nothing more there
            pi[free] = floor
            break
        k = left / denom
        cand = k * s_h / np.sqrt(c_h)
        over = free & (cand >= 1.0)
        under = free & (cand < floor)
        if over.any():
            pi[over] = 1.0
            fixed |= over
            continue
        if under.any():
            pi[under] = floor
            fixed |= under
            continue
        pi[free] = cand[free]
        break
    if np.any((pi == 0) & (n_h > 0)):
        zero = df["stratum"][pi == 0].tolist()
        warnings.warn(
            f"Strata {zero} have residual_sd 0 and get inclusion probability 0: their items can never be "
            "human-scored, and dr_mean needs pi > 0 on every item. Set min_inclusion_prob > 0.",
            DegenerateDataWarning, stacklevel=2)
    p_prop = min(1.0, budget / full_cost)
    big_n = float(n_h.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        pen = np.where(s_h > 0, n_h * (1.0 / pi - 1.0) * s_h**2, 0.0)
    v_opt = float(np.sum(pen)) / big_n**2
    v_prop = float(np.sum(n_h * (1.0 / p_prop - 1.0) * s_h**2)) / big_n**2
    has_sd = "sd" in df.columns
    if has_sd:
        base = float(np.sum(n_h * df["sd"].to_numpy(float) ** 2)) / big_n**2
        v_opt += base
        v_prop += base
    out = pd.DataFrame({
        "stratum": df["stratum"].to_numpy(), "n_items": n_h, "residual_sd": s_h, "cost": c_h,
        "inclusion_prob": pi, "expected_labels": n_h * pi, "expected_cost": n_h * pi * c_h,
        "proportional_prob": np.full(n_h.size, p_prop),
    })
    spent = float(out["expected_cost"].sum())
    eff = v_prop / v_opt if v_opt > 0 else (1.0 if v_prop == 0 else float("inf"))
    return AllocationResult(strata=out, budget=budget, spent=spent, variance=v_opt, variance_proportional=v_prop,
                            relative_efficiency=eff, n_iter=n_iter, includes_human_variance=has_sd)
