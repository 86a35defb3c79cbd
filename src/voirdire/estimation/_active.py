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
from ._models import cross_fit_predict, fold_ids
from ._results import ActiveDesign

__all__ = ["plan_active", "UNCERTAINTY"]

UNCERTAINTY = ("auto", "residual", "disagreement", "uniform")
#: fewest pilot labels a residual model is fitted on (``uncertainty="auto"`` falls back below it)
MIN_PILOT = 20
#: the floors ``floor="auto"`` chooses among (1 is the uniform design)
FLOORS = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
#: the floor ``floor="auto"`` uses without a pilot to judge the residual model by
DEFAULT_FLOOR = 0.3
_SE_K = 1.0


def _disagreement(X: np.ndarray) -> np.ndarray:
    """Spread of the judges' standardised scores on each item (no human label needed)."""
    sd = X.std(axis=0)
    keep = sd > 0
    Z = (X[:, keep] - X[:, keep].mean(axis=0)) / sd[keep]
    return Z.std(axis=1)


def _variance_features(X: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Features of the conditional residual variance: the prediction, its square (residuals often
    shrink near the ends of a bounded scale) and, with several judges, their disagreement; all
    standardised over the items."""
    mz = (m - m.mean()) / (m.std() if m.std() > 0 else 1.0)
    feats = [np.ones(m.size), mz, mz**2]
    if X.shape[1] > 1:
        d = _disagreement(X)
        feats.append((d - d.mean()) / (d.std() if d.std() > 0 else 1.0))
    return np.column_stack(feats)


def _fit_variance(F: np.ndarray, e2: np.ndarray, w: np.ndarray, penalty: float = 1.0) -> np.ndarray:
    """Coefficients of ``E[e^2 | F] = exp(F beta)``: quasi-Poisson regression (log link, weights
    ``w``) by iteratively reweighted least squares, the slopes ridge-penalised (``penalty`` times a
    pseudo-item) so that a pilot of a few dozen labels gives a tame fit. The log link keeps every
    predicted variance positive; the quasi-Poisson score equations ask only that the mean be
    right, not that ``e^2`` have any particular distribution (McCullagh & Nelder 1989, ch. 9)."""
    scale = float(np.sum(w * e2) / np.sum(w))
    if not scale > 0:
        beta = np.zeros(F.shape[1])
        return beta
    t = e2 / scale  # mean 1: the penalty means the same whatever the unit of the scores
    pen = np.full(F.shape[1], penalty)
    pen[0] = 0.0
    beta = np.zeros(F.shape[1])
    for _ in range(30):
        eta = np.clip(F @ beta, -6.0, 6.0)
        mu = np.exp(eta)
        W = w * mu
        z = eta + (t - mu) / mu
        new = np.linalg.solve(F.T @ (F * W[:, None]) + np.diag(pen * float(np.mean(W))), F.T @ (W * z))
        done = float(np.max(np.abs(new - beta))) < 1e-8
        beta = new
        if done:
            break
    beta[0] += math.log(scale)
    return beta


def _residual_sd(X: np.ndarray, y: np.ndarray, lab: np.ndarray, w: np.ndarray, model: str,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Neyman's ``sigma_i``: the square root of the conditional variance of the residual
    ``Y - m(X)`` predicted for every item from the pilot (:func:`_fit_variance` on the
    cross-fitted residuals of ``model``, pilot items weighted by ``w = 1/p``).

    Returns ``(s, s_pilot, e2)``: the prediction for every item (fitted on the whole pilot), the
    pilot items' predictions cross-fitted (each fitted without its own residual; what the floor
    choice judges the model by) and the pilot's squared residuals."""
    n_lab = int(lab.sum())
    folds = 5 if n_lab >= 25 else 2
    pi = np.ones(y.size)
    keep = X.std(axis=0) > 0
    m = cross_fit_predict(X[:, keep], y, pi, lab, model=model,
                          n_folds=folds, rng=rng, clusters=None, func="plan_active")
    li = np.flatnonzero(lab)
    e2 = (y[li] - m[li]) ** 2
    F = _variance_features(X, m)
    wl = w[li]
    v = np.exp(np.clip(F @ _fit_variance(F[li], e2, wl), -50.0, 50.0))
    fold = fold_ids(li.size, folds, rng)
    v_cf = np.empty(li.size)
    for k in range(folds):
        out = fold == k
        if not out.any():
            continue
        if (~out).sum() < F.shape[1] + 1:  # too few to fit: the plain mean
            v_cf[out] = float(np.sum(wl[~out] * e2[~out]) / np.sum(wl[~out])) if (~out).any() else float(e2.mean())
            continue
        v_cf[out] = np.exp(np.clip(F[li][out] @ _fit_variance(F[li][~out], e2[~out], wl[~out]), -50.0, 50.0))
    # never predict a variance below a hundredth of the pilot's mean (an sd a tenth of it)
    low = 0.01 * float(np.sum(wl * e2) / np.sum(wl)) if e2.size and e2.mean() > 0 else 1.0
    return np.sqrt(np.maximum(v, low)), np.sqrt(np.maximum(v_cf, low)), e2


def _choose_floor(s: np.ndarray, s_pilot: np.ndarray, e2: np.ndarray, w_pilot: np.ndarray, cost: np.ndarray,
                  cost_pilot: np.ndarray, todo: np.ndarray, budget: float) -> float:
    """The floor whose predicted second-phase variance is smallest, judged on the pilot.

    For each candidate ``tau`` in :data:`FLOORS` the pilot items get the probability the design
    would give them (from their cross-fitted ``sigma``), and ``sum_pilot w (1/pi_tau - 1) e^2``
    estimates the design's residual variance over the population. A candidate replaces the
    uniform design (``tau = 1``) only if its estimated variance is below uniform's by more than
    one standard error of the difference (the one-standard-error rule): with a residual model
    that has no skill, the uniform design is kept."""
    best, best_score = 1.0, 0.0
    uni = None
    for tau in sorted(FLOORS, reverse=True):
        q = (1.0 - tau) * s[todo] / float(s[todo].mean()) + tau
        _, k, _ = _spend(q, cost[todo], budget)
        qp = (1.0 - tau) * s_pilot / float(s[todo].mean()) + tau
        inv = 1.0 / np.minimum(1.0, k * qp / np.sqrt(cost_pilot))
        if uni is None:
            uni = inv
            continue
        d = w_pilot * (inv - uni) * e2
        score = float(d.sum()) + _SE_K * float(np.sqrt(np.sum(d * d)))
        if score < best_score:
            best, best_score = tau, score
    return best


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
                floor: float | Literal["auto"] = "auto", model: str = "calibrated",
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
        How ``s_i`` is predicted: ``"residual"`` fits the conditional variance of the pilot's
        cross-fitted residuals of ``model`` (log link, quasi-Poisson, on the prediction, its square
        and the judges' disagreement) and takes ``s_i`` its square root, Neyman's ``sigma_i``;
        ``"disagreement"`` is the spread of the judges' standardised scores (several judges, no
        human label needed); ``"uniform"`` gives every item the same ``s`` (cost-aware only).
        ``"auto"``: residual with at least 20 pilot labels, else disagreement with several
        judges, else uniform.
    floor : "auto" or float in [0, 1], default "auto"
        Share ``tau`` of the uniform design mixed in. ``1`` is the uniform (cost-weighted) design.
        ``"auto"``: with a residual model, the candidate in (0.1, 0.2, 0.3, 0.5, 0.7, 1) whose
        variance, estimated on the pilot from cross-fitted predictions of ``sigma``, beats the
        uniform design's by more than one standard error of the difference (else ``1``: a residual
        model without skill leaves the design uniform); 0.3 otherwise.
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
    auto_floor = isinstance(floor, str) and floor == "auto"
    ok = isinstance(floor, (int, float, np.integer, np.floating)) and not isinstance(floor, bool)
    if not auto_floor and (not ok or not (0.0 <= float(floor) <= 1.0)):
        raise InvalidParameterError(
            f"The 'floor' parameter of {func} must be 'auto' or a number in [0, 1]. Got {floor!r}.")
    tau = DEFAULT_FLOOR if auto_floor else float(floor)
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
    source = uncertainty
    if source == "auto":
        source = "residual" if n_lab >= MIN_PILOT else ("disagreement" if X.shape[1] > 1 else "uniform")
    if source == "residual":
        if n_lab < 10:
            raise InvalidParameterError(
                f"uncertainty='residual' of {func} fits a residual model on the pilot's human scores; got {n_lab} "
                "(at least 10 needed). Pass human_scores, or use uncertainty='disagreement'.")
        w_pilot = 1.0 / p1[lab]
        s, s_pilot, e2 = _residual_sd(X, y, lab, np.where(lab, 1.0 / np.where(lab, p1, 1.0), 0.0), model,
                                      as_generator(rng))
        if auto_floor and todo.any() and budget < float(c[todo].sum()):
            tau = _choose_floor(s, s_pilot, e2, w_pilot, c, c[lab], todo, float(budget))
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
