"""Active, cost-aware inclusion probabilities for the human sample (private).

Neyman's rule for the doubly-robust estimator: the residual term of its variance is
``(1/N^2) sum_i (1/pi_i - 1) sigma_i^2`` with ``sigma_i^2 = E[(Y - m(X))^2 | X_i]``; for an
expected cost ``sum_i c_i pi_i = B`` it is smallest at ``pi_i ∝ sigma_i / sqrt(c_i)``. The
``sigma_i`` are predicted (from a pilot's residuals, or from how much the judges disagree), so the
rule is mixed with the uniform design (``floor``): a bad prediction of ``sigma`` then costs little,
and every item keeps a positive probability, which the estimator's validity needs.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._checks import as_generator, check_choice
from ..exceptions import DegenerateDataWarning, InvalidParameterError
from ._models import cross_fit_predict
from ._results import ActiveDesign

__all__ = ["plan_active", "UNCERTAINTY"]

UNCERTAINTY = ("auto", "residual", "disagreement", "uniform")
#: fewest pilot labels a residual model is fitted on (``uncertainty="auto"`` falls back below it)
MIN_PILOT = 20


def _disagreement(X: np.ndarray) -> np.ndarray:
    """Spread of the judges' standardised scores on each item (no human label needed)."""
    sd = X.std(axis=0)
    keep = sd > 0
    Z = (X[:, keep] - X[:, keep].mean(axis=0)) / sd[keep]
    return Z.std(axis=1)


def _residual_sd(X: np.ndarray, y: np.ndarray, lab: np.ndarray, model: str, rng: np.random.Generator
                 ) -> np.ndarray:
    """Predicted ``E|Y - m(X)|`` for every item from the pilot: cross-fitted residuals of ``model``
    regressed (least squares) on ``m``, ``m^2`` and the judges' disagreement."""
    n_lab = int(lab.sum())
    folds = 5 if n_lab >= 25 else 2
    pi = np.ones(y.size)
    keep = X.std(axis=0) > 0
    m = cross_fit_predict(X[:, keep], y, pi, lab, model="ridge" if model == "calibrated" else model,
                          n_folds=folds, rng=rng, clusters=None, func="plan_active")
    e = np.abs(y[lab] - m[lab])
    mz = (m - m.mean()) / (m.std() if m.std() > 0 else 1.0)
    feats = [np.ones(y.size), mz, mz**2]
    if X.shape[1] > 1:
        d = _disagreement(X)
        feats.append((d - d.mean()) / (d.std() if d.std() > 0 else 1.0))
    F = np.column_stack(feats)
    beta = np.linalg.lstsq(F[lab], e, rcond=None)[0]
    s = F @ beta
    # a linear fit can dip below zero at the edges: never predict less than a tenth of the mean
    floor = 0.1 * float(e.mean()) if e.mean() > 0 else 1.0
    return np.maximum(s, floor)


def _spend(q: np.ndarray, cost: np.ndarray, budget: float) -> tuple[np.ndarray, float, int]:
    """``pi = min(1, k q / sqrt(c))`` with ``k`` such that ``sum c pi = budget`` (capping repeated);
    returns ``(pi, k, passes)``."""
    r = q / np.sqrt(cost)
    pi = np.zeros(q.size)
    fixed = np.zeros(q.size, dtype=bool)
    n_iter = 0
    while True:
        n_iter += 1
        left = budget - float(np.sum(cost[fixed]))
        free = ~fixed
        k = left / float(np.sum(cost[free] * r[free]))
        cand = k * r
        over = free & (cand >= 1.0)
        if not over.any():
            pi[free] = cand[free]
            pi[fixed] = 1.0
            return pi, k, n_iter
        fixed |= over


