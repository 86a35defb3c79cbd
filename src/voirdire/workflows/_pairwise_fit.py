"""``fit_pairwise``: everything ``voirdire pairwise`` shows, in one result (private).

The Bayesian pairwise model (:class:`voirdire.pairwise.PairwiseBayesModel`, fitted or resumed from a saved
state) with its posterior, the most uncertain pairs, which orders each judge was asked in and, with
``evaluate``, the leave-one-human-out comparison with the baselines, the held-out choice and the plain
sentences saying where BayesJudge is best and where a baseline beats it. Nothing is computed where it is
shown.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .._results import Result
from ..exceptions import InvalidParameterError

__all__ = ["PairwiseFit", "fit_pairwise", "human_groups", "evaluation_notes"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PairwiseFit(Result):
    """The composite result of :func:`fit_pairwise`.

    Attributes
    ----------
    summary : table summary (pairs, humans, judges, verdicts, pairs with a judge in both orders)
    model : PairwiseBayesModel
        The fitted model (its options: particles, update, weights, ...).
    posterior : PairwisePosterior
    final_ess : float
        The effective sample size after the last pair (``nan`` before any).
    orders_seen : dict of str to str
        Per judge of the posterior: ``"AB"``, ``"BA"``, ``"AB+BA"`` or ``"-"`` (not in this file).
    uncertain : DataFrame
        The ``top`` most uncertain pairs.
    evaluation : LOHOResult or None
        The leave-one-human-out comparison (``evaluate``).
    choice : ForecastChoice or None
        The held-out choice between BayesJudge and the baselines.
    notes : tuple of str
        Where BayesJudge is best and where a baseline beats it (:func:`evaluation_notes`).
    evaluation_rows : DataFrame or None
        The comparison's rows as shown (one group holding every human is shown once).
    human_labels : tuple of float
        Per human of the posterior, the labels its confusion matrix has seen (its counts less the prior's).
    seed : int
    resumed_from : str or None
    """

    summary: Any
    model: Any
    posterior: Any
    final_ess: float
    orders_seen: dict[str, str]
    uncertain: Any
    evaluation: Any = None
    choice: Any = None
    notes: tuple[str, ...] = ()
    evaluation_rows: Any = None
    human_labels: tuple[float, ...] = ()
    seed: int = 0
    resumed_from: str | None = None


def human_groups(specs: Sequence[str], humans: Sequence[str]) -> dict[str, str]:
    """``NAME=GROUP`` (exact human) or ``PREFIX*=GROUP`` (every human whose name starts with PREFIX); the first
    matching spec wins."""
    out: dict[str, str] = {}
    for spec in specs:
        if "=" not in spec:
            raise InvalidParameterError(
                f"--group expects NAME=GROUP or PREFIX*=GROUP (e.g. 'expert_*=expert'). Got {spec!r}.")
        name, group = (s.strip() for s in spec.split("=", 1))
        hits = [h for h in humans if (h.startswith(name[:-1]) if name.endswith("*") else h == name)]
        if not hits:
            raise InvalidParameterError(f"--group {spec!r} matches no human. Humans: {list(humans)[:10]}.")
        for h in hits:
            out.setdefault(h, group)
    return out


def _num(x: float) -> str:
    return "nan" if not math.isfinite(x) else f"{x:.3f}"


def evaluation_notes(loho: Any) -> list[str]:
    """Plain sentences: where BayesJudge is best and where a baseline beats it (per group and metric)."""
    t = loho.table
    lines = []
    gs = list(t["group"].unique())
    if len(gs) == 2 and (t[t["group"] == gs[0]]["n_labels"].to_numpy() == t[t["group"] == gs[1]]["n_labels"].to_numpy()).all():
        gs = gs[1:]
    for g in gs:
        sub = t[t["group"] == g].set_index("method")
        if "BayesJudge" not in sub.index:
            continue
        for metric, better in (("accuracy", max), ("nll", min), ("brier", min), ("ece", min)):
            col = sub[metric].dropna()
            if col.empty:
                continue
            best = better(col.index, key=lambda m: col[m])
            ours = col["BayesJudge"]
            runner = col.drop("BayesJudge")
            if not len(runner):
                continue
            rb = better(runner.index, key=lambda m: runner[m])
            if abs(ours - col[best]) < 5e-4:
                if abs(runner[rb] - ours) < 5e-4:
                    lines.append(f"[{g}] {metric}: BayesJudge tied best with {rb} ({_num(ours)}).")
                else:
                    lines.append(f"[{g}] {metric}: BayesJudge best ({_num(ours)}; next {rb} {_num(runner[rb])}).")
            else:
                lines.append(f"[{g}] {metric}: {best} beats BayesJudge ({_num(col[best])} vs {_num(ours)}).")
    return lines


def _shown_rows(loho: Any) -> Any:
    rows = loho.table
    n_all = rows.loc[rows["group"] == "all", "n_labels"]
    given = [g for g in rows["group"].unique() if g != "all"]
    if len(given) == 1 and len(n_all) and (rows.loc[rows["group"] == given[0], "n_labels"] == n_all.iloc[0]).all():
        rows = rows[rows["group"] != "all"]  # one group holding every human: show it once
    return rows


def fit_pairwise(table: Any, *, n_particles: int = 300, update: str = "soft", laplace: bool = True,
                 judge_ties: bool = True, judge_reliability: bool = True, calibrated: bool = False,
                 mode: str = "auto", seed: int = 0, top: int = 10, resume: str | Path | None = None,
                 evaluate: bool = False, groups: Sequence[str] = (),
                 progress: Callable[[int, int], None] | None = None) -> PairwiseFit:
    """Fit (or resume) the Bayesian pairwise model on ``table`` and, with ``evaluate``, compare it with the
    baselines leave-one-human-out (``groups``: ``--group`` specs), as ``voirdire pairwise``.

    ``calibrated``: adaptive quadrature and a batch move after the stream (``--calibrated-intervals``);
    ``mode``: ``joint``, ``per-judge`` or ``auto`` (per judge above
    :data:`voirdire.pairwise.MAX_JOINT_JUDGES` judges); ``resume``: a saved state whose options replace these.
    """
    from ..pairwise import MAX_JOINT_JUDGES, PairwiseBayesModel, choose_forecaster, leave_one_human_out

    if n_particles < 1:
        raise InvalidParameterError(f"--particles must be an integer >= 1. Got {n_particles}.")
    if top < 0:
        raise InvalidParameterError(f"--top must be an integer >= 0 (0 lists no pair). Got {top}.")
    if update not in ("soft", "hard"):
        raise InvalidParameterError(f"--update must be 'soft' or 'hard'. Got {update!r}.")
    if mode not in ("auto", "joint", "per-judge"):
        raise InvalidParameterError(f"--mode must be auto, joint or per-judge. Got {mode!r}.")
    if resume is not None:
        model = PairwiseBayesModel.load(resume)
        model.partial_fit(table)
    else:
        per_judge = mode == "per-judge" or (mode == "auto" and len(table.judges) > MAX_JOINT_JUDGES)
        model = PairwiseBayesModel(n_particles=n_particles, update=update, laplace=laplace,  # type: ignore[arg-type]
                                   judge_ties=judge_ties, judge_reliability=judge_reliability,
                                   particles="per_judge" if per_judge else "joint", batch_move=calibrated,
                                   quadrature="adaptive" if calibrated else "laplace", rng=seed)
        model.fit(table)
    post = model.posterior()
    named = human_groups(groups, table.humans) if groups else {}
    loho = choice = None
    if evaluate:
        if not table.humans:
            raise InvalidParameterError("--evaluate needs human raters in the file (it predicts each held-out human).")
        loho = leave_one_human_out(table, groups=named, n_particles=n_particles, rng=seed, progress=progress)
        choice = choose_forecaster(loho, rng=seed)
    seen = {}
    for jn in post.judges:
        if jn in table.judges:
            o = table.orders[table.rater_idx == table.rater_index(jn)]
            seen[str(jn)] = "+".join(n for n, c in (("AB", 0), ("BA", 1)) if (o == c).any())
        else:
            seen[str(jn)] = "-"
    ess = float(post.ess_history[-1, 1]) if len(post.ess_history) else float("nan")
    return PairwiseFit(summary=table.summary(), model=model, posterior=post, final_ess=ess,
                       orders_seen=seen, uncertain=post.most_uncertain(top), evaluation=loho, choice=choice,
                       notes=() if loho is None else tuple(evaluation_notes(loho)),
                       evaluation_rows=None if loho is None else _shown_rows(loho), seed=int(seed),
                       human_labels=tuple(float(post.dirichlet_counts[k].sum() - float(model.confusion_prior_.sum()))
                                          for k in range(len(post.humans))),
                       resumed_from=None if resume is None else str(resume))
