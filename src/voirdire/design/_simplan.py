"""The simulation planner: FR and FA of the whole leave-one-out decision at candidate budgets."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._checks import check_choice, check_positive_int, check_probability
from .._results import Result
from .._simulation import ExperimentSetting, LatentClassModel, run_experiment
from ..data import AnnotationTable
from ..exceptions import InvalidParameterError
from .._checks import check_epsilon
from ._core import DESIGNS

__all__ = ["SimulationPlanResult", "plan_by_simulation", "fit_latent_class"]

_ASSUMPTIONS = (
    "labels follow a latent class model with symmetric noise (a wrong label is uniform over the others)",
    "humans are exchangeable with one accuracy (fitted from their mean pairwise agreement when planning from a pilot)",
    "items are independent (no clusters); the design has one primary labelling every item and K-1 secondaries",
    "FR is measured on a probe judge whose population difference is pass_d, FA on one at reject_d",
)


def _pair_agreement(codes: np.ndarray, L: int, a: np.ndarray, b: np.ndarray) -> tuple[float, int]:
    """Pair-weighted observed agreement between column groups ``a`` and ``b`` (distinct raters)."""
    agree = n = 0
    for i in a:
        for j in b:
            if i == j:
                continue
            ok = (codes[:, i] >= 0) & (codes[:, i] < L) & (codes[:, j] >= 0) & (codes[:, j] < L)
            agree += int((codes[ok, i] == codes[ok, j]).sum())
            n += int(ok.sum())
    return (agree / n if n else float("nan")), n


def fit_latent_class(pilot: AnnotationTable, *, judges: Sequence[str] | None = None) -> dict[str, Any]:
    """Method-of-moments fit of the symmetric latent class model to a pilot.

    The humans' common accuracy ``a`` solves ``a^2 + (1 - a)^2 / (L - 1) = p_hh`` (mean pairwise
    human agreement); each judge's accuracy ``b`` solves ``a b + (1 - a)(1 - b) / (L - 1) = p_jh``.
    Prevalence is the share of each category among the human labels. Returns a dict with
    ``human_accuracy``, ``judge_accuracies``, ``prevalence``, ``n_categories``, ``p_hh``, ``p_jh``.

    Examples
    --------
    >>> from voirdire.design import fit_latent_class
    >>> from voirdire.simulate import simulate_annotations
    >>> sim = simulate_annotations(n_items=3000, n_humans=3, judge_accuracies=[0.7], rng=0)
    >>> fit = fit_latent_class(sim.table)
    >>> round(fit["human_accuracy"], 2), round(fit["judge_accuracies"]["judge_1"], 2)
    (0.85, 0.7)
    """
    L = pilot.n_categories
    if L < 2:
        raise InvalidParameterError(f"The pilot {pilot.source} has fewer than two categories; nothing to fit.")
    codes = pilot.dense()
    hidx = pilot.human_idx
    p_hh, n_hh = _pair_agreement(codes, L, hidx, hidx)
    if not n_hh:
        raise InvalidParameterError(f"No two humans share an item in {pilot.source}: the human accuracy cannot be fitted.")
    disc = 1.0 - L + L * (L - 1) * p_hh
    a = (1.0 + math.sqrt(max(disc, 0.0))) / L
    a = min(max(a, 1.0 / L), 1.0)
    names = list(pilot.judges) if judges is None else [str(j) for j in judges]
    js, pj = [], []
    for j in names:
        p, n = _pair_agreement(codes, L, np.array([pilot.rater_index(j)]), hidx)
        if not n:
            raise InvalidParameterError(f"Judge {j!r} shares no item with a human in {pilot.source}.")
        c = (1 - a) / (L - 1)
        b = (p - c) / (a - c) if a > c else float("nan")
        js.append(min(max(b, 0.0), 1.0))
        pj.append(p)
    h = codes[:, hidx]
    vals = h[(h >= 0) & (h < L)]
    prev = np.bincount(vals, minlength=L) / max(vals.size, 1)
    return {"human_accuracy": a, "judge_accuracies": dict(zip(names, js)), "prevalence": prev,
            "n_categories": L, "p_hh": p_hh, "p_jh": dict(zip(names, pj))}


def _d_at(b: float, human_accuracy: np.ndarray, L: int) -> float:
    """Population LOO difference (mean over held-out humans) of a judge with accuracy ``b``."""
    h = np.asarray(human_accuracy, float)
    out = []
    for k in range(h.size):
        pool = np.delete(h, k)
        pj = np.mean(b * pool + (1 - b) * (1 - pool) / (L - 1))
        ph = np.mean(h[k] * pool + (1 - h[k]) * (1 - pool) / (L - 1))
        out.append(pj - ph)
    return float(np.mean(out))


def _accuracy_for_d(d: float, human_accuracy: np.ndarray, L: int) -> float:
    """Judge accuracy whose population LOO difference (mean over held-out humans) equals ``d``."""
    # d(b) is linear in b: evaluate at b = 0 and b = 1
    d0, d1 = _d_at(0.0, human_accuracy, L), _d_at(1.0, human_accuracy, L)
    if d1 == d0:
        raise InvalidParameterError("The humans' accuracy is at chance level: no judge accuracy gives that difference.")
    b = (d - d0) / (d1 - d0)
    if not 0.0 <= b <= 1.0:
        raise InvalidParameterError(
            f"No judge accuracy in [0, 1] has a population difference of {d:g} with these humans "
            f"(reachable: {d0:.3f} to {d1:.3f}). Choose pass_d/reject_d inside that range.")
    return float(b)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SimulationPlanResult(Result):
    """FR and FA of the leave-one-out decision at candidate budgets (see :func:`plan_by_simulation`).

    Attributes
    ----------
    budgets : numpy.ndarray
        Items per secondary human.
    false_reject : numpy.ndarray
        Per budget: share of runs that reject the pass probe (a judge with population difference ``pass_d``).
    false_accept : numpy.ndarray
        Per budget: share of runs that accept the reject probe (population difference ``reject_d``).
    judge_error : dict of str to numpy.ndarray
        Per budget, for each planned judge: share of runs whose decision differs from the
        judge's population decision (``judge_reference``).
    judge_reference : dict of str to str
        ``"pass"`` or ``"reject"``: each planned judge's population decision under the fitted model.
    recommended : int or None
        The smallest budget with ``false_reject <= fr_target`` and ``false_accept <= fa_target``;
        None when no candidate meets both.
    fr_target, fa_target, epsilon, pass_d, reject_d : float
    design : str
    n_repetitions : int
    n_items, n_humans, n_categories : int
    human_accuracy : float
    judge_accuracies : dict of str to float
    source : {"pilot", "model"}
    seed : int
    assumptions : tuple of str
    notes : tuple of str
        Adjustments made (e.g. a reject probe moved within reach of these humans).
    """

    budgets: np.ndarray
    false_reject: np.ndarray
    false_accept: np.ndarray
    judge_error: dict[str, np.ndarray]
    judge_reference: dict[str, str]
    recommended: int | None
    fr_target: float
    fa_target: float
    epsilon: float
    pass_d: float
    reject_d: float
    design: str
    n_repetitions: int
    n_items: int
    n_humans: int
    n_categories: int
    human_accuracy: float
    judge_accuracies: dict[str, float]
    source: str
    seed: int
    assumptions: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """One row per budget: FR, FA, whether both targets are met, and each judge's error rate."""
        df = pd.DataFrame({"budget": self.budgets, "coverage": self.budgets / self.n_items,
                           "false_reject": self.false_reject, "false_accept": self.false_accept,
                           "meets_targets": (self.false_reject <= self.fr_target) & (self.false_accept <= self.fa_target)})
        for j, e in self.judge_error.items():
            df[f"error_{j}"] = e
        return df