def plan_active(judge_scores: Any, *, budget: float, costs: Any = None, human_scores: Any = None,
                pilot_prob: Any = None, uncertainty: Literal["auto", "residual", "disagreement", "uniform"] = "auto",
                floor: float = 0.3, model: str = "calibrated",
                rng: int | np.random.Generator | None = None) -> ActiveDesign:
    r"""Inclusion probabilities that put the human labels where the judges are least reliable.

    .. math:: \pi_i = \min\Big(1,\; k\,\frac{(1-\tau)\,\hat s_i/\bar s + \tau}{\sqrt{c_i}}\Big),
              \qquad \sum_{i\ \text{unlabelled}} c_i \pi_i = B

    with ``s_i`` the predicted size of the residual ``|Y - m(X)|`` of item ``i``, ``c_i`` its cost
    and ``tau = floor`` the share of the uniform design mixed in (every item keeps ``pi_i > 0``).

    With a pilot (items already scored by humans, drawn with known probabilities ``p_i``), the
    second phase draws the items not in the pilot with ``pi_i`` (``draw_prob``; the budget is
    spent on them), and the probability that an item ends up human-scored is
    ``p_i + (1 - p_i) pi_i`` (``inclusion_prob``, what :func:`dr_mean` needs; every pilot label
    then still speaks for the whole population). The second-phase rule is learned from the pilot,
    so these probabilities are treated as fixed given it: a large-sample approximation (the
    floor keeps any one pilot item's influence on them small), checked by simulation for
    coverage and bias in the tests.

    Parameters
    ----------
    judge_scores : array-like, shape (N,) or (N, p), or DataFrame
        Every judge's score of every item (all finite).
    budget : float
        Expected cost of the new human labels (with unit costs: the expected number of new labels).
    costs : float or array-like, shape (N,), optional
        Cost of a human label for each item (> 0; e.g. proportional to its length). Default 1.
    human_scores : array-like, shape (N,), optional
        A pilot: human scores where known, ``nan`` elsewhere. Needed for ``"residual"``.
    pilot_prob : float or array-like, shape (N,), optional
        The probability with which each item was drawn into the pilot (required with a pilot:
        without it the pilot's labels cannot enter a design-based estimate).
    uncertainty : {"auto", "residual", "disagreement", "uniform"}, default "auto"
        How ``s_i`` is predicted: ``"residual"`` regresses the pilot's cross-fitted absolute
        residuals of ``model`` on the prediction, its square and the judges' disagreement;
        ``"disagreement"`` is the spread of the judges' standardised scores (several judges, no
        human label needed); ``"uniform"`` gives every item the same ``s`` (cost-aware only).
        ``"auto"``: residual with at least 20 pilot labels, else disagreement with several
        judges, else uniform.
    floor : float in [0, 1], default 0.3
        Share ``tau`` of the uniform design mixed in. ``1`` is the uniform (cost-weighted) design.
    model : str, default "calibrated"
        The prediction model whose residuals are predicted (as in :func:`dr_mean`).
    rng : int, numpy.random.Generator or None
        Randomness of the cross-fitting folds.

    Returns
    -------
    ActiveDesign
        ``inclusion_prob`` per item (overall, for :func:`dr_mean`), ``draw_prob`` (second phase,
        for the items not in the pilot), the predicted ``uncertainty``, ``cost``,
        the expected cost and number of new labels, and the predicted residual variance relative
        to the uniform design at the same budget (``variance_ratio`` < 1: the design helps, if
        the predicted ``s`` is right).

    Raises
    ------
    InvalidParameterError
        Costs that are not positive and finite, a budget that is not positive, missing judge
        scores, ``"residual"`` without a pilot.

    Notes
    -----
    Draw the sample with :func:`draw_human_sample` (``draw_human_sample(items, design)``), which
    records the probabilities; estimate with :func:`dr_mean` and those probabilities. A budget
    that pays for every unlabelled item gives ``pi = 1`` everywhere.

    References
    ----------
    Zrnic & Candès, *Active statistical inference* (ICML 2024; arXiv 2403.03208).
    Gligorić, Zrnic, Lee, Candès & Jurafsky, *Can unconfident LLM annotations be used for
    confident conclusions?* (confidence-driven inference; NAACL 2025; arXiv 2408.15204).
    Neyman, *On the two different aspects of the representative method* (1934).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(3, 1, (500, 2))
    >>> d = plan_active(X, budget=50, uncertainty="disagreement")
    >>> round(float(d.inclusion_prob.sum()), 6), bool(d.inclusion_prob.min() > 0)
    (50.0, True)
    """
    func = "plan_active"
    check_choice(uncertainty, "uncertainty", func, UNCERTAINTY)
    from ._dr import _judge_matrix

    ok = isinstance(budget, (int, float, np.integer, np.floating)) and not isinstance(budget, bool)
    if not ok or not math.isfinite(float(budget)) or float(budget) <= 0:
        raise InvalidParameterError(f"The 'budget' parameter of {func} must be a positive number. Got {budget!r}.")
    ok = isinstance(floor, (int, float, np.integer, np.floating)) and not isinstance(floor, bool)
    if not ok or not (0.0 <= float(floor) <= 1.0):
        raise InvalidParameterError(f"The 'floor' parameter of {func} must be a number in [0, 1]. Got {floor!r}.")
    tau = float(floor)
    x0 = np.asarray(judge_scores, dtype=object)
    n = x0.shape[0] if x0.ndim >= 1 else 0
    if n == 0:
        raise InvalidParameterError(f"The 'judge_scores' parameter of {func} holds no item.")
    X, names, _ = _judge_matrix(judge_scores, n, func)
    if human_scores is None:
        y = np.full(n, np.nan)
    else:
        try:
            y = np.asarray(human_scores, dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameterError(f"The 'human_scores' parameter of {func} must be numbers (nan where "
                                        "not scored).") from None
        if y.shape != (n,):
            raise InvalidParameterError(
                f"The 'human_scores' parameter of {func} must have one value per item ({n}). Got shape {y.shape}.")
    lab = np.isfinite(y)
    if costs is None:
        c = np.ones(n)
    else:
        try:
            c = np.broadcast_to(np.asarray(costs, dtype=float), (n,)).copy()
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"The 'costs' parameter of {func} must be a positive number or one per item ({n}).") from None
        bad = ~(np.isfinite(c) & (c > 0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidParameterError(
                f"The 'costs' parameter of {func} must be positive and finite for every item (a label cannot be "
                f"free or cost a negative amount). Item {i} has {c[i]!r} ({int(bad.sum())} bad value(s)).")
    n_lab = int(lab.sum())
    source = uncertainty
    if source == "auto":
        source = "residual" if n_lab >= MIN_PILOT else ("disagreement" if X.shape[1] > 1 else "uniform")
    if source == "residual":
        if n_lab < 10:
            raise InvalidParameterError(
                f"uncertainty='residual' of {func} fits a residual model on the pilot's human scores; got {n_lab} "
                "(at least 10 needed). Pass human_scores, or use uncertainty='disagreement'.")
        s = _residual_sd(X, y, lab, model, as_generator(rng))
    elif source == "disagreement":
        if X.shape[1] < 2:
            raise InvalidParameterError(
                f"uncertainty='disagreement' of {func} needs several judge columns (it is their spread); got one.")
        s = _disagreement(X)
        if not np.any(s > 0):
            warnings.warn(f"{func}: the judges never disagree; the design is uniform.", DegenerateDataWarning,
                          stacklevel=2)
            s = np.ones(n)
        else:
            # an item where the judges agree exactly still has a residual: shrink towards the mean
            s = s + 0.1 * float(s.mean())
    else:
        s = np.ones(n)
    if n_lab:
        if pilot_prob is None:
            raise InvalidParameterError(
                f"{func} with a pilot (human_scores) needs 'pilot_prob', the probability with which each item was "
                "drawn into the pilot: the pilot's labels enter the estimate weighted by it.")
        try:
            p1 = np.broadcast_to(np.asarray(pilot_prob, dtype=float), (n,)).copy()
        except (TypeError, ValueError):
            raise InvalidParameterError(f"The 'pilot_prob' parameter of {func} must be a probability or one per "
                                        f"item ({n}).") from None
        bad = ~((p1 > 0) & (p1 <= 1))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidParameterError(
                f"The 'pilot_prob' parameter of {func} must be in (0, 1] for every item (a pilot item drawn with "
                f"probability 0 cannot be weighted). Item {i} has {p1[i]!r}.")
    else:
        p1 = np.zeros(n)
    todo = ~lab
    draw = np.zeros(n)
    full_cost = float(c[todo].sum())
    n_iter = 0
    q = (1.0 - tau) * s / float(s[todo].mean() if todo.any() else s.mean()) + tau
    if budget >= full_cost:
        note = (f"the budget {budget:g} pays for every unlabelled item (cost {full_cost:g}): every item is "
                "sent to humans.")
        draw[:] = 1.0
    else:
        note = ""
        draw[todo], k, n_iter = _spend(q[todo], c[todo], float(budget))
        draw[lab] = np.minimum(1.0, k * q[lab] / np.sqrt(c[lab]))  # what a pilot item would have had
    pi = p1 + (1.0 - p1) * draw
    # predicted residual variance (up to the unknown scale of s) against the uniform design
    s2 = s * s
    if budget < full_cost:
        uni_todo, k_u, _ = _spend(np.ones(int(todo.sum())), c[todo], float(budget))
        uni = np.minimum(1.0, k_u / np.sqrt(c))
        uni[todo] = uni_todo
    else:
        uni = np.ones(n)
    pu = p1 + (1.0 - p1) * uni
    v_act = float(np.sum((1.0 / pi - 1.0) * s2))
    v_uni = float(np.sum((1.0 / pu - 1.0) * s2))
    ratio = v_act / v_uni if v_uni > 0 else 1.0
    frame = pd.DataFrame({"inclusion_prob": pi, "draw_prob": np.where(lab, 0.0, draw), "uncertainty": s,
                          "cost": c, "labelled": lab})
    return ActiveDesign(
        table=frame, inclusion_prob=pi, draw_prob=np.where(lab, 0.0, draw), budget=float(budget),
        expected_cost=float(np.sum(c[todo] * draw[todo])), expected_new_labels=float(draw[todo].sum()), n_pilot=n_lab, uncertainty_source=source, floor=tau,
        variance_ratio=ratio, n_judges=X.shape[1], n_iter=n_iter, note=note)