def plan_by_simulation(
    pilot: AnnotationTable | None = None,
    *,
    budgets: Sequence[int],
    judges: Sequence[str] | None = None,
    model: Any = None,
    epsilon: float = 0.05,
    design: str = "random",
    fr_target: float = 0.10,
    fa_target: float = 0.10,
    pass_d: float = 0.0,
    reject_d: float | None = None,
    n_repetitions: int = 200,
    n_items: int | None = None,
    rng: int | np.random.Generator | None = 0,
    n_jobs: int = 1,
    scheduler: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> SimulationPlanResult:
    """Simulate the whole leave-one-out decision at candidate per-secondary budgets.

    A latent class model (fitted to a pilot by :func:`fit_latent_class`, or given) generates a
    fresh full matrix for every run; the design keeps the primary and the judges complete and
    gives each of the K-1 secondaries ``budget`` items; the rule (``T_k = 1[d_k >= -epsilon]``,
    accept iff ``omega >= 0.5``) is rerun and compared with the model's population decision.
    Two probe judges make FR and FA measurable at every budget: one whose population difference
    is ``pass_d`` (as good as a human by default; its rejections are false rejects) and one at
    ``reject_d`` (default ``-2 * epsilon``; its acceptances are false accepts).

    Parameters
    ----------
    pilot : AnnotationTable, optional
        A pilot to fit the model to (K humans, L categories, accuracies, prevalence).
    budgets : sequence of int
        Candidate items per secondary human.
    judges : sequence of str, optional
        Pilot judges to report an error rate for (default: every judge in the pilot).
    model : LatentClassModel, optional
        A model instead of a pilot (its judges are reported like pilot judges).
    epsilon : float, default 0.05
    design : str, default "random"
        Allocation design of the secondaries (see :func:`allocate`).
    fr_target, fa_target : float, default 0.10
        Targets the recommended budget must meet.
    pass_d, reject_d : float
        Population differences of the two probe judges (defaults 0 and ``-2 * epsilon``).
    n_repetitions : int, default 200
        Runs per budget (the Monte Carlo standard error of a rate p is ``sqrt(p(1-p)/n)``).
    n_items : int, optional
        Items in the simulated corpus (default: the pilot's, or the model's).
    rng : int, Generator or None, default 0
    n_jobs, scheduler, progress
        Execution, as in :func:`voirdire.simulate.run_experiment`.

    Returns
    -------
    SimulationPlanResult

    Examples
    --------
    >>> from voirdire.design import plan_by_simulation
    >>> from voirdire.simulate import LatentClassModel
    >>> m = LatentClassModel(n_items=200, n_categories=2, human_accuracy=(0.85,) * 3, judge_accuracies=(0.9,))
    >>> res = plan_by_simulation(model=m, budgets=[20, 100], n_repetitions=20, rng=3)
    >>> res.to_frame()[["budget", "false_reject", "false_accept"]].shape
    (2, 3)
    """
    func = "plan_by_simulation"
    design = check_choice(design, "design", func, DESIGNS)
    fr_t = check_probability(fr_target, "fr_target", func, open_low=False)
    fa_t = check_probability(fa_target, "fa_target", func, open_low=False)
    n_repetitions = check_positive_int(n_repetitions, "n_repetitions", func)
    epsilon = check_epsilon(epsilon, func)
    rej_d = -2.0 * float(epsilon) if reject_d is None else float(reject_d)
    if not (rej_d < -epsilon <= pass_d):
        raise InvalidParameterError(
            f"{func} needs reject_d < -epsilon <= pass_d (a failing and a passing probe). "
            f"Got reject_d={rej_d:g}, epsilon={epsilon:g}, pass_d={pass_d:g}.")
    bl = sorted({check_positive_int(b, "budgets", func) for b in budgets})
    if not bl:
        raise InvalidParameterError(f"The 'budgets' parameter of {func} is empty.")
    if (pilot is None) == (model is None):
        raise InvalidParameterError(f"{func} needs exactly one of a pilot table or model=.")
    if pilot is not None:
        if not isinstance(pilot, AnnotationTable):
            raise InvalidParameterError(
                f"The 'pilot' parameter of {func} must be an AnnotationTable. Got {type(pilot).__name__} instead.")
        if pilot.human_idx.size < 2:
            raise InvalidParameterError(f"{func} needs a pilot with at least two humans.")
        fit = fit_latent_class(pilot, judges=judges)
        K = int(pilot.human_idx.size)
        L = int(fit["n_categories"])
        h_acc = np.full(K, fit["human_accuracy"])
        j_acc = dict(fit["judge_accuracies"])
        prev: tuple[float, ...] | None = tuple(float(x) for x in fit["prevalence"])
        n = int(n_items or pilot.n_items)
        source = "pilot"
    else:
        if not isinstance(model, LatentClassModel):
            raise InvalidParameterError(f"The 'model' parameter of {func} must be a LatentClassModel.")
        K, L = len(model.human_accuracy), model.n_categories
        h_acc = np.asarray(model.human_accuracy, float)
        _, jn = model.names()
        j_acc = dict(zip(jn, model.judge_accuracies))
        prev = model.prevalence
        n = int(n_items or model.n_items)
        source = "model"
    if K < 2:
        raise InvalidParameterError(f"{func} needs at least two humans.")
    if bl[-1] > n:
        raise InvalidParameterError(f"The largest budget ({bl[-1]}) exceeds the {n} items of the corpus.")
    notes: list[str] = []
    d_lo = _d_at(0.0, h_acc, L)
    if -float(epsilon) <= d_lo:
        raise InvalidParameterError(
            f"With these humans even a judge that is never right has a population difference of {d_lo:.3f} >= "
            f"-epsilon = {-float(epsilon):g}: the rule cannot reject anyone. Use a smaller epsilon.")
    if reject_d is None and rej_d <= d_lo:
        new = 0.5 * (d_lo - float(epsilon))
        notes.append(f"reject_d = -2 epsilon = {rej_d:g} is out of reach with these humans (a judge that is never "
                     f"right has {d_lo:.3f}); the reject probe sits at {new:.3f}, halfway to -epsilon.")
        rej_d = new
    a_pass = _accuracy_for_d(float(pass_d), h_acc, L)
    a_rej = _accuracy_for_d(rej_d, h_acc, L)
    names = tuple(j_acc) + ("probe_pass", "probe_reject")
    accs = tuple(float(v) for v in j_acc.values()) + (a_pass, a_rej)
    md = LatentClassModel(n_items=n, n_categories=L, human_accuracy=tuple(float(x) for x in h_acc),
                          judge_accuracies=accs, prevalence=prev, judge_names=names)
    res = run_experiment([ExperimentSetting(name="plan", model=md, group="plan")], designs=[design],
                         coverages=[b / n for b in bl], n_repetitions=n_repetitions, epsilon=float(epsilon),
                         rng=rng, n_jobs=n_jobs, scheduler=scheduler, progress=progress)
    runs = res.runs
    by = runs.groupby(["coverage", "judge"], sort=False)
    acc_rate = by["accept"].mean()
    wrong = by["wrong"].mean()
    covs = [b / n for b in bl]
    fr = np.array([1.0 - acc_rate[(c, "probe_pass")] for c in covs])
    fa = np.array([acc_rate[(c, "probe_reject")] for c in covs])
    judge_error = {j: np.array([wrong[(c, j)] for c in covs]) for j in j_acc}
    ref = res.cells.set_index("judge")["reference_accept"]
    meets = (fr <= fr_t) & (fa <= fa_t)
    rec = int(np.asarray(bl)[meets][0]) if meets.any() else None
    return SimulationPlanResult(
        budgets=np.asarray(bl), false_reject=fr, false_accept=fa, judge_error=judge_error,
        judge_reference={j: ("pass" if bool(ref[j]) else "reject") for j in j_acc}, recommended=rec,
        fr_target=fr_t, fa_target=fa_t, epsilon=float(epsilon), pass_d=float(pass_d), reject_d=rej_d,
        design=design, n_repetitions=n_repetitions, n_items=n, n_humans=K, n_categories=L,
        human_accuracy=float(np.mean(h_acc)), judge_accuracies={k: float(v) for k, v in j_acc.items()},
        source=source, seed=res.seed, assumptions=_ASSUMPTIONS, notes=tuple(notes),
    )
